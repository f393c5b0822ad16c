// The fast path of batch validation: a SAX pass over the JSON text that fills the batch directly,
// without building a DOM (which costs as much as everything else in an ingest). It accepts exactly
// what parse_usage_batch accepts and gives the same batch; at the first thing it does not like
// (any error, but also a null, a repeated key, a float) it gives up, and the caller runs the DOM
// path, which reports every error with its field path. usage_test.cc holds the two to each other.
#include <unordered_set>

#include "meter/usage.h"

namespace gpurent {
namespace {

using json = nlohmann::json;

enum class List { kNone, kGpu, kJob };

// Field slots of a sample object, in one enum for both lists.
enum class Key {
  kAt,
  kNode,
  kGpu,
  kUuid,
  kUtil,
  kMem,
  kPower,
  kClock,
  kGr,
  kJob,
  kStorage,
  kEgress,
  kInTok,
  kOutTok,
  kRequests,
  kUnknown
};

Key gpu_key(const std::string& k) {
  if (k == "at") return Key::kAt;
  if (k == "node") return Key::kNode;
  if (k == "gpu") return Key::kGpu;
  if (k == "uuid") return Key::kUuid;
  if (k == "utilization_pct") return Key::kUtil;
  if (k == "memory_used_mib") return Key::kMem;
  if (k == "power_mw") return Key::kPower;
  if (k == "sm_clock_mhz") return Key::kClock;
  if (k == "gr_engine_active_pct") return Key::kGr;
  return Key::kUnknown;
}

Key job_key(const std::string& k) {
  if (k == "at") return Key::kAt;
  if (k == "job") return Key::kJob;
  if (k == "storage_io_bytes") return Key::kStorage;
  if (k == "egress_bytes") return Key::kEgress;
  if (k == "input_tokens") return Key::kInTok;
  if (k == "output_tokens") return Key::kOutTok;
  if (k == "requests") return Key::kRequests;
  return Key::kUnknown;
}

bool plain_string(const std::string& s, size_t max_len) {
  if (s.empty() || s.size() > max_len) return false;
  for (unsigned char c : s)
    if (c < 0x20 || c >= 0x7f) return false;  // non-ASCII: the DOM path checks UTF-8 and reports
  return true;
}

class Sax {
 public:
  explicit Sax(const UsageParseOptions& opts) : opts_(opts) {}

