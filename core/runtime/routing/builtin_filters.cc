// builtin_filters.cc: see builtin_filters.h.
#include "core/runtime/routing/builtin_filters.h"

#include <string>

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
  std::string_view scheme = redirect.scheme.empty() ? std::string_view("http") : redirect.scheme;
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
    case FilterKind::kBinding:
      return std::make_shared<BindingFilter>(std::move(spec));
  }
  return nullptr;
}

const FilterSpec* SpecOf(const filter::HttpFilter& filter) {
  const auto* builtin = dynamic_cast<const BuiltinFilter*>(&filter);
  return builtin != nullptr ? &builtin->spec() : nullptr;
}

}  // namespace portico::core::routing
