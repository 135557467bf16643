// worker.cc: see worker.h.
#include "gateway/server/worker.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "gateway/net/listener_socket.h"
#include "gateway/server/client_connection.h"
#include "gateway/server/data_plane.h"

namespace portico::gateway::server {

namespace {

void Bump(std::atomic<uint64_t>& counter, uint64_t by = 1) {
  counter.store(counter.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

std::string PeerAddress(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&address)->sin_addr, text,
              sizeof(text));
  } else if (address.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&address)->sin6_addr, text,
              sizeof(text));
  }
  return text;
}

}  // namespace

// Acceptor accepts on this worker's socket of one listener key.
class Worker::Acceptor final : public net::EventHandler {
 public:
  Acceptor(Worker* worker, std::shared_ptr<net::ListenerSocket> socket)
      : worker_(worker), socket_(std::move(socket)), fd_(socket_->fd(worker->index())) {}
  void OnEvents(uint32_t) override { worker_->Accept(this); }
  int fd() const { return fd_; }
  const net::ListenerSocket& socket() const { return *socket_; }
  // tls is the certificates new connections handshake with (HTTPS sockets; refreshed from every
  // snapshot the worker pins, so a rotated certificate serves the next connection).
  const std::shared_ptr<const core::tls::ServerTlsSet>& tls() const { return tls_; }
  void set_tls(std::shared_ptr<const core::tls::ServerTlsSet> tls) { tls_ = std::move(tls); }

 private:
  Worker* worker_;
  std::shared_ptr<net::ListenerSocket> socket_;
  int fd_;
  std::shared_ptr<const core::tls::ServerTlsSet> tls_;
};

namespace {
// How long a worker whose accept(2) ran out of descriptors waits before it tries again (when no
// connection of its own closes first): nginx waits 500 ms.
constexpr uint64_t kAcceptRetryMs = 100;
}  // namespace

Worker::Worker(DataPlane* plane, int index)
    : plane_(plane),
      index_(index),
      settings_(plane->options().settings),
      rng_((static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
            (static_cast<uint64_t>(index) + 1) * 0x9E3779B97F4A7C15ULL) |
           1) {}

Worker::~Worker() {
  Stop();
  if (loop_ != nullptr) {
    CloseAll();
    loop_->RunDeferred();
  }
}

Status Worker::Start() {
  PORTICO_ASSIGN_OR_RETURN(loop_, net::EventLoop::Create());
  loop_->SetBusyPoll(settings_.busy_poll_us);
  upstream::UpstreamOptions options;
  options.buffer_bytes = settings_.buffer_bytes;
  options.max_idle_per_endpoint = settings_.max_idle_upstream_per_endpoint;
  options.idle_timeout_ms = settings_.upstream_idle_timeout_ms;
  options.response_limits = settings_.response_limits;
  pool_ = std::make_unique<upstream::UpstreamPool>(loop_.get(), options);
  http_client_ = std::make_unique<upstream::HttpClient>(loop_.get());
  if (plane_->options().access_log != nullptr) {
    access_log_ = std::make_unique<AccessLogBuffer>(plane_->options().access_log);
  }
  thread_ = std::thread([this] { Run(); });
  return OkStatus();
}

void Worker::Stop() {
  if (!thread_.joinable()) return;
  stop_.store(true, std::memory_order_relaxed);
  loop_->Wake();
  thread_.join();
}

void Worker::Wake() {
  if (loop_ != nullptr) loop_->Wake();
}

void Worker::Drain() {
  drain_.store(true, std::memory_order_release);
  Wake();
}

bool Worker::MaybeReportDrained() {
  // Listening sockets come first: a worker that reported while still taking connections would
  // let Stop close a socket with connections queued on it.
  if (!draining_ || !acceptors_.empty() || !connections_.empty() ||
      drained_.load(std::memory_order_relaxed)) {
    return false;
  }
  PublishCounters();
  if (access_log_ != nullptr) access_log_->Flush();
  drained_.store(true, std::memory_order_release);
  plane_->OnWorkerDrained();
  return true;
}

