// event_loop.cc: see event_loop.h.
#include "gateway/net/event_loop.h"

#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace portico::gateway::net {

namespace {

uint64_t MonotonicUs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000 + static_cast<uint64_t>(ts.tv_nsec) / 1000;
}

// CpuRelax tells the CPU this is a spin-wait (frees the core's resources for its sibling).
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

int64_t RealtimeUs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

}  // namespace

StatusOr<std::unique_ptr<EventLoop>> EventLoop::Create() {
  int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd < 0) return InternalError(std::string("epoll_create1: ") + std::strerror(errno));
  int wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd < 0) {
    int err = errno;
    close(epoll_fd);
    return InternalError(std::string("eventfd: ") + std::strerror(err));
  }
  std::unique_ptr<EventLoop> loop(new EventLoop(epoll_fd, wake_fd));
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = nullptr;  // the wake fd
  if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &ev) != 0) {
    return InternalError(std::string("epoll_ctl(eventfd): ") + std::strerror(errno));
  }
  return loop;
}

EventLoop::EventLoop(int epoll_fd, int wake_fd) : epoll_fd_(epoll_fd), wake_fd_(wake_fd) {
  UpdateTime();
  timers_ = std::make_unique<TimerWheel>(now_ms());
}

EventLoop::~EventLoop() {
  RunDeferred();
  timers_.reset();
  close(wake_fd_);
  close(epoll_fd_);
}

void EventLoop::UpdateTime() {
  now_us_ = MonotonicUs();
  wall_us_ = RealtimeUs();
}

bool EventLoop::Add(int fd, uint32_t events, EventHandler* handler) {
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = handler;
  return epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) == 0;
}

void EventLoop::Remove(int fd) { epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr); }

void EventLoop::Wake() {
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
}

bool EventLoop::Poll(int timeout_ms) {
  int timer_timeout = timers_->NextTimeoutMs(now_ms(), timeout_ms < 0 ? 3600 * 1000 : timeout_ms);
  if (timer_timeout >= 0 && (timeout_ms < 0 || timer_timeout < timeout_ms)) {
    timeout_ms = timer_timeout;
  }
  int n = Wait(timeout_ms);
  UpdateTime();
  if (n > 0) last_event_us_ = now_us_;
  bool woken = false;
  for (int i = 0; i < n; ++i) {
    auto* handler = static_cast<EventHandler*>(events_[i].data.ptr);
    if (handler == nullptr) {
      uint64_t value;
      [[maybe_unused]] ssize_t r = read(wake_fd_, &value, sizeof(value));
      woken = true;
      continue;
    }
    handler->OnEvents(events_[i].events);
  }
  RunDeferred();
  timers_->Advance(now_ms());
  RunDeferred();
  return !woken;
}

int EventLoop::Wait(int timeout_ms) {
  if (busy_poll_us_ != 0 && timeout_ms != 0) {
    const uint64_t start = MonotonicUs();
    uint64_t spin_end = last_event_us_ + busy_poll_us_;
    if (timeout_ms > 0) spin_end = std::min(spin_end, start + uint64_t{1000} * timeout_ms);
    uint64_t now = start;
    while (now < spin_end) {
      int n = epoll_wait(epoll_fd_, events_, kMaxEvents, 0);
      if (n != 0) return n;
      const uint64_t next_look = now + kBusyPollGapUs;
      do {
        CpuRelax();
        now = MonotonicUs();
      } while (now < next_look);
    }
    // The time spun counts against the timeout.
    if (timeout_ms > 0)
      timeout_ms -= static_cast<int>(std::min<uint64_t>((now - start) / 1000, timeout_ms));
  }
  return epoll_wait(epoll_fd_, events_, kMaxEvents, timeout_ms);
}

void EventLoop::RunDeferred() {
  while (!deferred_.empty()) {
    running_.swap(deferred_);
    for (auto& fn : running_) fn();
    running_.clear();
  }
}

}  // namespace portico::gateway::net
