// clock.h: Clock, the injectable source of monotonic time for delays, timeouts and ages, so
// tests drive time with FakeClock (fake_clock.h) instead of sleeping.
//
// Thread-safety: every Clock is safe for concurrent use. Ownership: users hold a non-owning
// Clock* that must outlive them; Clock::Real() is a process-wide singleton that lives forever.
//
// Used by core/workqueue and core/store.
#ifndef PORTICO_CORE_COMMON_CLOCK_H_
#define PORTICO_CORE_COMMON_CLOCK_H_

#include <chrono>

namespace portico::core {

// ClockObserver is told when a clock's time jumps (FakeClock::Advance), so a thread blocked
// until a deadline on that clock wakes up and re-checks. Real time never jumps.
class ClockObserver {
 public:
  // OnTimeJump runs on the thread that moved the clock, after the new time is visible through
  // Now(). It must not add or remove observers of the same clock.
  virtual void OnTimeJump() = 0;

 protected:
  ~ClockObserver() = default;
};

// Clock tells monotonic time on the steady_clock scale.
class Clock {
 public:
  using Duration = std::chrono::steady_clock::duration;
  using TimePoint = std::chrono::steady_clock::time_point;

  virtual ~Clock() = default;

  // Now returns the current time; never decreases.
  virtual TimePoint Now() const = 0;

  // AddObserver registers `observer` (not owned) for OnTimeJump calls until RemoveObserver.
  // RemoveObserver returns only once no OnTimeJump call to `observer` is running. Clocks
  // whose time only passes (the real one) ignore both.
  virtual void AddObserver(ClockObserver* observer) {}
  virtual void RemoveObserver(ClockObserver* observer) {}

  // Real returns the process-wide std::chrono::steady_clock clock.
  static Clock* Real();
};

// SaturatingAdd returns t + d, clamped to TimePoint::max() (so "no timeout" durations such as
// Duration::max() do not overflow).
Clock::TimePoint SaturatingAdd(Clock::TimePoint t, Clock::Duration d);

}  // namespace portico::core

#endif  // PORTICO_CORE_COMMON_CLOCK_H_
