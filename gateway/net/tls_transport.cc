// tls_transport.cc: see tls_transport.h.
#include "gateway/net/tls_transport.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/runtime/tls/openssl_util.h"

namespace portico::gateway::net {

namespace {

// The socket BIO: recv and send(MSG_NOSIGNAL) on the connection's socket, so a peer gone
// mid-record raises EPIPE, never SIGPIPE (OpenSSL's own socket BIO write()s).
int SocketWrite(BIO* bio, const char* data, int size) {
  ssize_t n;
  do {
    n = send(BIO_get_fd(bio, nullptr), data, static_cast<size_t>(size), MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  BIO_clear_retry_flags(bio);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) BIO_set_retry_write(bio);
  return static_cast<int>(n);
}

int SocketRead(BIO* bio, char* data, int size) {
  ssize_t n;
  do {
    n = recv(BIO_get_fd(bio, nullptr), data, static_cast<size_t>(size), 0);
  } while (n < 0 && errno == EINTR);
  BIO_clear_retry_flags(bio);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) BIO_set_retry_read(bio);
  return static_cast<int>(n);
}

// SocketMethod is OpenSSL's socket BIO with SocketWrite and SocketRead in place of its I/O
// (ctrl, create and destroy are the socket BIO's: BIO_get_fd, BIO_NOCLOSE, ...).
const BIO_METHOD* SocketMethod() {
  static const BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR,
                                 "portico socket");
    const BIO_METHOD* base = BIO_s_socket();
    BIO_meth_set_write(m, &SocketWrite);
    BIO_meth_set_read(m, &SocketRead);
    BIO_meth_set_ctrl(m, BIO_meth_get_ctrl(base));
    BIO_meth_set_create(m, BIO_meth_get_create(base));
    BIO_meth_set_destroy(m, BIO_meth_get_destroy(base));
    return m;
  }();
  return method;
}

}  // namespace

bool TlsTransport::Attach() {
  BIO* bio = BIO_new(SocketMethod());
  if (bio == nullptr) return false;
  BIO_set_fd(bio, socket_->fd(), BIO_NOCLOSE);  // the PlainTransport closes the socket
  SSL_set_bio(ssl_, bio, bio);
  return true;
}

std::unique_ptr<TlsTransport> TlsTransport::Create(
    PlainTransport* socket, std::shared_ptr<const core::tls::ServerTlsSet> set) {
  if (set == nullptr) return nullptr;
  SSL* ssl = set->NewSession();
  if (ssl == nullptr) return nullptr;
  std::unique_ptr<TlsTransport> out(new TlsTransport(socket, ssl));
  out->set_ = std::move(set);
  if (!out->Attach()) return nullptr;
  return out;
}

std::unique_ptr<TlsTransport> TlsTransport::CreateClient(
    PlainTransport* socket, std::shared_ptr<const core::tls::UpstreamTls> tls) {
  if (tls == nullptr) return nullptr;
  SSL* ssl = tls->NewSession();
  if (ssl == nullptr) return nullptr;
  std::unique_ptr<TlsTransport> out(new TlsTransport(socket, ssl));
  out->upstream_ = std::move(tls);
  if (!out->Attach()) return nullptr;
  return out;
}

IoResult TlsTransport::Failed(int code, bool reading) {
  read_waits_for_writable_ = write_waits_for_readable_ = false;
  switch (code) {
    case SSL_ERROR_WANT_READ:
      if (!reading) write_waits_for_readable_ = true;
      return {IoResult::kAgain, 0};
    case SSL_ERROR_WANT_WRITE:
      if (reading) read_waits_for_writable_ = true;
      return {IoResult::kAgain, 0};
    case SSL_ERROR_ZERO_RETURN:  // close_notify, or EOF (SSL_OP_IGNORE_UNEXPECTED_EOF)
      return {IoResult::kEof, 0};
    case SSL_ERROR_SYSCALL:
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return {IoResult::kAgain, 0};
      if (failure_.empty()) failure_ = std::string("tls: ") + std::strerror(errno);
      return {errno == 0 ? IoResult::kEof : IoResult::kError, 0};
    default: {
      const unsigned long e = ERR_peek_last_error();
      char buf[256];
      ERR_error_string_n(e, buf, sizeof(buf));
      if (failure_.empty()) {
        failure_ = std::string(SSL_is_init_finished(ssl_) ? "tls: " : "tls_handshake: ") +
                   (e != 0 ? buf : "error");
        const long verify = SSL_get_verify_result(ssl_);
        if (verify != X509_V_OK && upstream_ != nullptr) {
          failure_ += std::string(" (") + X509_verify_cert_error_string(verify) + ")";
        }
      }
      ERR_clear_error();
      return {IoResult::kError, 0};
    }
  }
}

