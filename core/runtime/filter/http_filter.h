// http_filter.h: HttpFilter, one configured filter of a rule's chain, and FilterContext, the
// exchange as a filter sees it (DESIGN.md §4 "Filters"). One interface for every filter: the
// Gateway API built-ins (builtin_filters.h) and plugin filters (plugin_filter.h) alike, so the
// connection code knows no filter (Envoy's filter manager, Pingora's phases).
//
// Hooks, each defaulting to "continue":
//   OnRequestHead     the request head was routed; the filter may read and change the request
//                     (headers, path, upstream host), answer locally (kRespond) or start an
//                     outbound call (kPending: the exchange parks until FilterContext::Resume);
//   OnUpstreamRequest after every OnRequestHead (and the backend's filters), just before the
//                     head is written upstream;
//   OnResponseHead    the upstream's response head (or a local reply's head) may be changed;
//   OnLog             the exchange ended (after the response, or when the client went away).
// A filter's per-request state lives in the FilterSlot the chain gives it (one per filter per
// request, zeroed at the start); OnRequestEnd is where it is freed.
//
// Threading: an HttpFilter is immutable once built and shared by every worker: its hooks run
// concurrently on several workers, each with its own FilterContext and slots. A FilterContext
// belongs to one worker and one exchange. Ownership: the route table (built-ins) or the filter
// binding table (plugin filters) owns its filters; a request pins both through its snapshot.
// Views a context returns stay valid until the next call that changes what they view.
#ifndef PORTICO_CORE_RUNTIME_FILTER_HTTP_FILTER_H_
#define PORTICO_CORE_RUNTIME_FILTER_HTTP_FILTER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/runtime/tls/peer_certificate.h"

namespace portico::core::filter {

// FilterResult is what a hook decided (portico_filter_status).
enum class FilterResult : uint8_t {
  kContinue,  // go on with the chain
  kRespond,   // the filter set a local reply (FilterContext::Respond)
  kPending,   // an outbound call is in flight; FilterContext::Resume continues the chain
};

// Side names the message a header call works on.
enum class Side : uint8_t { kRequest, kResponse };

// OutboundRequest is an HTTP call a filter makes (FilterContext::HttpCall). Either `backend_key`
// (a "namespace/service:port" of the backend table: endpoints and balancing as for routes) or
// `address`/`port` (a literal IP) names the target.
struct OutboundRequest {
  std::string backend_key;
  std::string address;  // IPv4 or IPv6 literal
  uint16_t port = 0;
  std::string method = "GET";
  std::string target = "/";  // origin-form path and query
  std::string host;          // Host header; empty: address:port
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  uint64_t timeout_ms = 1000;
};

// OutboundResponse is the answer to an OutboundRequest. status 0: the call failed (`error`
// says why: "connect_failed", "timeout", "bad_response", "too_many_calls", "no_endpoint").
struct OutboundResponse {
  int status = 0;
  std::string error;
  std::vector<std::pair<std::string, std::string>> headers;  // names as received
  std::string body;
  // Header returns the first value of `name` (case-insensitive), or nullopt.
  std::optional<std::string_view> Header(std::string_view name) const;
};

// CallDone receives an OutboundResponse on the worker that made the call. Returns what the
// chain does next (as a hook would; kPending: another call was started). When the exchange ends
// first (client gone, timeout) it is never called: the chain calls HttpFilter::CancelCall.
class CallDone {
 public:
  virtual FilterResult OnCallDone(const OutboundResponse& response) = 0;

 protected:
  ~CallDone() = default;
};

class HttpFilter;

// FilterContext is the exchange a hook acts on. Implemented by the gateway's exchange.
class FilterContext {
 public:
  // The request as routed: method, normalized path (as rewritten so far), raw query, Host as
  // received, the scheme it arrived with ("http", or "https" over TLS), the listener's port, the
  // client's address, the matched rule.
  virtual std::string_view method() const = 0;
  virtual std::string_view path() const = 0;
  virtual std::string_view query() const = 0;
  virtual std::string_view host() const = 0;
  virtual std::string_view scheme() const = 0;
  virtual uint16_t listener_port() const = 0;
  virtual std::string_view client_address() const = 0;
  virtual std::string_view matched_prefix() const = 0;  // the rule's Prefix match value, or ""
  virtual std::string_view route_key() const = 0;       // "namespace/name"
  virtual std::string_view rule_name() const = 0;       // "" when the rule has none
  virtual int response_status() const = 0;              // 0 before the response head
  // The client certificate of a TLS connection that presented one (else null), valid while the
  // request lasts.
  virtual const tls::PeerCertificate* client_certificate() const { return nullptr; }