void Worker::BeginDrain() {
  draining_ = true;
  // Connections already queued are served (their requests get Connection: close, Accept drains
  // each new connection).
  for (auto& [key, acceptor] : acceptors_) Accept(acceptor.get());
  if (acceptors_.empty() || plane_->MigratesOnClose()) {
    CloseListeners();  // the kernel hands what is still queued to the next process
  } else {
    for (auto& [key, acceptor] : acceptors_) {
      if (!net::ListenerSocket::StopNewHandshakes(acceptor->fd())) {
        spdlog::warn("worker {}: cannot stop new handshakes on {}: {}", index_,
                     acceptor->socket().key(), std::strerror(errno));
      }
    }
    close_listeners_at_ms_ = loop_->now_ms() + net::ListenerSocket::kHandshakeGraceMs;
  }
  std::vector<ClientConnection*> open;
  open.reserve(connections_.size());
  for (auto& [raw, connection] : connections_) open.push_back(raw);
  for (ClientConnection* c : open) c->Drain();
}

void Worker::CloseListeners() {
  for (auto& [key, acceptor] : acceptors_) {
    Accept(acceptor.get());  // the last ones queued
    loop_->Remove(acceptor->fd());
    // Leaves the LISTEN state (and the SO_REUSEPORT group): the kernel stops handing this
    // worker's share of the port to it. The fd stays open (the socket owns it).
    ::shutdown(acceptor->fd(), SHUT_RD);
  }
  acceptors_.clear();
  close_listeners_at_ms_ = 0;
}

void Worker::Run() {
  loop_->UpdateTime();
  while (!stop_.load(std::memory_order_relaxed)) {
    // One relaxed load per iteration: a new configuration is picked up before the next batch.
    if (plane_->generation_.load(std::memory_order_relaxed) != pinned_generation_) Repin();
    if (drain_.load(std::memory_order_acquire) && !draining_) BeginDrain();
    if (close_listeners_at_ms_ != 0 && loop_->now_ms() >= close_listeners_at_ms_) {
      CloseListeners();
    }
    if (accept_retry_at_ms_ != 0 && loop_->now_ms() >= accept_retry_at_ms_) RetryAccept();
    // Connections closed outside Poll (by Drain, or at once by Accept) are freed now: the
    // drained check below must not count them, nor sleep while they are the only ones left.
    loop_->RunDeferred();
    int timeout = -1;
    if (access_log_ != nullptr) {
      const uint64_t deadline = access_log_->FlushDeadlineMs();
      if (deadline != UINT64_MAX) {
        const uint64_t now = loop_->now_ms();
        timeout = deadline > now ? static_cast<int>(deadline - now) : 0;
      }
    }
    for (uint64_t at : {close_listeners_at_ms_, accept_retry_at_ms_}) {
      if (at == 0) continue;
      const uint64_t now = loop_->now_ms();
      const int left = at > now ? static_cast<int>(at - now) : 0;
      timeout = timeout < 0 ? left : std::min(timeout, left);
    }
    if (!MaybeReportDrained()) loop_->Poll(timeout);
    if (access_log_ != nullptr) access_log_->MaybeFlush(loop_->now_ms());
    PublishCounters();
    MaybeReportDrained();
  }
  CloseAll();
  loop_->RunDeferred();
  if (access_log_ != nullptr) access_log_->Flush();
  for (auto& [key, acceptor] : acceptors_) loop_->Remove(acceptor->fd());
  acceptors_.clear();
  pins_.clear();
}

bool Worker::Roll(double percent) {
  if (percent >= 100) return true;
  if (percent <= 0) return false;
  // xorshift64*: a worker-local generator, good enough to pick a share of requests.
  rng_ ^= rng_ >> 12;
  rng_ ^= rng_ << 25;
  rng_ ^= rng_ >> 27;
  const uint64_t r = rng_ * 0x2545F4914F6CDD1DULL;
  return static_cast<double>(r >> 11) * 0x1.0p-53 * 100.0 < percent;
}

