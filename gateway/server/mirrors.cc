// mirrors.cc: see mirrors.h.
#include "gateway/server/mirrors.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "gateway/http/chunked_decoder.h"
#include "gateway/http/response_parser.h"
#include "gateway/server/timer_wheel.h"

namespace portico::gateway::server {

// Copy is one mirrored request: write it all, read the response through its framing, then
// hand the connection back (reusable) or close it.
class Mirrors::Copy final : public EventHandler, public TimerHandler {
 public:
  Copy(Mirrors* owner, std::string key, const sockaddr_storage& address, socklen_t length, int fd,
       bool reused, std::string request)
      : owner_(owner),
        key_(std::move(key)),
        address_(address),
        length_(length),
        fd_(fd),
        reused_(reused),
        request_(std::move(request)),
        head_request_(request_.compare(0, 5, "HEAD ") == 0),
        timer_(this, 0) {}
  ~Copy() {
    if (fd_ >= 0) close(fd_);
  }

  int fd() const { return fd_; }
  const std::string& key() const { return key_; }
  Timer* timer() { return &timer_; }
  // TakeFd hands the connection over (to be parked): the copy no longer closes it.
  int TakeFd() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

  void OnEvents(uint32_t) override {
    if (done_) return;
    if (!written_ && !Write()) return;
    char chunk[16 * 1024];
    for (;;) {
      ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
      if (n > 0) {
        Count();  // a response byte: the copy arrived
        got_bytes_ = true;
        in_.append(chunk, static_cast<size_t>(n));
        if (Parse()) return;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      // EOF or reset. A reused connection the mirror had closed meanwhile: send again, once.
      if (!got_bytes_ && reused_) {
        Reconnect();
        return;
      }
      // Until-close bodies end here; anything else is cut short: done all the same.
      return End(false);
    }
  }

  void OnTimer(int) override {
    if (!done_) End(false);
  }

 private:
  enum class State : uint8_t { kHead, kBody };

  // Write sends what is left of the request; true once all of it went out.
  bool Write() {
    while (sent_ < request_.size()) {
      ssize_t n = send(fd_, request_.data() + sent_, request_.size() - sent_, MSG_NOSIGNAL);
      if (n > 0) {
        sent_ += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;  // connecting
      if (reused_ && !got_bytes_) {
        Reconnect();
      } else {
        End(false);
      }
      return false;
    }
    written_ = true;
    // On a fresh connection the copy counts as sent now; on a reused one only when a response
    // byte shows the mirror was still there to take it.
    if (!reused_) Count();
    return true;
  }

  // Parse walks the response in in_; true when the copy ended.
  bool Parse() {
    for (;;) {
      if (state_ == State::kHead) {
        http::ParseResult r = parser_.Parse(in_, head_request_);
        if (r == http::ParseResult::kNeedMore) return false;
        if (r == http::ParseResult::kError) return Done(false);
        const http::ResponseHead& head = parser_.head();
        if (head.status == 101) return Done(false);  // switched protocols: not reusable
        const size_t consumed = parser_.consumed();
        if (head.status < 200) {  // interim (100 Continue): the real head follows
          in_.erase(0, consumed);
          parser_.Reset();
          continue;
        }
        keep_alive_ = head.keep_alive;
        framing_ = head.framing;
        remaining_ = head.content_length;
        in_.erase(0, consumed);
        std::string().swap(request_);  // answered: the copy is no longer needed
        state_ = State::kBody;
        if (framing_ == http::BodyFraming::kChunked) decoder_.Reset();
      }
      switch (framing_) {
        case http::BodyFraming::kNone:
          return Done(keep_alive_ && in_.empty());
        case http::BodyFraming::kContentLength: {
          const size_t take = static_cast<size_t>(std::min<uint64_t>(in_.size(), remaining_));
          in_.erase(0, take);
          remaining_ -= take;
          if (remaining_ == 0) return Done(keep_alive_ && in_.empty());
          return false;
        }
        case http::BodyFraming::kChunked:
          while (!in_.empty()) {
            http::ChunkedStep step = decoder_.Decode(in_);
            in_.erase(0, step.consumed);
            if (step.result == http::ParseResult::kError) return Done(false);
            if (step.result == http::ParseResult::kComplete) {
              return Done(keep_alive_ && in_.empty());
            }
            if (step.consumed == 0) break;
          }
          return false;
        case http::BodyFraming::kUntilClose:
          in_.clear();
          return false;
      }
      return false;
    }
  }

  // Reconnect sends the request again on a fresh connection (the reused one was gone).
  void Reconnect() {
    owner_->loop_->Remove(fd_);
    close(fd_);
    fd_ = owner_->Connect(address_, length_);
    reused_ = false;
    sent_ = 0;
    written_ = false;
    if (fd_ < 0 || !owner_->loop_->Add(fd_, EventLoop::kSocketEvents, this)) {
      End(false);
      return;
    }
    // The first EPOLLOUT (connected) starts the write.
  }

  // Done ends the copy and says so (Parse's result).
  bool Done(bool reusable) {
    End(reusable);
    return true;
  }

  void Count() {
    if (counted_) return;
    counted_ = true;
    ++owner_->sent_;
  }

  // End closes the copy (or parks its connection); one never counted as sent counts as failed.
  void End(bool reusable) {
    done_ = true;
    if (!counted_) ++owner_->failed_;
    owner_->Finish(this, reusable);
  }

  Mirrors* owner_;
  const std::string key_;
  const sockaddr_storage address_;
  const socklen_t length_;
  int fd_;
  bool reused_;
  std::string request_;
  const bool head_request_;
  size_t sent_ = 0;
  bool written_ = false;
  bool counted_ = false;
  bool got_bytes_ = false;
  bool done_ = false;
  State state_ = State::kHead;
  http::ResponseParser parser_;
  http::ChunkedDecoder decoder_;
  http::BodyFraming framing_ = http::BodyFraming::kNone;
  uint64_t remaining_ = 0;
  bool keep_alive_ = false;
  std::string in_;
  Timer timer_;
};

Mirrors::Mirrors(EventLoop* loop, uint64_t timeout_ms)
    : loop_(loop),
      timeout_ms_(timeout_ms),
      rng_(static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) | 1) {
}

Mirrors::~Mirrors() {
  for (auto& [raw, copy] : copies_) {
    TimerWheel::Cancel(copy->timer());
    loop_->Remove(copy->fd());
  }
  for (auto& [key, list] : idle_) {
    for (const Idle& idle : list) close(idle.fd);
  }
}

int Mirrors::Connect(const sockaddr_storage& address, socklen_t length) {
  int fd = socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (connect(fd, reinterpret_cast<const sockaddr*>(&address), length) != 0 &&
      errno != EINPROGRESS) {
    close(fd);
    return -1;
  }
  ++connects_;
  return fd;
}

int Mirrors::TakeIdle(const std::string& key) {
  auto it = idle_.find(key);
  if (it == idle_.end()) return -1;
  std::vector<Idle>& list = it->second;
  const uint64_t now = loop_->now_ms();
  while (!list.empty()) {
    const Idle idle = list.back();
    list.pop_back();
    if (now - idle.since_ms < kIdleMs) {
      // Still open: nothing to read (a parked connection has no answer pending) and no EOF.
      char byte;
      ssize_t n = recv(idle.fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return idle.fd;
    }
    close(idle.fd);
  }
  return -1;
}

void Mirrors::Park(const std::string& key, int fd) {
  std::vector<Idle>& list = idle_[key];
  const uint64_t now = loop_->now_ms();
  // The oldest go first when the list is full or they have idled too long.
  list.erase(std::remove_if(list.begin(), list.end(),
                            [&](const Idle& idle) {
                              if (now - idle.since_ms < kIdleMs) return false;
                              close(idle.fd);
                              return true;
                            }),
             list.end());
  if (list.size() >= kMaxIdlePerAddress) {
    close(list.front().fd);
    list.erase(list.begin());
  }
  list.push_back({fd, now});
}

bool Mirrors::Send(const sockaddr_storage& address, socklen_t length, std::string request) {
  if (copies_.size() >= kMaxInFlight) {
    ++failed_;
    return false;
  }
  std::string key(reinterpret_cast<const char*>(&address), length);
  int fd = TakeIdle(key);
  const bool reused = fd >= 0;
  if (!reused) fd = Connect(address, length);
  if (fd < 0) {
    ++failed_;
    return false;
  }
  auto copy =
      std::make_unique<Copy>(this, std::move(key), address, length, fd, reused, std::move(request));
  Copy* raw = copy.get();
  // Connecting: the first EPOLLOUT (connected) starts the write. Reused: writable at once.
  if (!loop_->Add(fd, EventLoop::kSocketEvents, raw)) {
    ++failed_;
    return false;
  }
  loop_->timers().Arm(raw->timer(), loop_->now_ms() + timeout_ms_);
  copies_.emplace(raw, std::move(copy));
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

void Mirrors::Finish(Copy* copy, bool reusable) {
  TimerWheel::Cancel(copy->timer());
  if (copy->fd() >= 0) loop_->Remove(copy->fd());
  if (reusable) Park(copy->key(), copy->TakeFd());
  auto it = copies_.find(copy);
  if (it == copies_.end()) return;
  // Freed after the batch: later events of this batch may still name it.
  std::shared_ptr<Copy> dead(std::move(it->second));
  copies_.erase(it);
  loop_->Defer([dead] {});
}

}  // namespace portico::gateway::server
