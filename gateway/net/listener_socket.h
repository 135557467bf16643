// listener_socket.h: ListenerSocket, the listening sockets of one listener-set key (address,
// port, protocol): one non-blocking socket per worker, all bound with SO_REUSEPORT to the same
// address and port, so the kernel spreads new connections over the workers without a shared
// accept queue or lock. Bound at prepare time (a failure nacks the owners), registered by each
// worker with its own epoll, closed when the last snapshot naming it is dropped (each worker
// deregisters its socket first).
//
// Hand-over (a restart with the next process already listening on the same port, SO_REUSEPORT):
// each SO_REUSEPORT socket has its own accept queue, and when one stops listening (close or
// shutdown) Linux resets the connections still queued on it and drops its half-open ones (nginx
// ticket #1300). Envoy and HAProxy avoid that by handing their listening sockets to the next
// process over a Unix socket; processes that share a port instead (systemd units started side by
// side, a second gateway in the same network namespace) need the kernel's help. A draining
// worker therefore (Worker::BeginDrain, the chosen order):
//   1. accepts everything already queued (those connections are served, with Connection: close);
//   2. when net.ipv4.tcp_migrate_req is on (Linux 5.14+, per network namespace;
//      KernelMigratesRequests), stops listening at once: the kernel moves the accept queue and
//      the half-open requests to the other listeners of the group (the next process), so nothing
//      is reset and no client waits;
//   3. else stops new handshakes first (StopNewHandshakes: a classic BPF socket filter drops SYNs
//      reaching this socket, so those clients retransmit their SYN one RTO, 1 s, later, when the
//      socket is gone and the kernel picks a live one; TCP_DEFER_ACCEPT is turned off so
//      handshakes already under way complete at the client's ACK), keeps accepting for
//      kHandshakeGraceMs, then stops listening. Nothing is reset unless a handshake under way
//      outlasts the grace; the cost is up to 1 s of connect latency for clients whose SYN came
//      during the grace. Turn tcp_migrate_req on (docs/operations.md) to avoid both.
// An eBPF SO_REUSEPORT program could steer SYNs away without a retransmit, but needs CAP_BPF;
// a classic socket filter and the sysctl need nothing of the gateway process.
//
// Thread-safety: immutable after Open, except that each worker uses only fd(its index); the
// static helpers are safe from any thread. Ownership: owns the fds; shared by snapshots and
// workers (shared_ptr).
#ifndef PORTICO_GATEWAY_NET_LISTENER_SOCKET_H_
#define PORTICO_GATEWAY_NET_LISTENER_SOCKET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "portico/sdk/status.h"

namespace portico::gateway::net {

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

  // How long a draining socket keeps accepting after StopNewHandshakes (step 3 above): longer
  // than a handshake's round trip, shorter than the SYN retransmission timeout (1 s), so a SYN
  // dropped during the grace is retransmitted once, to a live socket.
  static constexpr uint64_t kHandshakeGraceMs = 250;
  // KernelMigratesRequests says whether net.ipv4.tcp_migrate_req is on in this process's
  // network namespace (false when the file is missing: before Linux 5.14).
  static bool KernelMigratesRequests();
  // StopNewHandshakes makes listening socket `fd` drop new SYNs and complete pending handshakes
  // without waiting for data; what is queued stays acceptable. false (errno set) when the filter
  // cannot be attached.
  static bool StopNewHandshakes(int fd);

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

}  // namespace portico::gateway::net

#endif  // PORTICO_GATEWAY_NET_LISTENER_SOCKET_H_
