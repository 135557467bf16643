// pump_pool.h: PumpPool, the sync workers that run Watch streams' pumps (watch_stream.h), in the
// order the streams were scheduled; a stream is queued at most once at a time.
//
// Thread-safety: Schedule may be called from any thread, also before Start and after Stop (the
// stream then waits for the next Start, or is dropped with the pool). Start and Stop are called by
// the owner, in turn. Ownership: the pool holds a queued stream's shared_ptr until its pump ran.
#ifndef PORTICO_CONTROLLER_SYNC_PUMP_POOL_H_
#define PORTICO_CONTROLLER_SYNC_PUMP_POOL_H_

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "controller/sync/watch_stream.h"

namespace portico::controller::sync {

class PumpPool {
 public:
  PumpPool() = default;
  ~PumpPool() { Stop(); }
  PumpPool(const PumpPool&) = delete;
  PumpPool& operator=(const PumpPool&) = delete;

  // Start runs `workers` threads (at least one).
  void Start(int workers);
  // Schedule queues `stream` unless it is queued already (WatchStream::MarkScheduled).
  void Schedule(const std::shared_ptr<WatchStream>& stream);
  // Stop lets the workers drain the queue, then joins them.
  void Stop();

 private:
  void WorkerLoop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<WatchStream>> queue_;  // guarded by mu_
  bool stop_ = false;                               // guarded by mu_
  std::vector<std::thread> workers_;
};

}  // namespace portico::controller::sync

#endif  // PORTICO_CONTROLLER_SYNC_PUMP_POOL_H_
