// http_client.cc: see http_client.h.
#include "gateway/upstream/http_client.h"

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

namespace portico::gateway::upstream {

using server::EventHandler;
using server::EventLoop;
using server::Timer;
using server::TimerHandler;
using server::TimerWheel;

// Call is one outbound request: write it all, read the response through its framing (keeping
// head and body when someone waits for them), then hand the connection back (reusable) or close
// it.
class HttpClient::Call final : public EventHandler, public TimerHandler {
 public:
  Call(HttpClient* owner, Purpose purpose, std::string key, const sockaddr_storage& address,
       socklen_t length, int fd, bool reused, std::string request, Done* done)
      : owner_(owner),
        purpose_(purpose),
        done_cb_(done),
        key_(std::move(key)),
        address_(address),
        length_(length),
        fd_(fd),
        reused_(reused),
        request_(std::move(request)),
        head_request_(request_.compare(0, 5, "HEAD ") == 0),
        timer_(this, 0) {}
  ~Call() {
    if (fd_ >= 0) close(fd_);
  }

  int fd() const { return fd_; }
  const std::string& key() const { return key_; }
  Timer* timer() { return &timer_; }
  Purpose purpose() const { return purpose_; }
  Done* done_cb() const { return done_cb_; }
  void Forget() { done_cb_ = nullptr; }
  HttpResult& result() { return result_; }
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
      // Until-close bodies end here; anything else is cut short.
      if (state_ == State::kBody && framing_ == http::BodyFraming::kUntilClose) return End(false);
      return End(false, state_ == State::kHead ? "closed" : "closed_in_body");
    }
  }

  void OnTimer(int) override {
    if (!done_) End(false, "timeout");
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
        End(false, "connect_failed");
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
        if (r == http::ParseResult::kError) return Complete(false, "bad_response");
        const http::ResponseHead& head = parser_.head();
        if (head.status == 101) return Complete(false, "switched_protocols");  // not reusable
        const size_t consumed = parser_.consumed();
        if (head.status < 200) {  // interim (100 Continue): the real head follows
          in_.erase(0, consumed);
          parser_.Reset();
          continue;
        }
        keep_alive_ = head.keep_alive;
        if (done_cb_ != nullptr) {
          result_.status = head.status;
          for (const http::HeaderField& f : head.headers) {
            result_.headers.emplace_back(std::string(f.name), std::string(f.value));
          }
        }
        framing_ = head.framing;
        remaining_ = head.content_length;
        in_.erase(0, consumed);
        std::string().swap(request_);  // answered: the copy is no longer needed
        state_ = State::kBody;
        if (framing_ == http::BodyFraming::kChunked) decoder_.Reset();
      }
      switch (framing_) {
        case http::BodyFraming::kNone:
          return Complete(keep_alive_ && in_.empty());
        case http::BodyFraming::kContentLength: {
          const size_t take = static_cast<size_t>(std::min<uint64_t>(in_.size(), remaining_));
          if (!Keep(std::string_view(in_).substr(0, take))) return Complete(false, "too_large");
          in_.erase(0, take);
          remaining_ -= take;
          if (remaining_ == 0) return Complete(keep_alive_ && in_.empty());
          return false;
        }
        case http::BodyFraming::kChunked:
          while (!in_.empty()) {
            http::ChunkedStep step = decoder_.Decode(in_);
            if (step.result == http::ParseResult::kError) return Complete(false, "bad_response");
            if (!Keep(step.data)) return Complete(false, "too_large");
            in_.erase(0, step.consumed);
            if (step.result == http::ParseResult::kComplete) {
              return Complete(keep_alive_ && in_.empty());
            }
            if (step.consumed == 0) break;
          }
          return false;
        case http::BodyFraming::kUntilClose:
          if (!Keep(in_)) return Complete(false, "too_large");
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
    fd_ = owner_->Connect(address_, length_, purpose_);
    reused_ = false;
    sent_ = 0;
    written_ = false;
    if (fd_ < 0 || !owner_->loop_->Add(fd_, EventLoop::kSocketEvents, this)) {
      End(false, "connect_failed");
      return;
    }
    // The first EPOLLOUT (connected) starts the write.
  }

  // Keep appends body bytes to the result when someone waits for it; false when too large.
  bool Keep(std::string_view data) {
    if (done_cb_ == nullptr) return true;
    if (result_.body.size() + data.size() > kMaxResponseBody) return false;
    result_.body.append(data);
    return true;
  }

  // Complete ends the call and says so (Parse's result); `error` marks a failure.
  bool Complete(bool reusable, std::string_view error = {}) {
    End(reusable, error);
    return true;
  }

  void Count() {
    if (counted_) return;
    counted_ = true;
    ++owner_->counters_[static_cast<int>(purpose_)].sent;
  }

  // End closes the call (or parks its connection); one never counted as sent counts as failed.
  // With `error`, the result is a failure (status 0).
  void End(bool reusable, std::string_view error = {}) {
    done_ = true;
    if (!counted_) ++owner_->counters_[static_cast<int>(purpose_)].failed;
    if (!error.empty()) {
      result_.status = 0;
      result_.error.assign(error);
      result_.headers.clear();
      result_.body.clear();
    }
    owner_->Finish(this, reusable);
  }

  HttpClient* owner_;
  const Purpose purpose_;
  Done* done_cb_;
  HttpResult result_;
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

