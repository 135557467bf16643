// tls_test_upstream.h: TlsTestUpstream, an HTTPS backend for the data-plane tests of upstream TLS
// (BackendTLSPolicy): a real socket on 127.0.0.1 (port 0), OpenSSL server side with a given
// certificate, optionally asking for a client certificate (any is accepted and recorded). It
// records each handshake (the SNI it received, the ALPN chosen, the client certificate's
// fingerprint) and answers every HTTP/1.1 request (Content-Length bodies only) with 200 and
// "tls-upstream sni=<sni> target=<target>", keeping the connection alive.
//
// Thread-safety: accessors from any thread (a mutex guards the records); one thread per
// connection. Ownership: owns its sockets, SSL_CTX and threads (joined by the destructor).
#ifndef PORTICO_GATEWAY_SERVER_TESTING_TLS_TEST_UPSTREAM_H_
#define PORTICO_GATEWAY_SERVER_TESTING_TLS_TEST_UPSTREAM_H_

#include <openssl/ssl.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace portico::gateway::server::testing {

// Handshake is what one connection's handshake showed the backend.
struct Handshake {
  bool completed = false;
  std::string sni;
  std::string alpn;
  std::string client_fingerprint;  // SHA-256 of the client certificate's DER, "" when none
};

class TlsTestUpstream {
 public:
  TlsTestUpstream(const std::string& cert_pem, const std::string& key_pem,
                  bool request_client_certificate = false);
  ~TlsTestUpstream();
  TlsTestUpstream(const TlsTestUpstream&) = delete;
  TlsTestUpstream& operator=(const TlsTestUpstream&) = delete;

  uint16_t port() const { return port_; }
  size_t connections() const { return connections_.load(); }
  std::vector<Handshake> handshakes() const;
  std::vector<std::string> targets() const;  // request targets answered, in order

 private:
  void AcceptLoop();
  void Serve(int fd);

  SSL_CTX* ctx_ = nullptr;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<size_t> connections_{0};
  mutable std::mutex mu_;
  std::vector<Handshake> handshakes_;
  std::vector<std::string> targets_;
  std::vector<int> open_fds_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

}  // namespace portico::gateway::server::testing

#endif  // PORTICO_GATEWAY_SERVER_TESTING_TLS_TEST_UPSTREAM_H_
