// frontend.h: resolution of a Gateway's spec.tls.frontend client-certificate validation (Gateway
// API v1.4, GEP-91) against the ConfigMap and Secret plugins' exports (never the material: both
// export "ca": {valid, message, sha256, certificates} for a "ca.crt" key).
//
// Each caCertificateRefs entry must be a core ConfigMap or Secret (else InvalidCACertificateKind),
// permitted by a ReferenceGrant when it crosses namespaces (else RefNotPermitted), exist and carry
// a usable "ca.crt" bundle (else InvalidCACertificateRef). The resolution of one validation is
// shared by every HTTPS listener on the port it applies to (validate.h, FrontendValidationFor).
// Threading: stateless; reads go through the caller's ProcessContext (recorded by the host).
#ifndef PORTICO_PLUGINS_GATEWAY_FRONTEND_H_
#define PORTICO_PLUGINS_GATEWAY_FRONTEND_H_

#include <optional>
#include <string>
#include <vector>

#include "portico/sdk/json_writer.h"
#include "portico/sdk/processor.h"
#include "validate.h"

namespace portico::plugins::gateway {

// ResolvedCaCertificate is a usable CA bundle: the object holding it and the SHA-256 of its PEM
// (the material travels as certificate.v1 "ca" entries, which gateways look up by sha256).
struct ResolvedCaCertificate {
  std::string kind;  // "ConfigMap" or "Secret" (core group)
  std::string ns;
  std::string name;
  std::string sha256;
};

// FrontendResolution is the outcome for one validation: its mode, every usable CA (each object
// once, in written order), and the ResolvedRefs=False condition of the first unusable reference.
struct FrontendResolution {
  std::string field;  // the validation's field, for messages
  std::string mode;
  std::vector<ResolvedCaCertificate> ca_certificates;
  std::optional<sdk::Condition> failure;
};

FrontendResolution ResolveFrontendValidation(const FrontendValidation& validation,
                                             const sdk::ObjectRef& gateway,
                                             sdk::ProcessContext& ctx);

}  // namespace portico::plugins::gateway

#endif  // PORTICO_PLUGINS_GATEWAY_FRONTEND_H_