HttpClient::HttpClient(EventLoop* loop) : loop_(loop) {}

HttpClient::~HttpClient() {
  for (auto& [raw, call] : calls_) {
    TimerWheel::Cancel(call->timer());
    loop_->Remove(call->fd());
  }
  for (auto& [key, list] : idle_) {
    for (const Idle& idle : list) close(idle.fd);
  }
}

int HttpClient::Connect(const sockaddr_storage& address, socklen_t length, Purpose purpose) {
  int fd = socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (connect(fd, reinterpret_cast<const sockaddr*>(&address), length) != 0 &&
      errno != EINPROGRESS) {
    close(fd);
    return -1;
  }
  ++counters_[static_cast<int>(purpose)].connects;
  return fd;
}

int HttpClient::TakeIdle(const std::string& key) {
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

void HttpClient::Park(const std::string& key, int fd) {
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

HttpClient::Call* HttpClient::Start(Purpose purpose, const sockaddr_storage& address,
                                    socklen_t length, std::string request, uint64_t timeout_ms,
                                    Done* done) {
  Counters& counters = counters_[static_cast<int>(purpose)];
  std::string key(reinterpret_cast<const char*>(&address), length);
  size_t& per_address = per_address_[key];
  if (calls_.size() >= kMaxInFlight || per_address >= kMaxPerAddress) {
    ++counters.failed;
    if (per_address == 0) per_address_.erase(key);
    return nullptr;
  }
  int fd = TakeIdle(key);
  const bool reused = fd >= 0;
  if (!reused) fd = Connect(address, length, purpose);
  if (fd < 0) {
    ++counters.failed;
    if (per_address == 0) per_address_.erase(key);
    return nullptr;
  }
  ++per_address;
  auto call = std::make_unique<Call>(this, purpose, std::move(key), address, length, fd, reused,
                                     std::move(request), done);
  Call* raw = call.get();
  calls_.emplace(raw, std::move(call));
  ++counters.in_flight;
  // Connecting: the first EPOLLOUT (connected) starts the write. Reused: writable at once.
  if (!loop_->Add(fd, EventLoop::kSocketEvents, raw)) {
    raw->Forget();
    Finish(raw, false);
    ++counters.failed;
    return nullptr;
  }
  loop_->timers().Arm(raw->timer(), loop_->now_ms() + timeout_ms);
  return raw;
}

void HttpClient::Cancel(Call* call) {
  call->Forget();
  ++counters_[static_cast<int>(call->purpose())].cancelled;
  Finish(call, false);
}

void HttpClient::Finish(Call* call, bool reusable) {
  auto it = calls_.find(call);
  if (it == calls_.end()) return;
  TimerWheel::Cancel(call->timer());
  if (call->fd() >= 0) loop_->Remove(call->fd());
  if (reusable) Park(call->key(), call->TakeFd());
  Counters& counters = counters_[static_cast<int>(call->purpose())];
  --counters.in_flight;
  if (auto pa = per_address_.find(call->key()); pa != per_address_.end() && --pa->second == 0) {
    per_address_.erase(pa);
  }
  // Freed after the batch: later events of this batch may still name it.
  std::shared_ptr<Call> dead(std::move(it->second));
  calls_.erase(it);
  loop_->Defer([dead] {});
  if (Done* done = dead->done_cb()) {
    dead->Forget();
    done->OnHttpDone(std::move(dead->result()));
  }
}

}  // namespace portico::gateway::upstream
