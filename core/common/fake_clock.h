// fake_clock.h: FakeClock, a Clock that moves only when told to, for tests that exercise
// delays, backoff and ages without sleeping.
//
// Thread-safety: all methods may be called concurrently. Ownership: observers are not owned;
// an observer must be removed before it is destroyed.
#ifndef PORTICO_CORE_COMMON_FAKE_CLOCK_H_
#define PORTICO_CORE_COMMON_FAKE_CLOCK_H_

#include <mutex>
#include <vector>

#include "core/common/clock.h"

namespace portico::core {

// FakeClock starts at an arbitrary fixed time and advances only through Advance/AdvanceTo,
// which wake every observer (for example a WorkQueue blocked in Get until a delayed key is due).
class FakeClock final : public Clock {
 public:
  FakeClock();

  TimePoint Now() const override;
  void AddObserver(ClockObserver* observer) override;
  void RemoveObserver(ClockObserver* observer) override;

  // Advance moves time forward by `d` (negative values are ignored) and notifies observers.
  void Advance(Duration d);
  // AdvanceTo moves time to `t` if it is later than Now() and notifies observers.
  void AdvanceTo(TimePoint t);

  // NumObservers returns how many observers are registered (for tests of their owners).
  size_t NumObservers() const;

 private:
  void NotifyObservers();

  mutable std::mutex time_mu_;
  TimePoint now_;  // guarded by time_mu_
  // Held while observers run, so RemoveObserver waits for a running OnTimeJump. Separate from
  // time_mu_ so an observer (or anyone it waits for) may call Now().
  mutable std::mutex observers_mu_;
  std::vector<ClockObserver*> observers_;  // guarded by observers_mu_
};

}  // namespace portico::core

#endif  // PORTICO_CORE_COMMON_FAKE_CLOCK_H_
