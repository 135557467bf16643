// validate.h: the TLSPolicy model and the rules its JSON Schema cannot express: targets are
// Gateways (optionally one listener) named once; hostnames are unique; the policy sets
// something; minVersion <= maxVersion; ciphers are unique and not given when only TLS 1.3 is
// allowed (TLS 1.3 suites are not configurable that way); client certificate mode None takes no
// CAs and Optional/Require need at least one.
//
// ParseTlsPolicy applies the defaults (target group gateway.networking.k8s.io and kind
// Gateway, minVersion TLSv1.2, maxVersion TLSv1.3, clientCertificate.mode Require). Errors name
// the field; the caller prefixes the object.
// Threading: pure functions.
#ifndef PORTICO_PLUGINS_TLS_VALIDATE_H_
#define PORTICO_PLUGINS_TLS_VALIDATE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "portico/sdk/json.h"
#include "portico/sdk/status.h"

namespace portico::plugins::tls {

inline constexpr char kGroup[] = "portico.io";
inline constexpr char kGatewayGroup[] = "gateway.networking.k8s.io";

struct TargetRef {
  std::string group;
  std::string kind;
  std::string name;
  std::string section_name;  // empty: every TLS listener of the Gateway
};

// SecretRef names a Secret; `ns` empty means the policy's namespace.
struct SecretRef {
  std::string ns;
  std::string name;
};

struct ClientCertificate {
  std::string mode;  // None, Optional, Require
  std::vector<SecretRef> ca_refs;
  std::optional<int64_t> verify_depth;
};

struct TlsPolicySpec {
  std::vector<TargetRef> targets;
  std::vector<std::string> hostnames;
  std::optional<SecretRef> certificate;
  std::string min_version;
  std::string max_version;
  std::vector<std::string> ciphers;
  std::optional<ClientCertificate> client_certificate;
};

// ParseTlsPolicy validates a TLSPolicy's spec into the model.
StatusOr<TlsPolicySpec> ParseTlsPolicy(const rapidjson::Value& spec);

}  // namespace portico::plugins::tls

#endif  // PORTICO_PLUGINS_TLS_VALIDATE_H_
