// validate.h: the Gateway model and the cross-field rules its JSON Schema cannot express
// (the Gateway API CRD's CEL rules, plus Portico's: HTTPS and TLS listeners need tls).
//
// ParseGateway applies the API's defaults (tls.mode Terminate, allowedRoutes.namespaces.from
// Same, allowedRoutes.kinds group gateway.networking.k8s.io, certificateRef group "" and kind
// Secret, address type IPAddress), upper-cases the core protocols (they are case-insensitive)
// and returns errors that name the field ("spec.listeners[1].name: duplicate listener name
// \"http\""); the caller prefixes the object. The model owns copies of its strings, except
// `selector`, which points into the parsed object and lives as long as it.
// Threading: pure functions.
#ifndef PORTICO_PLUGINS_GATEWAY_VALIDATE_H_
#define PORTICO_PLUGINS_GATEWAY_VALIDATE_H_

#include <cstdint>
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

struct Address {
  std::string type;
  std::string value;
};

struct GatewaySpec {
  std::string class_name;
  std::vector<Listener> listeners;
  std::vector<Address> addresses;
  std::string parameters_ref;  // spec.infrastructure.parametersRef as "Kind.group name", if any
};

// ParseGateway validates a Gateway's spec into the model.
StatusOr<GatewaySpec> ParseGateway(const rapidjson::Value& spec);

}  // namespace portico::plugins::gateway

#endif  // PORTICO_PLUGINS_GATEWAY_VALIDATE_H_
