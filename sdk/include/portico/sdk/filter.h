// filter.h: the request-path C++ API: HttpView, FilterHost and the Filter base class (Pingora
// style: one phase interface whose hooks default to "continue").
//
// Threading: a Filter instance is created off the request path (its FilterFactory runs when a
// configuration is prepared) and then used by every worker concurrently; hooks run on the worker
// that owns the request, must be thread-safe and must not block (use FilterHost::HttpCall and
// return PORTICO_FILTER_PENDING; the completion runs on the same worker).
// Ownership: the host owns each instance the factory returns and deletes it (through the SDK)
// when no runtime snapshot uses it any more. HttpView, FilterHost and every string_view they
// return are valid only during the hook; values passed to them are copied. A RequestState
// (NewState) belongs to one request and is freed when it ends.
#ifndef PORTICO_SDK_FILTER_H_
#define PORTICO_SDK_FILTER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "portico/sdk/status.h"
#include "portico/sdk/types.h"

namespace portico::sdk {

// HttpView is the request or response a filter hook sees.
class HttpView {
 public:
  explicit HttpView(const portico_http_view* raw) : raw_(raw) {}
  const portico_http_view* raw() const { return raw_; }

  std::string_view Method() const { return raw_->method ? View(raw_->method(raw_->host)) : ""; }
  std::string_view Path() const { return raw_->path ? View(raw_->path(raw_->host)) : ""; }
  std::string_view Authority() const { return raw_->authority ? View(raw_->authority(raw_->host)) : ""; }
  int StatusCode() const { return raw_->status ? raw_->status(raw_->host) : 0; }
  std::optional<std::string_view> Header(std::string_view name, size_t n = 0) const {
    portico_str value{nullptr, 0};
    if (raw_->header == nullptr || raw_->header(raw_->host, Str(name), n, &value) == 0) return std::nullopt;
    return View(value);
  }
  void SetHeader(std::string_view name, std::string_view value) const {
    if (raw_->set_header) raw_->set_header(raw_->host, Str(name), Str(value));
  }
  void AddHeader(std::string_view name, std::string_view value) const {
    if (raw_->add_header) raw_->add_header(raw_->host, Str(name), Str(value));
  }
  void RemoveHeader(std::string_view name) const {
    if (raw_->remove_header) raw_->remove_header(raw_->host, Str(name));
  }
  void SetPath(std::string_view path) const {
    if (raw_->set_path) raw_->set_path(raw_->host, Str(path));
  }
  void SetAuthority(std::string_view authority) const {
    if (raw_->set_authority) raw_->set_authority(raw_->host, Str(authority));
  }
  void Respond(int status, std::string_view body) const {
    if (raw_->respond) raw_->respond(raw_->host, status, Str(body));
  }

  // ABI 1.2 (empty / absent / no-op against a 1.1 host).
  size_t HeaderCount() const {
    return Has12() && raw_->header_count ? raw_->header_count(raw_->host) : 0;
  }
  // HeaderAt returns the i-th (name, value), or nullopt past the end.
  std::optional<std::pair<std::string_view, std::string_view>> HeaderAt(size_t i) const {
    portico_str name{nullptr, 0}, value{nullptr, 0};
    if (!Has12() || raw_->header_at == nullptr ||
        raw_->header_at(raw_->host, i, &name, &value) == 0)
      return std::nullopt;
    return std::make_pair(View(name), View(value));
  }
  std::string_view Query() const {
    return Has12() && raw_->query ? View(raw_->query(raw_->host)) : "";
  }
  // QueryParam returns the n-th value of parameter `name` (percent-decoded), or nullopt.
  std::optional<std::string_view> QueryParam(std::string_view name, size_t n = 0) const {
    portico_str value{nullptr, 0};
    if (!Has12() || raw_->query_param == nullptr ||
        raw_->query_param(raw_->host, Str(name), n, &value) == 0)
      return std::nullopt;
    return View(value);
  }
  std::string_view ClientAddress() const {
    return Has12() && raw_->client_address ? View(raw_->client_address(raw_->host)) : "";
  }
  std::string_view Route() const {
    return Has12() && raw_->route ? View(raw_->route(raw_->host)) : "";
  }
  std::string_view RuleName() const {
    return Has12() && raw_->rule_name ? View(raw_->rule_name(raw_->host)) : "";
  }
  // ReplyHeader adds a header to the local reply Respond sets.
  void ReplyHeader(std::string_view name, std::string_view value) const {
    if (Has12() && raw_->reply_header) raw_->reply_header(raw_->host, Str(name), Str(value));
  }

