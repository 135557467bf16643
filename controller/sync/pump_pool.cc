#include "controller/sync/pump_pool.h"

#include <algorithm>
#include <utility>

namespace portico::controller::sync {

void PumpPool::Start(int workers) {
  {
    std::lock_guard lock(mu_);
    stop_ = false;
  }
  for (int i = 0; i < std::max(1, workers); ++i) {
    workers_.emplace_back([this] { WorkerLoop(); });
  }
}

void PumpPool::Schedule(const std::shared_ptr<WatchStream>& stream) {
  if (!stream->MarkScheduled()) return;
  {
    std::lock_guard lock(mu_);
    queue_.push_back(stream);
  }
  cv_.notify_one();
}

void PumpPool::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
}

void PumpPool::WorkerLoop() {
  while (true) {
    std::shared_ptr<WatchStream> stream;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and drained
      stream = std::move(queue_.front());
      queue_.pop_front();
    }
    stream->Pump();
  }
}

}  // namespace portico::controller::sync
