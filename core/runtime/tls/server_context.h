// server_context.h: ServerContext, the OpenSSL server context (SSL_CTX) of one certificate: the
// chain and key of one certificate.v1 keyPair entry (docs/contributions.md), with the gateway's
// TLS defaults. Built off the request path (DataPlane::Prepare, through TlsTable); identical
// material (same sha256) shares one context across listeners and commits, so its session
// cache survives unrelated changes.
//
// Defaults (nginx's and Envoy's current ones): TLS 1.2 and 1.3 only (1.0 and 1.1 refused), the
// Mozilla "intermediate" TLS 1.2 cipher list (ECDHE with AES-GCM or ChaCha20-Poly1305), server
// cipher preference, no renegotiation, no compression, ALPN "http/1.1" only (an HTTP/2 client
// falls back), a server session cache (kSessionCacheSize) and one session ticket per handshake
// whose keys the process rotates (ticket_keys.h), read-ahead (one recv fills OpenSSL's buffer
// instead of a record header first, then its body; nginx sets it too), read and write buffers
// released while a connection is idle.
//
// Thread-safety: immutable once built; OpenSSL's SSL_CTX is safe for concurrent SSL_new and
// handshakes. Ownership: owns one SSL_CTX reference (freed with the last ServerContext and the
// last SSL using it: OpenSSL counts SSL references).
#ifndef PORTICO_CORE_RUNTIME_TLS_SERVER_CONTEXT_H_
#define PORTICO_CORE_RUNTIME_TLS_SERVER_CONTEXT_H_

#include <openssl/ssl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/runtime/tls/key_pair.h"
#include "portico/sdk/status.h"

namespace portico::core::tls {

// SniSelector sets a handshake up from its server name (ServerTlsSet does). A ServerContext's
// ClientHello callback (it runs before the version and cipher are negotiated, so per-name
// versions hold) finds the selector of an SSL in its ex_data (AttachSelector), reads the SNI
// from the raw extension, and fails the handshake when there is no selector or it refuses.
class SniSelector {
 public:
  virtual ~SniSelector() = default;
  // OnClientHello switches `ssl` to the context serving `server_name` ("" without SNI) and
  // applies that name's settings; false refuses the handshake (the selector logged why).
  // Called on the handshaking worker.
  virtual bool OnClientHello(SSL* ssl, std::string_view server_name) const = 0;
  // AllowsAlpn: `protocol` may be selected for `ssl` (after OnClientHello).
  virtual bool AllowsAlpn(SSL* ssl, std::string_view protocol) const {
    (void)ssl;
    (void)protocol;
    return true;
  }
};

// AttachSelector makes `selector` (not owned; it must outlive the handshake) choose the
// certificate of `ssl`.
void AttachSelector(SSL* ssl, const SniSelector* selector);

class ServerContext {
 public:
  // Build parses the chain and key and checks that they belong together; INVALID_ARGUMENT
  // naming the Secret and OpenSSL's reason otherwise (also for an expired leaf).
  static StatusOr<std::shared_ptr<const ServerContext>> Build(const CertificateMaterial& material);

  ServerContext(const ServerContext&) = delete;
  ServerContext& operator=(const ServerContext&) = delete;
  ~ServerContext();

  SSL_CTX* ctx() const { return ctx_; }
  const std::string& secret() const { return secret_; }
  const std::string& sha256() const { return sha256_; }
  // The leaf's DNS names (subjectAltName dNSName entries, lower case; "*.x" wildcards kept).
  const std::vector<std::string>& dns_names() const { return dns_names_; }
  // Covers says whether the leaf is valid for `host` (lower case): an exact dNSName first
  // (Exact), or a "*.suffix" entry matching exactly one label (Wildcard).
  bool CoversExactly(std::string_view host) const;
  bool CoversByWildcard(std::string_view host) const;
  int64_t not_after_unix_ms() const { return not_after_unix_ms_; }

  static constexpr long kSessionCacheSize = 20480;  // sessions (nginx's shared:SSL:... order)

 private:
  ServerContext() = default;

  SSL_CTX* ctx_ = nullptr;
  std::string secret_;
  std::string sha256_;
  std::vector<std::string> dns_names_;
  int64_t not_after_unix_ms_ = 0;
};

}  // namespace portico::core::tls

#endif  // PORTICO_CORE_RUNTIME_TLS_SERVER_CONTEXT_H_
