// tls_test_client.cc: see tls_test_client.h.
#include "gateway/server/testing/tls_test_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/runtime/tls/openssl_util.h"

namespace portico::gateway::server::testing {

std::string Fingerprint(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  std::string out = core::tls::Sha256Fingerprint(cert);
  X509_free(cert);
  return out;
}

std::string TlsTestClient::PeerFingerprint() const {
  if (ssl_ == nullptr) return "";
  X509* peer = SSL_get1_peer_certificate(ssl_);
  std::string out = core::tls::Sha256Fingerprint(peer);
  X509_free(peer);
  return out;
}

TlsTestClient::TlsTestClient(uint16_t port, const TlsOptions& options, std::string_view address) {
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval tv{5, 0};
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  inet_pton(AF_INET, std::string(address).c_str(), &sa.sin_addr);
  if (connect(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
    error_ = std::string("connect: ") + std::strerror(errno);
    return;
  }
  ctx_ = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_min_proto_version(ctx_, options.min_version);
  SSL_CTX_set_max_proto_version(ctx_, options.max_version);
  if (options.min_version < TLS1_2_VERSION) SSL_CTX_set_security_level(ctx_, 0);  // allow 1.0/1.1
  // No client cache: freeing the context would mark its sessions not resumable (Session()).
  SSL_CTX_set_session_cache_mode(ctx_, SSL_SESS_CACHE_OFF);
  if (!options.client_cert_pem.empty()) {
    BIO* cert_bio = BIO_new_mem_buf(options.client_cert_pem.data(),
                                    static_cast<int>(options.client_cert_pem.size()));
    X509* cert = PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr);
    BIO_free(cert_bio);
    BIO* key_bio = BIO_new_mem_buf(options.client_key_pem.data(),
                                   static_cast<int>(options.client_key_pem.size()));
    EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
    BIO_free(key_bio);
    if (cert != nullptr) SSL_CTX_use_certificate(ctx_, cert);
    if (key != nullptr) SSL_CTX_use_PrivateKey(ctx_, key);
    X509_free(cert);
    EVP_PKEY_free(key);
  }
  // Records whether the server sent a CertificateRequest.
  SSL_CTX_set_msg_callback(
      ctx_, [](int write_p, int, int content_type, const void* buf, size_t len, SSL* ssl, void*) {
        if (write_p == 0 && content_type == SSL3_RT_HANDSHAKE && len > 0 &&
            static_cast<const unsigned char*>(buf)[0] == SSL3_MT_CERTIFICATE_REQUEST) {
          static_cast<TlsTestClient*>(SSL_get_app_data(ssl))->certificate_requested_ = true;
        }
      });
  ssl_ = SSL_new(ctx_);
  SSL_set_app_data(ssl_, this);
  SSL_set_fd(ssl_, fd_);
  if (!options.sni.empty()) SSL_set_tlsext_host_name(ssl_, options.sni.c_str());
  if (!options.alpn.empty()) {
    std::string wire(1, static_cast<char>(options.alpn.size()));
    wire += options.alpn;
    SSL_set_alpn_protos(ssl_, reinterpret_cast<const unsigned char*>(wire.data()),
                        static_cast<unsigned int>(wire.size()));
  }
  if (options.resume != nullptr) SSL_set_session(ssl_, options.resume.get());
  ERR_clear_error();
  if (SSL_connect(ssl_) != 1) error_ = core::tls::OpenSslErrors("handshake failed");
}

TlsTestClient::~TlsTestClient() {
  if (ssl_ != nullptr) {
    // Freed without a shutdown, OpenSSL marks the session not resumable: end it quietly first.
    SSL_set_quiet_shutdown(ssl_, 1);
    SSL_shutdown(ssl_);
    SSL_free(ssl_);
  }
  if (ctx_ != nullptr) SSL_CTX_free(ctx_);
  if (fd_ >= 0) close(fd_);
}

std::string TlsTestClient::PeerDnsName() const {
  if (ssl_ == nullptr) return "";
  X509* peer = SSL_get1_peer_certificate(ssl_);
  std::string out;
  for (const std::string& san : core::tls::SubjectAltNames(peer)) {
    if (san.rfind("DNS:", 0) == 0) {
      out = san.substr(4);
      break;
    }
  }
  X509_free(peer);
  return out;
}

std::string TlsTestClient::Version() const { return ssl_ != nullptr ? SSL_get_version(ssl_) : ""; }

bool TlsTestClient::Resumed() const { return ssl_ != nullptr && SSL_session_reused(ssl_) == 1; }

std::string TlsTestClient::Alpn() const {
  const unsigned char* data = nullptr;
  unsigned int length = 0;
  if (ssl_ != nullptr) SSL_get0_alpn_selected(ssl_, &data, &length);
  return data != nullptr ? std::string(reinterpret_cast<const char*>(data), length) : "";
}

std::shared_ptr<SSL_SESSION> TlsTestClient::Session() const {
  SSL_SESSION* session = ssl_ != nullptr ? SSL_get1_session(ssl_) : nullptr;
  return std::shared_ptr<SSL_SESSION>(session, [](SSL_SESSION* s) {
    if (s != nullptr) SSL_SESSION_free(s);
  });
}

bool TlsTestClient::Send(std::string_view bytes) {
  if (!ok()) return false;
  size_t written = 0;
  return SSL_write_ex(ssl_, bytes.data(), bytes.size(), &written) == 1 && written == bytes.size();
}

TlsResponse TlsTestClient::Get(std::string_view path, std::string_view host) {
  std::string request =
      "GET " + std::string(path) + " HTTP/1.1\r\nHost: " + std::string(host) + "\r\n\r\n";
  if (!Send(request)) {
    TlsResponse r;
    r.error = ok() ? "write failed" : error_;
    return r;
  }
  return Read();
}

TlsResponse TlsTestClient::Read() {
  TlsResponse r;
  auto fill = [&]() {
    char buf[16384];
    size_t n = 0;
    if (SSL_read_ex(ssl_, buf, sizeof(buf), &n) != 1) return false;
    buffer_.append(buf, n);
    return true;
  };
  size_t end;
  while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
    if (!fill()) {
      r.error = "no response head";
      return r;
    }
  }
  std::string head = buffer_.substr(0, end);
  buffer_.erase(0, end + 4);
  if (head.size() < 12 || head.compare(0, 9, "HTTP/1.1 ") != 0) {
    r.error = "bad status line: " + head.substr(0, 40);
    return r;
  }
  r.status = std::stoi(head.substr(9, 3));
  size_t pos = head.find("\r\n");
  while (pos != std::string::npos) {
    size_t next = head.find("\r\n", pos + 2);
    std::string line =
        head.substr(pos + 2, next == std::string::npos ? std::string::npos : next - pos - 2);
    size_t colon = line.find(':');
    if (colon != std::string::npos) {
      size_t v = line.find_first_not_of(' ', colon + 1);
      r.headers[core::tls::AsciiLower(line.substr(0, colon))] =
          v == std::string::npos ? "" : line.substr(v);
    }
    pos = next;
  }
  size_t length = r.headers.count("content-length") ? std::stoul(r.headers["content-length"]) : 0;
  while (buffer_.size() < length) {
    if (!fill()) {
      r.error = "short body";
      return r;
    }
  }
  r.body = buffer_.substr(0, length);
  buffer_.erase(0, length);
  return r;
}

bool TlsTestClient::ReadsEof() {
  if (!buffer_.empty()) return false;
  char c;
  size_t n = 0;
  if (SSL_read_ex(ssl_, &c, 1, &n) == 1) return false;
  const int e = SSL_get_error(ssl_, 0);
  if (e == SSL_ERROR_SYSCALL) return errno != EAGAIN && errno != EWOULDBLOCK;  // not a timeout
  return e == SSL_ERROR_ZERO_RETURN || e == SSL_ERROR_SSL;  // close_notify, or EOF without it
}

}  // namespace portico::gateway::server::testing
