// process.h: the GatewayClass and Gateway processors.
//
// GatewayClass: Accepted=True for Portico's controllerName (sdk/gateway_api.h), or
// False/InvalidParameters when it names a parametersRef (Portico takes none); a class of another
// controller gets no status (it is not ours to judge). Export {controllerName, accepted}.
//
// Gateway: validation (validate.h), then the class (its export): a Gateway of another
// controller's class gets no status and no synced view, only an export marking it foreign (so
// routes leave it alone); a Gateway whose class does not exist yet is Accepted=Unknown/Pending,
// one whose class is Portico's but not accepted is Accepted=False/Invalid.
// Ours: listeners (listeners.h), spec.infrastructure.parametersRef (Portico takes none:
// Accepted=False/InvalidParameters) and spec.addresses (IPAddress, with or without a value, is
// supported; other types make the Gateway Accepted=False/UnsupportedAddress). Gateway Accepted
// is True/Accepted, True/ListenersNotValid when some listeners are not accepted, and
// False/ListenersNotValid when none is. Programmed is False/Invalid for a Gateway that is not
// accepted and Unknown/Pending otherwise: the controller sets it from gateway acknowledgements,
// and writes status.addresses from the gateways serving it. Listener status carries
// attachedRoutes 0 that routes' contributions raise. InsecureFrontendValidationMode is
// True/ConfigurationChanged when an HTTPS listener's spec.tls.frontend validation is
// AllowInsecureFallback (absent otherwise). With spec.tls.backend.clientCertificateRef (a
// kubernetes.io/tls Secret, across namespaces only with a ReferenceGrant), ResolvedRefs is
// True/ResolvedRefs, or False/InvalidClientCertificateRef (another kind or group, missing, not
// kubernetes.io/tls, unusable material) or False/RefNotPermitted; the Gateway stays Accepted
// and the synced view then carries no backend client certificate (absent without the field).
// The synced view (listeners a gateway can serve)
// exists only for an accepted Gateway of ours; the export always lists every listener. The
// Gateway links (REFERENCE) the certificate Secrets and the CA ConfigMaps and Secrets of its
// programmable listeners, and its backend client certificate Secret, so that their material is
// synced wherever it goes.
// Threading: stateless; may run concurrently for different objects.
#ifndef PORTICO_PLUGINS_GATEWAY_PROCESS_H_
#define PORTICO_PLUGINS_GATEWAY_PROCESS_H_

#include "portico/sdk/processor.h"

namespace portico::plugins::gateway {

Status ProcessGateway(const sdk::Object& obj, sdk::ProcessContext& ctx, sdk::ProcessResult& result);

Status ProcessGatewayClass(const sdk::Object& obj, sdk::ProcessContext& ctx,
                           sdk::ProcessResult& result);

}  // namespace portico::plugins::gateway

#endif  // PORTICO_PLUGINS_GATEWAY_PROCESS_H_
