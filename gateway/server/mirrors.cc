// mirrors.cc: see mirrors.h.
#include "gateway/server/mirrors.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "gateway/server/timer_wheel.h"

namespace portico::gateway::server {

// Copy is one mirrored request: connect, write it all, read until EOF, close.
class Mirrors::Copy final : public EventHandler, public TimerHandler {
 public:
  Copy(Mirrors* owner, int fd, std::string request)
      : owner_(owner), fd_(fd), request_(std::move(request)), timer_(this, 0) {}
  ~Copy() { close(fd_); }

  int fd() const { return fd_; }
  Timer* timer() { return &timer_; }

  void OnEvents(uint32_t) override {
    if (done_) return;
    if (!written_) {
      while (sent_ < request_.size()) {
        ssize_t n = send(fd_, request_.data() + sent_, request_.size() - sent_, MSG_NOSIGNAL);
        if (n > 0) {
          sent_ += static_cast<size_t>(n);
          continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;  // not connected yet
        return End();
      }
      written_ = true;
      ++owner_->sent_;
      std::string().swap(request_);  // free the copy now
    }
    // The response is not wanted: read it away until the mirror closes.
    char sink[4096];
    for (;;) {
      ssize_t n = recv(fd_, sink, sizeof(sink), 0);
      if (n > 0) continue;
      if (n == 0) return End();
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      return End();  // a reset after the whole request was written: it arrived all the same
    }
  }

  void OnTimer(int) override {
    if (!done_) End();
  }

 private:
  // End closes the copy; one not written in full counts as failed.
  void End() {
    done_ = true;
    if (!written_) ++owner_->failed_;
    owner_->Finish(this);
  }

  Mirrors* owner_;
  int fd_;
  std::string request_;
  size_t sent_ = 0;
  bool written_ = false;
  bool done_ = false;
  Timer timer_;
};

Mirrors::Mirrors(EventLoop* loop, uint64_t timeout_ms)
    : loop_(loop),
      timeout_ms_(timeout_ms),
      rng_(static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) | 1) {
}

Mirrors::~Mirrors() {
  for (auto& [raw, copy] : copies_) loop_->Remove(copy->fd());
}

bool Mirrors::Send(const sockaddr_storage& address, socklen_t length, std::string request) {
  if (copies_.size() >= kMaxInFlight) {
    ++failed_;
    return false;
  }
  int fd = socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    ++failed_;
    return false;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (connect(fd, reinterpret_cast<const sockaddr*>(&address), length) != 0 &&
      errno != EINPROGRESS) {
    close(fd);
    ++failed_;
    return false;
  }
  auto copy = std::make_unique<Copy>(this, fd, std::move(request));
  Copy* raw = copy.get();
  if (!loop_->Add(fd, EventLoop::kSocketEvents, raw)) {
    ++failed_;
    return false;
  }
  loop_->timers().Arm(raw->timer(), loop_->now_ms() + timeout_ms_);
  copies_.emplace(raw, std::move(copy));
  // The first EPOLLOUT (connected) starts the write.
  return true;
}

bool Mirrors::Roll(double percent) {
  if (percent >= 100) return true;
  if (percent <= 0) return false;
  // xorshift64*: a worker-local generator, good enough to pick a share of requests.
  rng_ ^= rng_ >> 12;
  rng_ ^= rng_ << 25;
  rng_ ^= rng_ >> 27;
  const uint64_t r = rng_ * 0x2545F4914F6CDD1DULL;
  return static_cast<double>(r >> 11) * 0x1.0p-53 * 100.0 < percent;
}

void Mirrors::Finish(Copy* copy) {
  TimerWheel::Cancel(copy->timer());
  loop_->Remove(copy->fd());
  auto it = copies_.find(copy);
  if (it == copies_.end()) return;
  // Freed after the batch: later events of this batch may still name it.
  std::shared_ptr<Copy> dead(std::move(it->second));
  copies_.erase(it);
  loop_->Defer([dead] {});
}

std::string AddConnectionClose(std::string_view head) {
  std::string out;
  if (head.size() < 2) return std::string(head);
  out.reserve(head.size() + 19);
  out.append(head.substr(0, head.size() - 2));  // up to the empty line's CRLF
  out.append("Connection: close\r\n\r\n");
  return out;
}

}  // namespace portico::gateway::server