 private:
  bool Has12() const { return PORTICO_HAS_FIELD(raw_, portico_http_view, reply_header); }
  const portico_http_view* raw_;
};

// RequestState is a filter's state for one request (Filter::NewState); freed when it ends.
class RequestState {
 public:
  virtual ~RequestState() = default;
};

// HttpResponse is an outbound call's answer as a completion sees it. status 0: the call failed
// (`body` says why: "timeout", "connect_failed", ...). Valid during the completion only.
struct HttpResponse {
  int status = 0;
  std::string_view headers;  // "Name: value\r\n" lines
  std::string_view body;
  // Header returns the first value of `name` (case-insensitive).
  std::optional<std::string_view> Header(std::string_view name) const {
    std::string_view rest = headers;
    while (!rest.empty()) {
      size_t end = rest.find('\n');
      std::string_view line = rest.substr(0, end);
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      size_t colon = line.find(':');
      if (colon == std::string_view::npos || colon != name.size()) continue;
      bool same = true;
      for (size_t i = 0; i < colon && same; ++i) {
        same = (line[i] | 0x20) == (name[i] | 0x20);
      }
      if (!same) continue;
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      return value;
    }
    return std::nullopt;
  }
};

// CallDone is a completion: what the chain does next, as a hook's result.
using CallDone = std::function<portico_filter_status(const HttpResponse&, const HttpView&)>;

// CallCookie carries a CallDone through the C ABI (internal to the SDK).
struct CallCookie {
  CallDone done;
};

// FilterHost gives a filter the host's request-path services.
class FilterHost {
 public:
  explicit FilterHost(const portico_filter_host* raw) : raw_(raw) {}
  // HttpCall starts an outbound call: on OK the hook returns PORTICO_FILTER_PENDING and `done`
  // runs later on the same worker (or never, when the request ends first: the SDK then frees it).
  Status HttpCall(const portico_http_call& call, CallDone done) const {
    if (raw_ == nullptr || raw_->http_call == nullptr) return UnimplementedError("host has no http_call");
    auto* cookie = new CallCookie{std::move(done)};
    portico_code code = raw_->http_call(raw_->host, &call, &CallDoneTrampoline, cookie);
    if (code == PORTICO_OK) return OkStatus();
    delete cookie;
    return Status(static_cast<portico::StatusCode>(code), "http_call failed");
  }
  // The C form: `done` gets `cookie` back (wrapped, so a cancelled call frees only the wrapper).
  Status HttpCall(const portico_http_call& call, portico_http_done_fn done, void* cookie) const {
    return HttpCall(call, [done, cookie](const HttpResponse& r, const HttpView& view) {
      return done(cookie, r.status, Str(r.headers), Str(r.body), view.raw());
    });
  }
  // State returns this request's state (what Filter::NewState made), or nullptr.
  template <typename T>
  T* State() const {
    if (raw_ == nullptr || !PORTICO_HAS_FIELD(raw_, portico_filter_host, request_state))
      return nullptr;
    return static_cast<T*>(static_cast<RequestState*>(raw_->request_state));
  }

  static portico_filter_status CallDoneTrampoline(void* cookie, int status, portico_str headers,
                                                  portico_str body,
                                                  const portico_http_view* view) noexcept {
    std::unique_ptr<CallCookie> owned(static_cast<CallCookie*>(cookie));
    try {
      return owned->done(HttpResponse{status, View(headers), View(body)}, HttpView(view));
    } catch (...) {
      return PORTICO_FILTER_ERROR;
    }
  }
  void Log(portico_log_level level, std::string_view message) const {
    if (raw_ != nullptr && raw_->log != nullptr) raw_->log(raw_->host, level, Str(message));
  }
  // NowMonotonicMs is the host's monotonic clock in milliseconds (ABI 1.3; the fake host's fake
  // clock under test). Against an older host it falls back to std::chrono::steady_clock.
  int64_t NowMonotonicMs() const {
    if (raw_ != nullptr && PORTICO_HAS_FIELD(raw_, portico_filter_host, now_monotonic_ms) &&
        raw_->now_monotonic_ms != nullptr) {
      return raw_->now_monotonic_ms(raw_->host);
    }
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

 private:
  const portico_filter_host* raw_;
};

// Filter is one configured filter instance; override the hooks you need.
class Filter {
 public:
  virtual ~Filter() = default;
  virtual portico_filter_status OnRequest(const HttpView& request, const FilterHost& host) {
    return PORTICO_FILTER_CONTINUE;
  }
  virtual portico_filter_status OnResponse(const HttpView& response, const FilterHost& host) {
    return PORTICO_FILTER_CONTINUE;
  }
  // ABI 1.2 hooks.
  virtual portico_filter_status OnUpstreamRequest(const HttpView& request, const FilterHost& host) {
    return PORTICO_FILTER_CONTINUE;
  }
  virtual void OnLog(const HttpView& request, const FilterHost& host) {}
  // NewState makes the state of one request (nullptr: none); FilterHost::State reads it.
  virtual std::unique_ptr<RequestState> NewState() { return nullptr; }
};

// FilterFactory builds a Filter from its config (the referenced object's synced view).
using FilterFactory = std::function<StatusOr<std::unique_ptr<Filter>>(std::string_view config)>;

// FilterTypeSpec describes a filter type a plugin provides.
struct FilterTypeSpec {
  std::string name;
  portico_filter_phase phase = PORTICO_PHASE_TRANSFORM;
  int32_t order = 0;
  FilterFactory factory;
};

}  // namespace portico::sdk

#endif  // PORTICO_SDK_FILTER_H_
