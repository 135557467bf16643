// tls_material.h: the checks of a kubernetes.io/tls Secret's material (OpenSSL): tls.crt is a
// PEM chain whose first certificate is the leaf, tls.key a PEM private key (PKCS#1, PKCS#8 or
// SEC1; encrypted keys are refused) that matches the leaf, and the leaf has not expired; and of
// a CA bundle (any Secret's ca.crt): PEM certificates that parse.
//
// The result is what other kinds may know about the material, never the material: validity, a
// reason, the SHA-256 that referrers carry as {secretRef, sha256}, the leaf's SANs and validity
// period. Also the strict base64 decoding of Secret data values.
// Threading: pure functions (OpenSSL 3 is thread-safe for these calls).
#ifndef PORTICO_PLUGINS_SECRET_TLS_MATERIAL_H_
#define PORTICO_PLUGINS_SECRET_TLS_MATERIAL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "portico/sdk/secret_data.h"

namespace portico::plugins::secret {

// TlsMaterial is the secret-free summary of a certificate and key pair.
struct TlsMaterial {
  bool valid = false;
  // Empty when valid; otherwise InvalidCertificate, InvalidKey, KeyMismatch or Expired.
  std::string reason;
  std::string message;
  std::string sha256;             // hex SHA-256 of the tls.crt bytes followed by the tls.key bytes
  std::vector<std::string> sans;  // the leaf's subjectAltName DNS names and IP addresses
  int64_t not_before_unix_ms = 0;
  int64_t not_after_unix_ms = 0;
};

// CheckTlsMaterial parses and checks a certificate chain and key at time `now_unix_ms`.
TlsMaterial CheckTlsMaterial(std::string_view cert_pem, std::string_view key_pem,
                             int64_t now_unix_ms);

// CaBundle is the secret-free summary of a CA bundle (a Secret's ca.crt key).
struct CaBundle {
  bool valid = false;
  std::string reason;  // empty when valid; otherwise InvalidCACertificate
  std::string message;
  std::string sha256;    // hex SHA-256 of the ca.crt bytes (the certificate.v1 ca entry's)
  int certificates = 0;  // how many PEM certificates the bundle holds
};

// CheckCaBundle parses a CA bundle: one or more PEM certificates, each of which must parse
// (expiry is not checked: a bundle may keep an expired CA beside its successor).
CaBundle CheckCaBundle(std::string_view ca_pem);

// Sha256 returns the hex SHA-256 of `a` followed by `b` ("" if OpenSSL fails).
std::string Sha256(std::string_view a, std::string_view b = {});

// Base64Decode decodes standard, padded base64 (the SDK's); nullopt when malformed.
using sdk::Base64Decode;

}  // namespace portico::plugins::secret

#endif  // PORTICO_PLUGINS_SECRET_TLS_MATERIAL_H_
