#include "core/common/fake_clock.h"

#include <algorithm>

namespace portico::core {

// Far from both ends of the scale so tests may subtract from it and add large delays to it.
FakeClock::FakeClock() : now_(TimePoint() + std::chrono::hours(24 * 365)) {}

Clock::TimePoint FakeClock::Now() const {
  std::lock_guard lock(time_mu_);
  return now_;
}

void FakeClock::AddObserver(ClockObserver* observer) {
  std::lock_guard lock(observers_mu_);
  observers_.push_back(observer);
}

void FakeClock::RemoveObserver(ClockObserver* observer) {
  std::lock_guard lock(observers_mu_);
  observers_.erase(std::remove(observers_.begin(), observers_.end(), observer), observers_.end());
}

void FakeClock::Advance(Duration d) {
  if (d <= Duration::zero()) return;
  {
    std::lock_guard lock(time_mu_);
    now_ = SaturatingAdd(now_, d);
  }
  NotifyObservers();
}

void FakeClock::AdvanceTo(TimePoint t) {
  {
    std::lock_guard lock(time_mu_);
    if (t <= now_) return;
    now_ = t;
  }
  NotifyObservers();
}

size_t FakeClock::NumObservers() const {
  std::lock_guard lock(observers_mu_);
  return observers_.size();
}

void FakeClock::NotifyObservers() {
  std::lock_guard lock(observers_mu_);
  for (ClockObserver* observer : observers_) observer->OnTimeJump();
}

}  // namespace portico::core
