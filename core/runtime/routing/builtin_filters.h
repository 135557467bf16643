// builtin_filters.h: the Gateway API's built-in HTTPRoute filters as HttpFilters of the one
// filter chain (core/runtime/filter/http_filter.h): RequestHeaderModifier,
// ResponseHeaderModifier, URLRewrite, RequestRedirect, RequestMirror, CORS, and the binding
// filter that runs a plugin filter (filter_binding.v1) in its rule's place. MakeBuiltinFilter
// builds one from its parsed FilterSpec (route_types.h) when the route table compiles a rule.
//
// Threading and ownership: as every HttpFilter (immutable, shared by all workers; owned by the
// route table's compiled rule).
#ifndef PORTICO_CORE_RUNTIME_ROUTING_BUILTIN_FILTERS_H_
#define PORTICO_CORE_RUNTIME_ROUTING_BUILTIN_FILTERS_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/runtime/filter/http_filter.h"
#include "core/runtime/routing/route_types.h"

namespace portico::core::routing {

// BuiltinFilter is a built-in filter; spec() is the configuration it was built from.
class BuiltinFilter : public filter::HttpFilter {
 public:
  explicit BuiltinFilter(FilterSpec spec) : spec_(std::move(spec)) {}
  const FilterSpec& spec() const { return spec_; }

 protected:
  const FilterSpec spec_;
};

// MakeBuiltinFilter builds the filter `spec` describes.
std::shared_ptr<const filter::HttpFilter> MakeBuiltinFilter(FilterSpec spec);

// SpecOf returns the FilterSpec of a built-in filter, or nullptr for other filters.
const FilterSpec* SpecOf(const filter::HttpFilter& filter);

// ReplacePrefix rewrites `path` whose matched prefix is `prefix` (Gateway API
// ReplacePrefixMatch: segment-wise; a "/" replacement does not double slashes).
void ReplacePrefix(std::string_view path, std::string_view prefix, std::string_view replacement,
                   std::string* out);

// RedirectLocation is the Location of `redirect` for the request `ctx` describes.
std::string RedirectLocation(const Redirect& redirect, const filter::FilterContext& ctx);

// ParseCorsOrigin parses an allowOrigins entry "scheme://host[:port]" (`*` allowed in the host;
// not the lone "*", which is CorsPolicy::any_origin); nullopt when it is not of that form.
std::optional<CorsOrigin> ParseCorsOrigin(std::string_view origin);

// CorsOriginAllowed: a request's Origin header value is one `policy` allows. Allocation-free.
bool CorsOriginAllowed(const CorsPolicy& policy, std::string_view origin);

}  // namespace portico::core::routing

#endif  // PORTICO_CORE_RUNTIME_ROUTING_BUILTIN_FILTERS_H_
