// tls_policy.h: TlsPolicy, one TLSPolicy as the data plane applies it (a listener_set.v1
// "tlsPolicy" entry, docs/contributions.md): the listeners it targets, the server names it
// covers, and what it sets for a handshake it wins: the certificate, TLS versions, ciphers,
// ALPN protocols and client-certificate checks.
//
// Coverage (Covers): a policy with hostnames covers a server name at the exact level when one
// equals it, at the wildcard level when a "*.suffix" entry covers it by one label; a policy
// without hostnames covers every name of its listeners at the default level. Among policies
// covering a name the best level wins, then the oldest (createdUnixMs, then namespace/name: the
// controller reports the others Conflicted).
//
// Thread-safety: immutable once parsed; Apply from any worker. Ownership: shares its
// ServerContext and ClientValidation (shared_ptr).
#ifndef PORTICO_CORE_RUNTIME_TLS_TLS_POLICY_H_
#define PORTICO_CORE_RUNTIME_TLS_TLS_POLICY_H_

#include <openssl/ssl.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/runtime/tls/client_validation.h"
#include "core/runtime/tls/server_context.h"
#include "portico/sdk/json.h"
#include "portico/sdk/status.h"

namespace portico::core::tls {

enum class CoverLevel : uint8_t { kNone = 0, kDefault = 1, kWildcard = 2, kExact = 3 };

struct TlsPolicy {
  std::string owner;  // the entry's owner (object key), for refusals
  std::string name;   // "namespace/name"
  int64_t created_ms = 0;
  std::vector<std::pair<std::string, std::string>> targets;  // ("ns/gateway", listener or "")
  std::vector<std::string> hostnames;                        // lower case
  std::shared_ptr<const ServerContext> certificate;          // null: the listener's
  int min_version = 0;                                       // 0: the default (TLS 1.2)
  int max_version = 0;                                       // 0: the highest
  std::string cipher_list;                       // TLS 1.2 names, ':'-joined ("" = the default)
  std::string cipher_suites;                     // TLS 1.3 names, ':'-joined ("" = the default)
  std::optional<std::vector<std::string>> alpn;  // offered protocols it allows (absent: all)
  // Client certificates: `client` checks them; client_none asks for none even where the port
  // validates. Neither: the port's own validation applies.
  std::shared_ptr<const ClientValidation> client;
  bool client_none = false;

  // Targets: the policy applies to listener `name` ("ns/gateway/listener").
  bool Targets(std::string_view listener) const;
  CoverLevel Covers(std::string_view server_name) const;
  // Wins: this policy beats `other` at the same level (older, then by name).
  bool Wins(const TlsPolicy& other) const;
  // Apply sets versions and ciphers on `ssl` (in its ClientHello callback, before the version is
  // negotiated) and its client-certificate checks.
  void Apply(SSL* ssl) const;
  // AllowsAlpn: `protocol` may be selected.
  bool AllowsAlpn(std::string_view protocol) const;
};

// TlsPolicyResolver finds material for ParseTlsPolicy: the context of a key pair by sha256 (null
// with the reason when it cannot be served), the PEM of a CA bundle by sha256 (nullopt when
// absent).
struct TlsPolicyResolver {
  std::function<std::shared_ptr<const ServerContext>(const std::string& sha, std::string* why)>
      context;
  std::function<std::optional<std::string>(const std::string& sha)> ca_pem;
};

// ParseTlsPolicy reads one "tlsPolicy" entry; INVALID_ARGUMENT naming the field, UNAVAILABLE
// when material it names has not reached the gateway.
StatusOr<std::shared_ptr<const TlsPolicy>> ParseTlsPolicy(const rapidjson::Value& entry,
                                                          const std::string& owner,
                                                          const TlsPolicyResolver& resolver);

}  // namespace portico::core::tls

#endif  // PORTICO_CORE_RUNTIME_TLS_TLS_POLICY_H_