IoResult TlsTransport::Read(char* data, size_t size) {
  if (ssl_ == nullptr) return {IoResult::kError, 0};
  size_t n = 0;
  ERR_clear_error();
  if (SSL_read_ex(ssl_, data, size, &n) == 1) {
    read_waits_for_writable_ = false;
    return {IoResult::kDone, n};
  }
  return Failed(SSL_get_error(ssl_, 0), true);
}

IoResult TlsTransport::Write(const iovec* pieces, int count) {
  if (ssl_ == nullptr) return {IoResult::kError, 0};
  thread_local char stage[kChunk];
  size_t total = 0;
  int piece = 0;
  size_t offset = 0;  // into pieces[piece]
  for (;;) {
    while (piece < count && offset == pieces[piece].iov_len) {
      ++piece;
      offset = 0;
    }
    if (piece == count) break;
    // The chunk: up to kChunk bytes from (piece, offset); pointed at when it lies in one piece.
    const char* data = static_cast<const char*>(pieces[piece].iov_base) + offset;
    size_t length = std::min(pieces[piece].iov_len - offset, kChunk);
    if (length < kChunk && piece + 1 < count) {
      std::memcpy(stage, data, length);
      for (int p = piece + 1; p < count && length < kChunk; ++p) {
        const size_t take = std::min(pieces[p].iov_len, kChunk - length);
        std::memcpy(stage + length, pieces[p].iov_base, take);
        length += take;
      }
      data = stage;
    }
    size_t written = 0;
    ERR_clear_error();
    if (SSL_write_ex(ssl_, data, length, &written) != 1) {
      IoResult failed = Failed(SSL_get_error(ssl_, 0), false);
      if (total > 0 && failed.kind == IoResult::kAgain) break;
      return failed;
    }
    write_waits_for_readable_ = false;
    total += written;
    // Advance (piece, offset) by `written`.
    for (size_t left = written; left > 0;) {
      const size_t step = std::min(left, pieces[piece].iov_len - offset);
      offset += step;
      left -= step;
      if (offset == pieces[piece].iov_len && left > 0) {
        ++piece;
        offset = 0;
      }
    }
  }
  return {total > 0 ? IoResult::kDone : IoResult::kAgain, total};
}

void TlsTransport::ShutdownWrite() {
  if (ssl_ != nullptr && SSL_is_init_finished(ssl_)) {
    ERR_clear_error();
    SSL_shutdown(ssl_);  // close_notify; the peer's is not waited for
    ERR_clear_error();
  }
  socket_->ShutdownWrite();
}

void TlsTransport::Close() {
  if (ssl_ != nullptr) {
    // A session that ended cleanly stays resumable by its id: OpenSSL drops a session freed
    // without a shutdown from the cache (a client closing first would never resume).
    if (failure_.empty() && SSL_is_init_finished(ssl_)) {
      SSL_set_shutdown(ssl_, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    }
    SSL_free(ssl_);
    ssl_ = nullptr;
  }
  socket_->Close();
}

std::string_view TlsTransport::version() const {
  return ssl_ != nullptr && SSL_is_init_finished(ssl_) ? SSL_get_version(ssl_) : "";
}

const core::tls::PeerCertificate* TlsTransport::peer_certificate() {
  if (peer_read_ || ssl_ == nullptr || !SSL_is_init_finished(ssl_)) return peer_.get();
  peer_read_ = true;
  X509* cert = SSL_get0_peer_certificate(ssl_);
  if (cert == nullptr) return nullptr;
  auto peer = std::make_unique<core::tls::PeerCertificate>();
  if (BIO* bio = BIO_new(BIO_s_mem())) {
    X509_NAME_print_ex(bio, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253);
    char* data = nullptr;
    const long size = BIO_get_mem_data(bio, &data);
    if (size > 0) peer->subject.assign(data, static_cast<size_t>(size));
    BIO_free(bio);
  }
  peer->sans = core::tls::SubjectAltNames(cert);
  peer->sha256 = core::tls::Sha256Fingerprint(cert);
  peer->verified = SSL_get_verify_result(ssl_) == X509_V_OK;
  peer_ = std::move(peer);
  return peer_.get();
}

std::string_view TlsTransport::server_name() const {
  if (ssl_ == nullptr) return {};
  const char* name = SSL_get_servername(ssl_, TLSEXT_NAMETYPE_host_name);
  return name != nullptr ? std::string_view(name) : std::string_view();
}

}  // namespace portico::gateway::net
