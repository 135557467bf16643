// timer_wheel.cc: see timer_wheel.h.
#include "gateway/net/timer_wheel.h"

#include <algorithm>

namespace portico::gateway::net {

namespace {
constexpr uint32_t kMask = TimerWheel::kSlots - 1;
static_assert((TimerWheel::kSlots & kMask) == 0, "kSlots is a power of two");

// DueTick is the first tick at or after `deadline_ms` (saturating).
uint64_t DueTick(uint64_t deadline_ms) {
  constexpr uint64_t kTick = TimerWheel::kTickMs;
  if (deadline_ms >= TimerWheel::kNever - kTick) return TimerWheel::kNever / kTick;
  return (deadline_ms + kTick - 1) / kTick;
}
}  // namespace

void Timer::Unlink() {
  if (pprev_ == nullptr) return;
  *pprev_ = next_;
  if (next_ != nullptr) next_->pprev_ = pprev_;
  pprev_ = nullptr;
  next_ = nullptr;
  wheel_->OnUnlinked(slot_);
}

TimerWheel::TimerWheel(uint64_t now_ms) : processed_tick_(now_ms / kTickMs) {}

TimerWheel::~TimerWheel() {
  for (Timer*& head : heads_) {
    while (head != nullptr) head->Unlink();
  }
}

void TimerWheel::Link(Timer** head, Timer* timer) {
  timer->next_ = *head;
  if (*head != nullptr) (*head)->pprev_ = &timer->next_;
  *head = timer;
  timer->pprev_ = head;
  timer->wheel_ = this;
  ++size_;
}

void TimerWheel::OnUnlinked(uint32_t slot) {
  --size_;
  if (slot != kDetached && heads_[slot] == nullptr)
    bitmap_[slot / 64] &= ~(uint64_t{1} << (slot % 64));
}

void TimerWheel::Arm(Timer* timer, uint64_t deadline_ms) {
  timer->Unlink();
  const uint64_t tick = std::max(DueTick(deadline_ms), processed_tick_ + 1);
  const uint32_t slot = static_cast<uint32_t>(tick & kMask);
  timer->deadline_ms_ = deadline_ms;
  timer->slot_ = slot;
  Link(&heads_[slot], timer);
  bitmap_[slot / 64] |= uint64_t{1} << (slot % 64);
}

void TimerWheel::Advance(uint64_t now_ms) {
  const uint64_t now_tick = now_ms / kTickMs;
  if (now_tick <= processed_tick_) return;
  // After a stall longer than a revolution, one pass over every slot is enough: each timer is
  // compared with now.
  if (now_tick - processed_tick_ > kSlots) processed_tick_ = now_tick - kSlots;
  while (processed_tick_ < now_tick) {
    ++processed_tick_;  // before the callbacks: a timer they arm lands in a later tick
    const uint32_t slot = static_cast<uint32_t>(processed_tick_ & kMask);
    if (heads_[slot] == nullptr) continue;
    // Move the slot's list aside so handlers can arm and cancel freely meanwhile.
    Timer* local = heads_[slot];
    heads_[slot] = nullptr;
    bitmap_[slot / 64] &= ~(uint64_t{1} << (slot % 64));
    local->pprev_ = &local;
    for (Timer* t = local; t != nullptr; t = t->next_) t->slot_ = kDetached;
    while (local != nullptr) {
      Timer* timer = local;
      timer->Unlink();
      if (DueTick(timer->deadline_ms_) <= now_tick) {
        timer->handler_->OnTimer(timer->id_);
      } else {
        timer->slot_ = slot;
        Link(&heads_[slot], timer);
        bitmap_[slot / 64] |= uint64_t{1} << (slot % 64);
      }
    }
  }
}

int TimerWheel::NextTimeoutMs(uint64_t now_ms, int cap_ms) const {
  if (size_ == 0) return -1;
  const uint32_t start = static_cast<uint32_t>((processed_tick_ + 1) & kMask);
  uint32_t pos = start;
  uint32_t scanned = 0;
  while (scanned < kSlots) {
    const uint32_t bit = pos % 64;
    const uint64_t bits = bitmap_[pos / 64] >> bit;
    if (bits != 0) {
      scanned += static_cast<uint32_t>(__builtin_ctzll(bits));
      break;
    }
    scanned += 64 - bit;
    pos = (pos + 64 - bit) & kMask;
  }
  scanned = std::min(scanned, kSlots - 1);
  const uint64_t due_ms = (processed_tick_ + 1 + scanned) * kTickMs;
  if (due_ms <= now_ms) return 0;
  return static_cast<int>(std::min<uint64_t>(due_ms - now_ms, static_cast<uint64_t>(cap_ms)));
}

}  // namespace portico::gateway::net
