// socket_address.h: ParseIpLiteral, a socket address from an IP literal and a port (listeners
// bind to one, upstream connections go to one).
//
// Thread-safety: reentrant.
#ifndef PORTICO_GATEWAY_NET_SOCKET_ADDRESS_H_
#define PORTICO_GATEWAY_NET_SOCKET_ADDRESS_H_

#include <sys/socket.h>

#include <cstdint>
#include <string_view>

namespace portico::gateway::net {

// ParseIpLiteral fills `address` from an IPv4 or IPv6 literal and a port; false otherwise.
bool ParseIpLiteral(std::string_view ip, uint16_t port, sockaddr_storage* address,
                    socklen_t* length);

}  // namespace portico::gateway::net

#endif  // PORTICO_GATEWAY_NET_SOCKET_ADDRESS_H_
