// peer_certificate.h: PeerCertificate, what a TLS client presented, as filters
// (core::filter::FilterContext::client_certificate) and the access log see it. A plain struct,
// filled once per connection by the transport after the handshake.
//
// Thread-safety: immutable once filled. Ownership: owned by the connection's transport; views
// of it live as long as the connection.
#ifndef PORTICO_CORE_RUNTIME_TLS_PEER_CERTIFICATE_H_
#define PORTICO_CORE_RUNTIME_TLS_PEER_CERTIFICATE_H_

#include <string>
#include <vector>

namespace portico::core::tls {

struct PeerCertificate {
  std::string subject;            // RFC 2253 ("CN=client,O=Acme")
  std::vector<std::string> sans;  // "DNS:a.test", "URI:spiffe://x/y", "IP:10.0.0.1", "email:..."
  std::string sha256;             // fingerprint: hex SHA-256 of the DER
  bool verified = false;          // chains to the trusted CAs (false only in insecure fallback)
};

}  // namespace portico::core::tls

#endif  // PORTICO_CORE_RUNTIME_TLS_PEER_CERTIFICATE_H_
