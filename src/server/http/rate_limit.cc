#include "server/http/rate_limit.h"

#include <algorithm>
#include <vector>

namespace gpurent {

const char* rate_class_name(RateClass c) {
  switch (c) {
    case RateClass::kRead:
      return "read";
    case RateClass::kWrite:
      return "write";
    case RateClass::kIngest:
      return "ingest";
  }
  return "read";
}

int64_t RateLimiter::refill(Bucket& b, const RateRule& r, int64_t now_ms) {
  const int64_t cap = std::max<int64_t>(1, r.burst) * 1000;
  if (now_ms > b.at_ms) {
    // per_second tokens a second = per_second milli-tokens a millisecond; a bucket idle long
    // enough to fill is full (never multiplied out: a long idle at a high rate would overflow).
    const int64_t idle = now_ms - b.at_ms, fills_in = (cap + r.per_second - 1) / std::max<int64_t>(1, r.per_second);
    int64_t gained = idle >= fills_in ? cap : idle * r.per_second;
    b.milli_tokens = std::min(cap, b.milli_tokens + gained);
    b.at_ms = now_ms;
  }
  return cap;
}

void RateLimiter::trim(Table& t, const RateRule& r, int64_t now_ms) {
  if (t.size() < limits_.max_keys) return;
  for (auto it = t.begin(); it != t.end();) {
    int64_t cap = refill(it->second, r, now_ms);
    it = it->second.milli_tokens >= cap ? t.erase(it) : std::next(it);
  }
  if (t.size() < limits_.max_keys) return;
  // Every bucket is in use (a flood of keys): keep the half refilled most recently.
  std::vector<int64_t> at;
  at.reserve(t.size());
  for (const auto& [k, b] : t) at.push_back(b.at_ms);
  auto mid = at.begin() + static_cast<std::ptrdiff_t>(at.size() / 2);
  std::nth_element(at.begin(), mid, at.end());
  const int64_t cut = *mid;
  for (auto it = t.begin(); it != t.end();) it = it->second.at_ms <= cut ? t.erase(it) : std::next(it);
}

RateLimiter::Bucket& RateLimiter::bucket(Table& t, const RateRule& r, std::string_view key, int64_t now_ms) {
  auto it = t.find(std::string(key));
  if (it != t.end()) {
    refill(it->second, r, now_ms);
    return it->second;
  }
  trim(t, r, now_ms);
  Bucket b;
  b.milli_tokens = std::max<int64_t>(1, r.burst) * 1000;  // a new caller starts with a full bucket
  b.at_ms = now_ms;
  return t.emplace(std::string(key), b).first->second;
}

RateLimiter::Decision RateLimiter::check(RateClass c, std::string_view address, std::string_view token_key,
                                         int64_t now_ms) {
  const size_t i = static_cast<size_t>(c);
  const RateRule& ra = limits_.per_address[i];
  const RateRule& rt = limits_.per_token[i];
  std::lock_guard<std::mutex> g(mu_);
  Bucket* a = ra.per_second > 0 ? &bucket(by_address_[i], ra, address, now_ms) : nullptr;
  Bucket* t = rt.per_second > 0 && !token_key.empty() ? &bucket(by_token_[i], rt, token_key, now_ms) : nullptr;
  auto wait_ms = [](const Bucket& b, const RateRule& r) {
    int64_t missing = 1000 - b.milli_tokens;  // milli-tokens until one whole token
    return (missing + r.per_second - 1) / r.per_second;
  };
  Decision d;
  if (a && a->milli_tokens < 1000) {
    d = {false, wait_ms(*a, ra), "address"};
  } else if (t && t->milli_tokens < 1000) {
    d = {false, wait_ms(*t, rt), "token"};
  }
  if (!d.allowed) {
    ++refused_[i];
    return d;
  }
  if (a) a->milli_tokens -= 1000;
  if (t) t->milli_tokens -= 1000;
  return d;
}

RateLimiter::Decision RateLimiter::check_tenant(RateClass c, std::string_view tenant_id, int64_t now_ms) {
  const size_t i = static_cast<size_t>(c);
  const RateRule& r = limits_.per_tenant[i];
  if (r.per_second <= 0 || tenant_id.empty()) return {};
  std::lock_guard<std::mutex> g(mu_);
  Bucket& b = bucket(by_tenant_[i], r, tenant_id, now_ms);
  if (b.milli_tokens < 1000) {
    ++refused_[i];
    return {false, (1000 - b.milli_tokens + r.per_second - 1) / r.per_second, "tenant"};
  }
  b.milli_tokens -= 1000;
  return {};
}

RateLimiter::Decision RateLimiter::check_points(std::string_view tenant_id, int64_t points, int64_t now_ms) {
  const RateRule& r = limits_.metric_points_per_tenant;
  if (r.per_second <= 0 || points <= 0) return {};
  std::lock_guard<std::mutex> g(mu_);
  Bucket& b = bucket(points_by_tenant_, r, tenant_id, now_ms);
  const int64_t need = points * 1000;  // the burst holds a whole batch (server.cc), so every point is paid
  if (b.milli_tokens < need) {
    ++refused_[static_cast<size_t>(RateClass::kIngest)];
    return {false, (need - b.milli_tokens + r.per_second - 1) / r.per_second, "metric_points"};
  }
  b.milli_tokens -= need;
  return {};
}

RateClass rate_class_of(std::string_view method, std::string_view path) {
  if (method == "GET" || method == "HEAD" || method == "OPTIONS") return RateClass::kRead;
  if (path == "/api/v1/usage" ||
      (path.size() > 8 && path.substr(path.size() - 8) == "/metrics" && path.compare(0, 13, "/api/v1/jobs/") == 0))
    return RateClass::kIngest;
  return RateClass::kWrite;
}

Message rate_limited_message(std::string_view by, RateClass c) {
  const char* code = by == "address"         ? "http.rate_limited.address"
                     : by == "tenant"        ? "http.rate_limited.tenant"
                     : by == "metric_points" ? "http.rate_limited.metric_points"
                                             : "http.rate_limited.token";
  return Message(code).arg("class", rate_class_name(c));
}

std::array<uint64_t, 3> RateLimiter::refused() const {
  std::lock_guard<std::mutex> g(mu_);
  return refused_;
}

}  // namespace gpurent
