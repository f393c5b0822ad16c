// Token-bucket rate limits per caller: one bucket per (class, key), where the key is the request's
// Authorization header (its first 128 bytes) or its source address (an IPv6 /64), and the class is
// reads, writes or usage ingest. A request passes when both its address's and its token's buckets
// hold a token. Once the token is authenticated, a tenant's request also needs a token from its
// tenant's bucket (check_tenant): a tenant's users and their tokens together, so making more users
// and tokens does not multiply what one tenant may send. Job metric batches also draw on their
// job's tenant's metric-points bucket, one token per point (check_points): a batch of 10,000
// points costs the single writer 10,000 rows, not one. Time is injected (ms).
// Memory is bounded: past `max_keys` buckets per class the full (idle) ones are dropped, and when
// none is idle the oldest-refilled half goes, so a flood of made-up tokens costs a bounded table.
// Thread-safe (one mutex; each check is a hash look-up and a little arithmetic).
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/message_type.h"

namespace gpurent {

enum class RateClass { kRead = 0, kWrite = 1, kIngest = 2 };
const char* rate_class_name(RateClass c);  // "read", "write", "ingest"
// GET, HEAD and OPTIONS read; usage and job metric batches are ingest; the rest write.
RateClass rate_class_of(std::string_view method, std::string_view path);
// The 429's detail: who sent too many requests of class `c` (by: "token", "address", "tenant").
Message rate_limited_message(std::string_view by, RateClass c);

struct RateRule {
  int64_t per_second = 0;  // sustained rate; 0 = unlimited
  int64_t burst = 0;       // bucket size (at least 1 when limited)
};

struct RateLimits {
  // Per token and per source address, for each class. The address limits are larger: many users
  // may share one address (a NAT, the dashboard's proxy).
  std::array<RateRule, 3> per_token{{{200, 400}, {50, 100}, {50, 100}}};
  std::array<RateRule, 3> per_address{{{1000, 2000}, {200, 400}, {200, 400}}};
  // Per tenant, all its users' tokens together.
  std::array<RateRule, 3> per_tenant{{{1000, 2000}, {200, 400}, {200, 400}}};
  // Job metric points a second per tenant (its jobs' batches together); 0: unlimited.
  RateRule metric_points_per_tenant{};
  size_t max_keys = 100000;
};

class RateLimiter {
 public:
  explicit RateLimiter(RateLimits limits) : limits_(limits) {}

  struct Decision {
    bool allowed = true;
    int64_t retry_after_ms = 0;  // when refused: how long until a token is back
    const char* by = "";         // "token", "address" or "tenant" when refused
  };
  // Takes one token from the address's bucket and, when `token_key` is not empty, from the
  // token's. Refused requests take nothing.
  Decision check(RateClass c, std::string_view address, std::string_view token_key, int64_t now_ms);
  // Takes one token from the tenant's bucket (an authenticated tenant user's request, after
  // check). Refused requests take nothing here.
  Decision check_tenant(RateClass c, std::string_view tenant_id, int64_t now_ms);
  // Takes `points` tokens from the tenant's metric-points bucket (whose burst must hold the largest
  // batch: one larger is never let through). Refused batches take nothing; by "metric_points".
  Decision check_points(std::string_view tenant_id, int64_t points, int64_t now_ms);

  // Requests refused so far, per class (for /metrics).
  std::array<uint64_t, 3> refused() const;
  const RateLimits& limits() const { return limits_; }

 private:
  struct Bucket {
    int64_t milli_tokens = 0;  // tokens x 1000, so slow rates refill smoothly
    int64_t at_ms = 0;
  };
  using Table = std::unordered_map<std::string, Bucket>;
  static int64_t refill(Bucket& b, const RateRule& r, int64_t now_ms);
  void trim(Table& t, const RateRule& r, int64_t now_ms);
  Bucket& bucket(Table& t, const RateRule& r, std::string_view key, int64_t now_ms);

  RateLimits limits_;
  mutable std::mutex mu_;
  std::array<Table, 3> by_token_, by_address_, by_tenant_;
  Table points_by_tenant_;
  std::array<uint64_t, 3> refused_{};
};

}  // namespace gpurent
