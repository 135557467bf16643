// route_types.h: the values the route table (route_table.h) hands the HTTP proxy: a matched rule's
// action (weighted backend keys, redirect, filters, timeouts), the request as the matcher sees
// it, match results, and the sockets the listener sets need. Everything here is parsed once from
// route_rules.v1 / listener_set.v1 (docs/contributions.md) when a RouteTable is built.
//
// Thread-safety: value types. Those reached through a RouteTable are immutable and may be read
// from any thread for as long as the table is held (shared_ptr). Ownership: a RouteAction or
// ListenerInfo pointer returned by a table lives as long as that table.
#ifndef PORTICO_CORE_RUNTIME_ROUTING_ROUTE_TYPES_H_
#define PORTICO_CORE_RUNTIME_ROUTING_ROUTE_TYPES_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/runtime/filter/http_filter.h"

namespace portico::core::routing {

// FilterKind is a built-in filter of route_rules.v1 ("builtin" member; "binding" for kBinding).
enum class FilterKind {
  kRequestHeaders,   // "requestHeaders": headers
  kResponseHeaders,  // "responseHeaders": headers
  kUrlRewrite,       // "urlRewrite": rewrite
  kRedirect,         // "redirect" (backend-level filters only): redirect
  kMirror,           // "mirror": mirror_key, mirror_percent
  kCors,             // "cors": cors
  kBinding,          // {"binding": id}: binding (a filter_binding.v1 id)
};

// HeaderOps is a RequestHeaderModifier / ResponseHeaderModifier: names as written.
struct HeaderOps {
  std::vector<std::pair<std::string, std::string>> set;  // (name, value)
  std::vector<std::pair<std::string, std::string>> add;  // (name, value)
  std::vector<std::string> remove;                       // names
};

// PathModifierType is the `path.type` of a URLRewrite or RequestRedirect.
enum class PathModifierType { kNone, kReplaceFullPath, kReplacePrefixMatch };

// UrlRewrite is a URLRewrite filter. ReplacePrefixMatch replaces RouteAction::matched_prefix.
struct UrlRewrite {
  std::optional<std::string> hostname;
  PathModifierType path_type = PathModifierType::kNone;
  std::string path_value;
};

// Redirect is a RequestRedirect (the rule's, or a backend-level filter's). Empty scheme or
// hostname: the request's. port 0: keep (the listener's port; the handler already turned a
// scheme without port into that scheme's well-known port). The Location header omits the port
// when it is the scheme's default.
struct Redirect {
  std::string scheme;
  std::string hostname;
  int port = 0;
  std::string path_type;  // "" (keep the path), "ReplaceFullPath" or "ReplacePrefixMatch"
  std::string path_value;
  int status_code = 302;
  PathModifierType path_modifier = PathModifierType::kNone;  // path_type as an enum
};

// CorsOrigin is an origin "scheme://host[:port]" of a CORS filter's allowOrigins, or of a
// request's Origin header: scheme and host in lower case, port the scheme's default (http 80,
// https 443, other schemes 0) when absent. In an allowOrigins entry the host may hold `*`, which
// matches one or more characters, dots included (Gateway API: a greedy match to the left).
struct CorsOrigin {
  std::string scheme;
  std::string host;
  uint32_t port = 0;
};

// CorsPolicy is a CORS filter (Gateway API HTTPCORSFilter), with the header values it writes
// computed once. Lists are comma-joined as written; "" means the field was empty.
struct CorsPolicy {
  bool any_origin = false;          // allowOrigins is ["*"]
  std::vector<CorsOrigin> origins;  // the other allowOrigins entries
  bool allow_credentials = false;
  bool any_method = false;     // allowMethods holds "*"
  std::string allow_methods;   // Access-Control-Allow-Methods
  bool any_header = false;     // allowHeaders holds "*"
  std::string allow_headers;   // Access-Control-Allow-Headers
  bool expose_any = false;     // exposeHeaders holds "*"
  std::string expose_headers;  // Access-Control-Expose-Headers
  std::string expose_named;    // exposeHeaders without "*" (for credentialed requests)
  std::string max_age = "5";   // Access-Control-Max-Age, seconds (Gateway API default 5)
};

// FilterSpec is one built-in filter's configuration, parsed once (the route table then builds
// its HttpFilter: builtin_filters.h). Only the members of its `kind` are set.
struct FilterSpec {
  FilterKind kind = FilterKind::kRequestHeaders;
  HeaderOps headers;            // kRequestHeaders, kResponseHeaders
  UrlRewrite rewrite;           // kUrlRewrite
  Redirect redirect;            // kRedirect
  std::string mirror_key;       // kMirror: "" mirrors nothing
  double mirror_percent = 100;  // kMirror: 0-100, possibly fractional
  std::string binding;          // kBinding: a filter_binding.v1 id; missing -> 500
  // kCors, behind a pointer: most filters are not CORS and a rule's memory counts.
  std::shared_ptr<const CorsPolicy> cors;
};

// BackendRef is one weighted backend of a rule. An invalid one (key "") keeps its weight and
// answers 500 for its share.
struct BackendRef {
  std::string key;  // "<namespace>/<service>:<port>" (BackendTable::Find), or "" when invalid
  uint32_t weight = 0;
  filter::FilterList filters;  // run only for requests sent to this backend
  bool valid() const { return !key.empty(); }
};

// RetryPolicy is a rule's Gateway API `retry` (route_rules.v1 "retry"): up to `attempts`
// retries, `backoff_ms` apart, of an attempt whose response status is in `codes`, that failed to
// connect or lost its connection before a response head, or whose backend request timed out.
struct RetryPolicy {
  std::vector<uint16_t> codes;
  uint32_t attempts = 0;
  uint32_t backoff_ms = 0;
  bool RetriesStatus(int status) const {
    for (uint16_t c : codes) {
      if (c == status) return true;
    }
    return false;
  }
};

// RouteAction is what a matched rule does: its filter chain, then its backends (none, or
// total_weight 0, and no filter answered: 500).
struct RouteAction {
  std::vector<BackendRef> backends;
  uint32_t total_weight = 0;  // sum of the backends' weights
  // The rule's filters in chain order: its RequestRedirect first (it answers instead of the
  // backends), then the others as written.
  filter::FilterList filters;
  std::shared_ptr<const RetryPolicy> retry;  // null: no retries
  int64_t request_timeout_ms = 0;          // 0: none
  int64_t backend_request_timeout_ms = 0;  // 0: none
  std::string route_key;                   // "namespace/name" of the route, for logs
  std::string rule_id;                     // "<rule index>.<match index>"
  std::string rule_name;                   // the rule's name, "" when it has none
  std::string matched_prefix;  // the rule's Prefix match value as written; "" for Exact/Regex

