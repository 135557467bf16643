// TimerWheel: unit tests.
#include "gateway/net/timer_wheel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace portico::gateway::net {
namespace {

class Recorder : public TimerHandler {
 public:
  void OnTimer(int id) override { fired.push_back(id); }
  std::vector<int> fired;
};

TEST(TimerWheelTest, FiresInDeadlineOrderNeverEarly) {
  TimerWheel wheel(1000);
  Recorder r;
  Timer a(&r, 1), b(&r, 2), c(&r, 3);
  wheel.Arm(&a, 1100);
  wheel.Arm(&b, 1050);
  wheel.Arm(&c, 1000 + 60'000);  // beyond one revolution
  EXPECT_EQ(wheel.size(), 3u);
  wheel.Advance(1049);
  EXPECT_TRUE(r.fired.empty());
  wheel.Advance(1052);
  EXPECT_EQ(r.fired, std::vector<int>({2}));
  EXPECT_FALSE(b.armed());
  wheel.Advance(1200);
  EXPECT_EQ(r.fired, std::vector<int>({2, 1}));
  for (uint64_t t = 1200; t < 60'990; t += 1000) wheel.Advance(t);
  EXPECT_EQ(r.fired.size(), 2u);  // c waited through its slot's earlier revolutions
  wheel.Advance(61'004);
  EXPECT_EQ(r.fired, std::vector<int>({2, 1, 3}));
  EXPECT_EQ(wheel.size(), 0u);
}

TEST(TimerWheelTest, RearmCancelAndTimeout) {
  TimerWheel wheel(0);
  Recorder r;
  Timer a(&r, 1);
  EXPECT_EQ(wheel.NextTimeoutMs(0, 1000), -1);
  wheel.Arm(&a, 100);
  EXPECT_GE(wheel.NextTimeoutMs(0, 1000), 100);
  EXPECT_LE(wheel.NextTimeoutMs(0, 1000), 100 + static_cast<int>(TimerWheel::kTickMs));
  EXPECT_EQ(wheel.NextTimeoutMs(0, 50), 50);
  wheel.Arm(&a, 500);  // re-arm moves it
  wheel.Advance(200);
  EXPECT_TRUE(r.fired.empty());
  TimerWheel::Cancel(&a);
  wheel.Advance(1000);
  EXPECT_TRUE(r.fired.empty());
  {
    Timer scoped(&r, 2);
    wheel.Arm(&scoped, 1100);
  }  // destroyed while armed: unlinked
  EXPECT_EQ(wheel.size(), 0u);
  wheel.Advance(2000);
  EXPECT_TRUE(r.fired.empty());
  // A deadline in the past fires at the next tick; after a stall longer than a revolution too.
  wheel.Arm(&a, 10);
  wheel.Advance(2000 + TimerWheel::kTickMs - 1);
  EXPECT_TRUE(r.fired.empty());
  wheel.Advance(2000 + TimerWheel::kTickMs);
  EXPECT_EQ(r.fired, std::vector<int>({1}));
  wheel.Arm(&a, 2500);
  wheel.Advance(100'000);
  EXPECT_EQ(r.fired, std::vector<int>({1, 1}));
}

// A handler that re-arms itself and cancels another from inside Advance.
class Chain : public TimerHandler {
 public:
  explicit Chain(TimerWheel* wheel) : wheel_(wheel) {}
  void OnTimer(int id) override {
    fired.push_back(id);
    if (id == 1 && fired.size() == 1) {
      TimerWheel::Cancel(other);
      wheel_->Arm(self, 0);  // due now: fires in this Advance's next tick or the next Advance
    }
  }
  TimerWheel* wheel_;
  Timer* self = nullptr;
  Timer* other = nullptr;
  std::vector<int> fired;
};

TEST(TimerWheelTest, HandlersMayArmAndCancelDuringAdvance) {
  TimerWheel wheel(0);
  Chain chain(&wheel);
  Timer first(&chain, 1), second(&chain, 2);
  chain.self = &first;
  chain.other = &second;
  wheel.Arm(&second, 40);
  wheel.Arm(&first, 40);  // same slot, runs first (LIFO) and cancels `second`
  wheel.Advance(40);
  EXPECT_EQ(chain.fired, std::vector<int>({1}));
  wheel.Advance(100);
  EXPECT_EQ(chain.fired, std::vector<int>({1, 1}));
}

}  // namespace
}  // namespace portico::gateway::net
