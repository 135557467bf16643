// support.h: which HTTPRoute features Portico's gateways implement. A rule using a feature they
// do not is invalid and dropped: the route stays Accepted with PartiallyInvalid=True (reason
// UnsupportedValue, message "Dropped Rule ...") when other rules remain, and is
// Accepted=False/UnsupportedValue when no rule remains (the Gateway API's "drop rules"
// approach). Unsupported today: the ExternalAuth filter, rule retry and sessionPersistence.
// Supported: path (Exact, PathPrefix, RegularExpression), header, query and method matches,
// RequestHeaderModifier, ResponseHeaderModifier, RequestRedirect, URLRewrite, RequestMirror,
// CORS, ExtensionRef filters, timeouts, weights.
// Threading: pure functions.
#ifndef PORTICO_PLUGINS_HTTPROUTE_SUPPORT_H_
#define PORTICO_PLUGINS_HTTPROUTE_SUPPORT_H_

#include <optional>
#include <string>

#include "portico/sdk/json.h"

namespace portico::plugins::httproute {

// UnsupportedFeature names the first feature of a normalized rule Portico does not implement.
std::optional<std::string> UnsupportedFeature(const rapidjson::Value& rule);

}  // namespace portico::plugins::httproute

#endif  // PORTICO_PLUGINS_HTTPROUTE_SUPPORT_H_