  // PickBackend maps `random` (any value, e.g. a per-worker counter or PRNG output) to a backend
  // in proportion to the weights (zero-weight ones never): nullptr when total_weight is 0.
  // Allocation-free; linear in the backends (a rule has at most 16).
  const BackendRef* PickBackend(uint64_t random) const;
};

// HeaderSource is the request's headers as the matcher reads them. Get returns the value of the
// header named `lower_name` (given in lower case; compare case-insensitively), or nullopt. When
// a header is repeated, the proxy decides which value (or joined value) it returns. Must not
// allocate if the proxy wants an allocation-free lookup; called on the matching thread only.
class HeaderSource {
 public:
  virtual std::optional<std::string_view> Get(std::string_view lower_name) const = 0;

 protected:
  ~HeaderSource() = default;
};

// HeaderLambda adapts a callable `std::optional<std::string_view>(std::string_view)` to a
// HeaderSource without allocating: `auto h = HeaderLambda([&](std::string_view n) {...});`.
template <typename F>
class HeaderLambda final : public HeaderSource {
 public:
  explicit HeaderLambda(F f) : f_(std::move(f)) {}
  std::optional<std::string_view> Get(std::string_view lower_name) const override {
    return f_(lower_name);
  }

 private:
  F f_;
};

// RequestView is the request as the matcher sees it. Nothing is copied; every view must outlive
// the Match call.
struct RequestView {
  std::string_view host;    // Host header / :authority; a ":port" suffix and case are ignored
  std::string_view path;    // the path, without the query; matched as given (the proxy
                            // normalizes it first if it wants to)
  std::string_view query;   // the raw query string without '?' (percent-decoded when matched)
  std::string_view method;  // e.g. "GET" (case-sensitive)
  const HeaderSource* headers = nullptr;  // null: no headers
};

enum class MatchOutcome { kMatched, kNoListener, kNoRoute };

// ListenerInfo describes a listener a request was matched on (several Gateways' listeners with
// the same hostname on the same (address, port) are merged into one).
struct ListenerInfo {
  std::string address;  // the listener set's address ("" = the gateway's default)
  uint16_t port = 0;
  std::string protocol;            // "HTTP", "HTTPS"
  std::string hostname;            // "" = any host
  std::vector<std::string> names;  // "<gateway namespace>/<gateway name>/<listener name>", sorted
};

// MatchResult: kMatched with `action`; kNoRoute when a listener took the host but no rule
// matched (`listener` set); kNoListener when no listener set or listener takes the request.
struct MatchResult {
  MatchOutcome outcome = MatchOutcome::kNoListener;
  const RouteAction* action = nullptr;
  const ListenerInfo* listener = nullptr;
};

// ListenerSocketSpec is one socket a listener set needs: (address, port, protocol) and the
// owners (object keys "group/Kind/ns/name") of the listener_set.v1 entries behind it, sorted, to
// nack when the bind fails.
struct ListenerSocketSpec {
  std::string address;  // "" = the gateway's default address
  uint16_t port = 0;
  std::string protocol;
  std::vector<std::string> owners;
  bool operator==(const ListenerSocketSpec&) const = default;
};

// Refusal is an owner whose contributions a RouteTable could not use (a listener whose protocol
// conflicts with its port's, a regex RE2 does not compile, a malformed entry). The consumer's
// Prepare returns them as nacks (RuntimeConsumer::Prepare).
struct Refusal {
  std::string owner;
  std::string reason;
};

}  // namespace portico::core::routing

#endif  // PORTICO_CORE_RUNTIME_ROUTING_ROUTE_TYPES_H_
