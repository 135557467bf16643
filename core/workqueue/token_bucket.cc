#include "core/workqueue/token_bucket.h"

#include <algorithm>
#include <chrono>

namespace portico::core {

TokenBucket::TokenBucket(double qps, int burst)
    : qps_(qps), burst_(std::max(burst, 1)), tokens_(burst_) {}

Clock::Duration TokenBucket::Reserve(Clock::TimePoint now) {
  if (qps_ <= 0) return Clock::Duration::zero();
  if (!last_.has_value()) last_ = now;
  if (now > *last_) {
    std::chrono::duration<double> elapsed = now - *last_;
    tokens_ = std::min(burst_, tokens_ + elapsed.count() * qps_);
    last_ = now;
  }
  tokens_ -= 1;
  if (tokens_ >= 0) return Clock::Duration::zero();
  return std::chrono::ceil<Clock::Duration>(std::chrono::duration<double>(-tokens_ / qps_));
}

}  // namespace portico::core
