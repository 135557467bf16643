// TimerWheel and AccessLogBuffer: unit tests.
#include "gateway/server/timer_wheel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "gateway/server/access_log.h"

namespace portico::gateway::server {
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

TEST(AccessLogTest, FormatsEscapedJsonLinesAndFlushesByAge) {
  auto path = std::filesystem::temp_directory_path() /
              ("portico-access-log-test-" + std::to_string(getpid()));
  std::filesystem::remove(path);
  auto sink = AccessLogSink::Open(path.string());
  ASSERT_TRUE(sink.ok());
  AccessLogBuffer buffer(*sink);
  AccessRecord r;
  r.time_unix_us = 1714564800123456;  // 2024-05-01T12:00:00.123Z
  r.client = "10.0.0.1";
  r.method = "GET";
  r.path = "/a?q=\"x\"\\";
  r.host = "example.com";
  r.status = 200;
  r.bytes = 1234;
  r.duration_us = 412;
  r.upstream = "10.0.0.7:3000";
  r.route = "infra/web";
  r.rule = "0.0";
  buffer.Append(r, 1000);
  EXPECT_EQ(buffer.pending(),
            "{\"time\":\"2024-05-01T12:00:00.123Z\",\"client\":\"10.0.0.1\",\"method\":\"GET\","
            "\"path\":\"/a?q=\\\"x\\\"\\\\\",\"host\":\"example.com\",\"status\":200,"
            "\"bytes\":1234,\"duration_ms\":0.412,\"upstream\":\"10.0.0.7:3000\","
            "\"route\":\"infra/web\",\"rule\":\"0.0\"}\n");
  buffer.MaybeFlush(1099);
  EXPECT_FALSE(buffer.pending().empty());
  EXPECT_EQ(buffer.FlushDeadlineMs(), 1100u);
  buffer.MaybeFlush(1100);
  EXPECT_TRUE(buffer.pending().empty());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str().back(), '\n');
  EXPECT_NE(text.str().find("\"status\":200"), std::string::npos);
  std::filesystem::remove(path);

  std::string control;
  AppendJsonString(std::string_view("a\x01\x7f", 3), &control);
  EXPECT_EQ(control, "\"a\\u0001\\u007f\"");
  // Long texts are scanned eight bytes at a time: an escape in any position of any word.
  const std::string plain = "/api/v1/items/caf\xc3\xa9-0123456789";  // UTF-8 passes as is
  for (size_t at = 0; at <= plain.size(); ++at) {
    for (char special : {'"', '\\', '\x1f', '\x7f'}) {
      std::string text = plain;
      text.insert(at, 1, special);
      std::string want = plain;
      want.insert(at, special == '"'      ? "\\\""
                      : special == '\\'   ? "\\\\"
                      : special == '\x1f' ? "\\u001f"
                                          : "\\u007f");
      std::string got;
      AppendJsonString(text, &got);
      EXPECT_EQ(got, "\"" + want + "\"") << "at " << at;
    }
  }
  std::string clean;
  AppendJsonString(plain, &clean);
  EXPECT_EQ(clean, "\"" + plain + "\"");
  auto off = AccessLogSink::Open("off");
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(*off, nullptr);
  EXPECT_FALSE(AccessLogSink::Open("/nonexistent-dir/x.log").ok());
}

}  // namespace
}  // namespace portico::gateway::server
