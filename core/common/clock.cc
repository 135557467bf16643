#include "core/common/clock.h"

namespace portico::core {
namespace {

class RealClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
};

}  // namespace

Clock* Clock::Real() {
  static RealClock* const clock = new RealClock();  // never destroyed: usable during exit
  return clock;
}

Clock::TimePoint SaturatingAdd(Clock::TimePoint t, Clock::Duration d) {
  if (d <= Clock::Duration::zero()) return t + d;
  if (t > Clock::TimePoint::max() - d) return Clock::TimePoint::max();
  return t + d;
}

}  // namespace portico::core
