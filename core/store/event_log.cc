#include "core/store/event_log.h"

#include <algorithm>
#include <cassert>
#include <unordered_set>
#include <utility>

namespace portico::core {
namespace {

// Identity of the key an event points at, for coalescing without copying keys.
struct KeyPtrHash {
  size_t operator()(const StoreKey* key) const noexcept { return StoreKeyHash()(*key); }
};
struct KeyPtrEq {
  bool operator()(const StoreKey* a, const StoreKey* b) const noexcept { return *a == *b; }
};

}  // namespace

EventLog::EventLog(size_t max_bytes, Clock::Duration max_age)
    : max_bytes_(max_bytes), max_age_(max_age) {}

size_t EventLog::EventBytes(const StoreEvent& event) {
  const StoreKey& k = event.key;
  return sizeof(Entry) + k.group.size() + k.kind.size() + k.ns.size() + k.name.size() +
         event.hash.size() + (event.json != nullptr ? event.json->size() : 0);
}

void EventLog::Append(StoreEvent event, Clock::TimePoint now) {
  assert(event.version == head() + 1);
  size_t bytes = EventBytes(event);
  bytes_ += bytes;
  entries_.push_back(Entry{std::move(event), now, bytes});
}

void EventLog::Trim(Clock::TimePoint now) {
  while (!entries_.empty() && (bytes_ > max_bytes_ || now - entries_.front().time > max_age_)) {
    bytes_ -= entries_.front().bytes;
    entries_.pop_front();
    ++trimmed_through_;
  }
}

std::optional<std::vector<StoreEvent>> EventLog::Since(uint64_t from) const {
  assert(from <= head());
  if (from < trimmed_through_) return std::nullopt;
  // Walk backwards keeping the first (newest) event seen per key, then restore version order.
  std::vector<StoreEvent> out;
  std::unordered_set<const StoreKey*, KeyPtrHash, KeyPtrEq> seen;
  size_t first = static_cast<size_t>(from - trimmed_through_);
  for (size_t i = entries_.size(); i > first; --i) {
    const StoreEvent& event = entries_[i - 1].event;
    if (seen.insert(&event.key).second) out.push_back(event);
  }
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace portico::core
