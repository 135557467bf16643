// plugin_filter.cc: see plugin_filter.h.
#include "core/runtime/filter/plugin_filter.h"

#include <spdlog/spdlog.h>

#include <charconv>
#include <chrono>
#include <list>
#include <string>
#include <utility>
#include <vector>

namespace portico::core::filter {
namespace {

std::string_view View(portico_str s) { return {s.ptr != nullptr ? s.ptr : "", s.len}; }
portico_str Str(std::string_view s) { return {s.data(), s.size()}; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// FormDecode decodes a query component ('+' is a space; a malformed escape stays as it is).
std::string FormDecode(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '+') {
      out.push_back(' ');
    } else if (in[i] == '%' && i + 2 < in.size() && HexValue(in[i + 1]) >= 0 &&
               HexValue(in[i + 2]) >= 0) {
      out.push_back(static_cast<char>(HexValue(in[i + 1]) * 16 + HexValue(in[i + 2])));
      i += 2;
    } else {
      out.push_back(in[i]);
    }
  }
  return out;
}

// ViewHost backs one portico_http_view for one hook (or completion) call.
struct ViewHost {
  FilterContext* ctx;
  Side side;
  std::list<std::string> strings;  // stable storage for what the view returns (no allocation
                                   // while empty, unlike a deque: one ViewHost per hook call)
  bool responded = false;
  int reply_status = 0;
  std::string reply_body;
  std::vector<std::pair<std::string, std::string>> reply_headers;
};

ViewHost& VH(void* host) { return *static_cast<ViewHost*>(host); }

portico_http_view MakeView(ViewHost* vh) {
  portico_http_view v{};
  v.struct_size = sizeof(v);
  v.host = vh;
  v.method = [](void* h) { return Str(VH(h).ctx->method()); };
  v.path = [](void* h) {
    ViewHost& vh = VH(h);
    if (vh.ctx->query().empty()) return Str(vh.ctx->path());
    std::string& s = vh.strings.emplace_back(vh.ctx->path());
    s.push_back('?');
    s.append(vh.ctx->query());
    return Str(s);
  };
  v.authority = [](void* h) { return Str(VH(h).ctx->host()); };
  v.status = [](void* h) { return VH(h).ctx->response_status(); };
  v.header = [](void* h, portico_str name, size_t n, portico_str* value) {
    ViewHost& vh = VH(h);
    std::optional<std::string_view> found = vh.ctx->Header(vh.side, View(name), n);
    if (!found) return 0;
    *value = Str(*found);
    return 1;
  };
  v.set_header = [](void* h, portico_str name, portico_str value) {
    VH(h).ctx->SetHeader(VH(h).side, View(name), View(value));
  };
  v.add_header = [](void* h, portico_str name, portico_str value) {
    VH(h).ctx->AddHeader(VH(h).side, View(name), View(value));
  };
  v.remove_header = [](void* h, portico_str name) {
    VH(h).ctx->RemoveHeader(VH(h).side, View(name));
  };
  v.set_path = [](void* h, portico_str path) {
    std::string_view p = View(path);
    VH(h).ctx->SetPath(p.substr(0, p.find('?')));
  };
  v.set_authority = [](void* h, portico_str authority) {
    VH(h).ctx->SetUpstreamHost(View(authority));
  };
  v.respond = [](void* h, int status, portico_str body) {
    ViewHost& vh = VH(h);
    vh.responded = true;
    vh.reply_status = status;
    vh.reply_body.assign(View(body));
  };
  v.header_count = [](void* h) { return VH(h).ctx->HeaderCount(VH(h).side); };
  v.header_at = [](void* h, size_t i, portico_str* name, portico_str* value) {
    ViewHost& vh = VH(h);
    if (i >= vh.ctx->HeaderCount(vh.side)) return 0;
    auto [n, val] = vh.ctx->HeaderAt(vh.side, i);
    *name = Str(n);
    *value = Str(val);
    return 1;
  };
  v.query = [](void* h) { return Str(VH(h).ctx->query()); };
  v.query_param = [](void* h, portico_str name, size_t n, portico_str* value) {
    ViewHost& vh = VH(h);
    std::string_view query = vh.ctx->query();
    const std::string_view wanted = View(name);
    while (!query.empty()) {
      const size_t amp = query.find('&');
      std::string_view pair = query.substr(0, amp);
      query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
      const size_t eq = pair.find('=');
      if (FormDecode(pair.substr(0, eq)) != wanted) continue;
      if (n-- > 0) continue;
      std::string& s = vh.strings.emplace_back(
          eq == std::string_view::npos ? std::string() : FormDecode(pair.substr(eq + 1)));
      *value = Str(s);
      return 1;
    }
    return 0;
  };
  v.client_address = [](void* h) { return Str(VH(h).ctx->client_address()); };
  v.route = [](void* h) { return Str(VH(h).ctx->route_key()); };
  v.rule_name = [](void* h) { return Str(VH(h).ctx->rule_name()); };
  v.reply_header = [](void* h, portico_str name, portico_str value) {
    VH(h).reply_headers.emplace_back(std::string(View(name)), std::string(View(value)));
  };
  return v;
}

// ParseUrl splits "http://ip:port/path?query" (IPv6 in brackets). False when malformed.
bool ParseUrl(std::string_view url, OutboundRequest* out, std::string* error) {
  constexpr std::string_view kHttp = "http://";
  if (url.substr(0, kHttp.size()) != kHttp) {
    *error = url.substr(0, 8) == "https://" ? "https targets are not supported yet"
                                            : "url must start with http://";
    return false;
  }
  url.remove_prefix(kHttp.size());
  const size_t slash = url.find_first_of("/?");
  std::string_view authority = url.substr(0, slash);
  out->target = slash == std::string_view::npos ? "/" : std::string(url.substr(slash));
  if (!out->target.empty() && out->target.front() == '?') out->target.insert(0, "/");
  std::string_view host = authority;
  std::string_view port = "80";
  if (!authority.empty() && authority.front() == '[') {
    const size_t end = authority.find(']');
    if (end == std::string_view::npos) return *error = "unclosed '[' in url", false;
    host = authority.substr(1, end - 1);
    if (end + 1 < authority.size()) {
      if (authority[end + 1] != ':') return *error = "junk after ']' in url", false;
      port = authority.substr(end + 2);
    }
  } else if (size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535) {
    return *error = "bad port in url", false;
  }
  out->address.assign(host);
  out->port = static_cast<uint16_t>(value);
  out->host.assign(authority);
  return true;
}

// ParseHeaderLines reads "Name: value\r\n" lines.
void ParseHeaderLines(std::string_view lines,
                      std::vector<std::pair<std::string, std::string>>* out) {
  while (!lines.empty()) {
    size_t end = lines.find('\n');
    std::string_view line = lines.substr(0, end);
    lines = end == std::string_view::npos ? std::string_view() : lines.substr(end + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) continue;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    out->emplace_back(std::string(line.substr(0, colon)), std::string(value));
  }
}

}  // namespace

