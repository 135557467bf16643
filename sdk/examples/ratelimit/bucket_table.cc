// bucket_table.cc: see bucket_table.h.
#include "bucket_table.h"

#include <algorithm>
#include <iterator>

namespace example::ratelimit {

BucketTable::BucketTable(int64_t requests, int64_t interval_ms, size_t max_keys)
    : requests_(std::max<int64_t>(requests, 1)),
      interval_ms_(std::max<int64_t>(interval_ms, 1)),
      capacity_(requests_ * interval_ms_),
      max_per_shard_(std::max<size_t>(max_keys / kShards, 1)) {}

void BucketTable::Refill(Bucket& b, int64_t now_ms) const {
  // A clock never goes back; should it, nothing is refilled. After interval_ms any bucket is full,
  // so the elapsed time is clamped there (no overflow however long a key was idle).
  const int64_t elapsed = std::clamp<int64_t>(now_ms - b.last_ms, 0, interval_ms_);
  b.level = std::min(capacity_, b.level + elapsed * requests_);
  if (now_ms > b.last_ms) b.last_ms = now_ms;
}

BucketTable::Bucket& BucketTable::Slot(Shard& shard, std::string_view key, int64_t now_ms) {
  auto it = shard.buckets.find(std::string(key));
  if (it != shard.buckets.end()) return it->second;
  if (shard.buckets.size() >= max_per_shard_) {
    // A full bucket is indistinguishable from a fresh one: dropping it loses nothing.
    for (auto i = shard.buckets.begin(); i != shard.buckets.end();) {
      Refill(i->second, now_ms);
      i = i->second.level >= capacity_ ? shard.buckets.erase(i) : std::next(i);
    }
  }
  if (shard.buckets.size() >= max_per_shard_) {
    if (!shard.overflow_started) {
      shard.overflow = Bucket{capacity_, now_ms};
      shard.overflow_started = true;
    }
    return shard.overflow;
  }
  return shard.buckets.emplace(std::string(key), Bucket{capacity_, now_ms}).first->second;
}

Decision BucketTable::Take(std::string_view key, int64_t now_ms) {
  Shard& shard = shards_[ShardOf(key)];
  std::lock_guard<std::mutex> lock(shard.mu);
  Bucket& b = Slot(shard, key, now_ms);
  Refill(b, now_ms);
  Decision d;
  // Rounded up: a client told to come back after N ms finds its token there.
  auto ms_until = [&](int64_t level) { return (level - b.level + requests_ - 1) / requests_; };
  if (b.level >= interval_ms_) {
    b.level -= interval_ms_;
    d.allowed = true;
  } else {
    d.retry_after_ms = ms_until(interval_ms_);
  }
  d.remaining = b.level / interval_ms_;
  d.reset_ms = ms_until(capacity_);
  return d;
}

size_t BucketTable::ShardOf(std::string_view key) {
  return std::hash<std::string_view>{}(key) % kShards;
}

size_t BucketTable::size() const {
  size_t n = 0;
  for (const Shard& s : shards_) {
    std::lock_guard<std::mutex> lock(s.mu);
    n += s.buckets.size();
  }
  return n;
}

}  // namespace example::ratelimit
