// listeners.h: the Gateway API semantics of a Gateway's listeners, evaluated together because
// listeners judge each other (conflicts, overlapping TLS hostnames):
//  - protocol: HTTP and HTTPS (tls.mode Terminate) are supported; TLS, TCP, UDP and custom
//    protocols are Accepted=False/UnsupportedProtocol and never conflict with the others;
//    the listener-level tls.frontendValidation (pre-v1.4 experimental) is
//    Accepted=False/UnsupportedValue;
//  - allowedRoutes.kinds: supportedKinds are the requested kinds Portico serves on the
//    listener's protocol (HTTPRoute on HTTP/HTTPS; the protocol's default when none is listed);
//    any other listed kind sets ResolvedRefs=False/InvalidRouteKinds;
//  - conflicts: supported listeners sharing a port with another protocol are Conflicted
//    (ProtocolConflict), sharing port, protocol and hostname Conflicted (HostnameConflict); a
//    conflicted listener is not Accepted (no winner is picked);
//  - HTTPS listeners on one port whose hostnames overlap get OverlappingTLSConfig=True;
//  - certificateRefs of HTTPS listeners (certificates.h): ResolvedRefs=False with the reason of
//    the first unusable reference;
//  - spec.tls.frontend client-certificate validation of HTTPS listeners (frontend.h; the
//    port's perPort entry, else the default): an unusable CA reference sets ResolvedRefs=False
//    with its reason (a certificate problem outweighs it) and keeps the listener from being
//    programmed; when no reference is usable the listener is Accepted=False/NoValidCACertificate.
//    Validation never applies to HTTP listeners;
//  - Programmed: False/Invalid when the listener cannot be served (not Accepted, a certificate
//    or its client-certificate validation is unusable), otherwise Unknown/Pending until a gateway
//    applies it (the controller sets it from gateway acknowledgements).
// Threading: stateless; reads go through the caller's ProcessContext.
#ifndef PORTICO_PLUGINS_GATEWAY_LISTENERS_H_
#define PORTICO_PLUGINS_GATEWAY_LISTENERS_H_

#include <optional>
#include <string>
#include <vector>

#include "certificates.h"
#include "frontend.h"
#include "portico/sdk/json_writer.h"
#include "portico/sdk/processor.h"
#include "validate.h"

namespace portico::plugins::gateway {

// ListenerResult is everything resolution found for one listener.
struct ListenerResult {
  std::vector<GroupKind> supported_kinds;
  sdk::Condition accepted{"Accepted", "True", "Accepted", ""};
  sdk::Condition resolved{"ResolvedRefs", "True", "ResolvedRefs", ""};
  sdk::Condition conflicted{"Conflicted", "False", "NoConflicts", ""};
  std::optional<sdk::Condition> overlapping;  // OverlappingTLSConfig, only ever True
  std::vector<ResolvedCertificate> certificates;
  bool certificates_usable = true;
  // The port's client-certificate validation, for an HTTPS listener that has one.
  std::optional<FrontendResolution> frontend;
  bool frontend_usable = true;

  bool Valid() const { return accepted.status == "True"; }
  // Programmable: a gateway can serve it (the synced view carries only these).
  bool Programmable() const { return Valid() && certificates_usable && frontend_usable; }
  sdk::Condition Programmed() const;
  // Conditions in status order: Accepted, ResolvedRefs, Conflicted, Programmed[, Overlapping].
  std::vector<sdk::Condition> Conditions() const;
};

// ResolveListeners evaluates every listener of a validated Gateway spec; with `ctx` null the
// certificate references are not resolved (a Gateway that is not ours reads nothing).
std::vector<ListenerResult> ResolveListeners(const GatewaySpec& spec, const sdk::ObjectRef& gateway,
                                             sdk::ProcessContext* ctx);

// SelectorString renders a metav1.LabelSelector (matchLabels, matchExpressions) in the label
// selector syntax of sdk/label_selector.h ("a=b,env in (x,y),!canary"); "" selects everything.
std::string SelectorString(const rapidjson::Value& selector);

}  // namespace portico::plugins::gateway

#endif  // PORTICO_PLUGINS_GATEWAY_LISTENERS_H_
