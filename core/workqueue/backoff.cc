#include "core/workqueue/backoff.h"

#include <algorithm>

namespace portico::core {

ExponentialBackoff::ExponentialBackoff(Clock::Duration base, Clock::Duration max)
    : base_(std::max(base, Clock::Duration(1))), max_(std::max(max, base_)) {}

Clock::Duration ExponentialBackoff::Delay(int requeues) const {
  if (requeues <= 0) return base_;
  // base << requeues overflows past 62 bits; compare against max shifted the other way.
  if (requeues >= 62 || base_.count() > (max_.count() >> requeues)) return max_;
  return Clock::Duration(base_.count() << requeues);
}

}  // namespace portico::core
