// LeaderLease: which of several servers on one database does the control-loop work that must run
// once (the scheduler and its executor, the cost firewall, the usage roll-up and scrapes, image
// builds, the demo meter). Every server serves reads and accepts writes; one holds the lease.
//
// The lease is one stored record (kind "leases", id "lse_leader": holder, token, expires_at), so
// it needs nothing beyond the Store contract:
//  * A follower tries to take it every ttl/4: when it is absent, or expired by the follower's
//    clock, it writes itself as holder with token + 1 (the fencing token) and expires_at = now +
//    ttl. Two followers racing update the same version; the store lets one win (kConflict for
//    the other).
//  * The leader renews it every ttl/3 on a store connection of its own (`lease_store`), apart from
//    the control loop, so a long command (a scheduler tick over a deep queue) does not let it lapse.
//  * Fencing: the leader's control loop ends every command's transaction with fence(), which reads
//    the lease locked (StoreTx::get_locked: another server's update of it waits for the commit) and
//    refuses the command (kUnavailable, nothing of it written) unless this server still holds it
//    under its token. So a takeover commits either before the fence (the command is refused) or
//    after the command's commit: a deposed leader's late write is never interleaved with the new
//    leader's. Each command also begins with precheck(), the same check unlocked: a leader deposed
//    before the command began (paused, cut off) does nothing of it, not even a tick's sbatch. (A
//    takeover during a command can still meet that command's calls to Slurm; locking the lease for
//    the whole command instead would hold its renewal that long, and a long tick would lose it.)
//  * A leader that finds the lease taken (renewing, or in the fence) calls on_lost once (the server
//    then exits: run servers under a supervisor that restarts them; they come back as followers).
// Expiry compares server clocks: keep them within a small fraction of the ttl (NTP).
// Thread-safe: start/stop from the owning thread; the state is read from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "core/clock.h"
#include "core/result.h"
#include "server/services/control_loop.h"

namespace gpurent {

struct LeaseView {
  bool leader = false;
  std::string holder;    // who holds it as last seen (empty: nobody yet)
  int64_t token = 0;     // its fencing token as last seen
  TimeMs expires_at = 0;
};

class LeaderLease {
 public:
  // lease_store: a store on the same database with a writer connection of its own (not the
  // loop's). holder: this server's identity (unique per process); ttl_ms: how long a lease lasts
  // unrenewed.
  LeaderLease(ControlLoop& loop, Store& lease_store, const Clock& clock, std::string holder, int64_t ttl_ms);
  ~LeaderLease();
  LeaderLease(const LeaderLease&) = delete;
  LeaderLease& operator=(const LeaderLease&) = delete;

  // One attempt now: takes the lease when it is free or expired. True when this server holds it
  // afterwards; then the loop's commands are fenced.
  Result<bool> try_acquire();
  // The ticker: a follower tries to take the lease (on_elected once it does), a leader renews it;
  // a leader that finds it taken calls on_lost (once) with the reason — also when it found it
  // taken before start (a long startup: the lease is not renewed until the ticker runs), at once.
  void start(std::function<void()> on_elected, std::function<void(const std::string&)> on_lost);
  void stop();

  LeaseView view() const;
  const std::string& holder() const { return holder_; }
  int64_t ttl_ms() const { return ttl_ms_; }

 private:
  Status fence(StoreTx& tx);
  Status precheck(StoreTx& tx);  // the same check unlocked, before a command (control_loop.h)
  Status renew();
  void lost(const std::string& why);
  void report_lost();  // on_lost, once, when set and the lease was lost
  void run();

  ControlLoop& loop_;
  Store& store_;
  const Clock& clock_;
  const std::string holder_;
  const int64_t ttl_ms_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  LeaseView view_;
  bool stopping_ = false;
  std::atomic<bool> lost_{false};
  std::atomic<bool> lost_reported_{false};
  std::string lost_why_;  // guarded by mu_
  std::function<void()> on_elected_;
  std::function<void(const std::string&)> on_lost_;  // guarded by mu_
  std::thread thread_;
};

}  // namespace gpurent
