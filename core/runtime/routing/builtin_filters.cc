// builtin_filters.cc: see builtin_filters.h.
#include "core/runtime/routing/builtin_filters.h"

#include <string>
#include <utility>
#include <vector>

namespace portico::core::routing {
namespace {

using filter::FilterContext;
using filter::FilterResult;
using filter::FilterSlot;
using filter::Side;

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

std::string_view StripPort(std::string_view host) {
  if (!host.empty() && host.front() == '[') {
    size_t end = host.find(']');
    return end == std::string_view::npos ? host : host.substr(0, end + 1);
  }
  size_t colon = host.rfind(':');
  return colon == std::string_view::npos ? host : host.substr(0, colon);
}

// ApplyHeaderOps applies a header modifier to `side`. On the request side a set or add of
// "Host" replaces the Host sent upstream instead.
void ApplyHeaderOps(const HeaderOps& ops, Side side, FilterContext& ctx) {
  const bool request = side == Side::kRequest;
  for (const auto& [name, value] : ops.set) {
    if (request && EqualsIgnoreCase(name, "host")) {
      ctx.SetUpstreamHost(value);
    } else {
      ctx.SetHeader(side, name, value, /*stable=*/true);
    }
  }
  for (const auto& [name, value] : ops.add) {
    if (request && EqualsIgnoreCase(name, "host")) {
      ctx.SetUpstreamHost(value);
    } else {
      ctx.AddHeader(side, name, value, /*stable=*/true);
    }
  }
  for (const std::string& name : ops.remove) ctx.RemoveHeader(side, name);
}

class RequestHeadersFilter final : public BuiltinFilter {
 public:
  using BuiltinFilter::BuiltinFilter;
  FilterResult OnRequestHead(FilterContext& ctx, FilterSlot&) const override {
    ApplyHeaderOps(spec_.headers, Side::kRequest, ctx);
    return FilterResult::kContinue;
  }
  std::string_view name() const override { return "RequestHeaderModifier"; }
};

class ResponseHeadersFilter final : public BuiltinFilter {
 public:
  using BuiltinFilter::BuiltinFilter;
  void OnResponseHead(FilterContext& ctx, FilterSlot&) const override {
    ApplyHeaderOps(spec_.headers, Side::kResponse, ctx);
  }
  std::string_view name() const override { return "ResponseHeaderModifier"; }
};

class UrlRewriteFilter final : public BuiltinFilter {
 public:
  using BuiltinFilter::BuiltinFilter;
  FilterResult OnRequestHead(FilterContext& ctx, FilterSlot&) const override {
    const UrlRewrite& rewrite = spec_.rewrite;
    if (rewrite.hostname.has_value()) ctx.SetUpstreamHost(*rewrite.hostname);
    if (rewrite.path_type == PathModifierType::kReplaceFullPath) {
      ctx.SetPath(rewrite.path_value);
    } else if (rewrite.path_type == PathModifierType::kReplacePrefixMatch) {
      std::string path;
      ReplacePrefix(ctx.path(), ctx.matched_prefix(), rewrite.path_value, &path);
      ctx.SetPath(path);
    }
    return FilterResult::kContinue;
  }
  std::string_view name() const override { return "URLRewrite"; }
};

class RedirectFilter final : public BuiltinFilter {
 public:
  using BuiltinFilter::BuiltinFilter;
  FilterResult OnRequestHead(FilterContext& ctx, FilterSlot&) const override {
    const int status = spec_.redirect.status_code != 0 ? spec_.redirect.status_code : 302;
    ctx.Respond(status, {}, {{"Location", RedirectLocation(spec_.redirect, ctx)}}, {});
    return FilterResult::kRespond;
  }
  std::string_view name() const override { return "RequestRedirect"; }
};

class MirrorFilter final : public BuiltinFilter {
 public:
  using BuiltinFilter::BuiltinFilter;
  FilterResult OnRequestHead(FilterContext& ctx, FilterSlot&) const override {
    if (!spec_.mirror_key.empty() && ctx.Roll(spec_.mirror_percent)) ctx.Mirror(spec_.mirror_key);
    return FilterResult::kContinue;
  }
  std::string_view name() const override { return "RequestMirror"; }
};

// OriginParts is an origin split into views: "scheme://host[:port]", the port defaulted by
// scheme (http 80, https 443, other schemes 0).
struct OriginParts {
  std::string_view scheme;
  std::string_view host;
  uint32_t port = 0;
};

// SplitOrigin splits `origin`; false when it is not "scheme://host[:port]" (an opaque origin
// such as "null", a path, credentials, a bad port). A `pattern` (an allowOrigins entry) is held
// only to the CRD's syntax (a host of anything but ":/?#"): an odd one then matches nothing,
// rather than refusing a route the API accepted; `*` in its host is the wildcard.
bool SplitOrigin(std::string_view origin, bool pattern, OriginParts* out) {
  const size_t sep = origin.find("://");
  if (sep == std::string_view::npos || sep == 0) return false;
  out->scheme = origin.substr(0, sep);
  for (char c : out->scheme) {
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!alpha && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.') return false;
  }
  std::string_view rest = origin.substr(sep + 3);
  std::string_view port;
  if (!rest.empty() && rest.front() == '[') {  // an IPv6 literal
    const size_t end = rest.find(']');
    if (end == std::string_view::npos) return false;
    out->host = rest.substr(0, end + 1);
    rest.remove_prefix(end + 1);
    if (!rest.empty() && rest.front() != ':') return false;
    if (!rest.empty()) port = rest.substr(1);
    if (rest.size() == 1) return false;
  } else {
    const size_t colon = rest.rfind(':');
    out->host = rest.substr(0, colon);
    if (colon != std::string_view::npos) {
      port = rest.substr(colon + 1);
      if (port.empty()) return false;
    }
  }
  if (out->host.empty()) return false;
  for (char c : out->host) {
    if (c == '/' || c == '?' || c == '#' || (c == ':' && out->host.front() != '[')) return false;
    if (!pattern &&
        (static_cast<unsigned char>(c) <= ' ' || c == 0x7f || c == '@' || c == '\\' || c == '*')) {
      return false;
    }
  }
  if (EqualsIgnoreCase(out->scheme, "http")) {
    out->port = 80;
  } else if (EqualsIgnoreCase(out->scheme, "https")) {
    out->port = 443;
  } else {
    out->port = 0;
  }
  if (!port.empty()) {
    if (port.size() > 5) return false;
    uint32_t value = 0;
    for (char c : port) {
      if (c < '0' || c > '9') return false;
      value = value * 10 + static_cast<uint32_t>(c - '0');
    }
    if (value == 0 || value > 65535) return false;
    out->port = value;
  }
  return true;
}

char LowerChar(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// HostMatches matches `host` against a lower-case `pattern` whose every `*` stands for one or
// more characters (dots included: "*.bar.com" takes "a.b.bar.com", not "bar.com"). A mismatch
// backtracks to the last `*` only, as glob matchers do: O(pattern x host) at worst, no recursion.
bool HostMatches(std::string_view pattern, std::string_view host) {
  size_t p = 0, i = 0;
  size_t star = std::string_view::npos, resume = 0;
  while (i < host.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = ++i;  // the `*` takes at least this character
    } else if (p < pattern.size() && pattern[p] == LowerChar(host[i])) {
      ++p;
      ++i;
    } else if (star != std::string_view::npos) {
      p = star + 1;  // the last `*` takes one more character
      i = ++resume;
    } else {
      return false;
    }
  }
  return p == pattern.size();
}

// CorsState is an allowed CORS request's state between its head and its response head (the
// request's headers are gone by then): the origin to echo. FilterSlot::created marks an allowed
// request; state is a CorsState only when the origin is echoed (not for a bare "*").
struct CorsState {
  std::string origin;
};

// AddVary adds `token` to the response's Vary unless it is there already (or Vary is "*").
void AddVary(FilterContext& ctx, std::string_view token) {
  for (size_t n = 0;; ++n) {
    std::optional<std::string_view> vary = ctx.Header(Side::kResponse, "vary", n);
    if (!vary) break;
    std::string_view rest = *vary;
    while (!rest.empty()) {
      size_t comma = rest.find(',');
      std::string_view item = rest.substr(0, comma);
      while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
      while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
      if (item == "*" || EqualsIgnoreCase(item, token)) return;
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  ctx.AddHeader(Side::kResponse, "Vary", token, /*stable=*/true);
}

// AllValues joins every value of request header `name` with ", " (a list header may come as
// several lines).
std::string AllValues(const FilterContext& ctx, std::string_view name) {
  std::string out;
  for (size_t n = 0;; ++n) {
    std::optional<std::string_view> v = ctx.Header(Side::kRequest, name, n);
    if (!v) break;
    if (v->empty()) continue;
    if (!out.empty()) out.append(", ");
    out.append(*v);
  }
  return out;
}

// CorsFilter is the Gateway API CORS filter (HTTPCORSFilter). A preflight (OPTIONS with Origin
// and Access-Control-Request-Method) is answered here: 200 with the Access-Control-Allow-*
// headers when the origin is allowed, 403 without them when it is not (the Gateway API allows a
// 200 without the headers or a 403: the 403 says plainly, also in the access log, that the
// gateway refused it; either way the backend never sees it). An actual request from an allowed
// origin goes on and its response gets Access-Control-Allow-Origin (the origin, or "*" when
// allowOrigins is "*" without credentials), -Allow-Credentials and -Expose-Headers; the backend's
// own values for those are replaced. The "*" wildcards of methods, headers and exposed headers are
// not wildcards for credentialed requests (Fetch), so with allowCredentials the request's own
// method, headers, and the response's header names are written instead. Whenever the answer
// depends on the Origin, Vary names it.
class CorsFilter final : public BuiltinFilter {
 public:
  using BuiltinFilter::BuiltinFilter;

  FilterResult OnRequestHead(FilterContext& ctx, FilterSlot& slot) const override {
    const CorsPolicy& policy = *spec_.cors;
    std::optional<std::string_view> origin = ctx.Header(Side::kRequest, "origin");
    if (!origin || origin->empty()) return FilterResult::kContinue;  // not a CORS request
    const bool allowed = CorsOriginAllowed(policy, *origin);
    std::optional<std::string_view> method =
        ctx.Header(Side::kRequest, "access-control-request-method");
    if (ctx.method() == "OPTIONS" && method && !method->empty()) {
      Preflight(ctx, *origin, *method, allowed);
      return FilterResult::kRespond;
    }
    if (!allowed) return FilterResult::kContinue;
    slot.created = true;
    if (EchoesOrigin()) slot.state = new CorsState{std::string(*origin)};
    return FilterResult::kContinue;
  }

  void OnResponseHead(FilterContext& ctx, FilterSlot& slot) const override {
    const CorsPolicy& policy = *spec_.cors;
    // The names "*" stands for are the backend's, taken before this filter adds its own.
    std::string exposed;
    const bool name_exposed = slot.created && policy.allow_credentials && policy.expose_any;
    if (name_exposed) exposed = ResponseHeaderNames(ctx);
    if (EchoesOrigin()) AddVary(ctx, "Origin");
    if (!slot.created) return;
    if (const auto* state = static_cast<const CorsState*>(slot.state)) {
      ctx.SetHeader(Side::kResponse, "Access-Control-Allow-Origin", state->origin);
    } else {
      ctx.SetHeader(Side::kResponse, "Access-Control-Allow-Origin", "*", /*stable=*/true);
    }
    if (policy.allow_credentials) {
      ctx.SetHeader(Side::kResponse, "Access-Control-Allow-Credentials", "true", /*stable=*/true);
    }
    if (name_exposed) {
      if (!exposed.empty()) {
        ctx.SetHeader(Side::kResponse, "Access-Control-Expose-Headers", exposed);
      }
    } else if (!policy.expose_headers.empty()) {
      ctx.SetHeader(Side::kResponse, "Access-Control-Expose-Headers", policy.expose_headers,
                    /*stable=*/true);
    }
  }

  void OnRequestEnd(FilterContext&, FilterSlot& slot) const override {
    delete static_cast<CorsState*>(slot.state);
    slot.state = nullptr;
    slot.created = false;
  }

  std::string_view name() const override { return "CORS"; }

 private:
  // EchoesOrigin: Access-Control-Allow-Origin is the request's origin, not "*": allowOrigins
  // lists origins, or credentials are allowed (a credentialed answer may not say "*").
  bool EchoesOrigin() const { return !spec_.cors->any_origin || spec_.cors->allow_credentials; }

  void Preflight(FilterContext& ctx, std::string_view origin, std::string_view method,
                 bool allowed) const {
    const CorsPolicy& policy = *spec_.cors;
    std::vector<std::pair<std::string, std::string>> headers;
    if (!allowed) {
      headers.emplace_back("Vary", "Origin");
      ctx.Respond(403, {}, headers, "cors_preflight_denied");
      return;
    }
    const bool credentials = policy.allow_credentials;
    std::string vary = EchoesOrigin() ? "Origin" : "";
    auto vary_on = [&vary](const char* name) {
      vary.append(vary.empty() ? "" : ", ").append(name);
    };
    headers.emplace_back("Access-Control-Allow-Origin", EchoesOrigin() ? origin : "*");
    if (credentials) headers.emplace_back("Access-Control-Allow-Credentials", "true");
    if (policy.any_method && credentials) {
      headers.emplace_back("Access-Control-Allow-Methods", method);
      vary_on("Access-Control-Request-Method");
    } else if (!policy.allow_methods.empty()) {
      headers.emplace_back("Access-Control-Allow-Methods", policy.allow_methods);
    }
    if (policy.any_header && credentials) {
      std::string requested = AllValues(ctx, "access-control-request-headers");
      if (!requested.empty()) headers.emplace_back("Access-Control-Allow-Headers", requested);
      vary_on("Access-Control-Request-Headers");
    } else if (!policy.allow_headers.empty()) {
      headers.emplace_back("Access-Control-Allow-Headers", policy.allow_headers);
    }
    // Browsers ignore exposed headers on a preflight, but the Gateway API conformance expects
    // them there too (as Envoy writes them on every CORS response).
    const std::string& expose =
        credentials && policy.expose_any ? policy.expose_named : policy.expose_headers;
    if (!expose.empty()) headers.emplace_back("Access-Control-Expose-Headers", expose);
    headers.emplace_back("Access-Control-Max-Age", policy.max_age);
    if (!vary.empty()) headers.emplace_back("Vary", std::move(vary));
    ctx.Respond(200, {}, headers, "cors_preflight");
  }

  // ResponseHeaderNames lists the response's header names and the named exposeHeaders, once
  // each: what "*" stands for when credentials make it literal.
  std::string ResponseHeaderNames(const FilterContext& ctx) const {
    std::string out = spec_.cors->expose_named;
    const size_t count = ctx.HeaderCount(Side::kResponse);
    for (size_t i = 0; i < count; ++i) {
      std::string_view name = ctx.HeaderAt(Side::kResponse, i).first;
      bool seen = false;
      for (size_t j = 0; j < i && !seen; ++j) {
        seen = EqualsIgnoreCase(ctx.HeaderAt(Side::kResponse, j).first, name);
      }
      if (seen || ContainsItem(spec_.cors->expose_named, name)) continue;
      out.append(out.empty() ? "" : ", ").append(name);
    }
    return out;
  }

  // ContainsItem: `list` ("a, b") holds `name` (case-insensitively).
  static bool ContainsItem(std::string_view list, std::string_view name) {
    while (!list.empty()) {
      size_t comma = list.find(", ");
      if (EqualsIgnoreCase(list.substr(0, comma), name)) return true;
      if (comma == std::string_view::npos) break;
      list.remove_prefix(comma + 2);
    }
    return false;
  }
};

// BindingFilter runs the plugin filter of a filter_binding.v1 entry, looked up in the request's
// snapshot (so a changed Webhook touches no route); a missing binding answers 500, as the
// Gateway API requires for a filter that cannot be applied.
class BindingFilter final : public BuiltinFilter {
 public:
  using BuiltinFilter::BuiltinFilter;
  FilterResult OnRequestHead(FilterContext& ctx, FilterSlot& slot) const override {
    const HttpFilter* bound = ctx.FindBinding(spec_.binding);
    if (bound == nullptr) {
      ctx.Respond(500, "filter not available", {}, "filter_binding_missing");
      return FilterResult::kRespond;
    }
    return bound->OnRequestHead(ctx, slot);
  }
  FilterResult OnUpstreamRequest(FilterContext& ctx, FilterSlot& slot) const override {
    const HttpFilter* bound = ctx.FindBinding(spec_.binding);
    return bound != nullptr ? bound->OnUpstreamRequest(ctx, slot) : FilterResult::kContinue;
  }
  void OnResponseHead(FilterContext& ctx, FilterSlot& slot) const override {
    if (const HttpFilter* bound = ctx.FindBinding(spec_.binding)) bound->OnResponseHead(ctx, slot);
  }
  void OnLog(FilterContext& ctx, FilterSlot& slot) const override {
    if (const HttpFilter* bound = ctx.FindBinding(spec_.binding)) bound->OnLog(ctx, slot);
  }
  void OnRequestEnd(FilterContext& ctx, FilterSlot& slot) const override {
    if (const HttpFilter* bound = ctx.FindBinding(spec_.binding)) bound->OnRequestEnd(ctx, slot);
  }
  void CancelCall(FilterContext& ctx, FilterSlot& slot) const override {
    if (const HttpFilter* bound = ctx.FindBinding(spec_.binding)) bound->CancelCall(ctx, slot);
  }
  std::string_view name() const override { return "ExtensionRef"; }
};

}  // namespace

void ReplacePrefix(std::string_view path, std::string_view prefix, std::string_view replacement,
                   std::string* out) {
  while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
  std::string_view rest = path.size() >= prefix.size() ? path.substr(prefix.size()) : "";
  while (!replacement.empty() && replacement.back() == '/' && !rest.empty() &&
         rest.front() == '/') {
    replacement.remove_suffix(1);
  }
  out->assign(replacement);
  out->append(rest);
  if (out->empty() || out->front() != '/') out->insert(out->begin(), '/');
}

std::string RedirectLocation(const Redirect& redirect, const FilterContext& ctx) {
  std::string location;
  // Gateway API: the scheme defaults to the request's; the port to the redirect scheme's
  // well-known port when a scheme is set, else to the listener's.
  std::string_view scheme = redirect.scheme.empty() ? ctx.scheme() : redirect.scheme;
  location.append(scheme);
  location.append("://");
  location.append(redirect.hostname.empty() ? StripPort(ctx.host()) : redirect.hostname);
  int port = redirect.port != 0 ? redirect.port : ctx.listener_port();
  if (redirect.port == 0 && !redirect.scheme.empty()) {
    port = redirect.scheme == "https" ? 443 : 80;
  }
  const bool default_port = (scheme == "http" && port == 80) || (scheme == "https" && port == 443);
  if (!default_port && port != 0) {
    location.push_back(':');
    location.append(std::to_string(port));
  }
  switch (redirect.path_modifier) {
    case PathModifierType::kReplaceFullPath:
      location.append(redirect.path_value);
      break;
    case PathModifierType::kReplacePrefixMatch: {
      std::string path;
      ReplacePrefix(ctx.path(), ctx.matched_prefix(), redirect.path_value, &path);
      location.append(path);
      break;
    }
    case PathModifierType::kNone:
      location.append(ctx.path());
      break;
  }
  if (!ctx.query().empty()) {
    location.push_back('?');
    location.append(ctx.query());
  }
  return location;
}

std::shared_ptr<const filter::HttpFilter> MakeBuiltinFilter(FilterSpec spec) {
  switch (spec.kind) {
    case FilterKind::kRequestHeaders:
      return std::make_shared<RequestHeadersFilter>(std::move(spec));
    case FilterKind::kResponseHeaders:
      return std::make_shared<ResponseHeadersFilter>(std::move(spec));
    case FilterKind::kUrlRewrite:
      return std::make_shared<UrlRewriteFilter>(std::move(spec));
    case FilterKind::kRedirect:
      return std::make_shared<RedirectFilter>(std::move(spec));
    case FilterKind::kMirror:
      return std::make_shared<MirrorFilter>(std::move(spec));
    case FilterKind::kCors:
      if (spec.cors == nullptr) spec.cors = std::make_shared<const CorsPolicy>();
      return std::make_shared<CorsFilter>(std::move(spec));
    case FilterKind::kBinding:
      return std::make_shared<BindingFilter>(std::move(spec));
  }
  return nullptr;
}

std::optional<CorsOrigin> ParseCorsOrigin(std::string_view origin) {
  OriginParts parts;
  if (!SplitOrigin(origin, /*pattern=*/true, &parts)) return std::nullopt;
  CorsOrigin out;
  out.scheme.reserve(parts.scheme.size());
  for (char c : parts.scheme) out.scheme.push_back(LowerChar(c));
  out.host.reserve(parts.host.size());
  for (char c : parts.host) out.host.push_back(LowerChar(c));
  out.port = parts.port;
  return out;
}

bool CorsOriginAllowed(const CorsPolicy& policy, std::string_view origin) {
  if (policy.any_origin) return true;
  OriginParts parts;
  if (!SplitOrigin(origin, /*pattern=*/false, &parts)) return false;
  for (const CorsOrigin& allowed : policy.origins) {
    if (allowed.port == parts.port && EqualsIgnoreCase(allowed.scheme, parts.scheme) &&
        HostMatches(allowed.host, parts.host)) {
      return true;
    }
  }
  return false;
}

const FilterSpec* SpecOf(const filter::HttpFilter& filter) {
  const auto* builtin = dynamic_cast<const BuiltinFilter*>(&filter);
  return builtin != nullptr ? &builtin->spec() : nullptr;
}

}  // namespace portico::core::routing
