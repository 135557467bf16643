// event_log.h: EventLog, the store's bounded log of changes, from which a watcher that knows
// version V gets everything committed in (V, head] coalesced per key.
//
// Bounds: after every Trim the oldest entries are dropped while the log is over max_bytes OR its
// oldest entry is older than max_age. max_age is therefore the longest retention, and the
// retention guaranteed to watchers (DESIGN.md §5: at least 120 s) holds only while the byte
// budget is not exceeded; past it, a slow watcher relists. Entry sizes are estimates: the key,
// hash and JSON bytes plus a fixed per-entry overhead.
//
// Thread-safety: thread-compatible; the store calls it under its own lock. The log shares JSON
// bodies with the store (shared_ptr), so a body's memory is counted against the budget for as
// long as the log holds it.
#ifndef PORTICO_CORE_STORE_EVENT_LOG_H_
#define PORTICO_CORE_STORE_EVENT_LOG_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "core/common/clock.h"
#include "core/store/store_records.h"

namespace portico::core {

class EventLog {
 public:
  EventLog(size_t max_bytes, Clock::Duration max_age);

  // Append records `event` at time `now`. Versions are contiguous: event.version must be
  // head() + 1, and `now` must not be earlier than the previous append's.
  void Append(StoreEvent event, Clock::TimePoint now);
  // Trim drops the oldest entries while bytes() > max_bytes or the oldest entry's age at `now`
  // exceeds max_age. It may empty the log (even of an entry just appended that alone exceeds
  // the byte budget).
  void Trim(Clock::TimePoint now);

  // Since returns the events in (from, head()], only the last one per key, in version order; or
  // nullopt when some of them were trimmed (from < min_from_version()). Requires from <= head().
  std::optional<std::vector<StoreEvent>> Since(uint64_t from) const;

  // head is the version of the newest event ever appended (0 before the first).
  uint64_t head() const { return trimmed_through_ + entries_.size(); }
  // min_from_version is the smallest `from` Since answers: the newest trimmed version.
  uint64_t min_from_version() const { return trimmed_through_; }
  // oldest_version is the version of the oldest retained entry, 0 when the log is empty.
  uint64_t oldest_version() const { return entries_.empty() ? 0 : trimmed_through_ + 1; }
  size_t size() const { return entries_.size(); }
  size_t bytes() const { return bytes_; }

  // EventBytes is the size charged for one event.
  static size_t EventBytes(const StoreEvent& event);

 private:
  struct Entry {
    StoreEvent event;
    Clock::TimePoint time;
    size_t bytes;
  };

  const size_t max_bytes_;
  const Clock::Duration max_age_;
  std::deque<Entry> entries_;  // entries_[i].event.version == trimmed_through_ + 1 + i
  uint64_t trimmed_through_ = 0;
  size_t bytes_ = 0;
};

}  // namespace portico::core

#endif  // PORTICO_CORE_STORE_EVENT_LOG_H_