// RequestData is a PluginFilter's state for one request.
struct PluginFilter::RequestData final : CallDone {
  const PluginFilter* filter = nullptr;
  FilterContext* ctx = nullptr;
  void* plugin_state = nullptr;
  portico_http_done_fn done = nullptr;
  void* cookie = nullptr;
  bool in_call = false;

  FilterResult OnCallDone(const OutboundResponse& response) override;
  // Finish turns a plugin's answer into the chain's.
  FilterResult Finish(portico_filter_status status, ViewHost& vh);
};

namespace {

struct CallHost {
  ViewHost* view;
  PluginFilter::RequestData* data;
};

portico_filter_host MakeHost(CallHost* ch) {
  portico_filter_host h{};
  h.struct_size = sizeof(h);
  h.host = ch;
  h.request_state = ch->data->plugin_state;
  h.http_call = [](void* host, const portico_http_call* call, portico_http_done_fn done,
                   void* cookie) -> portico_code {
    auto* ch = static_cast<CallHost*>(host);
    PluginFilter::RequestData& data = *ch->data;
    if (call == nullptr || done == nullptr) return PORTICO_INVALID_ARGUMENT;
    if (data.in_call) return PORTICO_FAILED_PRECONDITION;
    OutboundRequest request;
    std::string error;
    const bool has_backend =
        PORTICO_HAS_FIELD(call, portico_http_call, backend) && call->backend.len > 0;
    if (has_backend) {
      request.backend_key.assign(View(call->backend));
      std::string_view url = View(call->url);
      request.target = url.empty() ? "/" : std::string(url);
    } else if (!ParseUrl(View(call->url), &request, &error)) {
      data.ctx->Log(2, "http_call: " + error);
      return PORTICO_INVALID_ARGUMENT;
    }
    request.method = call->method.len > 0 ? std::string(View(call->method)) : "GET";
    ParseHeaderLines(View(call->headers), &request.headers);
    request.body.assign(View(call->body));
    if (call->timeout_ms > 0) request.timeout_ms = static_cast<uint64_t>(call->timeout_ms);
    data.done = done;
    data.cookie = cookie;
    data.in_call = true;
    if (!data.ctx->HttpCall(std::move(request), &data)) {
      data.in_call = false;
      return PORTICO_UNAVAILABLE;
    }
    return PORTICO_OK;
  };
  h.log = [](void* host, portico_log_level level, portico_str message) {
    static_cast<CallHost*>(host)->data->ctx->Log(static_cast<int>(level), View(message));
  };
  h.now_monotonic_ms = [](void*) -> int64_t {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  return h;
}

}  // namespace

FilterResult PluginFilter::RequestData::Finish(portico_filter_status status, ViewHost& vh) {
  switch (status) {
    case PORTICO_FILTER_CONTINUE:
      if (!vh.responded) return FilterResult::kContinue;
      [[fallthrough]];
    case PORTICO_FILTER_RESPOND:
      if (!vh.responded) {
        ctx->Respond(500, "filter failed", {}, "filter_respond_without_response");
        return FilterResult::kRespond;
      }
      ctx->Respond(vh.reply_status, vh.reply_body, vh.reply_headers, "filter_respond");
      return FilterResult::kRespond;
    case PORTICO_FILTER_PENDING:
      if (in_call) return FilterResult::kPending;
      ctx->Respond(500, "filter failed", {}, "filter_pending_without_call");
      return FilterResult::kRespond;
    default:
      ctx->Respond(500, "filter failed", {}, "filter_error");
      return FilterResult::kRespond;
  }
}

FilterResult PluginFilter::RequestData::OnCallDone(const OutboundResponse& response) {
  in_call = false;
  std::string lines;
  for (const auto& [name, value] : response.headers) {
    lines.append(name).append(": ").append(value).append("\r\n");
  }
  const std::string_view body = response.status == 0 ? response.error : response.body;
  ViewHost vh{ctx, Side::kRequest};
  portico_http_view view = MakeView(&vh);
  portico_http_done_fn fn = done;
  done = nullptr;
  const portico_filter_status status = fn(cookie, response.status, Str(lines), Str(body), &view);
  cookie = nullptr;
  return Finish(status, vh);
}

StatusOr<std::shared_ptr<const PluginFilter>> PluginFilter::Create(const FilterTypeInfo& type,
                                                                   std::string_view config) {
  void* instance = nullptr;
  std::string error;
  portico_sink sink{sizeof(portico_sink), &error, [](void* host, portico_str bytes) {
                      static_cast<std::string*>(host)->append(View(bytes));
                    }};
  portico_code code = type.create(type.user, Str(config), &instance, &sink);
  if (code != PORTICO_OK) {
    return Status(static_cast<StatusCode>(code),
                  "filter type " + type.name + " refused its configuration: " +
                      (error.empty() ? std::string("no reason given") : error));
  }
  return std::make_shared<const PluginFilter>(type, instance);
}

PluginFilter::~PluginFilter() {
  if (type_.destroy != nullptr) type_.destroy(type_.user, instance_);
}

PluginFilter::RequestData& PluginFilter::Data(FilterContext& ctx, FilterSlot& slot) const {
  if (!slot.created) {
    auto* data = new RequestData();
    data->filter = this;
    data->ctx = &ctx;
    if (type_.request_create != nullptr) data->plugin_state = type_.request_create(instance_);
    slot.state = data;
    slot.created = true;
  }
  return *static_cast<RequestData*>(slot.state);
}

FilterResult PluginFilter::Call(Hook hook, Side side, FilterContext& ctx, FilterSlot& slot) const {
  RequestData& data = Data(ctx, slot);
  if (hook == nullptr) return FilterResult::kContinue;
  ViewHost vh{&ctx, side};
  portico_http_view view = MakeView(&vh);
  CallHost ch{&vh, &data};
  portico_filter_host host = MakeHost(&ch);
  return data.Finish(hook(instance_, &view, &host), vh);
}

FilterResult PluginFilter::OnRequestHead(FilterContext& ctx, FilterSlot& slot) const {
  return Call(type_.on_request, Side::kRequest, ctx, slot);
}

FilterResult PluginFilter::OnUpstreamRequest(FilterContext& ctx, FilterSlot& slot) const {
  return Call(type_.on_upstream_request, Side::kRequest, ctx, slot);
}

namespace {

// Notify runs a hook whose answer does not matter (the response is on its way, or the exchange
// ended: a local reply or another call is no longer possible).
template <typename Fn>
void Notify(Fn hook, void* instance, PluginFilter::RequestData& data, Side side,
            FilterContext& ctx) {
  ViewHost vh{&ctx, side};
  portico_http_view view = MakeView(&vh);
  CallHost ch{&vh, &data};
  portico_filter_host host = MakeHost(&ch);
  hook(instance, &view, &host);
}

}  // namespace

void PluginFilter::OnResponseHead(FilterContext& ctx, FilterSlot& slot) const {
  if (type_.on_response != nullptr) {
    Notify(type_.on_response, instance_, Data(ctx, slot), Side::kResponse, ctx);
  }
}

void PluginFilter::OnLog(FilterContext& ctx, FilterSlot& slot) const {
  if (type_.on_log != nullptr)
    Notify(type_.on_log, instance_, Data(ctx, slot), Side::kRequest, ctx);
}

void PluginFilter::CancelCall(FilterContext& ctx, FilterSlot& slot) const {
  if (!slot.created) return;
  RequestData& data = *static_cast<RequestData*>(slot.state);
  if (!data.in_call) return;
  data.in_call = false;
  if (type_.cancel != nullptr) type_.cancel(instance_, data.plugin_state, data.cookie);
  data.cookie = nullptr;
  data.done = nullptr;
}

void PluginFilter::OnRequestEnd(FilterContext& ctx, FilterSlot& slot) const {
  if (!slot.created) return;
  CancelCall(ctx, slot);
  auto* data = static_cast<RequestData*>(slot.state);
  if (type_.request_destroy != nullptr) type_.request_destroy(instance_, data->plugin_state);
  delete data;
  slot.state = nullptr;
  slot.created = false;
}

}  // namespace portico::core::filter
