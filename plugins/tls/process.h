// process.h: the TLSPolicy processor: validate (validate.h), then resolve
//  - each target Gateway: it exists, the listener named by sectionName exists, there is an
//    HTTPS or TLS listener to apply to (Accepted=False TargetNotFound / Invalid otherwise);
//  - the ALPN protocols: one the gateway does not serve (h2: HTTP/2 is not implemented) makes
//    every ancestor Accepted=False/UnsupportedValue, and the policy is not applied;
//  - the Secrets, through the Secret plugin's exports (never the material): certificateRef must
//    be a kubernetes.io/tls Secret whose material the Secret plugin found usable
//    (InvalidCertificateRef otherwise, with its reason), each caCertificateRefs entry a Secret
//    with a ca.crt bundle that parses (InvalidCACertificateRef otherwise); across namespaces only
//    with a ReferenceGrant (RefNotPermitted). Their sha256 are the certificate.v1 entries'.
//  - conflicts: the policies of the namespace (TLSPolicies can only target Gateways of their own
//    namespace) are listed through their exports. Two policies contend on a target when both
//    apply to it (Accepted before conflicts, refs resolved), the targets share a listener (same
//    Gateway and sectionName, or either without sectionName: all its listeners) and their
//    hostnames share one (no hostnames counts as one name of its own: the listener as a whole;
//    an exact name and a wildcard are different levels, which the data plane orders). Policies
//    are taken oldest first (metadata.creationTimestamp, then name); each applies to a target
//    unless an older policy already applied there contends with it. A loser gets, on that
//    ancestor, Accepted=False and Conflicted=True (reason Conflicted, naming the winner) and is
//    not staged for it. Exports never depend on conflicts, so every policy computes the same
//    outcome and a change requeues the others (they list the kind) without oscillation.
// Writes the synced view (what the handler stages: stage.h) only when the policy applies to at
// least one target, its Secret links (REFERENCE, only for Secrets it may use, so their material
// goes where the policy goes), its Gateway links (PARENT: the policy goes with its targets), the
// export (targets, hostnames, createdUnixMs, the targets it contends for) and a Gateway API policy
// status with one ancestor per target.
// Threading: stateless; may run concurrently for different policies.
#ifndef PORTICO_PLUGINS_TLS_PROCESS_H_
#define PORTICO_PLUGINS_TLS_PROCESS_H_

#include <cstdint>

#include "portico/sdk/processor.h"
#include "portico/sdk/timestamp.h"

namespace portico::plugins::tls {

// A policy without creationTimestamp ranks as the youngest (sdk/timestamp.h).
using sdk::kUnknownCreatedUnixMs;

Status ProcessTlsPolicy(const sdk::Object& obj, sdk::ProcessContext& ctx,
                        sdk::ProcessResult& result);

}  // namespace portico::plugins::tls

#endif  // PORTICO_PLUGINS_TLS_PROCESS_H_
