// tls_test_client.h: TlsTestClient, a blocking TLS 1.2/1.3 client on a real socket for the
// data-plane tests (OpenSSL): handshake with a chosen SNI and protocol range, the certificate
// the server chose, session resumption, and HTTP/1.1 requests over the session.
//
// Thread-safety: one client per thread. Ownership: owns its socket, SSL and SSL_CTX; a Session
// it returns is owned by the caller (shared_ptr, freed with SSL_SESSION_free).
#ifndef PORTICO_GATEWAY_SERVER_TESTING_TLS_TEST_CLIENT_H_
#define PORTICO_GATEWAY_SERVER_TESTING_TLS_TEST_CLIENT_H_

#include <openssl/ssl.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace portico::gateway::server::testing {

// TlsOptions: how TlsTestClient handshakes.
struct TlsOptions {
  std::string sni;                 // "" = no server_name extension
  int min_version = TLS1_VERSION;  // offer what the server must refuse, too
  int max_version = TLS1_3_VERSION;
  std::shared_ptr<SSL_SESSION> resume;  // a session from an earlier client to resume
  std::string alpn;                     // e.g. "h2" to offer only HTTP/2 (wire format built here)
  std::string client_cert_pem, client_key_pem;  // presented when the server asks ("" = none)
};

// TlsResponse is one HTTP/1.1 response (Content-Length framing only).
struct TlsResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string error;  // non-empty when no complete response arrived
};

// Fingerprint is the SHA-256 fingerprint (hex of the DER) of the first certificate of `pem`.
std::string Fingerprint(const std::string& pem);

class TlsTestClient {
 public:
  TlsTestClient(uint16_t port, const TlsOptions& options, std::string_view address = "127.0.0.1");
  ~TlsTestClient();
  TlsTestClient(const TlsTestClient&) = delete;
  TlsTestClient& operator=(const TlsTestClient&) = delete;

  // handshake_error is "" when the handshake completed, else OpenSSL's reason.
  const std::string& handshake_error() const { return error_; }
  bool ok() const { return error_.empty(); }
  // The leaf certificate's first DNS subjectAltName ("" when none).
  std::string PeerDnsName() const;
  // The leaf certificate's SHA-256 fingerprint (hex of its DER), "" when none.
  std::string PeerFingerprint() const;
  std::string Version() const;  // "TLSv1.3", ...
  bool Resumed() const;
  std::string Alpn() const;
  // CertificateRequested: the server asked for a client certificate.
  bool CertificateRequested() const { return certificate_requested_; }
  // Session is the session to resume (read after a request: TLS 1.3 tickets arrive late).
  std::shared_ptr<SSL_SESSION> Session() const;

  TlsResponse Get(std::string_view path, std::string_view host);
  bool Send(std::string_view bytes);
  TlsResponse Read();
  // ReadsEof: the server ended the session (close_notify or EOF) before sending anything more.
  bool ReadsEof();

 private:
  int fd_ = -1;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  std::string error_;
  std::string buffer_;
  bool certificate_requested_ = false;
};

}  // namespace portico::gateway::server::testing

#endif  // PORTICO_GATEWAY_SERVER_TESTING_TLS_TEST_CLIENT_H_
