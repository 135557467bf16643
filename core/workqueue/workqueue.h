// workqueue.h: WorkQueue, the controller's queue of per-object keys
// ("gateway.networking.k8s.io/HTTPRoute/default/web") between the ConfigCenter and processors.
//
// Guarantees (DESIGN.md §6):
//  - De-duplication: a key waiting to be processed is queued once however often it is added.
//  - No concurrent processing of one key: a key added while it is being processed (between
//    Get() returning it and Done(key)) is not handed out again until Done, and then runs again.
//  - Retries: AddRateLimited applies the key's exponential backoff and a token bucket; the rate
//    limit applies to retries only, never to fresh Add()s.
//
// Typical worker:
//   while (std::optional<std::string> key = queue.Get()) {
//     if (Process(*key).ok()) queue.Forget(*key); else queue.AddRateLimited(*key);
//     queue.Done(*key);
//   }
//
// Thread-safety: every method may be called from any thread. Ownership: the queue owns its keys;
// it does not own options.clock, which must outlive it.
#ifndef PORTICO_CORE_WORKQUEUE_WORKQUEUE_H_
#define PORTICO_CORE_WORKQUEUE_WORKQUEUE_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/common/clock.h"
#include "core/workqueue/backoff.h"
#include "core/workqueue/token_bucket.h"
#include "portico/sdk/status.h"

namespace portico::core {

// WorkQueueOptions configures a WorkQueue. Defaults follow client-go's controller queue.
struct WorkQueueOptions {
  // Per-key retry delay: base_delay * 2^requeues, at most max_delay.
  Clock::Duration base_delay = std::chrono::milliseconds(5);
  Clock::Duration max_delay = std::chrono::seconds(1000);
  // Token bucket on retries only: retry_qps per second with bursts of retry_burst.
  // retry_qps <= 0 disables it.
  double retry_qps = 10;
  int retry_burst = 100;
  // Retries allowed per key since its last Forget; AddRateLimited beyond that drops the key.
  // Negative means unlimited (the backoff cap already bounds the load).
  int max_retries = -1;
  // Time source for delays and timeouts; nullptr means Clock::Real(). Not owned.
  Clock* clock = nullptr;

