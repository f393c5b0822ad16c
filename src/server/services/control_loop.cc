#include "server/services/control_loop.h"

namespace gpurent {

ControlLoop::ControlLoop(Store& store) : store_(store), thread_([this] { loop(); }) {}

ControlLoop::~ControlLoop() { stop(); }

void ControlLoop::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Status ControlLoop::run(Command cmd) {
  std::future<Status> fut;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return Error::make(Code::kUnavailable, Message("services.control_loop.shutting_down"));
    queue_.push_back(Item{std::move(cmd), {}});
    fut = queue_.back().done.get_future();
  }
  cv_.notify_one();
  return fut.get();
}

void ControlLoop::set_fence(Command precheck, Command fence) {
  std::lock_guard<std::mutex> lock(mu_);
  precheck_ = std::move(precheck);
  fence_ = std::move(fence);
}

size_t ControlLoop::queue_depth() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

bool ControlLoop::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !stopping_;
}

void ControlLoop::loop() {
  for (;;) {
    Item item;
    Command precheck, fence;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      item = std::move(queue_.front());
      queue_.pop_front();
      precheck = precheck_;
      fence = fence_;
    }
    Status st = Error::make(Code::kInternal, "command did not run");
    try {
      if (fence)
        st = store_.write([&](StoreTx& tx) -> Status {
          // First, before the command's effects outside the store (a tick's sbatch or scancel): a
          // leader deposed before the command began does nothing of it.
          if (precheck)
            if (auto s = precheck(tx); !s) return s;
          if (auto s = item.cmd(tx); !s) return s;
          return fence(tx);  // last: what it checks holds until the commit
        });
      else
        st = store_.write(item.cmd);
    } catch (const std::exception& e) {
      st = Error::make(Code::kInternal, std::string("internal error: ") + e.what());
    }
    item.done.set_value(std::move(st));
  }
}

}  // namespace gpurent
