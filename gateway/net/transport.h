// transport.h: Transport, how a client connection's bytes move, apart from what they mean (the
// HTTP exchange in client_connection.h): plain TCP (PlainTransport) or TLS over it
// (tls_transport.h); HTTP/2 framing plugs in here next. Calls are non-blocking: a transport never
// waits, it reports kAgain and the connection waits for the socket's next edge (edge-triggered
// epoll on fd()).
//
// Thread-safety: none; one connection on one worker. Ownership: a transport owns its socket and
// closes it in Close() (or its destructor).
#ifndef PORTICO_GATEWAY_NET_TRANSPORT_H_
#define PORTICO_GATEWAY_NET_TRANSPORT_H_

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/runtime/tls/peer_certificate.h"

namespace portico::gateway::net {

// IoResult is what a Read or Write did: kDone moved `bytes` (> 0; a write may be partial),
// kAgain moved nothing for now, kEof (reads) met the peer's end, kError failed for good.
struct IoResult {
  enum Kind : uint8_t { kDone, kAgain, kEof, kError };
  Kind kind = kAgain;
  size_t bytes = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  // fd is the socket the event loop watches.
  virtual int fd() const = 0;
  virtual IoResult Read(char* data, size_t size) = 0;
  // Write sends up to `count` pieces in order (one system call for a plain socket).
  virtual IoResult Write(const iovec* pieces, int count) = 0;
  // ShutdownWrite ends the write side (the peer reads EOF) and keeps reading possible.
  virtual void ShutdownWrite() = 0;
  // Close releases the socket (idempotent).
  virtual void Close() = 0;

  // ShortReadDrains: a Read that returned fewer bytes than asked means the socket is empty
  // (plain TCP), so the connection may wait for the next edge; false when the transport reads
  // in units (TLS records) and must be read until kAgain.
  virtual bool ShortReadDrains() const { return true; }
  // ReadWaitsForWritable / WriteWaitsForReadable: the last kAgain waits for the other
  // direction's readiness (TLS: a handshake or key update that must write while reading).
  virtual bool ReadWaitsForWritable() const { return false; }
  virtual bool WriteWaitsForReadable() const { return false; }
  // secure: the bytes are encrypted (the request's scheme is https).
  virtual bool secure() const { return false; }
  // server_name is the TLS SNI the client sent ("" without TLS or SNI), once the handshake
  // got that far.
  virtual std::string_view server_name() const { return {}; }
  // version is the TLS version ("TLSv1.3"; "" without TLS); peer_certificate the client's
  // certificate (null without TLS or when none was presented).
  virtual std::string_view version() const { return {}; }
  virtual const core::tls::PeerCertificate* peer_certificate() { return nullptr; }
};

// PlainTransport is TCP as it is: recv, sendmsg (MSG_NOSIGNAL), shutdown, close.
class PlainTransport final : public Transport {
 public:
  explicit PlainTransport(int fd) : fd_(fd) {}
  PlainTransport(const PlainTransport&) = delete;
  PlainTransport& operator=(const PlainTransport&) = delete;
  ~PlainTransport() override { Close(); }

  int fd() const override { return fd_; }
  IoResult Read(char* data, size_t size) override;
  IoResult Write(const iovec* pieces, int count) override;
  void ShutdownWrite() override;
  void Close() override;

 private:
  int fd_;
};

}  // namespace portico::gateway::net

#endif  // PORTICO_GATEWAY_NET_TRANSPORT_H_
