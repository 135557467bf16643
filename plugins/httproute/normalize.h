// normalize.h: the Gateway API defaults of an HTTPRoute, which a Kubernetes API server would
// apply from the CRD and a standalone controller must apply itself: parentRefs group/kind/
// namespace; rules default to one PathPrefix "/" match; match path, header and query types;
// backendRef group/kind/namespace/weight; mirror backendRef defaults; redirect statusCode 302.
// The synced view carries the normalised spec, so gateways never re-derive defaults.
// Threading: pure function.
#ifndef PORTICO_PLUGINS_HTTPROUTE_NORMALIZE_H_
#define PORTICO_PLUGINS_HTTPROUTE_NORMALIZE_H_

#include <string_view>

#include "portico/sdk/json.h"

namespace portico::plugins::httproute {

// NormalizeRoute returns a copy of `spec` with every default applied; `route_ns` is the
// route's namespace (the default of parentRef and backendRef namespaces).
rapidjson::Document NormalizeRoute(const rapidjson::Value& spec, std::string_view route_ns);

}  // namespace portico::plugins::httproute

#endif  // PORTICO_PLUGINS_HTTPROUTE_NORMALIZE_H_
