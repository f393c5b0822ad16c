#include "server/services/record_faults.h"

#include <spdlog/spdlog.h>

namespace gpurent {

bool RecordFaults::report(const std::string& kind, const std::string& id, const std::string& reason) {
  std::lock_guard lock(mu_);
  auto [it, added] = faults_.try_emplace({kind, id}, RecordFault{kind, id, reason, 0});
  it->second.reason = reason;
  ++it->second.seen;
  size_.store(faults_.size(), std::memory_order_release);
  return added;
}

void RecordFaults::clear(const std::string& kind, const std::string& id) {
  if (size_.load(std::memory_order_acquire) == 0) return;
  std::lock_guard lock(mu_);
  faults_.erase({kind, id});
  size_.store(faults_.size(), std::memory_order_release);
}

std::vector<RecordFault> RecordFaults::list() const {
  std::lock_guard lock(mu_);
  std::vector<RecordFault> out;
  for (const auto& [key, f] : faults_) out.push_back(f);
  return out;
}

std::map<std::string, int64_t> RecordFaults::count_by_kind() const {
  std::lock_guard lock(mu_);
  std::map<std::string, int64_t> out;
  for (const auto& [key, f] : faults_) ++out[f.kind];
  return out;
}

RecordFaults& record_faults() {
  static RecordFaults faults;
  return faults;
}

bool is_undecodable(const Error& e) { return e.detail.code == "record.undecodable"; }

Error undecodable_record(const std::string& kind, const std::string& id, const std::string& name, const Error& why,
                         const std::string& consequence) {
  std::string reason = why.message;
  for (const auto& f : why.fields)
    if (reason.find(f.field) == std::string::npos) reason += "; " + f.field + ": " + f.reason;
  const std::string what = "stored " + kind + " " + id + (name.empty() || name == id ? "" : " (" + name + ")");
  if (record_faults().report(kind, id, reason))
    spdlog::error("{} no longer decodes: {} ({}; fix the record or delete it)", what, reason, consequence);
  Error e = Error::make(
      Code::kInternal,
      Message("record.undecodable").arg("what", what).arg("reason", reason).arg("consequence", consequence));
  e.fields.push_back({kind + "/" + id, reason});
  return e;
}

}  // namespace gpurent
