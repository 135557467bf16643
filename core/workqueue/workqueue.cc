#include "core/workqueue/workqueue.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace portico::core {
namespace {

// Longest single condition-variable wait; waits loop, so this only bounds the arithmetic
// (steady_clock::now() + Duration::max() would overflow).
constexpr Clock::Duration kMaxWaitSlice = std::chrono::hours(1);

}  // namespace

Status WorkQueueOptions::Validate() const {
  if (base_delay <= Clock::Duration::zero()) {
    return InvalidArgumentError("workqueue options: base_delay must be positive");
  }
  if (max_delay < base_delay) {
    return InvalidArgumentError("workqueue options: max_delay must be at least base_delay");
  }
  if (std::isnan(retry_qps)) return InvalidArgumentError("workqueue options: retry_qps is NaN");
  if (retry_qps > 0 && retry_burst < 1) {
    return InvalidArgumentError("workqueue options: retry_burst must be at least 1");
  }
  return OkStatus();
}

WorkQueue::WorkQueue(WorkQueueOptions options)
    : clock_(options.clock != nullptr ? options.clock : Clock::Real()),
      backoff_(options.base_delay, options.max_delay),
      max_retries_(options.max_retries),
      bucket_(std::isnan(options.retry_qps) ? 0 : options.retry_qps, options.retry_burst) {
  clock_->AddObserver(this);
}

WorkQueue::~WorkQueue() { clock_->RemoveObserver(this); }

void WorkQueue::OnTimeJump() {
  // Taking mu_ orders this notification after any waiter's check of Now(): no lost wake-up.
  { std::lock_guard lock(mu_); }
  ready_cv_.notify_all();
  idle_cv_.notify_all();
}

bool WorkQueue::Add(const std::string& key) {
  std::lock_guard lock(mu_);
  if (state_ != State::kRunning) {
    ++counters_.rejected;
    return false;
  }
  ++counters_.adds;
  AddLocked(key);
  return true;
}

bool WorkQueue::AddAfter(const std::string& key, Clock::Duration delay) {
  std::lock_guard lock(mu_);
  if (state_ != State::kRunning) {
    ++counters_.rejected;
    return false;
  }
  ++counters_.adds;
  if (delay <= Clock::Duration::zero()) {
    AddLocked(key);
  } else {
    AddAfterLocked(key, SaturatingAdd(clock_->Now(), delay));
  }
  return true;
}

bool WorkQueue::AddRateLimited(const std::string& key) {
  std::lock_guard lock(mu_);
  if (state_ != State::kRunning) {
    ++counters_.rejected;
    return false;
  }
  auto it = requeues_.try_emplace(key, 0).first;
  if (max_retries_ >= 0 && it->second >= max_retries_) {
    requeues_.erase(it);
    ++counters_.dropped;
    return false;
  }
  Clock::TimePoint now = clock_->Now();
  // Both limits are consulted every time (the bucket books a token even when the backoff is
  // longer), as client-go's MaxOfRateLimiter does.
  Clock::Duration delay = std::max(backoff_.Delay(it->second), bucket_.Reserve(now));
  ++it->second;
  ++counters_.retries;
  AddAfterLocked(key, SaturatingAdd(now, delay));
  return true;
}

void WorkQueue::Forget(const std::string& key) {
  std::lock_guard lock(mu_);
  requeues_.erase(key);
}

int WorkQueue::NumRequeues(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = requeues_.find(key);
  return it == requeues_.end() ? 0 : it->second;
}

std::optional<std::string> WorkQueue::Get() { return GetUntil(Clock::TimePoint::max()); }

std::optional<std::string> WorkQueue::TryGet(Clock::Duration timeout) {
  return GetUntil(SaturatingAdd(clock_->Now(), timeout));
}

std::optional<std::string> WorkQueue::GetUntil(Clock::TimePoint deadline) {
  std::unique_lock lock(mu_);
  while (true) {
    if (state_ == State::kStopped) return std::nullopt;
    Clock::TimePoint now = clock_->Now();
    PromoteDueLocked(now);
    if (!queue_.empty()) {
      std::string key = std::move(queue_.front());
      queue_.pop_front();
      dirty_.erase(key);
      processing_.insert(key);
      if (!queue_.empty()) ready_cv_.notify_one();  // promotion may have readied several keys
      return key;
    }
    // Draining: an in-flight key may still be re-queued by its Done, so wait for those.
    if (state_ == State::kDraining && processing_.empty()) return std::nullopt;
    if (now >= deadline) return std::nullopt;
    Clock::TimePoint wake = deadline;
    if (!delayed_.empty()) wake = std::min(wake, delayed_.top().due);
    WaitLocked(ready_cv_, lock, wake);
  }
}

