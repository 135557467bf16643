// listener_socket.h: ListenerSocket, the listening sockets of one listener-set key (address,
// port, protocol): one non-blocking socket per worker, all bound with SO_REUSEPORT to the same
// address and port, so the kernel spreads new connections over the workers without a shared
// accept queue or lock. Bound at prepare time (a failure nacks the owners), registered by each
// worker with its own epoll, closed when the last snapshot naming it is dropped (each worker
// deregisters its socket first).
//
// Thread-safety: immutable after Open, except that each worker uses only fd(its index).
// Ownership: owns the fds; shared by snapshots and workers (shared_ptr).
#ifndef PORTICO_GATEWAY_SERVER_LISTENER_SOCKET_H_
#define PORTICO_GATEWAY_SERVER_LISTENER_SOCKET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "portico/sdk/status.h"

namespace portico::gateway::server {

class ListenerSocket {
 public:
  // Open binds `count` sockets to (bind_address, port) and listens. `address` is the listener
  // set's address as the route table names it ("" for the default), kept for matching. Port 0
  // binds one ephemeral port shared by all `count` sockets (tests). UNAVAILABLE naming the
  // address and the errno on failure; INVALID_ARGUMENT for an address that is not an IP literal.
  static StatusOr<std::shared_ptr<ListenerSocket>> Open(std::string address, uint16_t port,
                                                        std::string protocol,
                                                        std::string bind_address, int count);
  ListenerSocket(const ListenerSocket&) = delete;
  ListenerSocket& operator=(const ListenerSocket&) = delete;
  ~ListenerSocket();

  const std::string& address() const { return address_; }  // route-table key
  uint16_t port() const { return port_; }                  // route-table key
  const std::string& protocol() const { return protocol_; }
  const std::string& bind_address() const { return bind_address_; }
  uint16_t bound_port() const { return bound_port_; }  // differs from port() only for port 0
  int fd(int worker) const { return fds_[static_cast<size_t>(worker)]; }
  // Key is "address|port|protocol", the identity kept across commits.
  const std::string& key() const { return key_; }

  static std::string MakeKey(const std::string& address, uint16_t port,
                             const std::string& protocol);

 private:
  ListenerSocket() = default;
  std::string address_;
  uint16_t port_ = 0;
  std::string protocol_;
  std::string bind_address_;
  uint16_t bound_port_ = 0;
  std::string key_;
  std::vector<int> fds_;
};

}  // namespace portico::gateway::server

#endif  // PORTICO_GATEWAY_SERVER_LISTENER_SOCKET_H_
