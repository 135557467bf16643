// client_connection.h: ClientConnection, one accepted HTTP/1.1 client connection and the
// exchange in flight on it: request head parsing (gateway/http, strict), routing, filters,
// backend and endpoint choice, the upstream exchange with bodies streamed both ways (Content-
// Length passed through without copying, chunked re-framed), local answers (400, 404, 500, 502,
// 503, 504, redirects), keep-alive, timeouts and the access-log line. A request asking to switch
// protocols (Upgrade, e.g. WebSocket) that the upstream accepts with 101 turns the pair of
// connections into a tunnel: bytes are copied both ways until both sides have ended.
//
// I/O model: the connection's bytes move through its Transport (transport.h: plain TCP, or TLS
// over it on HTTPS listeners), whose socket is registered once (edge-triggered, in and out);
// readable_/writable_ remember readiness. Bytes flow through two buffers per direction: the
// source's read buffer (client in_, upstream in) and the sink's pending output (upstream out,
// client out_); a Content-Length body goes from the source buffer straight into writev beside the
// pending head, so the usual exchange costs one read and one writev per direction. Backpressure: a
// source is not read while its buffer is full; the buffer drains only as the sink accepts bytes.
//
// Filters: every filter of the matched rule (and of the chosen backend) runs through one
// core::filter::FilterChain; the connection is the chain's FilterContext (exchange_filters.cc)
// and knows no filter. A hook that starts an outbound call (HttpCall, through the worker's
// HttpClient) parks the exchange in Phase::kFilter, with the request head kept in place, until
// the call completes on this worker; the client going away or the request timeout cancels it.
//
// Timers: one wheel Timer per connection, armed for the earliest pending deadline (header read,
// idle, upstream connect, request, backend request, upstream inactivity); moving a deadline
// later does not re-arm: the expiry re-checks and re-arms.
//
// Thread-safety: none; owned and driven by one Worker. Ownership: the Worker owns it; it owns
// the upstream connection it holds until released to or closed in the worker's pool.
#ifndef PORTICO_GATEWAY_SERVER_CLIENT_CONNECTION_H_
#define PORTICO_GATEWAY_SERVER_CLIENT_CONNECTION_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/runtime/filter/filter_chain.h"
#include "core/runtime/filter/http_filter.h"
#include "core/runtime/routing/backend_table.h"
#include "core/runtime/routing/route_types.h"
#include "gateway/http/chunked_decoder.h"
#include "gateway/http/header_util.h"
#include "gateway/http/request_parser.h"
#include "gateway/http/response_parser.h"
#include "gateway/net/event_loop.h"
#include "gateway/net/io_buffer.h"
#include "gateway/net/timer_wheel.h"
#include "gateway/net/tls_transport.h"
#include "gateway/net/transport.h"
#include "gateway/upstream/http_client.h"
#include "gateway/upstream/upstream_pool.h"