  // Changes to the request sent upstream.
  virtual void SetPath(std::string_view path) = 0;
  virtual void SetUpstreamHost(std::string_view host) = 0;

  // Headers of `side` (the response side only from OnResponseHead on). Names compare
  // case-insensitively. `stable`: the caller guarantees the bytes outlive the request (a
  // filter configuration); otherwise they are copied.
  virtual size_t HeaderCount(Side side) const = 0;
  virtual std::pair<std::string_view, std::string_view> HeaderAt(Side side, size_t i) const = 0;
  virtual std::optional<std::string_view> Header(Side side, std::string_view name,
                                                 size_t n = 0) const = 0;
  virtual void SetHeader(Side side, std::string_view name, std::string_view value,
                         bool stable = false) = 0;
  virtual void AddHeader(Side side, std::string_view name, std::string_view value,
                         bool stable = false) = 0;
  virtual void RemoveHeader(Side side, std::string_view name) = 0;

  // Respond makes the exchange answer locally (the hook then returns kRespond). `headers` are
  // copied; a Content-Type of text/plain is added when `body` is not empty and none is given.
  // `reason` is the access log's reason (static storage).
  virtual void Respond(int status, std::string_view body,
                       const std::vector<std::pair<std::string, std::string>>& headers,
                       std::string_view reason) = 0;

  // Mirror sends a copy of the request as forwarded to the backend `backend_key` (request
  // mirror); Roll says whether a share of `percent` (0-100) of requests is taken.
  virtual void Mirror(const std::string& backend_key) = 0;
  virtual bool Roll(double percent) = 0;

  // HttpCall starts an outbound call; `done` runs on this worker when it completes (failures
  // included, as status 0), unless the exchange ends first (see CallDone). At most one
  // call per exchange at a time; false when one is already in flight (nothing is called). `done`
  // must outlive the call.
  virtual bool HttpCall(OutboundRequest request, CallDone* done) = 0;

  // FindBinding returns the plugin filter instance of filter_binding.v1 `id` in the snapshot the
  // request pinned, or nullptr.
  virtual const HttpFilter* FindBinding(std::string_view id) const = 0;

  // Log writes a line to the gateway's log, naming the route.
  virtual void Log(int level, std::string_view message) = 0;

 protected:
  ~FilterContext() = default;
};

// FilterSlot is one filter's per-request state, zeroed at the start of each request.
struct FilterSlot {
  void* state = nullptr;
  bool created = false;
};

class HttpFilter {
 public:
  virtual ~HttpFilter() = default;
  virtual FilterResult OnRequestHead(FilterContext& ctx, FilterSlot& slot) const {
    return FilterResult::kContinue;
  }
  virtual FilterResult OnUpstreamRequest(FilterContext& ctx, FilterSlot& slot) const {
    return FilterResult::kContinue;
  }
  virtual void OnResponseHead(FilterContext& ctx, FilterSlot& slot) const {}
  virtual void OnLog(FilterContext& ctx, FilterSlot& slot) const {}
  // OnRequestEnd frees what the slot holds (called once per request that reached the filter).
  virtual void OnRequestEnd(FilterContext& ctx, FilterSlot& slot) const {}
  // CancelCall: the exchange ends while this filter's outbound call is in flight.
  virtual void CancelCall(FilterContext& ctx, FilterSlot& slot) const {}
  // name is the filter's type for logs ("RequestHeaderModifier", "portico.io/Webhook").
  virtual std::string_view name() const = 0;
};

// FilterList is a rule's (or a backend's) filters in chain order.
using FilterList = std::vector<std::shared_ptr<const HttpFilter>>;

}  // namespace portico::core::filter

#endif  // PORTICO_CORE_RUNTIME_FILTER_HTTP_FILTER_H_
