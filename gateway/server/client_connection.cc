// client_connection.cc: see client_connection.h.
#include "gateway/server/client_connection.h"

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include <spdlog/spdlog.h>

#include "core/runtime/routing/backend_table.h"
#include "core/runtime/routing/route_table.h"
#include "gateway/http/head_writer.h"
#include "gateway/http/path_normalize.h"
#include "gateway/server/data_plane.h"
#include "gateway/server/worker.h"

namespace portico::gateway::server {

namespace {

using core::filter::FilterResult;
using http::BodyFraming;
using http::HeaderField;
using http::ParseResult;

constexpr uint64_t kNever = net::TimerWheel::kNever;
// Pending output beyond which a chunked body is not decoded further (backpressure).
constexpr size_t kMaxPendingOut = 64 * 1024;
// Endpoints of a backend tried for one request when connecting fails (nginx's
// proxy_next_upstream error timeout; nginx tries them all).
constexpr size_t kMaxConnectAttempts = 5;
// A tunnel reads a side only while fewer bytes than this wait to be written to the other.
constexpr size_t kTunnelBuffer = 64 * 1024;
// How long a connection closed after an error keeps reading (and discarding) what the client
// still sends, so the kernel does not reset the connection before the client read the answer.
constexpr uint64_t kLingerMs = 2'000;

}  // namespace

ClientConnection::ClientConnection(Worker* worker, int fd, std::string listener_address,
                                   uint16_t listener_port, std::string client_ip,
                                   std::shared_ptr<const core::tls::ServerTlsSet> tls)
    : worker_(worker),
      plain_(fd),
      tls_(tls != nullptr ? net::TlsTransport::Create(&plain_, std::move(tls)) : nullptr),
      transport_(tls_ != nullptr ? static_cast<net::Transport*>(tls_.get()) : &plain_),
      tls_failed_(tls != nullptr && tls_ == nullptr),
      listener_address_(std::move(listener_address)),
      listener_port_(listener_port),
      client_ip_(std::move(client_ip)),
      in_(worker->settings().buffer_bytes),
      parser_(worker->settings().request_limits),
      timer_(this, 0) {
  const uint64_t now = worker_->loop().now_ms();
  header_deadline_ = now + worker_->settings().header_read_timeout_ms;
  idle_deadline_ = kNever;
  connect_deadline_ = request_deadline_ = backend_deadline_ = kNever;
  last_activity_ms_ = now;  // a connection not yet read from is as fresh as its accept
}

ClientConnection::~ClientConnection() {
  if (up_ != nullptr) worker_->pool().Close(up_);
  if (pin_ != nullptr) worker_->ReleasePin(pin_);
}

bool ClientConnection::Start() {
  if (tls_failed_) return false;
  if (!worker_->loop().Add(transport_->fd(), net::EventLoop::kSocketEvents, this)) return false;
  UpdateTimer();
  Drive();
  return true;
}

void ClientConnection::Abort() { Close(); }

void ClientConnection::Drain() {
  if (closed_ || draining_) return;
  draining_ = true;
  // A response not begun says "Connection: close" and is the last; one whose head went out
  // without it cannot take it back: the connection then waits for the client's next request
  // (answered with close) as an idle one does, instead of closing under it.
  if (in_request_ && !resp_.started) close_after_ = true;
  if (phase_ != Phase::kHead || in_request_) return;
  // Between requests: what already sits in the socket is read before the connection counts as
  // idle (its edge may not have been dispatched yet); a request found there is served.
  readable_ = true;
  Drive();
  if (closed_ || phase_ != Phase::kHead || in_request_ || !in_.empty()) return;
  DrainIdle();
}

void ClientConnection::DrainIdle() {
  // Idle while draining: closed once idle for drain_idle_timeout_ms since its last byte (at
  // once when it has been idle that long already), so a client that was about to reuse the
  // connection is answered (HAProxy's idle-close-on-response, bounded) instead of racing the
  // close. A partial head is not idle: its header deadline applies.
  const uint64_t now = worker_->loop().now_ms();
  const uint64_t deadline = last_activity_ms_ + worker_->settings().drain_idle_timeout_ms;
  if (deadline <= now && !readable_) {  // (readable: the socket is read first, by StepHead)
    Close();
    return;
  }
  idle_deadline_ = std::min(idle_deadline_, std::max(deadline, now));
  UpdateTimer();
}

void ClientConnection::OnEvents(uint32_t events) {
  if (closed_) return;
  if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) readable_ = true;
  if (events & (EPOLLOUT | EPOLLHUP | EPOLLERR)) writable_ = true;
  if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) peer_hangup_ = true;
  if ((events & EPOLLOUT) && transport_->ReadWaitsForWritable()) readable_ = true;
  if ((events & EPOLLIN) && transport_->WriteWaitsForReadable()) writable_ = true;
  Drive();
}

void ClientConnection::OnUpstreamEvents(uint32_t events) {
  if (closed_) return;
  if (up_ != nullptr) {
    // TLS: a read waiting for writability (or a write for readability) retries on that edge.
    net::Transport* transport = up_->transport();
    if ((events & EPOLLOUT) && transport->ReadWaitsForWritable()) up_->readable = true;
    if ((events & EPOLLIN) && transport->WriteWaitsForReadable()) up_->writable = true;
  }
  Drive();
}

void ClientConnection::Drive() {
  // Each step does what readiness allows and says whether anything moved; stop when nothing did.
  for (int rounds = 0; rounds < 1000 && !closed_; ++rounds) {
    bool progress = false;
    switch (phase_) {
      case Phase::kHead:
        progress = StepHead();
        break;
      case Phase::kProxy:
        progress = StepProxy();
        break;
      case Phase::kLocal:
        progress = StepLocal();
        break;
      case Phase::kLinger:
        progress = StepLinger();
        break;
      case Phase::kTunnel:
        progress = StepTunnel();
        break;
      case Phase::kFilter:
        progress = StepFilter();
        break;
    }
    if (!progress) break;
  }
  if (closed_) return;
  UpdateTimer();
  worker_->SetIdle(this, phase_ == Phase::kHead && !in_request_ && in_.empty());
}

// ---------------------------------------------------------------------------------------------
// Reading and writing.

size_t ClientConnection::ReadClient(size_t max_buffer) {
  if (!readable_ || peer_closed_) return 0;
  size_t room = in_.Reserve(4096, max_buffer);
  if (room == 0) return 0;
  const net::IoResult r = transport_->Read(in_.write_ptr(), room);
  if (r.kind == net::IoResult::kDone) {
    in_.Commit(r.bytes);
    // A short read drained the socket: edge-triggered epoll reports the next arrival. Not so
    // after a hangup: the EOF behind the data raises no new edge, the next read must see it.
    if (r.bytes < room && !peer_hangup_ && transport_->ShortReadDrains()) readable_ = false;
    last_activity_ms_ = worker_->loop().now_ms();
    return r.bytes;
  }
  readable_ = false;
  if (r.kind != net::IoResult::kAgain) peer_closed_ = true;
  return 0;
}

