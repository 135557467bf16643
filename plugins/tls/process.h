// process.h: the TLSPolicy processor: validate (validate.h), then resolve each target Gateway
// (exists, the listener named by sectionName exists, there is an HTTPS or TLS listener to
// apply to) and the Secrets (certificate: a kubernetes.io/tls Secret with tls.crt and
// tls.key; CAs: a ca.crt key; across namespaces only with a ReferenceGrant). Writes the synced
// view (metadata + normalised spec), the export (targets, hostnames) and a Gateway API policy
// status with one ancestor per target.
// Still to come: conflicts between policies (the oldest wins, the other is Conflicted), PEM
// checks, and the listener_set.v1 handler (docs/contributions.md).
// Threading: stateless; may run concurrently for different policies.
#ifndef PORTICO_PLUGINS_TLS_PROCESS_H_
#define PORTICO_PLUGINS_TLS_PROCESS_H_

#include "portico/sdk/processor.h"

namespace portico::plugins::tls {

Status ProcessTlsPolicy(const sdk::Object& obj, sdk::ProcessContext& ctx,
                        sdk::ProcessResult& result);

}  // namespace portico::plugins::tls

#endif  // PORTICO_PLUGINS_TLS_PROCESS_H_
