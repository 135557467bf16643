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
#include "gateway/net/timer_wheel.h"
#include "gateway/net/tls_transport.h"

namespace portico::gateway::upstream {

using net::EventHandler;
using net::EventLoop;
using net::Timer;
using net::TimerHandler;
using net::TimerWheel;

// Call is one outbound request: write it all, read the response through its framing (keeping
// head and body when someone waits for them), then hand the connection back (reusable) or close
// it.
class HttpClient::Call final : public net::EventHandler, public net::TimerHandler {
 public:
  Call(HttpClient* owner, Purpose purpose, std::string key, const sockaddr_storage& address,
       socklen_t length, std::shared_ptr<const core::tls::UpstreamTls> tls, Link link, bool reused,
       std::string request, Done* done)
      : owner_(owner),
        purpose_(purpose),
        done_cb_(done),
        key_(std::move(key)),
        address_(address),
        length_(length),
        tls_(std::move(tls)),
        link_(std::move(link)),
        reused_(reused),
        request_(std::move(request)),
        head_request_(request_.compare(0, 5, "HEAD ") == 0),
        timer_(this, 0) {}

  int fd() const { return link_.fd(); }
  const std::string& key() const { return key_; }
  net::Timer* timer() { return &timer_; }
  Purpose purpose() const { return purpose_; }
  Done* done_cb() const { return done_cb_; }
  void Forget() { done_cb_ = nullptr; }
  HttpResult& result() { return result_; }
  // TakeLink hands the connection over (to be parked): the call no longer closes it.
  Link TakeLink() { return std::move(link_); }

  void OnEvents(uint32_t) override {
    if (done_) return;
    if (!written_ && !Write()) return;
    char chunk[16 * 1024];
    for (;;) {
      const net::IoResult r = link_.io()->Read(chunk, sizeof(chunk));
      if (r.kind == net::IoResult::kDone) {
        Count();  // a response byte: the copy arrived
        got_bytes_ = true;
        in_.append(chunk, r.bytes);
        if (Parse()) return;
        continue;
      }
      if (r.kind == net::IoResult::kAgain) return;
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
      iovec piece{request_.data() + sent_, request_.size() - sent_};
      const net::IoResult r = link_.io()->Write(&piece, 1);
      if (r.kind == net::IoResult::kDone) {
        sent_ += r.bytes;
        continue;
      }
      // Connecting, or a TLS handshake waiting for the backend.
      if (r.kind == net::IoResult::kAgain) return false;
      if (!link_.failure().empty()) {
        End(false, "tls_failed");  // a certificate or handshake the backend failed: not retried
      } else if (reused_ && !got_bytes_) {
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
    owner_->loop_->Remove(link_.fd());
    link_ = owner_->Connect(address_, length_, tls_, purpose_);
    reused_ = false;
    sent_ = 0;
    written_ = false;
    if (link_.fd() < 0 || !owner_->loop_->Add(link_.fd(), net::EventLoop::kSocketEvents, this)) {
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
  const std::shared_ptr<const core::tls::UpstreamTls> tls_;
  Link link_;
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
  net::Timer timer_;
};

HttpClient::HttpClient(net::EventLoop* loop) : loop_(loop) {}

HttpClient::~HttpClient() {
  for (auto& [raw, call] : calls_) {
    net::TimerWheel::Cancel(call->timer());
    loop_->Remove(call->fd());
  }
}

std::string_view HttpClient::Link::failure() const {
  return tls != nullptr ? std::string_view(static_cast<net::TlsTransport*>(tls.get())->failure())
                        : std::string_view();
}

HttpClient::Link HttpClient::Connect(const sockaddr_storage& address, socklen_t length,
                                     const std::shared_ptr<const core::tls::UpstreamTls>& tls,
                                     Purpose purpose) {
  Link link;
  int fd = socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return link;
  link.socket = std::make_unique<net::PlainTransport>(fd);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (connect(fd, reinterpret_cast<const sockaddr*>(&address), length) != 0 &&
      errno != EINPROGRESS) {
    return Link();
  }
  if (tls != nullptr) {
    link.tls = net::TlsTransport::CreateClient(link.socket.get(), tls);
    if (link.tls == nullptr) return Link();
  }
  ++counters_[static_cast<int>(purpose)].connects;
  return link;
}

HttpClient::Link HttpClient::TakeIdle(const std::string& key) {
  auto it = idle_.find(key);
  if (it == idle_.end()) return Link();
  std::vector<Idle>& list = it->second;
  const uint64_t now = loop_->now_ms();
  while (!list.empty()) {
    Idle idle = std::move(list.back());
    list.pop_back();
    if (now - idle.since_ms < kIdleMs) {
      // Still open: nothing to read (a parked connection has no answer pending) and no EOF.
      char byte;
      ssize_t n = recv(idle.link.fd(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return std::move(idle.link);
    }
  }
  return Link();
}

void HttpClient::Park(const std::string& key, Link link) {
  std::vector<Idle>& list = idle_[key];
  const uint64_t now = loop_->now_ms();
  // The oldest go first when the list is full or they have idled too long.
  list.erase(std::remove_if(list.begin(), list.end(),
                            [&](const Idle& idle) { return now - idle.since_ms >= kIdleMs; }),
             list.end());
  if (list.size() >= kMaxIdlePerAddress) list.erase(list.begin());
  list.push_back({std::move(link), now});
}

HttpClient::Call* HttpClient::Start(Purpose purpose, const sockaddr_storage& address,
                                    socklen_t length, std::string request, uint64_t timeout_ms,
                                    Done* done, std::shared_ptr<const core::tls::UpstreamTls> tls) {
  Counters& counters = counters_[static_cast<int>(purpose)];
  if (tls != nullptr && !tls->usable()) {
    ++counters.failed;  // never in clear text instead
    return nullptr;
  }
  // TLS connections never mix with clear-text ones (or another policy's).
  std::string key = tls != nullptr ? tls->id() + "@" : std::string();
  key.append(reinterpret_cast<const char*>(&address), length);
  size_t& per_address = per_address_[key];
  if (calls_.size() >= kMaxInFlight || per_address >= kMaxPerAddress) {
    ++counters.failed;
    if (per_address == 0) per_address_.erase(key);
    return nullptr;
  }
  Link link = TakeIdle(key);
  const bool reused = link.fd() >= 0;
  if (!reused) link = Connect(address, length, tls, purpose);
  const int fd = link.fd();
  if (fd < 0) {
    ++counters.failed;
    if (per_address == 0) per_address_.erase(key);
    return nullptr;
  }
  ++per_address;
  auto call = std::make_unique<Call>(this, purpose, std::move(key), address, length, std::move(tls),
                                     std::move(link), reused, std::move(request), done);
  Call* raw = call.get();
  calls_.emplace(raw, std::move(call));
  ++counters.in_flight;
  // Connecting: the first EPOLLOUT (connected) starts the write. Reused: writable at once.
  if (!loop_->Add(fd, net::EventLoop::kSocketEvents, raw)) {
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
  net::TimerWheel::Cancel(call->timer());
  if (call->fd() >= 0) loop_->Remove(call->fd());
  if (reusable) Park(call->key(), call->TakeLink());
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
