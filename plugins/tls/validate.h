// validate.h: the TLSPolicy model and the rules its JSON Schema cannot express: targets are
// Gateways (optionally one listener) named once; hostnames are unique; the policy sets
// something; minVersion <= maxVersion; ciphers are unique and not given when only TLS 1.3 is
// allowed (TLS 1.3 suites are not configurable that way); ALPN protocol ids are unique and at
// most 255 bytes (RFC 7301); client certificate mode None takes no CAs, no verifyDepth and no
// allowedSans, Optional/Require need at least one CA; allowedSans are unique DNS names (lower
// case, no wildcard) or URIs ("scheme:rest", e.g. spiffe://trust.example/ns/a/sa/b).
//
// ParseTlsPolicy applies the defaults (target group gateway.networking.k8s.io and kind
// Gateway, minVersion TLSv1.2, maxVersion TLSv1.3, alpn ["http/1.1"], clientCertificate.mode
// Require). Errors name the field; the caller prefixes the object.
//
// A well-formed value the gateway cannot honour is not a parse error but UnsupportedAlpn's
// answer, which the processor reports as Accepted=False/UnsupportedValue (a field that would do
// nothing is refused visibly): only http/1.1 and http/1.0 are served over TLS today.
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
  // DNS names or URIs; empty: any certificate the CAs verify. One must be among the client
  // certificate's subjectAltNames (DNS or URI entries) when set.
  std::vector<std::string> allowed_sans;
};

struct TlsPolicySpec {
  std::vector<TargetRef> targets;
  std::vector<std::string> hostnames;
  std::optional<SecretRef> certificate;
  std::string min_version;
  std::string max_version;
  std::vector<std::string> ciphers;
  std::vector<std::string> alpn;  // protocol ids in preference order; default {"http/1.1"}
  std::optional<ClientCertificate> client_certificate;
};

// ParseTlsPolicy validates a TLSPolicy's spec into the model.
StatusOr<TlsPolicySpec> ParseTlsPolicy(const rapidjson::Value& spec);

// UnsupportedAlpn names the first ALPN protocol of `spec` the gateway does not serve, with why
// ("spec.alpn[1]: \"h2\": HTTP/2 is not implemented; ..."); nullopt when all are served.
std::optional<std::string> UnsupportedAlpn(const TlsPolicySpec& spec);

}  // namespace portico::plugins::tls

#endif  // PORTICO_PLUGINS_TLS_VALIDATE_H_
