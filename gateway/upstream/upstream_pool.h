// upstream_pool.h: one worker's upstream connections: UpstreamConnection (a non-blocking TCP
// connection to one endpoint, TLS over it when the endpoint's backend has a BackendTLSPolicy,
// with its read buffer, response parser and pending output),
// EndpointPool (the idle keep-alive connections of one endpoint, most recently used first) and
// UpstreamPool (every endpoint pool of the worker, keyed by "ip:port" and, for TLS, the
// UpstreamTls configuration id, so pools survive configuration changes that keep both).
//
// An idle connection stays registered with the worker's epoll: data or a close from the upstream
// while idle closes it (an idle HTTP/1.1 upstream has nothing to say). It is also closed after
// `idle_timeout_ms` idle, and pools keep at most `max_idle_per_endpoint`.
//
// Thread-safety: none; everything belongs to one worker thread. Ownership: UpstreamPool owns
// every connection (idle or lent); a lent connection is driven by its UpstreamUser until it is
// Released (back to the pool) or Closed.
#ifndef PORTICO_GATEWAY_UPSTREAM_UPSTREAM_POOL_H_
#define PORTICO_GATEWAY_UPSTREAM_UPSTREAM_POOL_H_

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/runtime/tls/upstream_tls.h"
#include "gateway/http/chunked_decoder.h"
#include "gateway/http/response_parser.h"
#include "gateway/net/event_loop.h"
#include "gateway/net/io_buffer.h"
#include "gateway/net/timer_wheel.h"
#include "gateway/net/transport.h"

namespace portico::gateway::upstream {

class EndpointPool;
class UpstreamPool;

// UpstreamUser drives a lent connection: it receives the connection's epoll events.
class UpstreamUser {
 public:
  virtual void OnUpstreamEvents(uint32_t events) = 0;

 protected:
  ~UpstreamUser() = default;
};

// UpstreamOptions are the pool's settings.
struct UpstreamOptions {
  size_t buffer_bytes = 16 * 1024;  // initial read buffer
  size_t max_idle_per_endpoint = 256;
  uint64_t idle_timeout_ms = 60'000;
  http::HeadLimits response_limits;
};

class UpstreamConnection final : public net::EventHandler, public net::TimerHandler {
 public:
  UpstreamConnection(UpstreamPool* pool, EndpointPool* endpoint, int fd, size_t buffer_bytes,
                     const http::HeadLimits& limits);
  ~UpstreamConnection();

  void OnEvents(uint32_t events) override;
  void OnTimer(int id) override;

  int fd() const { return fd_; }
  EndpointPool* endpoint() const { return endpoint_; }
  // transport moves the bytes: the socket itself, or TLS over it.
  net::Transport* transport() {
    return tls_ != nullptr ? tls_.get() : static_cast<net::Transport*>(&socket_);
  }
  // failure is why the TLS session failed ("" without TLS or while it has not).
  std::string_view failure() const;
  // Requests this connection carried before the current one (0: a fresh connection).
  uint32_t reuse_count() const { return reuse_count_; }

  // Readiness as last reported (edge-triggered): set by events, cleared by EAGAIN.
  bool readable = false;
  bool writable = false;
  bool connecting = false;  // a non-blocking connect is in progress
  bool peer_closed = false;
  // The upstream half-closed or failed (EPOLLRDHUP/HUP/ERR seen): a short read no longer means
  // the socket is drained, since the EOF behind the data raises no further edge.
  bool hangup = false;

  net::IoBuffer in;  // bytes read from the upstream
  http::ResponseParser parser;
  http::ChunkedDecoder decoder;
  bool decoder_used = false;  // set by the user when it decodes a chunked body

 private:
  friend class UpstreamPool;
  friend class EndpointPool;

  UpstreamPool* pool_;
  EndpointPool* endpoint_;
  int fd_;
  net::PlainTransport socket_;           // owns fd_
  std::unique_ptr<net::Transport> tls_;  // a TlsTransport over socket_, or null
  UpstreamUser* user_ = nullptr;  // null while idle
  uint32_t reuse_count_ = 0;
  uint64_t idle_since_ms_ = 0;
  bool closed_ = false;
  net::Timer idle_timer_;
};

// EndpointPool is one endpoint's address and idle connections.
class EndpointPool {
 public:
  EndpointPool(std::string name, const sockaddr_storage& address, socklen_t length,
               std::shared_ptr<const core::tls::UpstreamTls> tls)
      : name_(std::move(name)), address_(address), length_(length), tls_(std::move(tls)) {}

  // "ip:port" ("[v6]:port"), for the access log.
  const std::string& name() const { return name_; }
  const sockaddr_storage& address() const { return address_; }
  socklen_t address_length() const { return length_; }
  size_t idle() const { return idle_.size(); }
  size_t active() const { return active_; }
  // tls is how connections to this endpoint speak TLS (null: clear text).
  const core::tls::UpstreamTls* tls() const { return tls_.get(); }

 private:
  friend class UpstreamPool;
  std::string name_;
  sockaddr_storage address_;
  socklen_t length_;
  std::shared_ptr<const core::tls::UpstreamTls> tls_;
  std::vector<UpstreamConnection*> idle_;  // most recently released last
  size_t active_ = 0;                      // lent connections
};

class UpstreamPool {
 public:
  UpstreamPool(net::EventLoop* loop, const UpstreamOptions& options);
  UpstreamPool(const UpstreamPool&) = delete;
  UpstreamPool& operator=(const UpstreamPool&) = delete;
  ~UpstreamPool();

  // Endpoint returns the pool of (ip, port) and `tls` (null: clear text), creating it; nullptr
  // when `ip` is not an IPv4 or IPv6 literal. `address` (optional) is the same endpoint already
  // parsed.
  EndpointPool* Endpoint(std::string_view ip, uint16_t port,
                         const sockaddr_storage* address = nullptr, socklen_t length = 0,
                         const std::shared_ptr<const core::tls::UpstreamTls>* tls = nullptr);

  // Acquire lends an idle connection of `endpoint` to `user` (nullptr when none is idle). With
  // `check_alive`, a connection the upstream closed meanwhile is dropped first (a MSG_PEEK).
  UpstreamConnection* Acquire(EndpointPool* endpoint, UpstreamUser* user, bool check_alive);
  // Connect starts a non-blocking connect to `endpoint` for `user` (with a TLS session ready to
  // handshake on the first write when the endpoint speaks TLS); nullptr with errno set when the
  // socket cannot even be created or the connect failed at once (ECONNREFUSED on loopback).
  UpstreamConnection* Connect(EndpointPool* endpoint, UpstreamUser* user);
  // Release returns a lent connection whose exchange ended cleanly (its buffers empty) for reuse.
  void Release(UpstreamConnection* connection);
  // Close closes a lent or idle connection (freed after the current batch of events).
  void Close(UpstreamConnection* connection);

  // Prune drops endpoint pools holding no connection (after a configuration change).
  void Prune();

  size_t connections() const { return connections_; }
  uint64_t connects() const { return connects_; }
  uint64_t reuses() const { return reuses_; }
  const UpstreamOptions& options() const { return options_; }

 private:
  friend class UpstreamConnection;
  net::EventLoop* loop_;
  UpstreamOptions options_;
  std::unordered_map<std::string, std::unique_ptr<EndpointPool>> endpoints_;
  std::string key_;  // scratch for lookups
  size_t connections_ = 0;
  uint64_t connects_ = 0;
  uint64_t reuses_ = 0;
};

}  // namespace portico::gateway::upstream

#endif  // PORTICO_GATEWAY_UPSTREAM_UPSTREAM_POOL_H_
