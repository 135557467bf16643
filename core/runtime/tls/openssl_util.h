// openssl_util.h: small OpenSSL helpers the TLS code (and its tests) share: the error queue as
// one message, a certificate's SHA-256 fingerprint and subjectAltNames, ASCII lower case.
// Threading: pure functions (OpenSslErrors drains the calling thread's error queue).
#ifndef PORTICO_CORE_RUNTIME_TLS_OPENSSL_UTIL_H_
#define PORTICO_CORE_RUNTIME_TLS_OPENSSL_UTIL_H_

#include <openssl/x509.h>

#include <string>
#include <string_view>
#include <vector>

namespace portico::core::tls {

// OpenSslErrors drains this thread's OpenSSL error queue into one "; "-joined message, or
// returns `fallback` when it is empty.
std::string OpenSslErrors(std::string_view fallback = "unknown OpenSSL error");

// Sha256Fingerprint is the hex SHA-256 of `cert`'s DER ("" for null or on failure).
std::string Sha256Fingerprint(X509* cert);

// SubjectAltNames lists `cert`'s subjectAltName entries as "DNS:a.test", "URI:spiffe://x",
// "email:a@b", "IP:10.0.0.1" (other kinds left out), in certificate order.
std::vector<std::string> SubjectAltNames(X509* cert);

// AsciiLower lower-cases ASCII letters (host names, header names).
std::string AsciiLower(std::string_view s);

}  // namespace portico::core::tls

#endif  // PORTICO_CORE_RUNTIME_TLS_OPENSSL_UTIL_H_
