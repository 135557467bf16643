// process.h: the Gateway processor: validation (validate.h), then resolution against what the
// Gateway reads (its GatewayClass, certificate Secrets, ReferenceGrants through the reference
// policy), producing the synced view, the export routes attach with, and the status.
//
// Semantics so far: listeners of protocol HTTP and HTTPS (mode Terminate) are supported; others
// are reported UnsupportedProtocol. Certificate Secrets must exist, be permitted and be of type
// kubernetes.io/tls with both keys; PEM checks come with certificate.v1. Programmed and
// attachedRoutes are the host's (gateway acks, route contributions).
// Threading: stateless; may run concurrently for different Gateways.
#ifndef PORTICO_PLUGINS_GATEWAY_PROCESS_H_
#define PORTICO_PLUGINS_GATEWAY_PROCESS_H_

#include "portico/sdk/processor.h"

namespace portico::plugins::gateway {

Status ProcessGateway(const sdk::Object& obj, sdk::ProcessContext& ctx, sdk::ProcessResult& result);

// ProcessGatewayClass validates a GatewayClass and exports its controllerName.
Status ProcessGatewayClass(const sdk::Object& obj, sdk::ProcessContext& ctx,
                           sdk::ProcessResult& result);

}  // namespace portico::plugins::gateway

#endif  // PORTICO_PLUGINS_GATEWAY_PROCESS_H_
