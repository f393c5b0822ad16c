#include "server/services/node_volumes.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "core/shell_quote.h"
#include "exec/container.h"
#include "server/services/record_faults.h"

namespace gpurent {

namespace {

namespace fs = std::filesystem;

void replace_all(std::string& s, const std::string& what, const std::string& with) {
  for (size_t at = 0; (at = s.find(what, at)) != std::string::npos; at += with.size()) s.replace(at, what.size(), with);
}

Result<std::string> node_id_named(StoreTx& tx, const std::string& name) {
  auto found = tx.list({"nodes", {{"name", name}}, "", 2});
  if (!found) return found.error();
  return found->items.size() == 1 ? found->items.front().id : std::string();
}

}  // namespace

std::string node_volume_dir(const std::string& root, const std::string& node, const std::string& tenant_id,
                            const std::string& name) {
  std::string dir = root;
  replace_all(dir, "%n", node);
  return dir + "/" + tenant_id + "/" + name;
}

std::string render_volume_copy(const std::string& command, const std::string& from_node, const std::string& from_dir,
                               const std::string& dir) {
  std::string out = command;
  replace_all(out, "{from_node}", shell_quote(from_node));
  replace_all(out, "{from_dir}", shell_quote(from_dir));
  replace_all(out, "{dir}", shell_quote(dir));
  return out;
}

std::string volume_reports_dir(const std::string& store_root) { return store_root + "/volume-reports"; }

std::string volume_report_base(const std::string& store_root, const std::string& volume_id, const std::string& job_id) {
  return volume_reports_dir(store_root) + "/" + volume_id + "." + job_id;
}

CopyEstimate estimate_volume_copy(const Volume& v, int64_t assumed_mbps) {
  CopyEstimate e;
  e.measured = v.used_bytes.has_value();
  e.bytes = v.used_bytes.value_or(v.size_gb * 1'000'000'000);
  // bits per millisecond = Mbit/s * 1000
  int64_t bits_per_ms = std::max<int64_t>(1, assumed_mbps) * 1000;
  e.rate_basis = "assumed";
  if (v.last_copy && v.last_copy->bytes >= 64'000'000 && v.last_copy->ms > 0) {
    bits_per_ms = std::max<int64_t>(1, v.last_copy->bytes / v.last_copy->ms * 8);
    e.rate_basis = "measured";
  }
  e.rate_mbps = std::max<int64_t>(1, bits_per_ms / 1000);
  // ms = bytes * 8 / (bits per ms), rounded up to whole seconds; bytes stay far below 2^60.
  const int64_t ms = (e.bytes / bits_per_ms) * 8 + ((e.bytes % bits_per_ms) * 8 + bits_per_ms - 1) / bits_per_ms;
  e.seconds = (ms + 999) / 1000;
  return e;
}

Result<std::optional<Message>> place_node_volumes(StoreTx& tx, const NodeVolumeSettings& s, const std::string& tenant_id,
                                                  const std::string& job_id,
                                                  const std::vector<std::pair<std::string, std::string>>& nodes,
                                                  std::vector<ContainerVolume>& volumes, TimeMs now) {
  for (ContainerVolume& cv : volumes) {
    auto found = tx.list({"volumes", {{"tenant_id", tenant_id}, {"name", cv.name}}, "", 1});
    if (!found) return found.error();
    if (found->items.empty()) continue;  // checked at submission; the mount fails visibly if it went since
    Record rec = found->items.front();
    auto v = decode_record(rec, decode_volume, "it cannot be mounted");
    if (!v) return v.error();
    if (v->placement != VolumePlacement::kNode) continue;
    if (s.root.empty()) return std::optional<Message>(Message("exec.volume.no_node_root").arg("volume", cv.name));
    if (nodes.size() != 1) return std::optional<Message>(Message("exec.volume.node_gang").arg("volume", cv.name));
    const auto& [here_id, here] = nodes.front();
    cv.host_dir = node_volume_dir(s.root, here, tenant_id, v->name);
    cv.report_file = volume_report_base(s.store_root, rec.id, job_id);
    std::error_code ec;
    std::filesystem::create_directories(volume_reports_dir(s.store_root), ec);
    (void)now;
    // On no node yet: the script creates it here and reports it (a start that fails before that
    // leaves it on none). On another node: copied here first.
    if (!v->node_id.empty() && v->node_id != here_id) {
      auto from = tx.get("nodes", v->node_id);
      if (!from) return std::optional<Message>(Message("exec.volume.node_gone").arg("volume", cv.name));
      cv.copy_from = from->name;
      cv.copy_command = render_volume_copy(s.copy_command, from->name, node_volume_dir(s.root, from->name, tenant_id, v->name),
                                           cv.host_dir);
    }
  }
  return std::optional<Message>();
}

Status sync_volume_reports(StoreTx& tx, const std::string& store_root, TimeMs now) {
  const std::string dir = volume_reports_dir(store_root);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return ok_status();
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string f = it->path().filename().string();
    const bool copied = f.size() > 7 && f.compare(f.size() - 7, 7, ".copied") == 0;
    const bool used = f.size() > 5 && f.compare(f.size() - 5, 5, ".used") == 0;
    if (copied || used) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());  // a run's copy before its size (".copied" < ".used")
  for (const fs::path& path : files) {
    // <volume id>.<job id>.copied | .used
    const std::string file = path.filename().string();
    const std::string volume_id = file.substr(0, file.find('.'));
    const std::string job_id = file.substr(volume_id.size() + 1, file.rfind('.') - volume_id.size() - 1);
    auto report = read_volume_report(path.string());
    auto cur = report ? tx.get("volumes", volume_id) : Result<Record>(Error::make(Code::kNotFound, "unreadable"));
    std::string node, from;
    if (cur) {
      auto n = node_id_named(tx, report->node);
      if (!n) return n.error();
      node = *n;
      if (report->copied) {
        auto f = node_id_named(tx, report->from);
        if (!f) return f.error();
        from = *f;
      }
    }
    auto v = cur && !node.empty() ? decode_record(*cur, decode_volume, "its node is not recorded") : Result<Volume>(Error::make(Code::kNotFound, "gone"));
    if (!v || v->placement != VolumePlacement::kNode) {  // nothing it could apply to
      ::unlink(path.c_str());
      continue;
    }
    // Applied in this tick's write, removed in a later tick once the record shows it: a write that
    // does not commit leaves the report to be applied again (applying it twice changes nothing).
    const VolumeCopy copy{from, node, report->bytes, report->ms, report->at, job_id};
    const bool shown = report->copied ? v->last_copy == copy
                                      : (!v->node_id.empty() && v->node_id != node) || (v->used_at && *v->used_at >= report->at);
    if (shown) {
      ::unlink(path.c_str());
      continue;
    }
    if (v->node_id.empty()) v->node_id = node;  // created there by its first run
    if (report->copied) {
      v->node_id = node;
      v->last_copy = copy;
      spdlog::info("{}", json({{"event", "volume_copied"}, {"volume", volume_id}, {"from", report->from}, {"to", report->node},
                               {"bytes", report->bytes}, {"ms", report->ms}}).dump());
    }
    if (!v->used_at || *v->used_at <= report->at) {
      v->used_bytes = report->bytes;
      v->used_at = report->at;
    }
    Record r = *cur;
    r.body = to_json(*v);
    r.updated_at = now;
    if (auto s = tx.update(r); !s) return s;
  }
  return ok_status();
}

std::optional<TimeMs> node_volumes_ready_at(const std::vector<Volume>& volumes, const std::string& node_id,
                                            const std::string& job_id, TimeMs run_started, TimeMs now,
                                            int64_t assumed_mbps) {
  TimeMs ready = run_started;
  for (const Volume& v : volumes) {
    if (v.placement != VolumePlacement::kNode || v.node_id.empty()) continue;
    if (v.node_id != node_id) {
      // Its copy is going on, or its report went missing: waited for at most three times the
      // estimated copy and a quarter of an hour.
      const TimeMs given_up =
          run_started + 3 * estimate_volume_copy(v, assumed_mbps).seconds * 1000 + kCopyReportGraceMs;
      if (now < given_up) return std::nullopt;
      ready = std::max(ready, given_up);
    } else if (v.last_copy && v.last_copy->to_node == node_id && v.last_copy->job_id == job_id) {
      // Copied by this run: its duration as the node timed it, from when the run began (by the
      // server's clock, which the readings use; the node's may differ).
      ready = std::max(ready, run_started + v.last_copy->ms);
    }
  }
  return ready;
}

}  // namespace gpurent
