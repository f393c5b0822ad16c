// The single writer. Every state change — API writes now, scheduler and executor decisions later —
// runs as a command on this one thread, each inside one store transaction. HTTP threads validate
// input, then submit() a command and wait for its committed result: an acknowledged write is durable.
// Thread-safe: submit() may be called from any thread; commands run one at a time, in order.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "core/result.h"
#include "store/store.h"

namespace gpurent {

class ControlLoop {
 public:
  // A command gets the open transaction; returning an error rolls the transaction back.
  using Command = std::function<Status(StoreTx&)>;

  explicit ControlLoop(Store& store);
  ~ControlLoop();  // stops after draining queued commands
  ControlLoop(const ControlLoop&) = delete;
  ControlLoop& operator=(const ControlLoop&) = delete;

  // Queues a command and blocks until it has committed (or failed). kUnavailable once stopping.
  Status run(Command cmd);
  // From now on every command begins by running `precheck` and ends by running `fence` in its
  // transaction, and fails with their error (nothing of it written) when one refuses. Used by
  // LeaderLease: a server that leads several on one database writes only while it still holds the
  // lease (the fence, last, locks it until the commit), and a deposed one does nothing of a command
  // (a tick's sbatch) once the takeover is committed (the precheck, an unlocked read: locking there
  // would hold the lease's renewal for the whole command). Empty: none.
  void set_fence(Command precheck, Command fence);
  size_t queue_depth() const;
  bool running() const;
  void stop();

 private:
  struct Item {
    Command cmd;
    std::promise<Status> done;
  };
  void loop();

  Store& store_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  Command precheck_, fence_;  // guarded by mu_; copied by the loop per command
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace gpurent
