// event_loop.h: EventLoop, one worker's epoll instance (edge-triggered), its wake-up eventfd,
// its cached clock and its TimerWheel; EventHandler, what a registered fd calls back.
//
// Sockets are registered once for EPOLLIN | EPOLLOUT | EPOLLRDHUP with EPOLLET and never
// modified: handlers remember readiness themselves (set by an event, cleared by EAGAIN or by a
// short read), which saves an epoll_ctl per direction change. Time is read once per Poll
// (CLOCK_MONOTONIC and CLOCK_REALTIME through the vDSO), not per request.
//
// Busy polling (SetBusyPoll): for a short window after the last event, Poll looks again without
// sleeping (epoll_wait with a zero timeout, a pause of about kBusyPollGapUs between looks)
// before it blocks. Under steady traffic the thread then rarely sleeps, so neither it nor the
// CPU that queues the next event pays for a sleep and a cross-CPU wake-up; when traffic stops
// the window runs out and the loop sleeps as before (haproxy's `busy-polling`, bounded).
//
// Objects closed while a batch of events is dispatched may still be named by later events of
// the same batch: owners mark them closed and free them through Defer, which runs after the
// batch.
//
// Thread-safety: everything but Wake runs on the loop's thread. Wake is safe from any thread.
// Ownership: the loop does not own handlers; deferred callbacks are run (or dropped) by it.
#ifndef PORTICO_GATEWAY_NET_EVENT_LOOP_H_
#define PORTICO_GATEWAY_NET_EVENT_LOOP_H_

#include <sys/epoll.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "gateway/net/timer_wheel.h"
#include "portico/sdk/status.h"

namespace portico::gateway::net {

// EventHandler receives the epoll events of its fd.
class EventHandler {
 public:
  virtual void OnEvents(uint32_t events) = 0;

 protected:
  ~EventHandler() = default;
};

class EventLoop {
 public:
  static constexpr uint32_t kSocketEvents = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;

  static StatusOr<std::unique_ptr<EventLoop>> Create();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;
  ~EventLoop();

  // Add registers `fd` for `events` (kSocketEvents for sockets); false with errno on failure.
  bool Add(int fd, uint32_t events, EventHandler* handler);
  // Remove deregisters `fd` (closing an fd also does, when it is the last reference).
  void Remove(int fd);

  // Poll waits at most `timeout_ms` (-1: no limit; shortened to the next timer), refreshes the
  // clocks, dispatches the events, fires due timers and runs deferred work. Returns false when
  // woken by Wake (the caller then looks at what changed), true otherwise.
  bool Poll(int timeout_ms);
  // SetBusyPoll sets the busy-poll window in microseconds (0: off, the default). Spinning
  // counts against Poll's timeout, so timers still fire on time.
  void SetBusyPoll(uint64_t window_us) { busy_poll_us_ = window_us; }
  // Wake interrupts Poll from any thread.
  void Wake();

  // Defer runs `fn` after the current batch of events (frees closed objects safely).
  void Defer(std::function<void()> fn) { deferred_.push_back(std::move(fn)); }
  // RunDeferred runs what was deferred now (shutdown).
  void RunDeferred();

  // Cached clocks, refreshed by each Poll (and by UpdateTime).
  uint64_t now_ms() const { return now_us_ / 1000; }
  uint64_t now_us() const { return now_us_; }
  int64_t wall_us() const { return wall_us_; }  // Unix time
  void UpdateTime();

  TimerWheel& timers() { return *timers_; }

 private:
  EventLoop(int epoll_fd, int wake_fd);
  // Wait is epoll_wait, after the busy-poll window's looks when one is open.
  int Wait(int timeout_ms);

  static constexpr uint64_t kBusyPollGapUs = 2;

  int epoll_fd_;
  int wake_fd_;
  uint64_t now_us_ = 0;
  int64_t wall_us_ = 0;
  uint64_t busy_poll_us_ = 0;
  uint64_t last_event_us_ = 0;  // now_us_ of the last Poll that had events
  std::unique_ptr<TimerWheel> timers_;
  std::vector<std::function<void()>> deferred_;
  std::vector<std::function<void()>> running_;
  static constexpr int kMaxEvents = 256;
  epoll_event events_[kMaxEvents];
};

}  // namespace portico::gateway::net

#endif  // PORTICO_GATEWAY_NET_EVENT_LOOP_H_
