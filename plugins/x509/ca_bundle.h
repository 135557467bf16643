// ca_bundle.h: the check of a PEM CA bundle (a "ca.crt" value of a ConfigMap or Secret) with
// OpenSSL, and the hex SHA-256 that referrers and certificate.v1 "ca" entries carry.
//
// A bundle is usable when it holds at least one PEM block and every block is a "CERTIFICATE"
// that parses as an X.509 certificate (text between blocks is ignored, as PEM allows). The
// result is what other kinds may know about the bundle, never the bundle: validity, a message,
// the number of certificates and the SHA-256 of the PEM bytes exactly as written.
// Threading: pure functions (OpenSSL 3 is thread-safe for these calls; the error queue is
// per thread).
#ifndef PORTICO_PLUGINS_X509_CA_BUNDLE_H_
#define PORTICO_PLUGINS_X509_CA_BUNDLE_H_

#include <string>
#include <string_view>

namespace portico::plugins::x509 {

// CaBundle is the secret-free summary of a CA bundle.
struct CaBundle {
  bool valid = false;
  std::string message;   // empty when valid; otherwise why the bundle is unusable
  int certificates = 0;  // certificates parsed (all of them when valid)
  std::string sha256;    // hex SHA-256 of the PEM bytes
};

// CheckCaBundle parses `pem` and reports whether it is a usable CA bundle.
CaBundle CheckCaBundle(std::string_view pem);

// Sha256 returns the hex SHA-256 of `a` followed by `b` ("" if OpenSSL fails).
std::string Sha256(std::string_view a, std::string_view b = {});

}  // namespace portico::plugins::x509

#endif  // PORTICO_PLUGINS_X509_CA_BUNDLE_H_
