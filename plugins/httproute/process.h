// process.h: the HTTPRoute processor: validate (validate.h), apply the defaults an API server
// would (normalize.h), drop rules using features Portico does not implement (support.h),
// resolve references (backends.h) and attach to parents (attach.h).
//
// Results:
//  - status: {"parents":[{parentRef, controllerName "portico.io/gateway-controller",
//    conditions Accepted, ResolvedRefs[, PartiallyInvalid]}]}, one entry per parentRef to a
//    Gateway of ours (in spec order);
//  - contributions: for each listener the route attaches to while Accepted,
//    "count:listeners[name=<listener>].attachedRoutes" to that Gateway (once per listener);
//  - synced (only when some parent accepted the route): metadata, hostnames, the accepted
//    parents as {gateway {namespace, name}, listener, hostnames (the intersection)}, and the
//    kept rules (with "index", their position in spec.rules) with every backendRef and mirror
//    annotated by backends.h ("key" or "invalid") and ExtensionRef filters by "resolved";
//  - export: the normalized parentRefs and hostnames, "backends" (the resolved Services of the
//    kept rules' backendRefs and mirrors: [{namespace, name, port}], each once, sorted) and
//    "gateways" (the Gateways whose parent accepted the route: [{namespace, name}]), which
//    BackendTLSPolicy reads to find the Gateways reaching its Services.
// Threading: stateless; may run concurrently for different routes.
#ifndef PORTICO_PLUGINS_HTTPROUTE_PROCESS_H_
#define PORTICO_PLUGINS_HTTPROUTE_PROCESS_H_

#include "portico/sdk/processor.h"

namespace portico::plugins::httproute {

Status ProcessRoute(const sdk::Object& obj, sdk::ProcessContext& ctx, sdk::ProcessResult& result);

}  // namespace portico::plugins::httproute

#endif  // PORTICO_PLUGINS_HTTPROUTE_PROCESS_H_
