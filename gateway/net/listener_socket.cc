// listener_socket.cc: see listener_socket.h.
#include "gateway/net/listener_socket.h"

#include <arpa/inet.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "gateway/net/socket_address.h"

namespace portico::gateway::net {

namespace {

constexpr int kBacklog = 4096;

std::string Describe(const std::string& address, uint16_t port) {
  return (address.find(':') != std::string::npos ? "[" + address + "]" : address) + ":" +
         std::to_string(port);
}

// BindOne creates, binds and listens one SO_REUSEPORT socket; -1 with errno on failure.
int BindOne(const sockaddr_storage& address, socklen_t length) {
  int fd = socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
      setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0) {
    int err = errno;
    close(fd);
    errno = err;
    return -1;
  }
  if (address.ss_family == AF_INET6) {
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
  }
  // Accept only once the client sent something (its request): one wake-up, then read at once.
  int defer_seconds = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer_seconds, sizeof(defer_seconds));
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));  // inherited by accepted sockets
  if (bind(fd, reinterpret_cast<const sockaddr*>(&address), length) != 0 ||
      listen(fd, kBacklog) != 0) {
    int err = errno;
    close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

}  // namespace

std::string ListenerSocket::MakeKey(const std::string& address, uint16_t port,
                                    const std::string& protocol) {
  return address + "|" + std::to_string(port) + "|" + protocol;
}

StatusOr<std::shared_ptr<ListenerSocket>> ListenerSocket::Open(std::string address, uint16_t port,
                                                               std::string protocol,
                                                               std::string bind_address,
                                                               int count) {
  sockaddr_storage sa;
  socklen_t length;
  if (!ParseIpLiteral(bind_address, port, &sa, &length)) {
    return InvalidArgumentError("cannot listen on " + Describe(bind_address, port) +
                                ": not an IP address");
  }
  std::shared_ptr<ListenerSocket> socket(new ListenerSocket());
  socket->key_ = MakeKey(address, port, protocol);
  socket->address_ = std::move(address);
  socket->port_ = port;
  socket->protocol_ = std::move(protocol);
  socket->bind_address_ = std::move(bind_address);
  for (int i = 0; i < count; ++i) {
    int fd = BindOne(sa, length);
    if (fd < 0) {
      return UnavailableError("cannot listen on " + Describe(socket->bind_address_, port) + ": " +
                              std::strerror(errno));
    }
    socket->fds_.push_back(fd);
    if (i == 0) {
      sockaddr_storage bound;
      socklen_t bound_length = sizeof(bound);
      getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &bound_length);
      socket->bound_port_ =
          ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
      // Port 0: the other workers' sockets join the port the first one got.
      if (sa.ss_family == AF_INET6) {
        reinterpret_cast<sockaddr_in6*>(&sa)->sin6_port = htons(socket->bound_port_);
      } else {
        reinterpret_cast<sockaddr_in*>(&sa)->sin_port = htons(socket->bound_port_);
      }
    }
  }
  return socket;
}

bool ListenerSocket::KernelMigratesRequests() {
  std::ifstream in("/proc/sys/net/ipv4/tcp_migrate_req");
  int value = 0;
  return static_cast<bool>(in >> value) && value != 0;
}

bool ListenerSocket::StopNewHandshakes(int fd) {
  // A socket filter sees a TCP segment from its TCP header: byte 13 holds the flags. A SYN
  // without ACK (a new handshake) is dropped; everything else (the final ACK of a handshake under
  // way, data) passes. Accepted sockets inherit the filter, harmlessly: they never see such SYNs.
  static const sock_filter kDropSyn[] = {
      BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 13),
      BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0x12),        // SYN | ACK
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x02, 0, 1),  // SYN alone?
      BPF_STMT(BPF_RET | BPF_K, 0),                     // drop
      BPF_STMT(BPF_RET | BPF_K, 0xFFFFFFFF),            // keep
  };
  sock_fprog program{static_cast<unsigned short>(sizeof(kDropSyn) / sizeof(kDropSyn[0])),
                     const_cast<sock_filter*>(kDropSyn)};
  if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &program, sizeof(program)) != 0) return false;
  int zero = 0;
  setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &zero, sizeof(zero));
  return true;
}

ListenerSocket::~ListenerSocket() {
  for (int fd : fds_) close(fd);
}

}  // namespace portico::gateway::net