namespace portico::gateway::server {

class Worker;
struct Pin;

class ClientConnection final : public net::EventHandler,
                               public net::TimerHandler,
                               public upstream::UpstreamUser,
                               public core::filter::FilterContext,
                               public upstream::HttpClient::Done {
 public:
  // `listener_address`/`listener_port` name the listener set the connection arrived on (route
  // table keys); `client_ip` is the peer's address as text.
  // `tls` (null for plain TCP) is the listener set's certificates: the connection then speaks
  // TLS (tls_transport.h).
  ClientConnection(Worker* worker, int fd, std::string listener_address, uint16_t listener_port,
                   std::string client_ip, std::shared_ptr<const core::tls::ServerTlsSet> tls);
  ClientConnection(const ClientConnection&) = delete;
  ClientConnection& operator=(const ClientConnection&) = delete;
  ~ClientConnection();

  // Start registers the socket and serves what already arrived.
  bool Start();
  // Abort closes the connection at once (worker shutdown).
  void Abort();
  // Drain ends the connection gracefully (gateway shutdown) and closes it only between requests:
  // what already sits in its socket is read and answered first; every response begun from now
  // on says "Connection: close" and is the connection's last. An idle connection (and one whose
  // response head went out before the drain) closes once idle for the settings'
  // drain_idle_timeout_ms, at once when it already was; a request arriving before that is
  // answered, with close. May close the connection before it returns (Worker::OnClosed).
  void Drain();

  void OnEvents(uint32_t events) override;
  void OnTimer(int id) override;
  void OnUpstreamEvents(uint32_t events) override;
  void OnHttpDone(upstream::HttpResult result) override;

  // core::filter::FilterContext (exchange_filters.cc).
  std::string_view method() const override { return method_; }
  std::string_view path() const override { return path_; }
  std::string_view query() const override { return query_; }
  std::string_view host() const override { return host_; }
  std::string_view scheme() const override { return transport_->secure() ? "https" : "http"; }
  const core::tls::PeerCertificate* client_certificate() const override {
    return transport_->peer_certificate();
  }
  uint16_t listener_port() const override { return listener_port_; }
  std::string_view client_address() const override { return client_ip_; }
  std::string_view matched_prefix() const override;
  std::string_view route_key() const override;
  std::string_view rule_name() const override;
  int response_status() const override { return filter_status_; }
  void SetPath(std::string_view path) override;
  void SetUpstreamHost(std::string_view host) override;
  size_t HeaderCount(core::filter::Side side) const override;
  std::pair<std::string_view, std::string_view> HeaderAt(core::filter::Side side,
                                                         size_t i) const override;
  std::optional<std::string_view> Header(core::filter::Side side, std::string_view name,
                                         size_t n) const override;
  void SetHeader(core::filter::Side side, std::string_view name, std::string_view value,
                 bool stable) override;
  void AddHeader(core::filter::Side side, std::string_view name, std::string_view value,
                 bool stable) override;
  void RemoveHeader(core::filter::Side side, std::string_view name) override;
  void Respond(int status, std::string_view body,
               const std::vector<std::pair<std::string, std::string>>& headers,
               std::string_view reason) override;
  void Mirror(const std::string& backend_key) override;
  bool Roll(double percent) override;
  bool HttpCall(core::filter::OutboundRequest request, core::filter::CallDone* done) override;
  const core::filter::HttpFilter* FindBinding(std::string_view id) const override;
  void Log(int level, std::string_view message) override;

 private:
  enum class Phase : uint8_t {
    kHead,    // waiting for / parsing a request head
    kProxy,   // an upstream exchange is in flight
    kLocal,   // writing a response the gateway made itself
    kLinger,  // answered, half-closed: draining what the client still sends, then close
    kTunnel,  // after a 101: bytes copied both ways until both directions ended
    kFilter,  // a filter's outbound call is in flight; the request head waits in in_
  };
  // ChainStage: where the request stands in its filter chain (what follows a completed call).
  enum class ChainStage : uint8_t {
    kRule,      // the rule's filters (OnRequestHead); next: choose a backend
    kBackend,   // the backend's filters (OnRequestHead); next: the upstream-request hook
    kUpstream,  // OnUpstreamRequest; next: forward
  };
  enum class ResponseState : uint8_t { kAwaitHead, kBody, kDone };

  void Drive();
  bool StepHead();
  bool StepProxy();
  bool StepLocal();
  bool StepLinger();
  void StartLinger();
  bool StepTunnel();
  bool StepFilter();
  // StartTunnel answers the client the upstream's 101 and enters kTunnel.
  void StartTunnel(const http::ResponseHead& head);

  // Reading and writing. ReadClient/ReadUpstream return the bytes read (0: nothing now).
  size_t ReadClient(size_t max_buffer);
  size_t ReadUpstream(size_t max_buffer);
  bool FlushClient();    // out_ then passthrough response body; true when all sent
  bool FlushUpstream();  // upstream out then passthrough request body; true when all sent

  // The request.
  void BeginRequestCommon();
  void BeginLocalRequest();
  void StartRequest();
  void ResetForNextRequest();
  // DrainIdle: draining and between requests with nothing read: close now or arm the deadline.
  void DrainIdle();
  void RouteAndForward();
  // ContinueChain goes on from `result` of the chain's last run at chain_stage_ until the
  // request is forwarded, answered, or parked on a call.
  void ContinueChain(core::filter::FilterResult result);
  // ConsumeHead drops the request head's bytes from in_ once nothing views them (idempotent).
  void ConsumeHead();
  // MaterializeHeaders copies the side's fields into its editable list (first change).
  std::vector<http::HeaderField>* EditableHeaders(core::filter::Side side);
  std::string_view Keep(std::string_view bytes, bool stable);
  void CancelCall();
  // Mirroring (RequestMirror): the forwarded request is copied as it goes upstream and handed
  // to the worker's Mirrors once its body is complete.
  void StartMirrors();
  void TeeMirror(const char* data, size_t size);
  void DispatchMirrors();
  void Forward(const core::routing::Backend& backend);
  // ConnectUpstream takes a pooled connection to endpoint_ or starts connecting one.
  bool ConnectUpstream();
  // ConnectFailed: endpoint_ refused or timed out before any byte went to it. The backend's next
  // endpoint is tried (up to kMaxConnectAttempts in all), as nginx's proxy_next_upstream
  // error/timeout; when none is left, 503 with `reason`.
  void ConnectFailed(std::string_view reason);
  bool NextEndpoint();
  void BuildUpstreamHead();
  bool PumpRequestBody();
  bool PumpResponse();
  bool OnResponseHead();
  // ResponseHeaders: the upstream head's fields after the chain's OnResponseHead hooks (a view
  // of resp_headers_ when a filter ran).
  std::span<const http::HeaderField> ResponseHeaders(const http::ResponseHead& head);
  bool PumpResponseBody();

  // Answers and endings.
  // Fail answers `status` itself when no response byte went out yet (a queued head is
  // dropped), else closes.
  void Fail(int status, std::string_view reason);
  // RespondLocal answers `status` with `body` (a newline appended unless `exact`) and
  // `headers` (Content-Type text/plain added for a body when they have none).
  void RespondLocal(int status, std::string_view reason, std::string_view body,
                    std::span<const http::HeaderField> headers = {}, bool exact = false);
  void UpstreamFailed(int status, std::string_view reason);
  bool RetryUpstream();
  // Retries (the rule's Gateway API retry policy): CanRetry says whether this attempt may be
  // replaced by another (attempts left, nothing sent to the client, no request body, which is
  // streamed and not kept); Reattempt drops the attempt and starts the next after the backoff
  // (StartAttempt); ArmAttempt sets an attempt's endpoint name and backend deadline.
  bool CanRetry() const;
  void Reattempt();
  void StartAttempt();
  void ArmAttempt();
  void FinishExchange();
  void EndRequest();
  void LogRequest();
  void ReleaseUpstream(bool reusable);
  void Close();

  void UpdateTimer();
  uint64_t NextDeadline() const;

  friend class Worker;  // the idle list's links
  ClientConnection* idle_prev_ = nullptr;
  ClientConnection* idle_next_ = nullptr;
  bool idle_listed_ = false;
  uint64_t requests_served_ = 0;  // on this connection (max_requests_per_connection)

  Worker* const worker_;
  net::PlainTransport plain_;               // the socket (owned)
  std::unique_ptr<net::TlsTransport> tls_;  // over plain_, on HTTPS listeners
  net::Transport* transport_;               // how bytes move: tls_ or &plain_
  const bool tls_failed_;              // TLS asked for, no session could be made
  const std::string listener_address_;
  const uint16_t listener_port_;
  const std::string client_ip_;

  bool readable_ = true;  // accepted with TCP_DEFER_ACCEPT: data is usually there
  bool writable_ = true;
  bool peer_closed_ = false;  // the client's read side hit EOF
  bool peer_hangup_ = false;  // EPOLLRDHUP/HUP/ERR seen: a short read may leave the EOF unread
  bool closed_ = false;

  net::IoBuffer in_;
  std::string out_;  // pending bytes to the client
  size_t out_sent_ = 0;
  http::RequestParser parser_;
  Phase phase_ = Phase::kHead;
  net::Timer timer_;

  // The request in flight (valid from StartRequest to EndRequest).
  bool in_request_ = false;
  Pin* pin_ = nullptr;
  const core::routing::RouteAction* action_ = nullptr;
  const core::routing::BackendRef* backend_ref_ = nullptr;
  const core::routing::Backend* backend_ = nullptr;  // the chosen backend (held by pin_)
  // How backend_ is reached: its TLS (held by pin_), or null for clear text.
  const std::shared_ptr<const core::tls::UpstreamTls>* upstream_tls_ = nullptr;
  upstream::EndpointPool* endpoint_ = nullptr;
  upstream::UpstreamConnection* up_ = nullptr;
  std::string up_out_;  // pending bytes to the upstream: the head, then re-framed chunks
  size_t up_out_sent_ = 0;
  size_t head_bytes_ = 0;  // the forwarded head's size (up_out_ holds only it: replayable)
  int client_minor_ = 1;
  bool head_request_ = false;
  bool client_keep_alive_ = true;
  bool close_after_ = false;  // close the client connection once this response is out
  bool draining_ = false;     // Drain was called: every response is the connection's last
  bool upgrade_ = false;  // the request asks to switch protocols (forwarded with its Upgrade)

  // Tunnel (after a 101): each direction ends when its source hit EOF and all was written, with
  // a shutdown(SHUT_WR) of its sink.
  bool tunnel_up_done_ = false;    // client -> upstream
  bool tunnel_down_done_ = false;  // upstream -> client

  // The upstream attempts of the request (connect failures, replays, retries).
  struct Attempts {
    size_t connect_failures = 0;  // endpoints of this attempt that failed to connect
    bool replayed = false;        // resent once on a fresh connection (stale keep-alive)
    uint32_t retries = 0;         // attempts retried by the rule's retry policy
    bool waiting = false;         // between two attempts (backoff), until retry_at
    uint64_t retry_at = 0;
    void Reset() { *this = Attempts(); }
  } attempt_;

  // Request body (client -> upstream).
  struct RequestBody {
    http::BodyFraming framing = http::BodyFraming::kNone;
    uint64_t remaining = 0;  // kContentLength: body bytes not yet taken from in_
    uint64_t bytes = 0;
    http::ChunkedDecoder decoder;
    bool done = true;
    void Reset() {
      framing = http::BodyFraming::kNone;
      remaining = bytes = 0;
      done = true;
    }
  } req_;
  std::vector<const std::string*> mirror_keys_;  // this request's mirror backends
  std::string mirror_request_;  // the copy being built (head as forwarded, body)
  bool mirroring_ = false;      // body bytes are copied into mirror_request_

  // Response (upstream -> client).
  struct ResponseProgress {
    ResponseState state = ResponseState::kAwaitHead;
    http::BodyFraming framing = http::BodyFraming::kNone;
    uint64_t remaining = 0;    // kContentLength: bytes not yet taken from the upstream buffer
    bool passthrough = false;  // body bytes go from the upstream buffer to the client as is
    bool rechunk = false;      // decoded chunks re-framed as chunked for the client
    bool started = false;      // a response head is queued for the client
    // Restart forgets an attempt's response (started stays: a head went to the client).
    void Restart() {
      state = ResponseState::kAwaitHead;
      passthrough = rechunk = false;
    }
    void Reset() { *this = ResponseProgress(); }
  } resp_;

  // What the request needs after its head bytes are gone (copies; capacity reused).
  std::string method_;
  std::string target_;  // path and query as received (access log)
  std::string path_;    // path, possibly rewritten
  std::string query_;
  std::string host_;           // Host as received
  std::string upstream_host_;  // Host sent upstream
  std::string target_out_;     // the rewritten target sent upstream
  std::string location_;
  std::string scratch_;
  std::string upstream_name_;  // "ip:port" of the endpoint (access log)

  // Filters (see the file comment).
  core::filter::FilterChain chain_;
  std::vector<const core::filter::HttpFilter*> attached_;  // scratch: attached filters
  ChainStage chain_stage_ = ChainStage::kRule;
  bool head_consumed_ = true;  // the request head's bytes left in_ (views into it are gone)
  std::vector<http::HeaderField> req_headers_;    // the request's fields once a filter edited
  bool req_headers_edited_ = false;               // them (views into in_ or strings_)
  std::vector<http::HeaderField> resp_headers_;   // the response's, during OnResponseHead
  bool resp_headers_open_ = false;                // the response side is editable now
  std::vector<http::HeaderField> reply_headers_;  // a filter's local reply's
  std::deque<std::string> strings_;  // bytes filters gave that must live as long as the request
  int filter_status_ = 0;            // the response status filters see
  upstream::HttpClient::Call* call_ = nullptr;  // a filter's outbound call in flight
  core::filter::CallDone* call_done_ = nullptr;
  uint64_t call_deadline_ = 0;

  // Access log.
  int status_ = 0;
  uint64_t bytes_sent_ = 0;
  uint64_t start_us_ = 0;
  int64_t start_wall_us_ = 0;
  std::string_view reason_;

  // Deadlines (ms on the loop's clock; kNever when unset).
  uint64_t header_deadline_;
  uint64_t idle_deadline_;
  uint64_t connect_deadline_;
  uint64_t request_deadline_;
  uint64_t backend_deadline_;
  uint64_t linger_deadline_ = 0;
  uint64_t last_activity_ms_ = 0;
  // The request body: when a byte of it last arrived (or the head), and whether the exchange
  // waits for the client's next one (body_read_timeout_ms applies only then).
  uint64_t last_body_read_ms_ = 0;
  bool body_stalled_ = false;
};

}  // namespace portico::gateway::server

#endif  // PORTICO_GATEWAY_SERVER_CLIENT_CONNECTION_H_
