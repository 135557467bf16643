// client_validation.h: ClientValidation, how one listener set checks client certificates (Gateway
// API spec.tls.frontend, staged as listener_set.v1 "frontendValidation"; docs/contributions.md):
// the trusted CA certificates (certificate.v1 "ca" entries, by sha256) and the mode:
//  - kRequireValid (AllowValidOnly): the handshake fails without a certificate that chains to
//    one of the CAs;
//  - kInsecureFallback (AllowInsecureFallback): a certificate is asked for, verified when sent,
//    and the handshake goes on whatever the outcome (the result is kept for filters and logs);
//  - kOptionalValid (TLSPolicy clientCertificate.mode Optional): asked for; a client without one
//    goes on, one whose certificate does not verify is refused.
// TLSPolicy adds a verify depth and allowed SANs (the leaf must carry one of them: an entry with
// ':' is a URI SAN compared exactly, any other a DNS SAN compared in any case; checked in the
// verify callback, so it holds in every mode but the insecure fallback).
// Apply runs on each handshake after the SNI picked the certificate (OpenSSL's SSL_set_SSL_CTX
// does not carry verification over): verify mode, trust store, the CA names sent in the
// CertificateRequest, and a session id context of its own, so a session resumed on another
// port or set never skips a check this one makes.
//
// Thread-safety: immutable once built; Apply from any worker. Ownership: owns its X509_STORE and
// CA name list (each SSL takes its own references).
#ifndef PORTICO_CORE_RUNTIME_TLS_CLIENT_VALIDATION_H_
#define PORTICO_CORE_RUNTIME_TLS_CLIENT_VALIDATION_H_

#include <openssl/ssl.h>

#include <memory>
#include <string>
#include <vector>

#include "portico/sdk/status.h"

namespace portico::core::tls {

class ClientValidation {
 public:
  enum class Mode { kRequireValid, kInsecureFallback, kOptionalValid };

  // Build parses each PEM bundle (one or more certificates). `id` distinguishes this
  // configuration (sessions are bound to it). INVALID_ARGUMENT naming `what` for a bundle without
  // a certificate.
  static StatusOr<std::shared_ptr<const ClientValidation>> Build(
      Mode mode, const std::vector<std::pair<std::string, std::string>>& bundles,  // (what, pem)
      const std::string& id, int verify_depth = 0, std::vector<std::string> allowed_sans = {});

  ClientValidation(const ClientValidation&) = delete;
  ClientValidation& operator=(const ClientValidation&) = delete;
  ~ClientValidation();

  // Apply configures `ssl` (a server SSL in its handshake) to check client certificates.
  void Apply(SSL* ssl) const;
  Mode mode() const { return mode_; }
  // AllowsLeaf: the allowed SANs are empty or `leaf` carries one of them.
  bool AllowsLeaf(X509* leaf) const;
  const std::string& id() const { return id_; }

 private:
  ClientValidation() = default;

  Mode mode_ = Mode::kRequireValid;
  std::string id_;
  int verify_depth_ = 0;  // 0: OpenSSL's default
  std::vector<std::string> allowed_sans_;
  X509_STORE* store_ = nullptr;
  STACK_OF(X509_NAME) * names_ = nullptr;
  unsigned char sid_[32] = {};
};

}  // namespace portico::core::tls

#endif  // PORTICO_CORE_RUNTIME_TLS_CLIENT_VALIDATION_H_
