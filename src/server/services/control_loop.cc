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

void ControlLoop::set_fence(Command fence) {
  std::lock_guard<std::mutex> lock(mu_);
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
    Command fence;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      item = std::move(queue_.front());
      queue_.pop_front();
      fence = fence_;
    }
    Status st = Error::make(Code::kInternal, "command did not run");
    try {
      if (fence)
        st = store_.write([&](StoreTx& tx) -> Status {
          // First, before the command's effects outside the store (a tick's sbatch or scancel): the
          // lease row it locks stays locked until the commit, so no takeover lands mid-command and
          // a deposed leader submits nothing (checked last, it let one more tick reach Slurm).
          if (auto s = fence(tx); !s) return s;
          return item.cmd(tx);
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
