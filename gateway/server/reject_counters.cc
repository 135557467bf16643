// reject_counters.cc: see reject_counters.h.
#include "gateway/server/reject_counters.h"

#include <algorithm>
#include <cstring>

namespace portico::gateway::server {

RejectCounters::Slot* RejectCounters::Find(int status, std::string_view reason) {
  const size_t used = used_.load(std::memory_order_relaxed);  // only this thread writes it
  for (size_t i = 0; i < used; ++i) {
    Slot& slot = slots_[i];
    if (slot.status == status && std::string_view(slot.reason, slot.length) == reason) {
      return &slot;
    }
  }
  if (used == kSlots - 1) return nullptr;  // the last slot is "other"
  Slot& slot = slots_[used];
  slot.status = status;
  slot.length = static_cast<uint8_t>(std::min(reason.size(), kMaxReason));
  std::memcpy(slot.reason, reason.data(), slot.length);
  used_.store(used + 1, std::memory_order_release);  // publishes the slot's fields
  return &slot;
}

void RejectCounters::Count(int status, std::string_view reason) {
  if (reason.empty()) reason = "unknown";
  reason = reason.substr(0, kMaxReason);
  Slot* slot = Find(status, reason);
  if (slot == nullptr) slot = &slots_[kSlots - 1];  // the table is full: "other"
  slot->count.store(slot->count.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

void RejectCounters::AddTo(RejectTotals* totals) const {
  const size_t used = used_.load(std::memory_order_acquire);
  for (size_t i = 0; i < used; ++i) {
    const Slot& slot = slots_[i];
    (*totals)[{slot.status, std::string(slot.reason, slot.length)}] +=
        slot.count.load(std::memory_order_relaxed);
  }
  const uint64_t other = slots_[kSlots - 1].count.load(std::memory_order_relaxed);
  if (other > 0) (*totals)[{0, "other"}] += other;
}

}  // namespace portico::gateway::server
