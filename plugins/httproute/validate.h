// validate.h: the cross-field rules of an HTTPRoute spec that its JSON Schema cannot express:
// the Gateway API CRD's CEL rules (same-parent references, unique rule names, total match
// count, path values, filter/type consistency, filter repetition and exclusivity, redirects
// without backends, ReplacePrefixMatch with exactly one PathPrefix match, Service ports,
// mirror percent/fraction, timeouts) plus syntax the CRD expresses with patterns (hostnames,
// header and query parameter names, durations), re-checked so a schema-less host is safe too.
//
// Errors name the field ("spec.rules[0].matches[1].path.value: ..."); the caller prefixes the
// object. Validation runs on the spec as written, before defaults (normalize.h).
// Threading: pure functions.
#ifndef PORTICO_PLUGINS_HTTPROUTE_VALIDATE_H_
#define PORTICO_PLUGINS_HTTPROUTE_VALIDATE_H_

#include <string>

#include "portico/sdk/json.h"
#include "portico/sdk/status.h"

namespace portico::plugins::httproute {

inline constexpr char kGroup[] = "gateway.networking.k8s.io";

// ValidateRoute checks a whole HTTPRoute spec.
Status ValidateRoute(const rapidjson::Value& spec);

// ValidateFilters checks one filter list (a rule's or a backendRef's); `rule` is the enclosing
// rule, for the rules that relate filters to matches and backends.
Status ValidateFilters(const rapidjson::Value& filters, const rapidjson::Value& rule,
                       const std::string& field, bool backend_level);

// ValidateBackendRef checks one backendRef (also a mirror's); `weighted` allows "weight".
Status ValidateBackendRef(const rapidjson::Value& ref, const std::string& field);

}  // namespace portico::plugins::httproute

#endif  // PORTICO_PLUGINS_HTTPROUTE_VALIDATE_H_
