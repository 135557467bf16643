// tls_transport.h: TlsTransport, TLS (OpenSSL 3) over a connection's PlainTransport: either the
// server side of a handshake whose certificate the listener set's core::tls::ServerTlsSet selects
// by SNI (during the first Read), or the client side towards a backend under a BackendTLSPolicy
// (core::tls::UpstreamTls: SNI, trust and name checks; the handshake runs in the first Write),
// then records both ways. Non-blocking like every Transport: OpenSSL's
// WANT_READ / WANT_WRITE become kAgain, and when a read waits for writability (or a write for
// readability) the transport says so, so the connection retries on the other edge.
//
// Writes: the pieces are encrypted in chunks of at most kChunk bytes (one TLS record each,
// copied into one per-thread buffer when a chunk spans pieces, so a response head and its body
// share a record); OpenSSL keeps a record that the socket did not take and the connection
// offers the same bytes again, which is what SSL_write's retry rule needs (a retry may be longer,
// never shorter: chunks only grow as more bytes wait).
//
// Thread-safety: none; one connection on one worker. Ownership: owns its SSL (freed in Close or
// the destructor) and a reference to the ServerTlsSet (or UpstreamTls) it handshakes with; the
// PlainTransport (the socket) belongs to the connection and must outlive this transport.
#ifndef PORTICO_GATEWAY_NET_TLS_TRANSPORT_H_
#define PORTICO_GATEWAY_NET_TLS_TRANSPORT_H_

#include <openssl/ssl.h>

#include <memory>
#include <string>

#include "core/runtime/tls/tls_table.h"
#include "core/runtime/tls/upstream_tls.h"
#include "gateway/net/transport.h"

namespace portico::gateway::net {

class TlsTransport final : public Transport {
 public:
  static constexpr size_t kChunk = 16384;  // TLS's maximum record payload

  // Create returns nullptr when OpenSSL cannot make a session (out of memory).
  static std::unique_ptr<TlsTransport> Create(PlainTransport* socket,
                                              std::shared_ptr<const core::tls::ServerTlsSet> set);
  // CreateClient: the client side towards a backend; nullptr when `tls` is not usable or
  // OpenSSL cannot make a session.
  static std::unique_ptr<TlsTransport> CreateClient(
      PlainTransport* socket, std::shared_ptr<const core::tls::UpstreamTls> tls);
  TlsTransport(const TlsTransport&) = delete;
  TlsTransport& operator=(const TlsTransport&) = delete;
  ~TlsTransport() override { Close(); }

  int fd() const override { return socket_->fd(); }
  IoResult Read(char* data, size_t size) override;
  IoResult Write(const iovec* pieces, int count) override;
  // ShutdownWrite sends close_notify (after a completed handshake), then ends the TCP write side.
  void ShutdownWrite() override;
  void Close() override;

  bool ShortReadDrains() const override { return false; }
  bool ReadWaitsForWritable() const override { return read_waits_for_writable_; }
  bool WriteWaitsForReadable() const override { return write_waits_for_readable_; }
  bool secure() const override { return true; }
  std::string_view server_name() const override;
  std::string_view version() const override;
  // peer_certificate reads the client's certificate once, after the handshake.
  const core::tls::PeerCertificate* peer_certificate() override;

  // failure is why the session failed ("" while it has not), for the connection's log.
  const std::string& failure() const { return failure_; }

 private:
  TlsTransport(PlainTransport* socket, SSL* ssl) : socket_(socket), ssl_(ssl) {}
  // Attach gives `ssl_` the socket BIO; false when OpenSSL cannot make one.
  bool Attach();
  // Failed maps an SSL_get_error code to an IoResult, recording the reason of a failure.
  IoResult Failed(int code, bool reading);

  PlainTransport* socket_;
  SSL* ssl_;
  std::shared_ptr<const core::tls::ServerTlsSet> set_;      // server side
  std::shared_ptr<const core::tls::UpstreamTls> upstream_;  // client side
  bool read_waits_for_writable_ = false;
  bool write_waits_for_readable_ = false;
  std::string failure_;
  bool peer_read_ = false;
  std::unique_ptr<core::tls::PeerCertificate> peer_;
};

}  // namespace portico::gateway::net

#endif  // PORTICO_GATEWAY_NET_TLS_TRANSPORT_H_
