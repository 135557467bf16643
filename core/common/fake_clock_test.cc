#include "core/common/fake_clock.h"

#include <gtest/gtest.h>

namespace portico::core {
namespace {

using std::chrono::seconds;

class CountingObserver final : public ClockObserver {
 public:
  void OnTimeJump() override { ++jumps; }
  int jumps = 0;
};

TEST(WorkQueueClockTest, FakeClockMovesOnlyForwardAndNotifies) {
  FakeClock clock;
  CountingObserver observer;
  clock.AddObserver(&observer);
  EXPECT_EQ(clock.NumObservers(), 1u);
  Clock::TimePoint start = clock.Now();
  clock.Advance(seconds(2));
  EXPECT_EQ(clock.Now(), start + seconds(2));
  clock.Advance(-seconds(1));           // ignored
  clock.AdvanceTo(start + seconds(1));  // in the past: ignored
  EXPECT_EQ(clock.Now(), start + seconds(2));
  clock.AdvanceTo(start + seconds(5));
  EXPECT_EQ(clock.Now(), start + seconds(5));
  EXPECT_EQ(observer.jumps, 2);
  clock.RemoveObserver(&observer);
  clock.Advance(seconds(1));
  EXPECT_EQ(observer.jumps, 2);
  EXPECT_EQ(clock.NumObservers(), 0u);
}

TEST(WorkQueueClockTest, RealClockIsMonotonic) {
  Clock* clock = Clock::Real();
  EXPECT_EQ(clock, Clock::Real());
  Clock::TimePoint a = clock->Now();
  EXPECT_LE(a, clock->Now());
}

TEST(WorkQueueClockTest, SaturatingAddClampsAtMax) {
  Clock::TimePoint t = Clock::Real()->Now();
  EXPECT_EQ(SaturatingAdd(t, Clock::Duration::max()), Clock::TimePoint::max());
  EXPECT_EQ(SaturatingAdd(t, seconds(1)), t + seconds(1));
  EXPECT_EQ(SaturatingAdd(t, -seconds(1)), t - seconds(1));
}

}  // namespace
}  // namespace portico::core