void Worker::PublishCounters() {
  counters_.connections_open.store(connections_.size(), std::memory_order_relaxed);
  counters_.upstream_connects.store(pool_->connects(), std::memory_order_relaxed);
  counters_.upstream_reuses.store(pool_->reuses(), std::memory_order_relaxed);
  counters_.upstream_open.store(pool_->connections(), std::memory_order_relaxed);
  using Purpose = upstream::HttpClient::Purpose;
  const upstream::HttpClient::Counters& mirror = http_client_->counters(Purpose::kMirror);
  counters_.mirror_requests.store(mirror.sent, std::memory_order_relaxed);
  counters_.mirror_failures.store(mirror.failed, std::memory_order_relaxed);
  counters_.mirror_connects.store(mirror.connects, std::memory_order_relaxed);
  counters_.mirror_in_flight.store(mirror.in_flight, std::memory_order_relaxed);
  const upstream::HttpClient::Counters& calls = http_client_->counters(Purpose::kFilter);
  counters_.filter_calls.store(calls.sent, std::memory_order_relaxed);
  counters_.filter_call_failures.store(calls.failed, std::memory_order_relaxed);
  counters_.filter_calls_cancelled.store(calls.cancelled, std::memory_order_relaxed);
  counters_.filter_calls_in_flight.store(calls.in_flight, std::memory_order_relaxed);
}

void Worker::Repin() {
  std::shared_ptr<const DataPlaneSnapshot> snapshot = plane_->Current();
  pinned_generation_ = snapshot->generation;
  if (pins_.empty() || pins_.back().snapshot != snapshot) {
    if (!pins_.empty() && pins_.back().requests == 0) pins_.pop_back();
    pins_.push_back(Pin{snapshot, 0});
  }
  // Balancing state refers to the previous snapshot's rules and endpoints.
  swrr_.clear();
  for (auto& pools : endpoint_pools_) pools.clear();
  const uint32_t limit = snapshot->backends->index_limit();
  if (endpoint_cursor_.size() < limit) endpoint_cursor_.resize(limit, 0);
  if (endpoint_pools_.size() < limit) endpoint_pools_.resize(limit);
  pool_->Prune();
  SyncListeners(*snapshot);
  counters_.generation.store(pinned_generation_, std::memory_order_relaxed);
}

void Worker::SyncListeners(const DataPlaneSnapshot& snapshot) {
  if (draining_) return;  // stopped listening for good
  for (auto it = acceptors_.begin(); it != acceptors_.end();) {
    if (snapshot.listeners.count(it->first) == 0) {
      loop_->Remove(it->second->fd());
      it = acceptors_.erase(it);  // the socket closes when no snapshot holds it any more
    } else {
      ++it;
    }
  }
  for (const auto& [key, socket] : snapshot.listeners) {
    std::shared_ptr<const core::tls::ServerTlsSet> tls;
    if (socket->protocol() == "HTTPS") tls = snapshot.tls->Find(socket->address(), socket->port());
    if (auto known = acceptors_.find(key); known != acceptors_.end()) {
      known->second->set_tls(std::move(tls));
      continue;
    }
    auto acceptor = std::make_unique<Acceptor>(this, socket);
    acceptor->set_tls(std::move(tls));
    if (!loop_->Add(acceptor->fd(), EPOLLIN | EPOLLET, acceptor.get())) {
      spdlog::error("worker {}: cannot watch listener {}: {}", index_, key, std::strerror(errno));
      continue;
    }
    Acceptor* raw = acceptor.get();
    acceptors_.emplace(key, std::move(acceptor));
    Accept(raw);  // connections that queued before this worker looked
  }
}

