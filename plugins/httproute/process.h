// process.h: the HTTPRoute processor: validate (validate.h), apply defaults (normalize.h), then
// resolve what the route reads, producing the synced view (metadata + normalised spec), the
// export (parentRefs and hostnames) and a per-parent status.
//
// Resolution so far: a parent is Accepted when its Gateway exists and has the listener named by
// sectionName and/or on `port`; backendRefs must be core Services that exist, expose the port,
// and, across namespaces, are permitted by the reference policy (ReferenceGrant); ExtensionRef
// filters must resolve through the host. The first failing reference sets ResolvedRefs=False.
// Still to come (the Gateway API semantics issue): allowedRoutes (namespaces, kinds), hostname
// intersection, attachedRoutes contributions to Gateways, and route_rules.v1 staging.
// Threading: stateless; may run concurrently for different routes.
#ifndef PORTICO_PLUGINS_HTTPROUTE_PROCESS_H_
#define PORTICO_PLUGINS_HTTPROUTE_PROCESS_H_

#include "portico/sdk/processor.h"

namespace portico::plugins::httproute {

Status ProcessRoute(const sdk::Object& obj, sdk::ProcessContext& ctx, sdk::ProcessResult& result);

}  // namespace portico::plugins::httproute

#endif  // PORTICO_PLUGINS_HTTPROUTE_PROCESS_H_
