// upstream_pool.cc: see upstream_pool.h.
#include "gateway/upstream/upstream_pool.h"

#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "gateway/net/socket_address.h"
#include "gateway/net/tls_transport.h"

namespace portico::gateway::upstream {

UpstreamConnection::UpstreamConnection(UpstreamPool* pool, EndpointPool* endpoint, int fd,
                                       size_t buffer_bytes, const http::HeadLimits& limits)
    : in(buffer_bytes),
      parser(limits),
      pool_(pool),
      endpoint_(endpoint),
      fd_(fd),
      socket_(fd),
      idle_timer_(this, 0) {}

UpstreamConnection::~UpstreamConnection() {
  tls_.reset();  // before the socket it writes to
  socket_.Close();
}

std::string_view UpstreamConnection::failure() const {
  return tls_ != nullptr ? std::string_view(static_cast<net::TlsTransport*>(tls_.get())->failure())
                         : std::string_view();
}

void UpstreamConnection::OnEvents(uint32_t events) {
  if (closed_) return;
  if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) readable = true;
  if (events & (EPOLLOUT | EPOLLHUP | EPOLLERR)) writable = true;
  if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) hangup = true;
  if (user_ != nullptr) {
    user_->OnUpstreamEvents(events);
    return;
  }
  // Idle: an upstream that speaks or closes now is done with this connection.
  if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) pool_->Close(this);
}

void UpstreamConnection::OnTimer(int) {
  if (closed_ || user_ != nullptr) return;  // lent meanwhile: Release re-arms as needed
  const uint64_t deadline = idle_since_ms_ + pool_->options_.idle_timeout_ms;
  if (pool_->loop_->now_ms() < deadline) {
    // Reused and released again since the timer was armed: wait for the new deadline.
    pool_->loop_->timers().Arm(&idle_timer_, deadline);
    return;
  }
  pool_->Close(this);
}

UpstreamPool::UpstreamPool(net::EventLoop* loop, const UpstreamOptions& options)
    : loop_(loop), options_(options) {}

UpstreamPool::~UpstreamPool() {
  for (auto& [name, endpoint] : endpoints_) {
    for (UpstreamConnection* c : endpoint->idle_) delete c;
  }
}

EndpointPool* UpstreamPool::Endpoint(std::string_view ip, uint16_t port,
                                     const sockaddr_storage* parsed, socklen_t parsed_length,
                                     const std::shared_ptr<const core::tls::UpstreamTls>* tls) {
  key_.clear();
  size_t name_at = 0;  // where "ip:port" starts in key_
  if (tls != nullptr && *tls != nullptr) {
    key_.append((*tls)->id());  // TLS connections never mix with clear-text ones
    key_.push_back('@');
    name_at = key_.size();
  }
  const bool v6 = ip.find(':') != std::string_view::npos;
  if (v6) key_.push_back('[');
  key_.append(ip);
  if (v6) key_.push_back(']');
  key_.push_back(':');
  key_.append(std::to_string(port));
  auto it = endpoints_.find(key_);
  if (it != endpoints_.end()) return it->second.get();
  sockaddr_storage address;
  socklen_t length = parsed_length;
  if (parsed != nullptr && parsed_length != 0) {
    address = *parsed;
  } else if (!net::ParseIpLiteral(ip, port, &address, &length)) {
    return nullptr;
  }
  auto pool = std::make_unique<EndpointPool>(key_.substr(name_at), address, length,
                                             tls != nullptr ? *tls : nullptr);
  EndpointPool* raw = pool.get();
  endpoints_.emplace(key_, std::move(pool));
  return raw;
}

UpstreamConnection* UpstreamPool::Acquire(EndpointPool* endpoint, UpstreamUser* user,
                                          bool check_alive) {
  while (!endpoint->idle_.empty()) {
    UpstreamConnection* c = endpoint->idle_.back();
    endpoint->idle_.pop_back();
    if (check_alive) {
      char byte;
      ssize_t n = recv(c->fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
        endpoint->idle_.push_back(c);  // Close removes it from the idle list
        Close(c);
        continue;
      }
    }
    // The idle timer stays armed (lazily): it re-checks when it fires, which saves relinking it
    // on every request of a busy connection.
    c->user_ = user;
    ++c->reuse_count_;
    ++endpoint->active_;
    ++reuses_;
    return c;
  }
  return nullptr;
}

UpstreamConnection* UpstreamPool::Connect(EndpointPool* endpoint, UpstreamUser* user) {
  const int family = endpoint->address_.ss_family;
  int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return nullptr;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  int rc = connect(fd, reinterpret_cast<const sockaddr*>(&endpoint->address_), endpoint->length_);
  if (rc != 0 && errno != EINPROGRESS) {
    int err = errno;
    close(fd);
    errno = err;
    return nullptr;
  }
  auto* c =
      new UpstreamConnection(this, endpoint, fd, options_.buffer_bytes, options_.response_limits);
  if (endpoint->tls_ != nullptr) {
    c->tls_ = net::TlsTransport::CreateClient(&c->socket_, endpoint->tls_);
    if (c->tls_ == nullptr) {
      delete c;
      errno = EPROTO;
      return nullptr;
    }
  }
  c->connecting = rc != 0;
  c->writable = rc == 0;
  c->user_ = user;
  if (!loop_->Add(fd, net::EventLoop::kSocketEvents, c)) {
    int err = errno;
    delete c;
    errno = err;
    return nullptr;
  }
  ++endpoint->active_;
  ++connections_;
  ++connects_;
  return c;
}

void UpstreamPool::Release(UpstreamConnection* c) {
  EndpointPool* endpoint = c->endpoint_;
  if (c->peer_closed || endpoint->idle_.size() >= options_.max_idle_per_endpoint) {
    Close(c);
    return;
  }
  --endpoint->active_;
  c->user_ = nullptr;
  c->parser.Reset();
  if (c->decoder_used) {
    c->decoder.Reset();
    c->decoder_used = false;
  }
  c->in.Clear();
  endpoint->idle_.push_back(c);
  c->idle_since_ms_ = loop_->now_ms();
  if (!c->idle_timer_.armed()) {
    loop_->timers().Arm(&c->idle_timer_, c->idle_since_ms_ + options_.idle_timeout_ms);
  }
}

void UpstreamPool::Close(UpstreamConnection* c) {
  if (c->closed_) return;
  c->closed_ = true;
  EndpointPool* endpoint = c->endpoint_;
  if (c->user_ != nullptr) {
    --endpoint->active_;
    c->user_ = nullptr;
  } else {
    auto it = std::find(endpoint->idle_.begin(), endpoint->idle_.end(), c);
    if (it != endpoint->idle_.end()) endpoint->idle_.erase(it);
  }
  net::TimerWheel::Cancel(&c->idle_timer_);
  if (c->tls_ != nullptr) c->tls_->Close();
  c->socket_.Close();
  c->fd_ = -1;
  --connections_;
  loop_->Defer([c] { delete c; });
}

void UpstreamPool::Prune() {
  for (auto it = endpoints_.begin(); it != endpoints_.end();) {
    if (it->second->idle_.empty() && it->second->active_ == 0) {
      it = endpoints_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace portico::gateway::upstream
