// EventLoop: unit tests (busy polling).
#include "gateway/net/event_loop.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace portico::gateway::net {
namespace {

// PipeReader counts the readiness events of a pipe's read end and drains it.
class PipeReader : public EventHandler {
 public:
  explicit PipeReader(int fd) : fd_(fd) {}
  void OnEvents(uint32_t) override {
    ++events;
    char buffer[64];
    while (read(fd_, buffer, sizeof(buffer)) > 0) {
    }
  }
  int events = 0;

 private:
  int fd_;
};

class EventLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loop = EventLoop::Create();
    ASSERT_TRUE(loop.ok()) << loop.status();
    loop_ = std::move(*loop);
    ASSERT_EQ(pipe2(fds_, O_NONBLOCK | O_CLOEXEC), 0);
    reader_ = std::make_unique<PipeReader>(fds_[0]);
    ASSERT_TRUE(loop_->Add(fds_[0], EPOLLIN | EPOLLET, reader_.get()));
  }
  void TearDown() override {
    close(fds_[0]);
    close(fds_[1]);
  }
  void Send() { ASSERT_EQ(write(fds_[1], "x", 1), 1); }

  std::unique_ptr<EventLoop> loop_;
  int fds_[2] = {-1, -1};
  std::unique_ptr<PipeReader> reader_;
};

// ThreadCpuUs is the CPU time consumed so far by the thread whose CPU clock is `clock`.
int64_t ThreadCpuUs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return int64_t{ts.tv_sec} * 1'000'000 + ts.tv_nsec / 1000;
}

// The loop spins (burns CPU instead of sleeping in epoll_wait) while the window is open, and an
// event arriving then is dispatched. The writer sends only once the polling thread has used
// 10 ms of CPU inside Poll; with busy polling off the thread sleeps, its CPU clock stands still,
// the writer gives up after 5 s and sends anyway, and the test fails.
TEST_F(EventLoopTest, BusyPollDispatchesWhatArrivesDuringTheWindow) {
  loop_->SetBusyPoll(10'000'000);  // 10 s: the second event arrives while the loop spins
  Send();
  loop_->Poll(-1);
  ASSERT_EQ(reader_->events, 1);
  clockid_t poller_clock;
  ASSERT_EQ(pthread_getcpuclockid(pthread_self(), &poller_clock), 0);
  const int64_t cpu_before = ThreadCpuUs(poller_clock);
  bool saw_spin = false;
  std::thread writer([&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
      if (ThreadCpuUs(poller_clock) - cpu_before >= 10'000) {
        saw_spin = true;
        break;
      }
      std::this_thread::yield();
    }
    Send();
  });
  loop_->Poll(-1);
  writer.join();
  EXPECT_TRUE(saw_spin) << "the polling thread slept in epoll_wait instead of spinning";
  EXPECT_EQ(reader_->events, 2);
}

TEST_F(EventLoopTest, BusyPollCountsAgainstTheTimeout) {
  loop_->SetBusyPoll(10'000'000);  // a window far longer than the timeout
  Send();
  loop_->Poll(-1);
  const auto start = std::chrono::steady_clock::now();
  loop_->Poll(30);  // nothing arrives: back after about 30 ms, not after the 10 s window
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(29));
  EXPECT_LT(waited, std::chrono::seconds(5));
  EXPECT_EQ(reader_->events, 1);
}

TEST_F(EventLoopTest, BusyPollOffSleepsUntilTheTimeout) {
  loop_->SetBusyPoll(0);
  Send();
  loop_->Poll(-1);
  const auto start = std::chrono::steady_clock::now();
  loop_->Poll(20);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(19));
  EXPECT_EQ(reader_->events, 1);
}

}  // namespace
}  // namespace portico::gateway::net