size_t ClientConnection::ReadUpstream(size_t max_buffer) {
  if (up_ == nullptr || !up_->readable || up_->peer_closed) return 0;
  size_t room = up_->in.Reserve(4096, max_buffer);
  if (room == 0) return 0;
  net::Transport* transport = up_->transport();
  const net::IoResult r = transport->Read(up_->in.write_ptr(), room);
  if (r.kind == net::IoResult::kDone) {
    up_->in.Commit(r.bytes);
    // As ReadClient: a short read drained a plain socket.
    if (r.bytes < room && !up_->hangup && transport->ShortReadDrains()) up_->readable = false;
    last_activity_ms_ = worker_->loop().now_ms();
    return r.bytes;
  }
  up_->readable = false;
  if (r.kind != net::IoResult::kAgain) up_->peer_closed = true;
  return 0;
}

bool ClientConnection::FlushClient() {
  iovec iov[2];
  int count = 0;
  const size_t pending = out_.size() - out_sent_;
  if (pending > 0) iov[count++] = {out_.data() + out_sent_, pending};
  size_t pass = 0;
  if (resp_.passthrough && up_ != nullptr && resp_.state == ResponseState::kBody) {
    pass = up_->in.size();
    if (resp_.framing == BodyFraming::kContentLength) {
      pass = static_cast<size_t>(std::min<uint64_t>(pass, resp_.remaining));
    }
    if (pass > 0) iov[count++] = {up_->in.data(), pass};
  }
  if (count == 0) return true;
  if (!writable_) return false;
  const net::IoResult r = transport_->Write(iov, count);
  if (r.kind == net::IoResult::kAgain) {
    writable_ = false;
    return false;
  }
  if (r.kind != net::IoResult::kDone) {
    reason_ = "client_write_failed";
    Close();
    return false;
  }
  size_t written = r.bytes;
  bytes_sent_ += written;
  last_activity_ms_ = worker_->loop().now_ms();
  const size_t from_out = std::min(written, pending);
  out_sent_ += from_out;
  if (out_sent_ == out_.size()) {
    out_.clear();
    out_sent_ = 0;
  }
  const size_t from_pass = written - from_out;
  if (from_pass > 0) {
    up_->in.Consume(from_pass);
    if (resp_.framing == BodyFraming::kContentLength) resp_.remaining -= from_pass;
  }
  if (written < pending + pass) {
    writable_ = false;
    return false;
  }
  return true;
}

