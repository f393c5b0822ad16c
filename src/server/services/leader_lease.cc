#include "server/services/leader_lease.h"

#include <algorithm>
#include <chrono>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

namespace gpurent {
namespace {

constexpr const char* kKind = "leases";

void log_lease_event(const nlohmann::json& fields) { spdlog::info("{}", fields.dump()); }
constexpr const char* kId = "lse_leader";

LeaseView read_view(const Record& r) {
  LeaseView v;
  v.holder = r.body.value("holder", "");
  v.token = r.body.value("token", int64_t{0});
  v.expires_at = r.body.value("expires_at", TimeMs{0});
  return v;
}

void write_view(Record& r, const LeaseView& v, TimeMs now) {
  r.body = {{"holder", v.holder}, {"token", v.token}, {"expires_at", v.expires_at}};
  r.updated_at = now;
}

}  // namespace

LeaderLease::LeaderLease(ControlLoop& loop, Store& lease_store, const Clock& clock, std::string holder, int64_t ttl_ms)
    : loop_(loop), store_(lease_store), clock_(clock), holder_(std::move(holder)), ttl_ms_(std::max<int64_t>(ttl_ms, 100)) {}

LeaderLease::~LeaderLease() {
  stop();
  loop_.set_fence(nullptr, nullptr);  // the loop may outlive this
}

LeaseView LeaderLease::view() const {
  std::lock_guard lock(mu_);
  return view_;
}

Result<bool> LeaderLease::try_acquire() {
  if (view().leader) return true;
  LeaseView seen;
  bool taken = false;
  Status st = store_.write([&](StoreTx& tx) -> Status {
    const TimeMs now = clock_.now();
    auto r = tx.get(kKind, kId);
    if (!r && r.error().code != Code::kNotFound) return r.error();
    if (!r) {  // the first server on this database
      Record n;
      n.kind = kKind;
      n.id = kId;
      n.name = "leader";
      n.created_at = now;
      seen = {true, holder_, 1, now + ttl_ms_};
      write_view(n, seen, now);
      if (auto s = tx.insert(n); !s) return s;
      taken = true;
      return ok_status();
    }
    seen = read_view(*r);
    if (seen.holder != holder_ && seen.expires_at > now) return ok_status();  // someone leads
    Record u = *r;
    seen = {true, holder_, seen.holder == holder_ ? seen.token : seen.token + 1, now + ttl_ms_};
    write_view(u, seen, now);
    if (auto s = tx.update(u); !s) return s;
    taken = true;
    return ok_status();
  });
  if (!st) {
    // Another server took it in the same instant: it leads.
    if (st.error().code == Code::kConflict) return false;
    return st.error();
  }
  {
    std::lock_guard lock(mu_);
    view_ = seen;
    view_.leader = taken;
  }
  if (taken) {
    loop_.set_fence([this](StoreTx& tx) { return precheck(tx); }, [this](StoreTx& tx) { return fence(tx); });
    log_lease_event({{"event", "leader_elected"}, {"holder", holder_}, {"token", seen.token}, {"ttl_ms", ttl_ms_}});
  }
  return taken;
}

Status LeaderLease::precheck(StoreTx& tx) {
  const int64_t token = view().token;
  auto r = tx.get(kKind, kId);  // not locked: the renewal must not wait for the command
  if (!r) return r.error();
  const LeaseView seen = read_view(*r);
  if (seen.holder == holder_ && seen.token == token) return ok_status();
  lost("the lease is held by " + seen.holder + " (token " + std::to_string(seen.token) + ")");
  return Error::make(
      Code::kUnavailable,
      Message("services.leader.not_leader").arg("holder", seen.holder).arg("token", std::to_string(seen.token)));
}

Status LeaderLease::fence(StoreTx& tx) {
  const int64_t token = view().token;
  auto r = tx.get_locked(kKind, kId);  // held until the command commits
  if (!r) return r.error();
  const LeaseView seen = read_view(*r);
  if (seen.holder == holder_ && seen.token == token) return ok_status();
  lost("the lease is held by " + seen.holder + " (token " + std::to_string(seen.token) + ")");
  return Error::make(Code::kUnavailable, Message("services.leader.not_leader")
                                             .arg("holder", seen.holder)
                                             .arg("token", std::to_string(seen.token)));
}

Status LeaderLease::renew() {
  const int64_t token = view().token;
  LeaseView next;
  std::string taken_by;
  Status st = store_.write([&](StoreTx& tx) -> Status {
    const TimeMs now = clock_.now();
    auto r = tx.get(kKind, kId);
    if (!r) return r.error();
    const LeaseView seen = read_view(*r);
    if (seen.holder != holder_ || seen.token != token) {
      taken_by = seen.holder + " (token " + std::to_string(seen.token) + ")";
      return ok_status();
    }
    Record u = *r;
    next = seen;
    next.expires_at = std::max(seen.expires_at, now + ttl_ms_);
    write_view(u, next, now);
    return tx.update(u);
  });
  if (!taken_by.empty()) {
    lost("the lease is held by " + taken_by);
    return ok_status();
  }
  if (!st) return st;
  std::lock_guard lock(mu_);
  view_.expires_at = next.expires_at;
  return ok_status();
}

void LeaderLease::lost(const std::string& why) {
  if (lost_.exchange(true)) return;
  {
    std::lock_guard lock(mu_);
    view_.leader = false;
    lost_why_ = why;
  }
  log_lease_event({{"event", "leader_lost"}, {"holder", holder_}, {"why", why}});
  report_lost();
}

void LeaderLease::report_lost() {
  std::function<void(const std::string&)> cb;
  std::string why;
  {
    std::lock_guard lock(mu_);
    cb = on_lost_;
    why = lost_why_;
  }
  if (cb && lost_ && !lost_reported_.exchange(true)) cb(why);
}

void LeaderLease::start(std::function<void()> on_elected, std::function<void(const std::string&)> on_lost) {
  {
    std::lock_guard lock(mu_);
    on_elected_ = std::move(on_elected);
    on_lost_ = std::move(on_lost);
  }
  // Lost before the ticker ran (a startup longer than the lease, the fence finding it taken):
  // said now, or this server would stay up refusing every write as a deposed leader.
  if (lost_) {
    report_lost();
    return;
  }
  thread_ = std::thread([this] { run(); });
}

void LeaderLease::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void LeaderLease::run() {
  bool was_leader = view().leader;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      const int64_t wait_ms = view_.leader ? ttl_ms_ / 3 : ttl_ms_ / 4;
      if (cv_.wait_for(lock, std::chrono::milliseconds(wait_ms), [this] { return stopping_; })) return;
    }
    if (lost_) return;
    if (was_leader) {
      // On the lease's own connection: a long command on the loop does not hold it up. A conflict
      // (the loop's fence held the row a moment) or an unreachable database is tried again next time.
      if (Status st = renew(); !st)
        log_lease_event({{"event", "leader_renew_failed"}, {"holder", holder_}, {"error", st.error().message}});
      continue;
    }
    auto taken = try_acquire();
    if (!taken) {
      log_lease_event({{"event", "leader_acquire_failed"}, {"holder", holder_}, {"error", taken.error().message}});
      continue;
    }
    if (*taken) {
      was_leader = true;
      if (on_elected_) on_elected_();
    }
  }
}

}  // namespace gpurent
