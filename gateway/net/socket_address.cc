#include "gateway/net/socket_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

namespace portico::gateway::net {

bool ParseIpLiteral(std::string_view ip, uint16_t port, sockaddr_storage* address,
                    socklen_t* length) {
  char text[INET6_ADDRSTRLEN + 1];
  if (ip.empty() || ip.size() >= sizeof(text)) return false;
  std::memcpy(text, ip.data(), ip.size());
  text[ip.size()] = '\0';
  std::memset(address, 0, sizeof(*address));
  auto* v4 = reinterpret_cast<sockaddr_in*>(address);
  if (inet_pton(AF_INET, text, &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    *length = sizeof(sockaddr_in);
    return true;
  }
  auto* v6 = reinterpret_cast<sockaddr_in6*>(address);
  if (inet_pton(AF_INET6, text, &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    *length = sizeof(sockaddr_in6);
    return true;
  }
  return false;
}

}  // namespace portico::gateway::net