void Worker::Accept(Acceptor* acceptor) {
  for (;;) {
    sockaddr_storage peer;
    socklen_t length = sizeof(peer);
    int fd = accept4(acceptor->fd(), reinterpret_cast<sockaddr*>(&peer), &length,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) AcceptFailed(acceptor, errno);
      return;
    }
    if (accept_blocked_) {
      accept_blocked_ = false;
      spdlog::info("worker {}: accepting again on {}", index_, acceptor->socket().key());
    }
    const net::ListenerSocket& socket = acceptor->socket();
    if (socket.protocol() == "HTTPS" && acceptor->tls() == nullptr) {
      close(fd);  // no certificate (DataPlane::Prepare nacked the owners): refuse at once
      continue;
    }
    if (!AdmitConnection()) {
      close(fd);  // at the cap with nothing idle to close: refused
      Bump(counters_.connections_refused);
      continue;
    }
    auto connection = std::make_unique<ClientConnection>(this, fd, socket.address(), socket.port(),
                                                         PeerAddress(peer), acceptor->tls());
    ClientConnection* raw = connection.get();
    connections_.emplace(raw, std::move(connection));
    ++open_connections_;
    Bump(counters_.connections_accepted);
    if (!raw->Start()) {
      raw->Abort();
    } else if (draining_) {
      raw->Drain();  // accepted while draining (the queue, the handshake grace): its last request
    }
  }
}

void Worker::OnClosed(ClientConnection* connection) {
  --open_connections_;
  // A descriptor came free: connections queued while accept(2) lacked one are taken now.
  if (accept_retry_at_ms_ != 0) accept_retry_at_ms_ = loop_->now_ms();
  loop_->Defer([this, connection] { connections_.erase(connection); });
}

void Worker::SetIdle(ClientConnection* c, bool idle) {
  if (c->idle_listed_ == idle) return;
  c->idle_listed_ = idle;
  if (idle) {  // at the head: the most recently idle
    c->idle_prev_ = nullptr;
    c->idle_next_ = idle_head_;
    if (idle_head_ != nullptr) idle_head_->idle_prev_ = c;
    idle_head_ = c;
    if (idle_tail_ == nullptr) idle_tail_ = c;
    return;
  }
  (c->idle_prev_ != nullptr ? c->idle_prev_->idle_next_ : idle_head_) = c->idle_next_;
  (c->idle_next_ != nullptr ? c->idle_next_->idle_prev_ : idle_tail_) = c->idle_prev_;
  c->idle_prev_ = c->idle_next_ = nullptr;
}

bool Worker::AdmitConnection() {
  if (connection_share_ == 0 && settings_.max_connections != 0) {
    const size_t workers = static_cast<size_t>(std::max(1, plane_->workers()));
    connection_share_ = (settings_.max_connections + workers - 1) / workers;
  }
  if (connection_share_ == 0 || open_connections_ < connection_share_) return true;
  if (idle_tail_ == nullptr) return false;
  // nginx's reusable connections: the one idle longest is closed (it held no request).
  Bump(counters_.connections_shed);
  idle_tail_->Abort();  // Close -> SetIdle(false), OnClosed
  return open_connections_ < connection_share_;
}

void Worker::AcceptFailed(const Acceptor* acceptor, int error) {
  Bump(counters_.accept_failures);
  if (!accept_blocked_) {  // once per episode, not once per arriving SYN
    accept_blocked_ = true;
    spdlog::warn("worker {}: accept on {}: {}; retrying when a connection closes", index_,
                 acceptor->socket().key(), std::strerror(error));
  }
  accept_retry_at_ms_ = loop_->now_ms() + kAcceptRetryMs;
}

void Worker::RetryAccept() {
  accept_retry_at_ms_ = 0;  // AcceptFailed sets it again while descriptors are short
  for (auto& [key, acceptor] : acceptors_) Accept(acceptor.get());
}

void Worker::CloseAll() {
  std::vector<ClientConnection*> open;
  open.reserve(connections_.size());
  for (auto& [raw, connection] : connections_) open.push_back(raw);
  for (ClientConnection* c : open) c->Abort();
}

Pin* Worker::AcquirePin() {
  Pin* pin = &pins_.back();
  ++pin->requests;
  return pin;
}

void Worker::ReleasePin(Pin* pin) {
  if (--pin->requests != 0 || pin == &pins_.back()) return;
  for (auto it = pins_.begin(); it != pins_.end(); ++it) {
    if (&*it == pin) {
      pins_.erase(it);
      return;
    }
  }
}

