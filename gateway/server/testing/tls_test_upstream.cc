// tls_test_upstream.cc: see tls_test_upstream.h.
#include "gateway/server/testing/tls_test_upstream.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include "core/runtime/tls/openssl_util.h"
#include "gateway/server/proxy_test_util.h"

namespace portico::gateway::server::testing {

namespace {

int AcceptAnyCertificate(int, X509_STORE_CTX*) { return 1; }

// ContentLength is the value of the Content-Length field in `head` (0 when absent).
size_t ContentLength(const std::string& head) {
  std::string lower = core::tls::AsciiLower(head);
  size_t at = lower.find("\r\ncontent-length:");
  if (at == std::string::npos) return 0;
  return static_cast<size_t>(std::strtoull(lower.c_str() + at + 17, nullptr, 10));
}

}  // namespace

TlsTestUpstream::TlsTestUpstream(const std::string& cert_pem, const std::string& key_pem,
                                 bool request_client_certificate) {
  // OpenSSL's socket BIO write()s: a gateway that closed first must not kill the test.
  signal(SIGPIPE, SIG_IGN);
  ctx_ = SSL_CTX_new(TLS_server_method());
  BIO* cert_bio = BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size()));
  X509* cert = PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr);
  BIO_free(cert_bio);
  BIO* key_bio = BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
  BIO_free(key_bio);
  SSL_CTX_use_certificate(ctx_, cert);
  SSL_CTX_use_PrivateKey(ctx_, key);
  X509_free(cert);
  EVP_PKEY_free(key);
  SSL_CTX_set_alpn_select_cb(
      ctx_,
      [](SSL*, const unsigned char** out, unsigned char* out_len, const unsigned char* in,
         unsigned int in_len, void*) {
        static const unsigned char kHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
        unsigned char* selected = nullptr;
        if (SSL_select_next_proto(&selected, out_len, kHttp11, sizeof(kHttp11), in, in_len) !=
            OPENSSL_NPN_NEGOTIATED) {
          return SSL_TLSEXT_ERR_NOACK;
        }
        *out = selected;
        return SSL_TLSEXT_ERR_OK;
      },
      nullptr);
  if (request_client_certificate) SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, &AcceptAnyCertificate);

  listen_fd_ = ListenLoopback(&port_);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

TlsTestUpstream::~TlsTestUpstream() {
  stop_ = true;
  shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  close(listen_fd_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : open_fds_) shutdown(fd, SHUT_RDWR);
  }
  for (std::thread& t : threads_) t.join();
  SSL_CTX_free(ctx_);
}

std::vector<Handshake> TlsTestUpstream::handshakes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return handshakes_;
}

std::vector<std::string> TlsTestUpstream::targets() const {
  std::lock_guard<std::mutex> lock(mu_);
  return targets_;
}

void TlsTestUpstream::AcceptLoop() {
  while (!stop_) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      return;
    }
    ++connections_;
    std::lock_guard<std::mutex> lock(mu_);
    open_fds_.push_back(fd);
    threads_.emplace_back([this, fd] { Serve(fd); });
  }
}

void TlsTestUpstream::Serve(int fd) {
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  SSL* ssl = SSL_new(ctx_);
  SSL_set_fd(ssl, fd);
  Handshake record;
  const bool completed = SSL_accept(ssl) == 1;
  record.completed = completed;
  if (const char* sni = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name)) record.sni = sni;
  const unsigned char* alpn = nullptr;
  unsigned int alpn_length = 0;
  SSL_get0_alpn_selected(ssl, &alpn, &alpn_length);
  record.alpn.assign(reinterpret_cast<const char*>(alpn), alpn_length);
  if (completed) {
    if (X509* peer = SSL_get1_peer_certificate(ssl)) {
      record.client_fingerprint = core::tls::Sha256Fingerprint(peer);
      X509_free(peer);
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    handshakes_.push_back(record);
  }
  std::string buffer;
  char chunk[16384];
  while (completed && !stop_) {
    size_t end;
    while ((end = buffer.find("\r\n\r\n")) == std::string::npos) {
      const int n = SSL_read(ssl, chunk, sizeof(chunk));
      if (n <= 0) goto done;
      buffer.append(chunk, static_cast<size_t>(n));
    }
    const std::string head = buffer.substr(0, end + 4);
    const size_t body = ContentLength(head);
    while (buffer.size() < head.size() + body) {
      const int n = SSL_read(ssl, chunk, sizeof(chunk));
      if (n <= 0) goto done;
      buffer.append(chunk, static_cast<size_t>(n));
    }
    buffer.erase(0, head.size() + body);
    const size_t sp1 = head.find(' ');
    const size_t sp2 = head.find(' ', sp1 + 1);
    const std::string target = head.substr(sp1 + 1, sp2 - sp1 - 1);
    {
      std::lock_guard<std::mutex> lock(mu_);
      targets_.push_back(target);
    }
    const std::string reply = "tls-upstream sni=" + record.sni + " target=" + target;
    const std::string response =
        "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(reply.size()) + "\r\n\r\n" + reply;
    if (SSL_write(ssl, response.data(), static_cast<int>(response.size())) <= 0) break;
  }
done:
  SSL_shutdown(ssl);
  SSL_free(ssl);
  ERR_clear_error();
  close(fd);
}

}  // namespace portico::gateway::server::testing
