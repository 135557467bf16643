// process.h: the BackendTLSPolicy processor (Gateway API v1, GEP-1897): validate (validate.h),
// then resolve
//  - each target: only core Services are supported (a policy on another kind reaches no
//    Gateway, so it has no ancestor); a sectionName must name a port of the Service
//    (Accepted=False/TargetNotFound otherwise);
//  - the ancestors: one per Gateway through which a route reaches a targeted Service (the
//    HTTPRoute plugin exports each route's resolved backends and the Gateways that accepted it;
//    with a sectionName naming a port only routes to that port count), in (namespace, name) order;
//  - validation.caCertificateRefs through the ConfigMap and Secret plugins' exports
//    (x509/ca_reference.h): another kind or group is ResolvedRefs=False/InvalidKind, a missing
//    object or one without a usable ca.crt ResolvedRefs=False/InvalidCACertificateRef (the
//    condition names the first); when no reference is usable the policy is
//    Accepted=False/NoValidCACertificate on every ancestor. wellKnownCACertificates "System" is
//    the gateway's system trust store;
//  - spec.options: Portico implements none, so any option makes the policy Accepted=False/Invalid
//    (never silently ignored);
//  - conflicts: of the policies of the namespace naming the same target and sectionName (both
//    without sectionName counts as the same; a policy with a sectionName and one without do not
//    conflict: the one with it is more specific for that port), the oldest by
//    metadata.creationTimestamp, then the first by name, wins; the others are
//    Accepted=False/Conflicted for it, naming the winner. Exports carry only the targets and the
//    age, so every policy computes the same outcome.
// Status: {"ancestors": [{ancestorRef (the Gateway), controllerName, conditions [Accepted,
// ResolvedRefs]}]}, every condition at the object's generation. An ancestor's Accepted is the
// policy-wide problem if any, else True when the policy applies to a target reaching it, else the
// problem of the first target reaching it.
// Synced view (what the handler stages, stage.h): for the targets the policy wins (Service
// found, sectionName a port of it), the resolved settings: caCertificates [{ref, sha256}] or
// wellKnownCACertificates, hostname, subjectAltNames; or, when the policy cannot be applied
// (Accepted=False/NoValidCACertificate or Invalid, or some reference unresolved), "invalid":
// the reason, so that gateways refuse those backends instead of connecting without the TLS the
// policy asks for. Links: PARENT to each ancestor Gateway (the policy goes where its Services are
// reached), REFERENCE to each usable CA object (its material goes with the policy).
// Export: {createdUnixMs, targets: [{group, kind, name, sectionName?}]}.
// Threading: stateless; may run concurrently for different policies.
#ifndef PORTICO_PLUGINS_BACKENDTLSPOLICY_PROCESS_H_
#define PORTICO_PLUGINS_BACKENDTLSPOLICY_PROCESS_H_

#include "portico/sdk/processor.h"

namespace portico::plugins::backendtlspolicy {

Status ProcessBackendTlsPolicy(const sdk::Object& obj, sdk::ProcessContext& ctx,
                               sdk::ProcessResult& result);

}  // namespace portico::plugins::backendtlspolicy

#endif  // PORTICO_PLUGINS_BACKENDTLSPOLICY_PROCESS_H_
