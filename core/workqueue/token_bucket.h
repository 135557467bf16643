// token_bucket.h: TokenBucket, the overall rate limit on work-queue retries (qps with a burst).
//
// Thread-safety: thread-compatible (the work queue calls it under its own mutex).
#ifndef PORTICO_CORE_WORKQUEUE_TOKEN_BUCKET_H_
#define PORTICO_CORE_WORKQUEUE_TOKEN_BUCKET_H_

#include <optional>

#include "core/common/clock.h"

namespace portico::core {

// TokenBucket holds up to `burst` tokens and refills at `qps` tokens per second. Reserve always
// succeeds: it takes a token now or books one in the future (the balance goes negative), and
// returns how long the caller must wait for it, so reservations are served in order at `qps`.
class TokenBucket {
 public:
  // qps <= 0 means unlimited (Reserve always returns zero). A burst below 1 is treated as 1.
  TokenBucket(double qps, int burst);

  // Reserve books one token at `now` and returns the wait until it is available (zero when a
  // token was in the bucket). `now` earlier than a previous call counts as that call's time.
  Clock::Duration Reserve(Clock::TimePoint now);

 private:
  double qps_;
  double burst_;
  double tokens_;                         // may be negative: tokens already booked
  std::optional<Clock::TimePoint> last_;  // time of the last refill
};

}  // namespace portico::core

#endif  // PORTICO_CORE_WORKQUEUE_TOKEN_BUCKET_H_