bool ClientConnection::FlushUpstream() {
  iovec iov[2];
  int count = 0;
  const size_t pending = up_out_.size() - up_out_sent_;
  if (pending > 0) iov[count++] = {up_out_.data() + up_out_sent_, pending};
  size_t pass = 0;
  if (req_.framing == BodyFraming::kContentLength && req_.remaining > 0) {
    pass = static_cast<size_t>(std::min<uint64_t>(in_.size(), req_.remaining));
    if (pass > 0) iov[count++] = {in_.data(), pass};
  }
  if (count == 0) return true;
  if (up_->connecting || !up_->writable) return false;
  const net::IoResult r = up_->transport()->Write(iov, count);
  if (r.kind != net::IoResult::kDone) {
    if (r.kind == net::IoResult::kAgain) {
      up_->writable = false;
      return false;
    }
    if (!up_->failure().empty()) {
      // A TLS handshake the backend failed (certificate, name, protocol): never retried as
      // a stale keep-alive connection would be.
      spdlog::debug("upstream {}: {}", upstream_name_, up_->failure());
      UpstreamFailed(502, "upstream_tls_failed");
      return false;
    }
    if (RetryUpstream()) return false;
    if (CanRetry()) {
      Reattempt();
    } else {
      UpstreamFailed(attempt_.retries > 0 ? 503 : 502, "upstream_write_failed");
    }
    return false;
  }
  size_t written = r.bytes;
  last_activity_ms_ = worker_->loop().now_ms();
  const size_t from_out = std::min(written, pending);
  up_out_sent_ += from_out;
  const size_t from_pass = written - from_out;
  if (from_pass > 0) {
    if (mirroring_) TeeMirror(in_.data(), from_pass);
    in_.Consume(from_pass);
    req_.remaining -= from_pass;
    req_.bytes += from_pass;
  }
  if (written < pending + pass) {
    up_->writable = false;
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Phases.

bool ClientConnection::StepHead() {
  if (!in_.empty()) {
    ParseResult r = parser_.Parse(in_.view());
    if (r == ParseResult::kComplete) {
      StartRequest();
      return true;
    }
    if (r == ParseResult::kError) {
      BeginLocalRequest();
      const http::HttpError& error = parser_.error();
      close_after_ = true;
      RespondLocal(error.status, error.reason, http::StatusReason(error.status));
      return true;
    }
    if (header_deadline_ == kNever) {
      header_deadline_ = worker_->loop().now_ms() + worker_->settings().header_read_timeout_ms;
      idle_deadline_ = kNever;
    }
  }
  if (peer_closed_) {
    Close();  // between requests, or with a partial head: nothing to answer
    return false;
  }
  const size_t max_buffer = worker_->settings().request_limits.max_head_bytes + 4096;
  size_t n = ReadClient(max_buffer);
  if (n > 0) return true;
  if (peer_closed_) return true;
  if (readable_ && in_.size() >= max_buffer) {
    // The parser enforces the limits before the buffer fills; this is a safety net.
    BeginLocalRequest();
    close_after_ = true;
    RespondLocal(431, "header_too_large", http::StatusReason(431));
    return true;
  }
  return false;
}

bool ClientConnection::StepLocal() {
  if (!FlushClient() || closed_) return false;
  EndRequest();
  if (close_after_) {
    StartLinger();
    return true;
  }
  ResetForNextRequest();
  return true;
}

void ClientConnection::StartLinger() {
  // Unread bytes at close() would make the kernel reset the connection, possibly before the
  // client read the answer: when some may be pending, half-close and drain for a while.
  if (peer_closed_ || (in_.empty() && !readable_ && req_.done)) {
    Close();
    return;
  }
  transport_->ShutdownWrite();
  phase_ = Phase::kLinger;
  last_activity_ms_ = worker_->loop().now_ms();
  linger_deadline_ = last_activity_ms_ + kLingerMs;
}

bool ClientConnection::StepLinger() {
  in_.Clear();
  size_t n = ReadClient(in_.capacity());
  in_.Clear();
  if (peer_closed_) {
    Close();
    return false;
  }
  return n > 0;
}

bool ClientConnection::StepProxy() {
  if (attempt_.waiting) return false;  // the backoff before the next attempt (OnTimer)
  bool progress = false;
  if (up_ != nullptr && up_->connecting) {
    if (!up_->writable) return false;
    int err = 0;
    socklen_t length = sizeof(err);
    if (getsockopt(up_->fd(), SOL_SOCKET, SO_ERROR, &err, &length) != 0) err = errno;
    if (err != 0) {
      ConnectFailed("upstream_connect_failed");
      return true;
    }
    up_->connecting = false;
    connect_deadline_ = kNever;
    progress = true;
  }
  progress |= PumpRequestBody();
  if (closed_ || phase_ != Phase::kProxy) return true;
  progress |= PumpResponse();
  if (closed_ || phase_ != Phase::kProxy) return true;
  if (resp_.state == ResponseState::kDone && out_.size() == out_sent_) {
    FinishExchange();
    return true;
  }
  return progress;
}

// ---------------------------------------------------------------------------------------------
// The request.

void ClientConnection::BeginLocalRequest() {
  // A request rejected before its head parsed: log what the parser saw of it.
  const http::RequestHead& head = parser_.head();
  method_.assign(head.method);
  target_.assign(head.target);
  host_.assign(head.host);
  client_minor_ = 1;
  head_request_ = false;
  BeginRequestCommon();
}

void ClientConnection::BeginRequestCommon() {
  in_request_ = true;
  start_us_ = worker_->loop().now_us();
  start_wall_us_ = worker_->loop().wall_us();
  status_ = 0;
  bytes_sent_ = 0;
  reason_ = {};
  header_deadline_ = idle_deadline_ = kNever;
  action_ = nullptr;
  backend_ref_ = nullptr;
  upstream_name_.clear();
  resp_.Reset();
  req_.Reset();
  attempt_.Reset();
  backend_ = nullptr;
  upstream_tls_ = nullptr;
  upgrade_ = false;
  mirror_keys_.clear();
  chain_stage_ = ChainStage::kRule;
  req_headers_edited_ = false;
  resp_headers_open_ = false;
  reply_headers_.clear();
  strings_.clear();
  filter_status_ = 0;
  if (mirroring_) std::string().swap(mirror_request_);  // a copy the last request never sent
  mirroring_ = false;
  auto& counter = worker_->counters().requests;
  counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

void ClientConnection::StartRequest() {
  const http::RequestHead& head = parser_.head();
  head_consumed_ = false;
  method_.assign(head.method);
  // Routed and forwarded in normal form (gateway/http/path_normalize.h); "*" (OPTIONS) as is.
  bool path_ok = true;
  http::EscapedSlashes slashes = http::EscapedSlashes::kKeepUnchanged;  // what applies here
  if (head.path == "*") {
    path_.assign(head.path);
  } else {
    std::string_view path = head.path;
    if (worker_->settings().escaped_slashes != slashes && http::HasEscapedSlash(path)) {
      slashes = worker_->settings().escaped_slashes;
      if (slashes != http::EscapedSlashes::kRejectRequest) {
        http::UnescapeSlashes(path, &scratch_);
        path = scratch_;
      }
    }
    path_ok = http::NormalizePath(path, &path_);
  }
  query_.assign(head.query);
  host_.assign(head.host);
  upstream_host_.assign(head.host);
  target_.assign(head.path);
  if (!head.query.empty()) {
    target_.push_back('?');
    target_.append(head.query);
  }
  client_minor_ = head.version_minor;
  head_request_ = head.method_id == http::Method::kHead;
  close_after_ = !head.keep_alive || draining_;
  // The connection's last request (nginx's keepalive_requests): answered with close.
  const uint64_t max_requests = worker_->settings().max_requests_per_connection;
  if (max_requests != 0 && ++requests_served_ >= max_requests) close_after_ = true;
  BeginRequestCommon();
  req_.framing = head.framing;
  last_body_read_ms_ = worker_->loop().now_ms();
  body_stalled_ = false;
  // An upgrade with a request body is served as a plain request (nothing to switch after).
  upgrade_ = !head.upgrade.empty() && head.framing == BodyFraming::kNone;
  req_.remaining = head.framing == BodyFraming::kContentLength ? head.content_length : 0;
  req_.done = head.framing == BodyFraming::kNone ||
              (head.framing == BodyFraming::kContentLength && head.content_length == 0);
  if (req_.framing == BodyFraming::kChunked) req_.decoder.Reset();
  pin_ = worker_->AcquirePin();

  const uint64_t max_body = worker_->settings().max_body_bytes;
  if (!path_ok) {
    RespondLocal(400, "invalid_path", "invalid path: a '%' not followed by two hex digits\n");
  } else if (slashes == http::EscapedSlashes::kRejectRequest) {
    RespondLocal(400, "escaped_slash", "invalid path: an escaped slash (%2F or %5C)\n");
  } else if (slashes == http::EscapedSlashes::kUnescapeAndRedirect) {
    // As Envoy: a path-only Location, so the client asks again for the decoded path.
    location_.assign(path_);
    if (!query_.empty()) {
      location_.push_back('?');
      location_.append(query_);
    }
    const HeaderField location{"Location", location_};
    RespondLocal(307, "escaped_slash_redirect", {}, std::span<const HeaderField>(&location, 1));
  } else if (max_body != 0 && head.framing == BodyFraming::kContentLength &&
             head.content_length > max_body) {
    RespondLocal(413, "body_too_large", http::StatusReason(413));
  } else {
    RouteAndForward();
  }
  // Everything that needed the head's views is done: drop its bytes (the body follows). A
  // request parked on a filter's call keeps them until it goes on.
  if (phase_ != Phase::kFilter) ConsumeHead();
}

void ClientConnection::ConsumeHead() {
  if (head_consumed_) return;
  head_consumed_ = true;
  in_.Consume(parser_.consumed());
  parser_.Reset();
}

void ClientConnection::RouteAndForward() {
  const http::RequestHead& head = parser_.head();
  const DataPlaneSnapshot& snapshot = *pin_->snapshot;
  core::routing::HeaderLambda headers(
      [&head](std::string_view name) -> std::optional<std::string_view> {
        const HeaderField* field = head.headers.Find(name);
        if (field == nullptr) return std::nullopt;
        return field->value;
      });
  core::routing::RequestView view;
  view.host = head.host;
  view.path = path_;  // normalized
  view.query = head.query;
  view.method = head.method;
  view.headers = &headers;
  core::routing::MatchResult match =
      snapshot.routes->Match(listener_address_, listener_port_, view);
  if (transport_->secure() && match.listener != nullptr) {
    // The listener the handshake's server name selected must be the one the Host selects: a
    // connection set up for one listener (its certificate, its policies) serves no other.
    const std::string_view sni = transport_->server_name();
    if (!sni.empty() &&
        snapshot.routes->SelectListener(listener_address_, listener_port_, sni) != match.listener) {
      RespondLocal(421, "misdirected_request", "misdirected request\n");
      return;
    }
  }
  if (match.outcome == core::routing::MatchOutcome::kNoListener) {
    close_after_ = true;
    RespondLocal(404, "no_listener", "no listener\n");
    return;
  }
  if (match.outcome == core::routing::MatchOutcome::kNoRoute || match.action == nullptr) {
    RespondLocal(404, "no_route", "no route\n");
    return;
  }
  action_ = match.action;
  request_deadline_ = action_->request_timeout_ms > 0
                          ? start_us_ / 1000 + static_cast<uint64_t>(action_->request_timeout_ms)
                          : kNever;
  chain_.Start(&action_->filters);
  if (snapshot.bindings->has_attached()) {  // policy kinds' filters attached by targetRefs
    std::vector<std::string_view> gateways;
    if (match.listener != nullptr) {
      for (const std::string& name : match.listener->names) {  // "ns/gateway/listener"
        gateways.push_back(std::string_view(name).substr(0, name.rfind('/')));
      }
    }
    attached_.clear();
    snapshot.bindings->AttachedTo(action_->route_key, action_->rule_name, gateways, &attached_);
    for (const core::filter::HttpFilter* filter : attached_) chain_.Append(filter);
  }
  ContinueChain(chain_.empty() ? FilterResult::kContinue : chain_.RunRequestHead(*this));
}

void ClientConnection::ContinueChain(FilterResult result) {
  for (;;) {
    if (closed_ || result == FilterResult::kRespond) return;  // Respond set Phase::kLocal
    if (result == FilterResult::kPending) {
      phase_ = Phase::kFilter;
      return;
    }
    switch (chain_stage_) {
      case ChainStage::kRule:
        if (action_->backends.empty() || action_->total_weight == 0) {
          RespondLocal(500, "no_backends", "no backends\n");
          return;
        }
        backend_ref_ = worker_->PickBackend(*action_);
        if (backend_ref_ == nullptr || !backend_ref_->valid()) {
          RespondLocal(500, "invalid_backend", "invalid backend\n");
          return;
        }
        chain_stage_ = ChainStage::kBackend;
        if (!backend_ref_->filters.empty()) {
          chain_.Append(&backend_ref_->filters);
          result = chain_.RunRequestHead(*this);
        }
        break;
      case ChainStage::kBackend:
        chain_stage_ = ChainStage::kUpstream;
        if (!chain_.empty()) result = chain_.RunUpstreamRequest(*this);
        break;
      case ChainStage::kUpstream: {
        const core::routing::Backend* backend = pin_->snapshot->backends->Find(backend_ref_->key);
        if (backend == nullptr) {
          RespondLocal(500, "backend_not_found", "backend not found\n");
        } else if (backend->endpoints.empty()) {
          RespondLocal(503, "no_endpoints", "no healthy upstream\n");
        } else {
          Forward(*backend);
        }
        return;
      }
    }
  }
}

bool ClientConnection::StepFilter() {
  // Parked on a filter's call: the client's bytes stay unread (the head is viewed in place).
  // A client that hung up ends the exchange, which cancels the call.
  if (peer_hangup_) {
    reason_ = "client_closed_during_filter";
    status_ = 499;
    Close();
  }
  return false;
}

void ClientConnection::OnHttpDone(upstream::HttpResult result) {
  call_ = nullptr;
  core::filter::CallDone* done = call_done_;
  call_done_ = nullptr;
  if (closed_ || done == nullptr || phase_ != Phase::kFilter) return;
  core::filter::OutboundResponse response;
  response.status = result.status;
  response.error = std::move(result.error);
  response.headers = std::move(result.headers);
  response.body = std::move(result.body);
  // Whatever follows sets the phase: a local reply kLocal, forwarding kProxy, a new call kFilter.
  phase_ = Phase::kHead;
  ContinueChain(chain_.Resume(done->OnCallDone(response), *this));
  if (closed_) return;
  if (phase_ != Phase::kFilter) ConsumeHead();
  Drive();
}

void ClientConnection::CancelCall() {
  if (call_ == nullptr) return;
  upstream::HttpClient::Call* call = call_;
  call_ = nullptr;
  call_done_ = nullptr;
  worker_->http_client().Cancel(call);
}

void ClientConnection::Forward(const core::routing::Backend& backend) {
  backend_ = &backend;
  upstream_tls_ = pin_->snapshot->upstream_tls->Find(backend, listener_address_, listener_port_);
  if (upstream_tls_ != nullptr && !(*upstream_tls_)->usable()) {
    // Its BackendTLSPolicy cannot be applied: never fall back to clear text.
    RespondLocal(502, "upstream_tls_unusable", "upstream TLS not available\n");
    return;
  }
  endpoint_ = worker_->PickEndpoint(backend, backend_ref_->key, upstream_tls_);
  if (endpoint_ == nullptr) {
    RespondLocal(503, "endpoint_unresolved", "no usable upstream\n");
    return;
  }
  ArmAttempt();
  BuildUpstreamHead();
  if (!mirror_keys_.empty()) StartMirrors();
  phase_ = Phase::kProxy;
  ConnectUpstream();
}

void ClientConnection::ArmAttempt() {
  upstream_name_.assign(endpoint_->name());
  const uint64_t now = worker_->loop().now_ms();
  backend_deadline_ = action_->backend_request_timeout_ms > 0
                          ? now + static_cast<uint64_t>(action_->backend_request_timeout_ms)
                          : kNever;
  last_activity_ms_ = now;
}

bool ClientConnection::CanRetry() const {
  const core::routing::RetryPolicy* retry = action_ != nullptr ? action_->retry.get() : nullptr;
  return retry != nullptr && attempt_.retries < retry->attempts && !resp_.started &&
         req_.framing == BodyFraming::kNone && backend_ != nullptr && !upgrade_ &&
         up_out_.size() == head_bytes_;
}

void ClientConnection::Reattempt() {
  ++attempt_.retries;
  auto& counter = worker_->counters().retries;
  counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  ReleaseUpstream(false);
  resp_.Restart();
  up_out_sent_ = 0;  // up_out_ holds the head alone (CanRetry): it is sent again
  attempt_.connect_failures = 0;
  connect_deadline_ = backend_deadline_ = kNever;
  const uint32_t backoff = action_->retry->backoff_ms;
  if (backoff == 0) {
    StartAttempt();
    return;
  }
  attempt_.waiting = true;  // StepProxy waits; OnTimer starts the attempt at attempt_.retry_at
  attempt_.retry_at = worker_->loop().now_ms() + backoff;
}

void ClientConnection::StartAttempt() {
  attempt_.waiting = false;
  attempt_.retry_at = kNever;
  endpoint_ = worker_->PickEndpoint(*backend_, backend_ref_->key, upstream_tls_);
  if (endpoint_ == nullptr) {
    UpstreamFailed(503, "endpoint_unresolved");
    return;
  }
  ArmAttempt();
  ConnectUpstream();
}

void ClientConnection::StartMirrors() {
  mirror_request_ = up_out_;  // up_out_ holds just the head here
  mirroring_ = true;
  if (req_.done) DispatchMirrors();  // no body
}

void ClientConnection::TeeMirror(const char* data, size_t size) {
  if (mirror_request_.size() + size > upstream::HttpClient::kMaxBytes) {
    // Too big to copy: this request is not mirrored.
    for (size_t i = 0; i < mirror_keys_.size(); ++i) {
      worker_->http_client().CountDropped(upstream::HttpClient::Purpose::kMirror);
    }
    mirroring_ = false;
    std::string().swap(mirror_request_);
    return;
  }
  mirror_request_.append(data, size);
}

void ClientConnection::DispatchMirrors() {
  if (!mirroring_) return;
  mirroring_ = false;
  const core::routing::BackendTable& backends = *pin_->snapshot->backends;
  upstream::HttpClient& client = worker_->http_client();
  constexpr auto kMirror = upstream::HttpClient::Purpose::kMirror;
  for (size_t i = 0; i < mirror_keys_.size(); ++i) {
    const core::routing::Backend* backend = backends.Find(*mirror_keys_[i]);
    upstream::EndpointPool* endpoint = nullptr;
    const std::shared_ptr<const core::tls::UpstreamTls>* tls = nullptr;
    if (backend != nullptr && !backend->endpoints.empty()) {
      tls = pin_->snapshot->upstream_tls->Find(*backend, listener_address_, listener_port_);
      endpoint = worker_->PickEndpoint(*backend, *mirror_keys_[i]);
    }
    if (endpoint == nullptr) {
      client.CountDropped(kMirror);
      continue;
    }
    std::string copy = i + 1 == mirror_keys_.size() ? std::move(mirror_request_) : mirror_request_;
    client.Start(kMirror, endpoint->address(), endpoint->address_length(), std::move(copy),
                 worker_->settings().upstream_timeout_ms, nullptr, tls != nullptr ? *tls : nullptr);
  }
  mirror_request_.clear();
}

void ClientConnection::BuildUpstreamHead() {
  const http::RequestHead& head = parser_.head();
  http::ForwardedRequest request;
  request.method = head.method;
  if (path_.size() == head.path.size() && path_ == head.path &&
      head.target_form == http::TargetForm::kOrigin) {
    request.target = head.target;
  } else {
    target_out_.assign(path_);
    if (!query_.empty()) {
      target_out_.push_back('?');
      target_out_.append(query_);
    }
    request.target = target_out_;
  }
  request.headers =
      req_headers_edited_ ? std::span<const HeaderField>(req_headers_) : head.headers.span();
  request.host = upstream_host_;
  request.client_address = client_ip_;
  request.forwarded_proto = transport_->secure() ? "https" : "http";
  request.framing = head.framing;
  if (upgrade_) request.upgrade = head.upgrade;
  up_out_.clear();
  up_out_sent_ = 0;
  http::AppendForwardedRequest(request, &up_out_);
  head_bytes_ = up_out_.size();
}

bool ClientConnection::ConnectUpstream() {
  upstream::UpstreamPool& pool = worker_->pool();
  // A request with a body cannot be replayed: make sure a pooled connection is still open.
  const bool has_body = req_.framing != BodyFraming::kNone;
  up_ = pool.Acquire(endpoint_, this, has_body);
  connect_deadline_ = kNever;
  if (up_ == nullptr) {
    up_ = pool.Connect(endpoint_, this);
    if (up_ == nullptr) {
      ConnectFailed("upstream_connect_failed");
      return up_ != nullptr;
    }
    if (up_->connecting) {
      connect_deadline_ = worker_->loop().now_ms() + worker_->settings().connect_timeout_ms;
    }
  }
  return true;
}

void ClientConnection::ConnectFailed(std::string_view reason) {
  if (up_ != nullptr) {
    worker_->pool().Close(up_);
    up_ = nullptr;
  }
  if (NextEndpoint()) {
    ConnectUpstream();
    return;
  }
  if (CanRetry()) {
    Reattempt();
    return;
  }
  UpstreamFailed(503, reason);
}

bool ClientConnection::NextEndpoint() {
  // Only while nothing went out: the failed endpoint never saw the request.
  if (backend_ == nullptr || up_out_sent_ != 0) return false;
  const size_t count = backend_->endpoints.size();
  if (++attempt_.connect_failures >= std::min(count, kMaxConnectAttempts)) return false;
  upstream::EndpointPool* next = worker_->PickEndpoint(*backend_, backend_ref_->key, upstream_tls_);
  if (next == nullptr) return false;
  endpoint_ = next;
  upstream_name_.assign(endpoint_->name());
  return true;
}

bool ClientConnection::RetryUpstream() {
  // Only a reused connection the upstream closed before answering, for a request without body
  // bytes: the upstream cannot have acted on it, and nothing is lost.
  if (attempt_.replayed || up_ == nullptr || up_->reuse_count() == 0) return false;
  // A rule with a retry policy counts this replay as one of its attempts (CanRetry) instead:
  // otherwise a reset after the upstream took the request would be tried once more than asked.
  if (action_ != nullptr && action_->retry != nullptr) return false;
  if (resp_.state != ResponseState::kAwaitHead || !up_->in.empty()) return false;
  if (req_.framing != BodyFraming::kNone || up_out_.size() != head_bytes_) return false;
  attempt_.replayed = true;
  worker_->pool().Close(up_);
  up_ = nullptr;
  up_out_sent_ = 0;
  ConnectUpstream();
  return true;
}

bool ClientConnection::PumpRequestBody() {
  bool progress = false;
  for (int round = 0; round < 64; ++round) {
    if (up_ == nullptr) return true;
    // Chunked: decode what arrived and re-frame it into the upstream output.
    if (!req_.done && req_.framing == BodyFraming::kChunked && !in_.empty() &&
        up_out_.size() - up_out_sent_ < kMaxPendingOut) {
      http::ChunkedStep step = req_.decoder.Decode(in_.view());
      if (step.result == ParseResult::kError) {
        close_after_ = true;
        Fail(400, req_.decoder.error().reason);
        return true;
      }
      const size_t framed_from = up_out_.size();
      if (!step.data.empty()) {
        http::AppendChunkHeader(step.data.size(), &up_out_);
        up_out_.append(step.data);
        up_out_.append(http::kChunkEnd);
        req_.bytes += step.data.size();
      }
      in_.Consume(step.consumed);
      if (step.result == ParseResult::kComplete) {
        http::AppendLastChunk(req_.decoder.trailer_block(), &up_out_);
        req_.done = true;
      }
      if (mirroring_) TeeMirror(up_out_.data() + framed_from, up_out_.size() - framed_from);
      const uint64_t max_body = worker_->settings().max_body_bytes;
      if (max_body != 0 && req_.bytes > max_body) {
        close_after_ = true;
        Fail(413, "body_too_large");
        return true;
      }
      progress = true;
      continue;
    }
    // Write the head, re-framed chunks and Content-Length body bytes.
    const size_t before = up_out_sent_ + req_.bytes;
    FlushUpstream();
    if (closed_ || phase_ != Phase::kProxy || up_ == nullptr) return true;
    if (up_out_sent_ + req_.bytes != before) progress = true;
    if (up_out_sent_ == up_out_.size() && up_out_sent_ > 0 && req_.framing != BodyFraming::kNone) {
      // Keep the head for a retry only when there is no body; else drop what was sent.
      up_out_.clear();
      up_out_sent_ = 0;
    }
    if (req_.framing == BodyFraming::kContentLength && req_.remaining == 0) req_.done = true;
    if (req_.done) {
      DispatchMirrors();
      break;
    }
    // Read more of the body when the buffer has been handed on.
    const bool need_input = req_.framing == BodyFraming::kContentLength
                                ? in_.empty()
                                : (in_.empty() && up_out_.size() - up_out_sent_ < kMaxPendingOut);
    body_stalled_ = false;
    if (!need_input) break;
    if (ReadClient(in_.capacity()) > 0) {
      last_body_read_ms_ = worker_->loop().now_ms();
      progress = true;
      continue;
    }
    if (peer_closed_) {
      // The client went away in the middle of its body.
      reason_ = "client_closed_during_body";
      status_ = status_ == 0 ? 499 : status_;
      Close();
      return true;
    }
    body_stalled_ = true;  // waiting for the client: body_read_timeout_ms runs
    break;
  }
  return progress;
}

bool ClientConnection::PumpResponse() {
  bool progress = false;
  for (int round = 0; round < 64 && up_ != nullptr; ++round) {
    if (resp_.state == ResponseState::kAwaitHead) {
      if (!up_->in.empty()) {
        ParseResult r = up_->parser.Parse(up_->in.view(), head_request_);
        if (r == ParseResult::kError) {
          UpstreamFailed(502, up_->parser.error().reason);
          return true;
        }
        if (r == ParseResult::kComplete) {
          if (!OnResponseHead()) return true;
          progress = true;
          continue;
        }
      }
      if (out_.size() - out_sent_ >= kMaxPendingOut) {
        // Interim (1xx) heads the client has not taken yet: read no more of the upstream until
        // it does (an upstream sending them without end must not grow out_ without bound).
        const size_t pending = out_.size() - out_sent_;
        FlushClient();
        if (closed_) return true;
        if (out_.size() - out_sent_ >= kMaxPendingOut) {
          return progress || out_.size() - out_sent_ != pending;
        }
      }
      const size_t max_buffer = worker_->settings().response_limits.max_head_bytes + 4096;
      if (ReadUpstream(max_buffer) > 0) {
        progress = true;
        continue;
      }
      if (up_->peer_closed) {
        if (RetryUpstream()) return true;
        if (CanRetry()) {  // a connection error: the attempt is tried again
          Reattempt();
          return true;
        }
        // As Envoy: a reset before the response head after retries is 503, else nginx's 502.
        UpstreamFailed(attempt_.retries > 0 ? 503 : 502,
                       up_->in.empty() ? "upstream_closed" : "upstream_closed_in_head");
        return true;
      }
      if (up_->readable && up_->in.size() >= max_buffer) {
        UpstreamFailed(502, "upstream_head_too_large");
        return true;
      }
      return progress;
    }
    if (resp_.state == ResponseState::kBody) {
      if (PumpResponseBody()) {
        progress = true;
        continue;
      }
      return progress;
    }
    // kDone: what is left to write.
    const size_t pending = out_.size() - out_sent_;
    FlushClient();
    return progress || (!closed_ && out_.size() - out_sent_ != pending);
  }
  return progress;
}

bool ClientConnection::OnResponseHead() {
  const http::ResponseHead& head = up_->parser.head();
  if (head.status < 200) {
    if (head.status == 101) {
      if (upgrade_) {
        StartTunnel(head);
      } else {
        UpstreamFailed(502, "unexpected_upgrade");
      }
      return false;
    }
    if (client_minor_ == 1) {
      http::ResponseHeadOut interim;
      interim.status = head.status;
      interim.reason = head.reason;
      interim.headers = head.headers.span();
      http::AppendResponseHead(interim, &out_);
    }
    up_->in.Consume(up_->parser.consumed());
    up_->parser.Reset();
    return true;
  }
  if (action_->retry != nullptr && action_->retry->RetriesStatus(head.status) && CanRetry()) {
    Reattempt();  // this response is dropped with its connection
    return false;
  }
  status_ = head.status;
  resp_.framing = head.framing;
  http::ResponseHeadOut out;
  out.status = head.status;
  out.reason = head.reason;
  out.version_minor = client_minor_;
  switch (head.framing) {
    case BodyFraming::kNone:
      out.framing = BodyFraming::kNone;
      break;
    case BodyFraming::kContentLength:
      out.framing = BodyFraming::kContentLength;
      out.content_length = head.content_length;
      break;
    case BodyFraming::kChunked:
      if (client_minor_ == 1) {
        out.framing = BodyFraming::kChunked;
      } else {
        out.framing = BodyFraming::kNone;  // an HTTP/1.0 client reads until close
        close_after_ = true;
      }
      break;
    case BodyFraming::kUntilClose:
      out.framing = BodyFraming::kNone;
      close_after_ = true;
      break;
  }
  out.headers = ResponseHeaders(head);
  if (close_after_) {
    out.connection = "close";
  } else if (client_minor_ == 0) {
    out.connection = "keep-alive";
  }
  http::AppendResponseHead(out, &out_);
  up_->in.Consume(up_->parser.consumed());
  resp_.started = true;
  resp_.rechunk = false;
  resp_.passthrough = false;
  switch (head.framing) {
    case BodyFraming::kNone:
      resp_.state = ResponseState::kDone;
      break;
    case BodyFraming::kContentLength:
      resp_.remaining = head.content_length;
      resp_.passthrough = true;
      resp_.state = head.content_length == 0 ? ResponseState::kDone : ResponseState::kBody;
      break;
    case BodyFraming::kChunked:
      up_->decoder.Reset();
      up_->decoder_used = true;
      resp_.rechunk = client_minor_ == 1;
      resp_.state = ResponseState::kBody;
      break;
    case BodyFraming::kUntilClose:
      resp_.passthrough = true;
      resp_.state = ResponseState::kBody;
      break;
  }
  return true;
}

bool ClientConnection::PumpResponseBody() {
  bool progress = false;
  if (resp_.framing == BodyFraming::kChunked) {
    while (resp_.state == ResponseState::kBody && !up_->in.empty() &&
           out_.size() - out_sent_ < kMaxPendingOut) {
      http::ChunkedStep step = up_->decoder.Decode(up_->in.view());
      if (step.result == ParseResult::kError) {
        UpstreamFailed(502, "bad_upstream_chunk");
        return false;
      }
      if (!step.data.empty()) {
        if (resp_.rechunk) http::AppendChunkHeader(step.data.size(), &out_);
        out_.append(step.data);
        if (resp_.rechunk) out_.append(http::kChunkEnd);
      }
      up_->in.Consume(step.consumed);
      if (step.result == ParseResult::kComplete) {
        if (resp_.rechunk) http::AppendLastChunk(up_->decoder.trailer_block(), &out_);
        resp_.state = ResponseState::kDone;
      }
      progress = true;
    }
  }
  const uint64_t sent_before = bytes_sent_;
  FlushClient();
  if (closed_ || up_ == nullptr) return false;
  if (bytes_sent_ != sent_before) progress = true;
  if (resp_.framing == BodyFraming::kContentLength && resp_.remaining == 0) {
    resp_.state = ResponseState::kDone;
    return true;
  }
  if (resp_.state != ResponseState::kBody) return true;
  // More from the upstream once its buffer has room (what is in it waits for the client).
  if (up_->in.size() < up_->in.capacity() && ReadUpstream(up_->in.capacity()) > 0) return true;
  if (up_->peer_closed && up_->in.empty()) {
    if (resp_.framing == BodyFraming::kUntilClose) {
      resp_.state = ResponseState::kDone;
      return true;
    }
    UpstreamFailed(502, "upstream_closed_in_body");  // the head is out: closes the client
    return false;
  }
  return progress;
}

// ---------------------------------------------------------------------------------------------
// Tunnel (an accepted Upgrade).

std::span<const HeaderField> ClientConnection::ResponseHeaders(const http::ResponseHead& head) {
  if (chain_.empty()) return head.headers.span();
  resp_headers_.assign(head.headers.begin(), head.headers.end());
  filter_status_ = head.status;
  resp_headers_open_ = true;
  chain_.RunResponseHead(*this);
  resp_headers_open_ = false;
  return resp_headers_;
}

void ClientConnection::StartTunnel(const http::ResponseHead& head) {
  const HeaderField* protocol = head.headers.Find("upgrade");
  if (protocol == nullptr || protocol->value.empty()) {
    UpstreamFailed(502, "upgrade_without_protocol");
    return;
  }
  status_ = 101;
  http::ResponseHeadOut out;
  out.status = 101;
  out.reason = head.reason;
  out.headers = ResponseHeaders(head);
  const HeaderField upgrade_field{"Upgrade", protocol->value};
  out.extra_headers = std::span<const HeaderField>(&upgrade_field, 1);
  out.connection = "upgrade";
  http::AppendResponseHead(out, &out_);  // before the head's bytes (the views) are consumed
  up_->in.Consume(up_->parser.consumed());
  resp_.started = true;
  // What the upstream sends from now on passes to the client as it comes (FlushClient).
  resp_.state = ResponseState::kBody;
  resp_.framing = BodyFraming::kUntilClose;
  resp_.passthrough = true;
  resp_.rechunk = false;
  tunnel_up_done_ = tunnel_down_done_ = false;
  connect_deadline_ = request_deadline_ = backend_deadline_ = kNever;
  last_activity_ms_ = worker_->loop().now_ms();
  phase_ = Phase::kTunnel;
}

bool ClientConnection::StepTunnel() {
  bool progress = false;
  // Upstream -> client: the 101 head, then the upstream's bytes as they come.
  if (!tunnel_down_done_) {
    const uint64_t sent_before = bytes_sent_;
    FlushClient();
    if (closed_) return false;
    if (bytes_sent_ != sent_before) progress = true;
    if (up_->in.size() < kTunnelBuffer && ReadUpstream(kTunnelBuffer) > 0) progress = true;
    if (up_->peer_closed && up_->in.empty() && out_.size() == out_sent_) {
      transport_->ShutdownWrite();
      tunnel_down_done_ = true;
      progress = true;
    }
  }
  // Client -> upstream: whatever followed the request head, then the client's bytes.
  if (!tunnel_up_done_) {
    if (!in_.empty() && up_->writable) {
      iovec iov{in_.data(), in_.size()};
      const net::IoResult r = up_->transport()->Write(&iov, 1);
      if (r.kind == net::IoResult::kDone) {
        in_.Consume(r.bytes);
        last_activity_ms_ = worker_->loop().now_ms();
        progress = true;
      } else if (r.kind == net::IoResult::kAgain) {
        up_->writable = false;
      } else {
        reason_ = "upstream_write_failed";
        Close();
        return false;
      }
    }
    if (in_.size() < kTunnelBuffer && ReadClient(kTunnelBuffer) > 0) progress = true;
    if (peer_closed_ && in_.empty()) {
      up_->transport()->ShutdownWrite();
      tunnel_up_done_ = true;
      progress = true;
    }
  }
  if (tunnel_up_done_ && tunnel_down_done_) {
    Close();  // logs the 101 with the bytes sent and the tunnel's duration
    return false;
  }
  return progress;
}

// ---------------------------------------------------------------------------------------------
// Answers and endings.

void ClientConnection::Fail(int status, std::string_view reason) {
  if (resp_.started && bytes_sent_ == 0 && out_sent_ == 0) {
    // A head is queued but not one byte of it went out (the upstream's body broke in the same
    // read): the client can still be answered instead of meeting a bare close.
    resp_.started = false;
  }
  if (resp_.started) {
    worker_->counters().rejected.Count(status, reason);  // ended: the answer cannot be sent
    reason_ = reason;
    Close();
    return;
  }
  RespondLocal(status, reason, http::StatusReason(status));
}

void ClientConnection::UpstreamFailed(int status, std::string_view reason) {
  ReleaseUpstream(false);
  Fail(status, reason);
}

void ClientConnection::RespondLocal(int status, std::string_view reason, std::string_view body,
                                    std::span<const HeaderField> headers, bool exact) {
  ReleaseUpstream(false);
  status_ = status;
  reason_ = reason;
  if (status >= 400) worker_->counters().rejected.Count(status, reason);
  last_activity_ms_ = worker_->loop().now_ms();
  if (!req_.done) close_after_ = true;  // the body was not read: the connection cannot go on
  std::string body_text;
  if (!exact && body.data() != nullptr && !body.empty() && body.back() != '\n') {
    body_text.assign(body);
    body_text.push_back('\n');
    body = body_text;
  }
  const HeaderField content_type{"Content-Type", "text/plain"};
  bool typed = false;
  for (const HeaderField& f : headers)
    typed = typed || http::EqualsIgnoreCase(f.name, "content-type");
  http::ResponseHeadOut out;
  out.status = status;
  out.version_minor = client_minor_;
  if (!body.empty() && !typed) out.headers = std::span<const HeaderField>(&content_type, 1);
  out.extra_headers = headers;
  out.framing = BodyFraming::kContentLength;
  out.content_length = body.size();
  if (close_after_) {
    out.connection = "close";
  } else if (client_minor_ == 0) {
    out.connection = "keep-alive";
  }
  out_.clear();
  out_sent_ = 0;
  http::AppendResponseHead(out, &out_);
  if (!head_request_) out_.append(body);
  resp_.started = true;
  resp_.state = ResponseState::kDone;
  resp_.passthrough = false;
  phase_ = Phase::kLocal;
}

void ClientConnection::ReleaseUpstream(bool reusable) {
  if (up_ == nullptr) return;
  if (reusable) {
    worker_->pool().Release(up_);
  } else {
    worker_->pool().Close(up_);
  }
  up_ = nullptr;
  endpoint_ = nullptr;
}

void ClientConnection::FinishExchange() {
  const bool reusable = up_ != nullptr && req_.done && up_->parser.head().keep_alive &&
                        up_->in.empty() && !up_->peer_closed &&
                        resp_.framing != BodyFraming::kUntilClose && up_out_sent_ == up_out_.size();
  ReleaseUpstream(reusable);
  if (!req_.done) close_after_ = true;
  EndRequest();
  if (close_after_) {
    StartLinger();
    return;
  }
  ResetForNextRequest();
}

void ClientConnection::ResetForNextRequest() {
  phase_ = Phase::kHead;
  const uint64_t now = worker_->loop().now_ms();
  connect_deadline_ = request_deadline_ = backend_deadline_ = kNever;
  if (in_.empty()) {
    idle_deadline_ = now + worker_->settings().idle_timeout_ms;
    header_deadline_ = kNever;
    if (draining_) DrainIdle();  // a response that went out before the drain, without close
  } else {
    header_deadline_ = now + worker_->settings().header_read_timeout_ms;
    idle_deadline_ = kNever;
  }
}

void ClientConnection::EndRequest() {
  if (!in_request_) return;
  in_request_ = false;
  CancelCall();
  if (!chain_.empty()) chain_.End(*this);
  ConsumeHead();
  LogRequest();
  if (pin_ != nullptr) {
    worker_->ReleasePin(pin_);
    pin_ = nullptr;
  }
  action_ = nullptr;
  backend_ref_ = nullptr;
  backend_ = nullptr;
  upstream_tls_ = nullptr;
}

void ClientConnection::LogRequest() {
  if (status_ >= 100 && status_ < 600) {
    auto& counter = worker_->counters().responses[status_ / 100];
    counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  AccessLogBuffer* log = worker_->access_log();
  if (log == nullptr) return;
  AccessRecord record;
  record.time_unix_us = start_wall_us_;
  record.client = client_ip_;
  record.method = method_;
  record.path = target_;
  record.host = host_;
  record.status = status_;
  record.bytes = bytes_sent_;
  const uint64_t now_us = worker_->loop().now_us();
  record.duration_us = now_us > start_us_ ? now_us - start_us_ : 0;
  record.upstream = upstream_name_;
  if (action_ != nullptr) {
    record.route = action_->route_key;
    record.rule = action_->rule_id;
  }
  record.reason = reason_;
  if (transport_->secure()) {
    record.tls_version = transport_->version();
    record.sni = transport_->server_name();
    if (const core::tls::PeerCertificate* peer = transport_->peer_certificate()) {
      record.client_cert_sha256 = peer->sha256;
      record.client_cert_subject = peer->subject;
    }
  }
  log->Append(record, worker_->loop().now_ms());
}

void ClientConnection::Close() {
  if (closed_) return;
  closed_ = true;
  worker_->SetIdle(this, false);
  ReleaseUpstream(false);
  if (in_request_) {
    // No answer went out: nginx's 499 when the client left.
    if (status_ == 0) status_ = peer_closed_ ? 499 : 502;
    EndRequest();
  }
  net::TimerWheel::Cancel(&timer_);
  if (tls_ != nullptr && !tls_->failure().empty()) {
    auto& counter = worker_->counters().tls_failures;
    counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    spdlog::debug("connection from {} on port {}: {}", client_ip_, listener_port_, tls_->failure());
  }
  transport_->Close();
  worker_->OnClosed(this);
}

// ---------------------------------------------------------------------------------------------
// Timers.

uint64_t ClientConnection::NextDeadline() const {
  switch (phase_) {
    case Phase::kHead:
      return std::min(header_deadline_, idle_deadline_);
    case Phase::kProxy:
      if (attempt_.waiting) return std::min(attempt_.retry_at, request_deadline_);
      return std::min({connect_deadline_, request_deadline_, backend_deadline_,
                       last_activity_ms_ + worker_->settings().upstream_timeout_ms,
                       body_stalled_ && !req_.done
                           ? last_body_read_ms_ + worker_->settings().body_read_timeout_ms
                           : kNever});
    case Phase::kLocal:
      return last_activity_ms_ + worker_->settings().idle_timeout_ms;
    case Phase::kLinger:
      return linger_deadline_;
    case Phase::kTunnel:
      return last_activity_ms_ + worker_->settings().tunnel_idle_timeout_ms;
    case Phase::kFilter:
      return std::min(request_deadline_, call_deadline_);
  }
  return kNever;
}

void ClientConnection::UpdateTimer() {
  const uint64_t deadline = NextDeadline();
  if (deadline == kNever) return;  // an armed timer fires, finds nothing due and re-arms
  if (!timer_.armed() || deadline < timer_.deadline_ms()) {
    worker_->loop().timers().Arm(&timer_, deadline);
  }
}

void ClientConnection::OnTimer(int) {
  if (closed_) return;
  const uint64_t now = worker_->loop().now_ms();
  switch (phase_) {
    case Phase::kHead:
      if (now >= header_deadline_) {
        if (in_.empty()) {
          Close();
        } else {
          BeginLocalRequest();
          close_after_ = true;
          RespondLocal(408, "header_read_timeout", http::StatusReason(408));
        }
      } else if (now >= idle_deadline_) {
        Close();
      }
      break;
    case Phase::kProxy:
      if (now >= request_deadline_) {  // every attempt and backoff included
        close_after_ = close_after_ || !req_.done;
        UpstreamFailed(504, "request_timeout");
      } else if (body_stalled_ && !req_.done &&
                 now >= last_body_read_ms_ + worker_->settings().body_read_timeout_ms) {
        // The client stopped sending its body: the upstream never gets a complete request.
        close_after_ = true;
        UpstreamFailed(408, "body_read_timeout");
      } else if (attempt_.waiting) {
        if (now >= attempt_.retry_at) StartAttempt();
      } else if (now >= connect_deadline_) {
        ConnectFailed("upstream_connect_timeout");
      } else if (now >= backend_deadline_) {
        if (CanRetry()) {
          Reattempt();
        } else {
          close_after_ = close_after_ || !req_.done;
          UpstreamFailed(504, "backend_request_timeout");
        }
      } else if (now >= last_activity_ms_ + worker_->settings().upstream_timeout_ms) {
        close_after_ = close_after_ || !req_.done;
        UpstreamFailed(504, "upstream_timeout");
      }
      break;
    case Phase::kLocal:
      if (now >= last_activity_ms_ + worker_->settings().idle_timeout_ms) Close();
      break;
    case Phase::kLinger:
      if (now >= linger_deadline_) Close();
      break;
    case Phase::kTunnel:
      if (now >= last_activity_ms_ + worker_->settings().tunnel_idle_timeout_ms) {
        reason_ = "tunnel_idle_timeout";
        Close();
      }
      break;
    case Phase::kFilter:
      if (now >= request_deadline_ || now >= call_deadline_) {
        // The call outlived the request's timeout (or its own, which the client enforces
        // first): the exchange ends here, cancelling it.
        CancelCall();
        close_after_ = true;
        RespondLocal(504, "filter_call_timeout", http::StatusReason(504));
        ConsumeHead();
      }
      break;
  }
  if (closed_) return;
  Drive();  // also re-arms for what is pending
}

}  // namespace portico::gateway::server
