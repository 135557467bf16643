// backoff.h: ExponentialBackoff, the per-key retry delay of the work queue: base * 2^n, capped.
//
// Thread-safety: immutable after construction; safe for concurrent use. Holds no per-key state
// (the work queue counts each key's requeues).
#ifndef PORTICO_CORE_WORKQUEUE_BACKOFF_H_
#define PORTICO_CORE_WORKQUEUE_BACKOFF_H_

#include "core/common/clock.h"

namespace portico::core {

// ExponentialBackoff maps a key's number of earlier requeues to its next delay:
// requeues 0, 1, 2, ... give base, 2*base, 4*base, ..., never more than max.
class ExponentialBackoff {
 public:
  // A non-positive `base` is treated as 1 ns; a `max` below `base` as `base`.
  ExponentialBackoff(Clock::Duration base, Clock::Duration max);

  // Delay returns min(base * 2^requeues, max) without overflowing; negative counts as 0.
  Clock::Duration Delay(int requeues) const;

  Clock::Duration base() const { return base_; }
  Clock::Duration max() const { return max_; }

 private:
  Clock::Duration base_;
  Clock::Duration max_;
};

}  // namespace portico::core

#endif  // PORTICO_CORE_WORKQUEUE_BACKOFF_H_