const core::routing::BackendRef* Worker::PickBackend(const core::routing::RouteAction& action) {
  const auto& backends = action.backends;
  if (action.total_weight == 0 || backends.empty()) return nullptr;
  if (backends.size() == 1) return &backends[0];
  // Smooth weighted round robin (nginx's): each pick adds every weight to its current value,
  // takes the largest and subtracts the total from it, interleaving the picks evenly.
  SwrrState& state = swrr_[&action];
  if (state.current.size() != backends.size()) state.current.assign(backends.size(), 0);
  size_t best = backends.size();
  for (size_t i = 0; i < backends.size(); ++i) {
    if (backends[i].weight == 0) continue;
    state.current[i] += backends[i].weight;
    if (best == backends.size() || state.current[i] > state.current[best]) best = i;
  }
  if (best == backends.size()) return nullptr;
  state.current[best] -= action.total_weight;
  return &backends[best];
}

namespace {

// PortOfKey is the port of "ns/svc:port" (0 when there is none).
uint16_t PortOfKey(std::string_view key) {
  const size_t colon = key.rfind(':');
  if (colon == std::string_view::npos) return 0;
  uint32_t port = 0;
  for (char c : key.substr(colon + 1)) {
    if (c < '0' || c > '9' || port > 65535) return 0;
    port = port * 10 + static_cast<uint32_t>(c - '0');
  }
  return port <= 65535 ? static_cast<uint16_t>(port) : 0;
}

}  // namespace

upstream::EndpointPool* Worker::PickEndpoint(
    const core::routing::Backend& backend, std::string_view ref_key,
    const std::shared_ptr<const core::tls::UpstreamTls>* tls) {
  const size_t count = backend.endpoints.size();
  if (backend.index >= endpoint_pools_.size()) {
    endpoint_pools_.resize(backend.index + 1);
    endpoint_cursor_.resize(backend.index + 1, 0);
  }
  if (backend.index >= endpoint_tls_.size()) endpoint_tls_.resize(backend.index + 1, nullptr);
  size_t i = 0;
  if (count > 1) i = endpoint_cursor_[backend.index]++ % count;
  std::vector<upstream::EndpointPool*>& pools = endpoint_pools_[backend.index];
  const core::tls::UpstreamTls* speaks = tls != nullptr ? tls->get() : nullptr;
  if (pools.size() != count || endpoint_tls_[backend.index] != speaks) {
    pools.assign(count, nullptr);  // another client certificate: other pools
    endpoint_tls_[backend.index] = speaks;
  }
  if (pools[i] == nullptr) {
    const core::routing::Endpoint& endpoint = backend.endpoints[i];
    if (endpoint.sockaddr_len == 0) {
      return ResolveEndpoint(endpoint.address,
                             endpoint.port != 0 ? endpoint.port : PortOfKey(ref_key), tls);
    }
    if (endpoint.port == 0) return nullptr;
    pools[i] = pool_->Endpoint(endpoint.address, endpoint.port, &endpoint.sockaddr,
                               endpoint.sockaddr_len, tls);
  }
  return pools[i];
}

upstream::EndpointPool* Worker::ResolveEndpoint(
    const std::string& name, uint16_t port,
    const std::shared_ptr<const core::tls::UpstreamTls>* tls) {
  if (port == 0 || name.empty()) return nullptr;
  // Not cached per backend like IP endpoints: a refresh may change the addresses.
  std::shared_ptr<const upstream::DnsCache::Addresses> addresses = plane_->dns().Lookup(name);
  if (addresses == nullptr || addresses->empty()) return nullptr;
  const upstream::DnsCache::ResolvedAddress& a = (*addresses)[dns_cursor_++ % addresses->size()];
  sockaddr_storage address = a.address;
  if (address.ss_family == AF_INET) {
    reinterpret_cast<sockaddr_in*>(&address)->sin_port = htons(port);
  } else {
    reinterpret_cast<sockaddr_in6*>(&address)->sin6_port = htons(port);
  }
  return pool_->Endpoint(a.text, port, &address, a.length, tls);
}

}  // namespace portico::gateway::server
