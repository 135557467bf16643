// filter.h: the request-path C++ API: HttpView, FilterHost and the Filter base class (Pingora
// style: one phase interface whose hooks default to "continue").
//
// Threading: a Filter instance is created off the request path and then used by every worker
// concurrently; hooks must be thread-safe and must not block (use FilterHost::HttpCall and
// return kPending). An HttpView is valid only during the hook.
#ifndef PORTICO_SDK_FILTER_H_
#define PORTICO_SDK_FILTER_H_

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

 private:
  const portico_http_view* raw_;
};

// FilterHost gives a filter the host's request-path services.
class FilterHost {
 public:
  explicit FilterHost(const portico_filter_host* raw) : raw_(raw) {}
  Status HttpCall(const portico_http_call& call, portico_http_done_fn done, void* cookie) const {
    if (raw_ == nullptr || raw_->http_call == nullptr) return UnimplementedError("host has no http_call");
    portico_code code = raw_->http_call(raw_->host, &call, done, cookie);
    return code == PORTICO_OK ? OkStatus() : Status(static_cast<portico::StatusCode>(code), "http_call failed");
  }
  void Log(portico_log_level level, std::string_view message) const {
    if (raw_ != nullptr && raw_->log != nullptr) raw_->log(raw_->host, level, Str(message));
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
