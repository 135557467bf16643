// timer_wheel.h: TimerWheel, the one timer structure of a data-plane worker (a hashed wheel of
// kSlots slots of kTickMs each), and Timer, the intrusive node a connection embeds. Arming,
// re-arming and cancelling are O(1) pointer swaps (no allocation, no heap); a deadline beyond
// the wheel's span waits in its slot and is re-checked once per revolution. A bitmap of non-empty
// slots gives the time to the next possibly due slot in a few word scans (the epoll timeout).
//
// Resolution: a timer fires in the first Advance at or after its deadline rounded up to the next
// tick (so at most kTickMs late, never early).
//
// Thread-safety: none; one wheel per worker thread. Ownership: the wheel links Timers it does not
// own; a Timer unlinks itself when destroyed (so it must be destroyed on the wheel's thread).
#ifndef PORTICO_GATEWAY_NET_TIMER_WHEEL_H_
#define PORTICO_GATEWAY_NET_TIMER_WHEEL_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace portico::gateway::net {

class TimerWheel;

// TimerHandler receives the expiry of its Timers.
class TimerHandler {
 public:
  virtual void OnTimer(int id) = 0;

 protected:
  ~TimerHandler() = default;
};

// Timer is an intrusive wheel node. `id` tells a handler owning several timers which one fired.
class Timer {
 public:
  Timer() = default;
  Timer(TimerHandler* handler, int id) : handler_(handler), id_(id) {}
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  ~Timer() { Unlink(); }

  void Bind(TimerHandler* handler, int id) {
    handler_ = handler;
    id_ = id;
  }
  bool armed() const { return pprev_ != nullptr; }
  // The deadline it was last armed for (meaningful while armed()).
  uint64_t deadline_ms() const { return deadline_ms_; }

 private:
  friend class TimerWheel;
  void Unlink();

  // An hlist node: pprev_ points at whatever points at this node (a slot head or the previous
  // node's next_), so unlinking needs neither the list nor a sentinel.
  Timer** pprev_ = nullptr;
  Timer* next_ = nullptr;
  TimerWheel* wheel_ = nullptr;
  uint64_t deadline_ms_ = 0;
  uint32_t slot_ = 0;
  TimerHandler* handler_ = nullptr;
  int id_ = 0;
};

class TimerWheel {
 public:
  static constexpr uint64_t kTickMs = 4;
  static constexpr uint32_t kSlots = 4096;  // 16.4 s per revolution
  static constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

  // `now_ms`: the current time on the caller's monotonic clock.
  explicit TimerWheel(uint64_t now_ms);
  TimerWheel(const TimerWheel&) = delete;
  TimerWheel& operator=(const TimerWheel&) = delete;
  ~TimerWheel();

  // Arm (re)schedules `timer` for `deadline_ms` (a past deadline fires at the next Advance).
  void Arm(Timer* timer, uint64_t deadline_ms);
  // Cancel unschedules `timer` (no-op when not armed).
  static void Cancel(Timer* timer) { timer->Unlink(); }

  // Advance fires every timer due at `now_ms`, in slot order. A handler may arm or cancel any
  // timer, including ones due in the same Advance.
  void Advance(uint64_t now_ms);

  // NextTimeoutMs is how long epoll may sleep: -1 with no timer, else the milliseconds until the
  // next non-empty slot's tick (0 when due), capped at `cap_ms`.
  int NextTimeoutMs(uint64_t now_ms, int cap_ms) const;

  size_t size() const { return size_; }

 private:
  friend class Timer;
  static constexpr uint32_t kDetached = kSlots;  // slot_ of a timer on Advance's local list

  void Link(Timer** head, Timer* timer);
  void OnUnlinked(uint32_t slot);

  uint64_t processed_tick_;  // every slot up to this tick has been processed
  size_t size_ = 0;
  std::array<Timer*, kSlots> heads_{};
  std::array<uint64_t, kSlots / 64> bitmap_{};
};

}  // namespace portico::gateway::net

#endif  // PORTICO_GATEWAY_NET_TIMER_WHEEL_H_
