// views.h: the three JSON views of a processed Gateway:
//  - synced (to gateways): metadata, class, the listeners a gateway can serve with their
//    certificates as {secretRef, sha256} (never material), supported route kinds, addresses,
//    and, when some port's HTTPS listeners validate client certificates, "frontendValidation":
//    [{port, mode, caCertificates: [{ref: {kind, namespace, name}, sha256}]}] by ascending port,
//    and "backendClientCertificate": {secretRef, sha256} when the Gateway's
//    spec.tls.backend.clientCertificateRef resolved;
//  - export (for routes and policies): whether the Gateway is Portico's, every listener with
//    its port, protocol, hostname, validity and resolved allowedRoutes (namespaces.from, the
//    selector as a label selector string, supported kinds);
//  - status: conditions and per-listener status (name, supportedKinds, attachedRoutes 0, which
//    routes' contributions raise, conditions).
// Threading: pure functions.
#ifndef PORTICO_PLUGINS_GATEWAY_VIEWS_H_
#define PORTICO_PLUGINS_GATEWAY_VIEWS_H_

#include <string>
#include <vector>

#include "listeners.h"
#include "portico/sdk/processor.h"
#include "validate.h"

namespace portico::plugins::gateway {

// `backend_certificate`: the resolved spec.tls.backend.clientCertificateRef, or null.
std::string SyncedJson(const sdk::Object& obj, const GatewaySpec& spec,
                       const std::vector<ListenerResult>& listeners,
                       const ResolvedCertificate* backend_certificate);

std::string ExportJson(const GatewaySpec& spec, const std::vector<ListenerResult>& listeners,
                       const std::string& controller_name, bool ours);

std::string StatusJson(const sdk::Object& obj, const GatewaySpec& spec,
                       const std::vector<sdk::Condition>& conditions,
                       const std::vector<ListenerResult>& listeners);

}  // namespace portico::plugins::gateway

#endif  // PORTICO_PLUGINS_GATEWAY_VIEWS_H_
