// validate.h: the Gateway model and the cross-field rules its JSON Schema cannot express
// (the Gateway API CRD's CEL rules, plus Portico's: HTTPS and TLS listeners need tls).
//
// ParseGateway applies the API's defaults (tls.mode Terminate, allowedRoutes.namespaces.from
// Same, allowedRoutes.kinds group gateway.networking.k8s.io, certificateRef group "" and kind
// Secret (also for spec.tls.backend.clientCertificateRef), address type IPAddress,
// spec.tls.frontend validation mode AllowValidOnly), upper-cases the core protocols (they are
// case-insensitive) and returns errors that name the field
// ("spec.listeners[1].name: duplicate listener name
// \"http\""); the caller prefixes the object. The model owns copies of its strings, except
// `selector`, which points into the parsed object and lives as long as it.
// Threading: pure functions.
#ifndef PORTICO_PLUGINS_GATEWAY_VALIDATE_H_
#define PORTICO_PLUGINS_GATEWAY_VALIDATE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "portico/sdk/json.h"
#include "portico/sdk/status.h"

namespace portico::plugins::gateway {

inline constexpr char kGroup[] = "gateway.networking.k8s.io";

struct GroupKind {
  std::string group;
  std::string kind;
};

// CertificateRef is a listener's tls.certificateRefs entry; `ns` empty means the Gateway's.
struct CertificateRef {
  std::string group;
  std::string kind;
  std::string ns;
  std::string name;
};

struct Listener {
  std::string name;
  std::string hostname;  // empty: any
  int64_t port = 0;
  std::string protocol;  // core protocols upper-cased (they are case-insensitive)
  std::string protocol_as_written;
  bool has_tls = false;
  std::string tls_mode;  // "Terminate" or "Passthrough" when has_tls
  std::vector<CertificateRef> certificate_refs;
  bool frontend_validation = false;  // tls.frontendValidation (client certificates) is set
  std::string from = "Same";         // allowedRoutes.namespaces.from
  const rapidjson::Value* selector = nullptr;  // allowedRoutes.namespaces.selector
  bool kinds_given = false;
  std::vector<GroupKind> kinds;  // allowedRoutes.kinds as written (group defaulted)
};

// CaCertificateRef is a spec.tls.frontend caCertificateRefs entry; `ns` empty means the
// Gateway's.
struct CaCertificateRef {
  std::string group;
  std::string kind;
  std::string ns;
  std::string name;
};

// FrontendValidation is one spec.tls.frontend validation (the default's or a port's).
struct FrontendValidation {
  std::string field;  // where it is written: "spec.tls.frontend.default.validation", ...
  std::string mode = "AllowValidOnly";    // or "AllowInsecureFallback"
  std::vector<CaCertificateRef> ca_refs;  // 1 to 8
};

// FrontendTls is spec.tls.frontend: the default validation and per-port overrides; a perPort
// entry without validation overrides the default with none.
struct FrontendTls {
  std::optional<FrontendValidation> default_validation;
  std::map<int64_t, std::optional<FrontendValidation>> per_port;
};

struct Address {
  std::string type;
  std::string value;
};

struct GatewaySpec {
  std::string class_name;
  std::vector<Listener> listeners;
  std::vector<Address> addresses;
  std::string parameters_ref;  // spec.infrastructure.parametersRef as "Kind.group name", if any
  FrontendTls frontend;        // spec.tls.frontend (client-certificate validation)
  // spec.tls.backend.clientCertificateRef: the certificate presented to backends over TLS.
  std::optional<CertificateRef> backend_client_certificate;
};

// ParseGateway validates a Gateway's spec into the model.
StatusOr<GatewaySpec> ParseGateway(const rapidjson::Value& spec);

// FrontendValidationFor returns the validation that applies to HTTPS listeners on `port`: the
// perPort entry's when there is one (possibly none), else the default's; null for none.
const FrontendValidation* FrontendValidationFor(const GatewaySpec& spec, int64_t port);

}  // namespace portico::plugins::gateway

#endif  // PORTICO_PLUGINS_GATEWAY_VALIDATE_H_
