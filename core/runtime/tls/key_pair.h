// key_pair.h: CertificateMaterial (one certificate.v1 keyPair entry: a chain and its key) and
// UseKeyPair, which loads it into an OpenSSL context after checking it, for the server
// contexts of listeners (server_context.h) and the client certificate a Gateway presents to
// its backends (upstream_tls.h). Also the gateway's TLS defaults both directions share.
//
// Threading: UseKeyPair configures a context nobody uses yet (build time, one thread).
#ifndef PORTICO_CORE_RUNTIME_TLS_KEY_PAIR_H_
#define PORTICO_CORE_RUNTIME_TLS_KEY_PAIR_H_

#include <openssl/ssl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "portico/sdk/status.h"

namespace portico::core::tls {

// The TLS 1.2 cipher list (Mozilla "intermediate": ECDHE with AES-GCM or ChaCha20-Poly1305)
// and the key-exchange groups, for both directions.
inline constexpr char kDefaultCiphers[] =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
inline constexpr char kDefaultGroups[] = "X25519:P-256:P-384";

// CertificateMaterial is one keyPair entry as certificate.v1 carries it.
struct CertificateMaterial {
  std::string secret;  // "namespace/name", for messages
  std::string sha256;
  std::string chain_pem;
  std::string key_pem;
};

// KeyPairInfo is what UseKeyPair learnt about the leaf.
struct KeyPairInfo {
  int64_t not_after_unix_ms = 0;
  std::vector<std::string> dns_names;  // subjectAltName dNSName entries, lower case
};

// UseKeyPair loads the chain (leaf first, then intermediates) and the key of `material` into
// `ctx`. INVALID_ARGUMENT naming the Secret and the reason when the chain or key does not parse,
// the key does not belong to the leaf, or the leaf expired.
StatusOr<KeyPairInfo> UseKeyPair(SSL_CTX* ctx, const CertificateMaterial& material);

}  // namespace portico::core::tls

#endif  // PORTICO_CORE_RUNTIME_TLS_KEY_PAIR_H_
