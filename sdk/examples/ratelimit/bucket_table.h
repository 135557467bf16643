// bucket_table.h: BucketTable, the token buckets of one RateLimitPolicy on a gateway: one bucket
// per key (a route, a client address or a header value), each holding at most `requests`
// tokens and refilled continuously at `requests` per `interval`. A request takes one token; with
// none left it is refused, and the caller learns when the next token arrives (Retry-After).
//
// Arithmetic is exact: a bucket's level is kept in units of 1/interval_ms of a token (one token
// = interval_ms units, refill = requests units per millisecond), so no rounding drifts.
// Memory is bounded: beyond max_keys live keys, buckets that have refilled completely (the same
// as a fresh one) are dropped; if none can be, a new key shares its shard's overflow bucket
// until idle keys refill.
//
// Threading: Take may be called from every gateway worker at once; the table is split into
// shards, each behind its own mutex, held only for the few arithmetic steps of one Take (no
// allocation beyond a new key's first insertion, never any I/O). Ownership: the table owns its
// buckets; Take copies the key.
#ifndef PORTICO_EXAMPLES_RATELIMIT_BUCKET_TABLE_H_
#define PORTICO_EXAMPLES_RATELIMIT_BUCKET_TABLE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace example::ratelimit {

// Decision is the outcome of one Take.
struct Decision {
  bool allowed = false;
  int64_t remaining = 0;       // whole tokens left after this request
  int64_t retry_after_ms = 0;  // refused: until the next token; allowed: 0
  int64_t reset_ms = 0;        // until the bucket is full again
};

class BucketTable {
 public:
  // `requests` >= 1 per `interval_ms` >= 1; `max_keys` >= 1 bounds the live buckets.
  BucketTable(int64_t requests, int64_t interval_ms, size_t max_keys = 65536);
  BucketTable(const BucketTable&) = delete;
  BucketTable& operator=(const BucketTable&) = delete;

  // Take spends one token of `key`'s bucket at monotonic time `now_ms` (a new key starts full).
  Decision Take(std::string_view key, int64_t now_ms);

  // size is the number of live buckets (for tests and metrics).
  size_t size() const;

  // The table has kShards shards; ShardOf names the one a key lives in.
  static constexpr size_t kShards = 16;
  static size_t ShardOf(std::string_view key);

 private:
  struct Bucket {
    int64_t level = 0;    // in units of 1/interval_ms token
    int64_t last_ms = 0;  // when `level` was computed
  };
  struct Shard {
    mutable std::mutex mu;
    std::unordered_map<std::string, Bucket> buckets;
    Bucket overflow;
    bool overflow_started = false;
  };
  // Refill brings `b` to `now_ms`.
  void Refill(Bucket& b, int64_t now_ms) const;
  // Slot finds or makes the bucket of `key` in `shard` (its mutex held).
  Bucket& Slot(Shard& shard, std::string_view key, int64_t now_ms);

  const int64_t requests_;
  const int64_t interval_ms_;
  const int64_t capacity_;  // requests_ * interval_ms_
  const size_t max_per_shard_;
  std::array<Shard, kShards> shards_;
};

}  // namespace example::ratelimit

#endif  // PORTICO_EXAMPLES_RATELIMIT_BUCKET_TABLE_H_