  // Top level: {"idempotency_key": s, "gpu_samples": [...], "job_samples": [...]}.
  bool start_object(std::size_t) {
    if (depth_ == 0) return ++depth_, true;
    if (depth_ == 2 && list_ != List::kNone) {
      ++depth_;
      seen_ = 0;
      gpu_ = {};
      job_ = {};
      return true;
    }
    return false;
  }
  bool end_object() {
    if (depth_ == 3) {
      --depth_;
      return list_ == List::kGpu ? finish_gpu() : finish_job();
    }
    --depth_;
    return true;
  }
  bool start_array(std::size_t) {
    if (depth_ != 1 || pending_top_.empty()) return false;
    if (pending_top_ == "gpu_samples")
      list_ = List::kGpu;
    else if (pending_top_ == "job_samples")
      list_ = List::kJob;
    else
      return false;
    if (!mark_top(pending_top_)) return false;
    ++depth_;
    return true;
  }
  bool end_array() {
    --depth_;
    list_ = List::kNone;
    pending_top_.clear();
    return true;
  }
  bool key(std::string& k) {
    if (depth_ == 1) {
      pending_top_ = k;
      return k == "idempotency_key" || k == "gpu_samples" || k == "job_samples";
    }
    if (depth_ != 3) return false;
    key_ = list_ == List::kGpu ? gpu_key(k) : job_key(k);
    if (key_ == Key::kUnknown) return false;
    const unsigned bit = 1u << static_cast<unsigned>(key_);
    if (seen_ & bit) return false;  // a repeated key: the DOM keeps the last one; let it decide
    seen_ |= bit;
    return true;
  }
  bool string(std::string& s) {
    if (depth_ == 1) {
      if (pending_top_ != "idempotency_key" || !mark_top(pending_top_) || !valid_idempotency_key(s)) return false;
      batch_.idempotency_key = s;
      return true;
    }
    if (depth_ != 3) return false;
    switch (key_) {
      case Key::kAt: {
        auto t = parse_rfc3339(s, "at");
        if (!t || *t < opts_.now - kSampleMaxAgeMs || *t > opts_.now + kSampleMaxAheadMs || *t < opts_.not_before)
          return false;
        (list_ == List::kGpu ? gpu_.at : job_.at) = *t;
        return true;
      }
      case Key::kNode:
        return plain_string(s, 64) && (gpu_.node = s, true);
      case Key::kUuid:
        return s.size() == 40 && plain_string(s, 64) && (gpu_.uuid = s, true);
      case Key::kJob:
        return plain_string(s, 64) && (job_.job = s, true);
      default:
        return false;
    }
  }
  bool number_unsigned(json::number_unsigned_t u) {
    if (depth_ != 3 || u > static_cast<json::number_unsigned_t>(kMaxCounterDelta)) return false;
    const auto v = static_cast<int64_t>(u);
    auto in = [&](int64_t max) { return v <= max; };
    GpuMetrics& m = gpu_.metrics;
    switch (key_) {
      case Key::kGpu:
        return in(kMaxGpuIndex) && (gpu_.gpu = v, true);
      case Key::kUtil:
        return in(100) && (m.utilization_pct = v, true);
      case Key::kMem:
        return in(kMaxMemoryMib) && (m.memory_used_mib = v, true);
      case Key::kPower:
        return in(kMaxPowerMw) && (m.power_mw = v, true);
      case Key::kClock:
        return in(kMaxClockMhz) && (m.sm_clock_mhz = v, true);
      case Key::kGr:
        return in(100) && (m.gr_engine_active_pct = v, true);
      case Key::kStorage:
        return job_.delta.storage_io_bytes = v, true;
      case Key::kEgress:
        return job_.delta.egress_bytes = v, true;
      case Key::kInTok:
        return job_.delta.input_tokens = v, true;
      case Key::kOutTok:
        return job_.delta.output_tokens = v, true;
      case Key::kRequests:
        return job_.delta.requests = v, true;
      default:
        return false;
    }
  }
  // Negative numbers, floats, booleans, nulls, binary: never valid here (or absent, for null:
  // the DOM path treats it as such), so the DOM path takes over.
  bool number_integer(json::number_integer_t v) {
    return v >= 0 && number_unsigned(static_cast<json::number_unsigned_t>(v));
  }
  bool number_float(json::number_float_t, const std::string&) { return false; }
  bool boolean(bool) { return false; }
  bool null() { return false; }
  bool binary(json::binary_t&) { return false; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

  std::optional<UsageBatch> result() {
    if (batch_.idempotency_key.empty() || batch_.size() == 0) return std::nullopt;
    return std::move(batch_);
  }

 private:
  bool mark_top(const std::string& k) {
    const unsigned bit = k == "idempotency_key" ? 1u : k == "gpu_samples" ? 2u : 4u;
    if (top_seen_ & bit) return false;
    top_seen_ |= bit;
    return true;
  }
  bool has(Key k) const { return seen_ & (1u << static_cast<unsigned>(k)); }

  bool finish_gpu() {
    if (!has(Key::kAt) || !has(Key::kUtil)) return false;
    if (has(Key::kUuid)) {
      if (has(Key::kNode) || has(Key::kGpu) || !valid_uuid(gpu_.uuid)) return false;
    } else if (!has(Key::kNode) || !has(Key::kGpu)) {
      return false;
    }
    if (++count_ > opts_.max_samples) return false;
    std::string dup = gpu_.uuid.empty() ? gpu_.node + "#" + std::to_string(*gpu_.gpu) : gpu_.uuid;
    dup += "@" + std::to_string(gpu_.at);
    if (!seen_gpus_.insert(std::move(dup)).second) return false;
    batch_.gpu_samples.push_back(std::move(gpu_));
    return true;
  }
  bool finish_job() {
    if (!has(Key::kAt) || !has(Key::kJob) || ++count_ > opts_.max_samples) return false;
    batch_.job_samples.push_back(std::move(job_));
    return true;
  }
  static bool valid_uuid(const std::string& s) {
    static constexpr size_t kDashes[] = {12, 17, 22, 27};
    if (s.compare(0, 4, "GPU-") != 0) return false;
    for (size_t i = 4; i < s.size(); ++i) {
      const char c = s[i];
      const bool dash = i == kDashes[0] || i == kDashes[1] || i == kDashes[2] || i == kDashes[3];
      if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    }
    return true;
  }

  const UsageParseOptions& opts_;
  UsageBatch batch_;
  int depth_ = 0;
  List list_ = List::kNone;
  std::string pending_top_;
  unsigned top_seen_ = 0;
  Key key_ = Key::kUnknown;
  unsigned seen_ = 0;
  GpuSample gpu_;
  JobSample job_;
  size_t count_ = 0;
  std::unordered_set<std::string> seen_gpus_;
};

}  // namespace

std::optional<UsageBatch> parse_usage_batch_fast(std::string_view text, const UsageParseOptions& opts) {
  Sax sax(opts);
  // strict: trailing garbage fails, as json::parse does.
  if (!json::sax_parse(text.begin(), text.end(), &sax, json::input_format_t::json, true)) return std::nullopt;
  return sax.result();
}

}  // namespace gpurent