void WorkQueue::Done(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = processing_.find(key);
  if (it == processing_.end()) return;
  processing_.erase(it);
  ++counters_.processed;
  if (dirty_.count(key) > 0) {  // added while in flight: run again
    queue_.push_back(key);
    ready_cv_.notify_one();
  }
  NotifyIfIdleLocked();
}

void WorkQueue::ShutDown() {
  std::lock_guard lock(mu_);
  state_ = State::kStopped;
  DiscardDelayedLocked();
  ready_cv_.notify_all();
  idle_cv_.notify_all();
}

bool WorkQueue::ShutDownWithDrain() {
  std::unique_lock lock(mu_);
  if (state_ == State::kStopped) return IdleLocked();
  state_ = State::kDraining;
  DiscardDelayedLocked();
  ready_cv_.notify_all();  // Get waiters re-check: the queue may already be drained
  idle_cv_.wait(lock, [this] { return state_ == State::kStopped || IdleLocked(); });
  bool drained = IdleLocked();
  state_ = State::kStopped;
  ready_cv_.notify_all();
  return drained;
}

bool WorkQueue::ShuttingDown() const {
  std::lock_guard lock(mu_);
  return state_ != State::kRunning;
}

bool WorkQueue::WaitUntilIdle(Clock::Duration timeout) {
  std::unique_lock lock(mu_);
  Clock::TimePoint deadline = SaturatingAdd(clock_->Now(), timeout);
  while (!IdleLocked()) {
    if (state_ == State::kStopped || clock_->Now() >= deadline) return false;
    WaitLocked(idle_cv_, lock, deadline);
  }
  return true;
}

WorkQueueCounters WorkQueue::Counters() {
  std::lock_guard lock(mu_);
  PromoteDueLocked(clock_->Now());
  WorkQueueCounters out = counters_;
  out.depth = queue_.size();
  out.in_flight = processing_.size();
  out.waiting = waiting_.size();
  return out;
}

size_t WorkQueue::Len() {
  std::lock_guard lock(mu_);
  PromoteDueLocked(clock_->Now());
  return queue_.size();
}

void WorkQueue::AddLocked(const std::string& key) {
  if (!dirty_.insert(key).second) {
    ++counters_.deduplicated;  // queued or re-run already pending
    return;
  }
  if (processing_.count(key) > 0) return;  // Done(key) queues it again
  queue_.push_back(key);
  ready_cv_.notify_one();
}

void WorkQueue::AddAfterLocked(const std::string& key, Clock::TimePoint due) {
  auto [it, inserted] = waiting_.try_emplace(key, due);
  if (!inserted) {
    ++counters_.deduplicated;
    if (due >= it->second) return;  // keep the earlier due time
    it->second = due;               // the older heap entry goes stale
  }
  bool earliest = delayed_.empty() || due < delayed_.top().due;
  delayed_.push(Delayed{due, delayed_seq_++, key});
  if (earliest) ready_cv_.notify_all();  // Get waiters sleeping until a later due time
}

void WorkQueue::PromoteDueLocked(Clock::TimePoint now) {
  while (!delayed_.empty() && delayed_.top().due <= now) {
    Delayed entry = delayed_.top();
    delayed_.pop();
    auto it = waiting_.find(entry.key);
    if (it == waiting_.end() || it->second != entry.due) continue;  // stale
    waiting_.erase(it);
    AddLocked(entry.key);
  }
}

void WorkQueue::DiscardDelayedLocked() {
  waiting_.clear();
  delayed_ = {};
}

void WorkQueue::NotifyIfIdleLocked() {
  if (!IdleLocked()) return;
  idle_cv_.notify_all();
  if (state_ == State::kDraining) ready_cv_.notify_all();  // Get returns nullopt: drained
}

void WorkQueue::WaitLocked(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                           Clock::TimePoint wake) {
  Clock::TimePoint now = clock_->Now();
  if (wake <= now) return;
  // On the real clock this sleeps until `wake`; on a fake clock OnTimeJump wakes it early.
  cv.wait_for(lock, std::min(wake - now, kMaxWaitSlice));
}

}  // namespace portico::core
