// Stored records that no longer decode. A record is written through its typed codec, but the
// codecs tighten over time (a new rule, a catalog model removed) and a database can be edited by
// hand, so a reader may meet a document its kind's codec now refuses. The policy (DESIGN.md, typed
// records): such a record is an error someone sees, never a silent skip — the reader fails with
// undecodable_record() (a 500 problem naming the record and the reason; an invoice is refused
// rather than issued without the contract), and the record is listed here, which the server logs
// once per record and shows in /readyz ("records") and /metrics
// (gpurent_records_undecodable{kind}). Thread-safe; process-wide.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/result.h"
#include "store/store.h"

namespace gpurent {

struct RecordFault {
  std::string kind, id, reason;
  int64_t seen = 0;  // times a reader met it
};

class RecordFaults {
 public:
  // True the first time (kind, id) is reported (the caller logs it then), false afterwards.
  bool report(const std::string& kind, const std::string& id, const std::string& reason);
  // A record that decodes again (fixed by hand, or rewritten through the API) is forgotten.
  void clear(const std::string& kind, const std::string& id);
  std::vector<RecordFault> list() const;  // by kind, then id
  std::map<std::string, int64_t> count_by_kind() const;

 private:
  mutable std::mutex mu_;
  std::atomic<size_t> size_{0};  // clear() skips the lock while nothing is reported (the usual case)
  std::map<std::pair<std::string, std::string>, RecordFault> faults_;
};

RecordFaults& record_faults();

// Reports the record and returns the error its reader fails with:
// "stored contracts ctr_… (aurora-lambda-h100) no longer decodes: <why>; <consequence>".
Error undecodable_record(const std::string& kind, const std::string& id, const std::string& name, const Error& why,
                         const std::string& consequence);

// Whether `e` is undecodable_record()'s error (and not, say, the store failing): a reader that may
// leave such a record out (it holds nothing) tells the two apart with this.
bool is_undecodable(const Error& e);

// Reads a stored record through its kind's codec (model/) under the policy above: a record that
// no longer decodes is reported and the read fails with undecodable_record(r…, consequence); one
// that decodes is forgotten if it was reported before.
// `decode` is the kind's codec, json -> Result<T> (bind extra arguments with a lambda).
template <class Decode>
auto decode_record(const Record& r, Decode&& decode, const std::string& consequence) -> decltype(decode(r.body)) {
  auto v = decode(r.body);
  if (!v) return undecodable_record(r.kind, r.id, r.name, v.error(), consequence);
  record_faults().clear(r.kind, r.id);
  return v;
}

}  // namespace gpurent