  // Validate reports options that make no sense (non-positive delays, max below base, a burst
  // below 1 with a rate limit).
  Status Validate() const;
};

// WorkQueueCounters is a point-in-time snapshot of a queue's counters and gauges.
struct WorkQueueCounters {
  uint64_t adds = 0;          // Add and AddAfter calls accepted
  uint64_t deduplicated = 0;  // requests merged into a pending request for the same key
  uint64_t retries = 0;       // AddRateLimited calls accepted
  uint64_t dropped = 0;       // AddRateLimited calls refused because max_retries was reached
  uint64_t rejected = 0;      // add requests refused because the queue is shutting down
  uint64_t processed = 0;     // Done calls that finished an in-flight key
  size_t depth = 0;           // keys ready and waiting for Get
  size_t in_flight = 0;       // keys handed out by Get and not yet Done
  size_t waiting = 0;         // delayed keys (AddAfter, AddRateLimited) not yet due
};

// WorkQueue is a de-duplicating FIFO of string keys with delayed adds and retry limits.
// See the file comment for guarantees and thread-safety.
class WorkQueue final : private ClockObserver {
 public:
  // `options` should pass Validate(); out-of-range values are clamped to the nearest sane one.
  explicit WorkQueue(WorkQueueOptions options = {});
  // Unregisters from the clock. No thread may still be using the queue (shut it down and join
  // the workers first).
  ~WorkQueue();

  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Add queues `key` for processing now unless it is already queued. Returns false (and counts
  // it rejected) once shutdown started.
  bool Add(const std::string& key);
  // AddAfter queues `key` once `delay` has passed on the queue's clock (now if delay <= 0). A key
  // already waiting keeps the earlier of its two due times. Returns false once shutdown started.
  bool AddAfter(const std::string& key, Clock::Duration delay);
  // AddRateLimited queues a retry of `key` after max(its backoff, the token bucket's wait) and
  // counts a requeue. Returns false without queuing when the key already used max_retries
  // (the key is then forgotten and counted dropped) or once shutdown started.
  bool AddRateLimited(const std::string& key);
  // Forget resets `key`'s backoff and retry count (call it when processing succeeded). It does
  // not remove the key from the queue.
  void Forget(const std::string& key);
  // NumRequeues returns how many retries of `key` were queued since its last Forget.
  int NumRequeues(const std::string& key) const;

  // Get blocks until a key is ready and returns it, marking it in flight; the caller must call
  // Done(key) afterwards. Returns nullopt after ShutDown(), or after ShutDownWithDrain() once
  // every queued and in-flight key was processed.
  std::optional<std::string> Get();
  // TryGet is Get with a timeout on the queue's clock; nullopt on timeout or shutdown (tell them
  // apart with ShuttingDown()). A zero timeout only takes a key that is ready now.
  std::optional<std::string> TryGet(Clock::Duration timeout);
  // Done ends the processing of `key` and re-queues it if it was added meanwhile. Keys not in
  // flight are ignored.
  void Done(const std::string& key);

  // ShutDown stops the queue at once: adds are refused, delayed keys are discarded, Get returns
  // nullopt (queued keys are abandoned) and in-flight keys may still call Done. Aborts a
  // concurrent ShutDownWithDrain. Does not block.
  void ShutDown();
  // ShutDownWithDrain refuses new adds and discards delayed keys, then blocks until every queued
  // and in-flight key (including one re-added before the drain started) was processed; Get keeps
  // handing out keys until then. Returns true when drained, false if ShutDown() interrupted it.
  // Must not be called by a thread holding an in-flight key (it would wait for itself).
  bool ShutDownWithDrain();
  // ShuttingDown reports whether ShutDown or ShutDownWithDrain was called.
  bool ShuttingDown() const;

  // WaitUntilIdle blocks until no key is queued or in flight (delayed keys do not count), for at
  // most `timeout` on the queue's clock; returns whether the queue became idle. The controller
  // uses it to become ready after its initial processing.
  bool WaitUntilIdle(Clock::Duration timeout);

  // Counters returns a snapshot of the counters (moving keys that came due into the queue first).
  WorkQueueCounters Counters();
  // Len returns the number of keys ready for Get (the depth).
  size_t Len();

 private:
  enum class State { kRunning, kDraining, kStopped };

  // A delayed key; stale when waiting_[key] no longer equals due (the key was re-added earlier,
  // became due, or shutdown discarded it).
  struct Delayed {
    Clock::TimePoint due;
    uint64_t seq;  // FIFO among equal due times
    std::string key;
    bool operator>(const Delayed& o) const { return due != o.due ? due > o.due : seq > o.seq; }
  };

  void OnTimeJump() override;

  // The *Locked helpers require mu_.
  void AddLocked(const std::string& key);
  void AddAfterLocked(const std::string& key, Clock::TimePoint due);
  void PromoteDueLocked(Clock::TimePoint now);
  void DiscardDelayedLocked();
  bool IdleLocked() const { return queue_.empty() && processing_.empty(); }
  void NotifyIfIdleLocked();
  std::optional<std::string> GetUntil(Clock::TimePoint deadline);
  // WaitLocked blocks on `cv` until notified or `wake` (on clock_) passes.
  void WaitLocked(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                  Clock::TimePoint wake);

  Clock* const clock_;
  const ExponentialBackoff backoff_;
  const int max_retries_;

  mutable std::mutex mu_;
  std::condition_variable ready_cv_;  // Get waiters: a key is ready, time jumped, shutdown
  std::condition_variable idle_cv_;   // drain and WaitUntilIdle waiters
  State state_ = State::kRunning;
  std::deque<std::string> queue_;               // ready keys, FIFO; each also in dirty_
  std::unordered_set<std::string> dirty_;       // keys needing processing
  std::unordered_set<std::string> processing_;  // keys in flight
  std::unordered_map<std::string, Clock::TimePoint> waiting_;  // delayed key -> due time
  std::priority_queue<Delayed, std::vector<Delayed>, std::greater<>> delayed_;
  uint64_t delayed_seq_ = 0;
  std::unordered_map<std::string, int> requeues_;
  TokenBucket bucket_;
  WorkQueueCounters counters_;  // depth, in_flight and waiting are filled in by Counters()
};

}  // namespace portico::core

#endif  // PORTICO_CORE_WORKQUEUE_WORKQUEUE_H_
