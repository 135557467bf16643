// authority.cc: see authority.h.
#include "gateway/http/authority.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <array>
#include <cstdint>
#include <cstring>

#include "gateway/http/header_util.h"

namespace portico::gateway::http {
namespace {

// unreserved and sub-delims (RFC 3986 §2.2-2.3): the reg-name bytes other than a '%' escape.
constexpr std::array<bool, 256> MakeRegNameTable() {
  std::array<bool, 256> table{};
  for (int c = '0'; c <= '9'; ++c) table[c] = true;
  for (int c = 'a'; c <= 'z'; ++c) table[c] = true;
  for (int c = 'A'; c <= 'Z'; ++c) table[c] = true;
  for (char c : std::string_view("-._~!$&'()*+,;=")) table[static_cast<unsigned char>(c)] = true;
  return table;
}

constexpr std::array<bool, 256> kRegNameTable = MakeRegNameTable();

bool IsRegNameChar(char c) { return kRegNameTable[static_cast<unsigned char>(c)]; }

// IsIpLiteral: whether `literal`, the bytes between the brackets, is an IPvFuture or an
// IPv6address.
bool IsIpLiteral(std::string_view literal) {
  const size_t n = literal.size();
  if (n == 0) return false;
  if (literal[0] == 'v' || literal[0] == 'V') {
    size_t i = 1;
    while (i < n && HexDigitValue(literal[i]) >= 0) ++i;
    if (i == 1 || i == n || literal[i] != '.' || i + 1 == n) return false;
    for (++i; i < n; ++i) {
      if (!IsRegNameChar(literal[i]) && literal[i] != ':') return false;
    }
    return true;
  }
  // inet_pton wants a C string; only hex digits, ':' and '.' (an embedded IPv4) are copied, so
  // no NUL or '%' (a zone id) reaches it.
  char text[INET6_ADDRSTRLEN];
  if (n >= sizeof(text)) return false;
  for (size_t i = 0; i < n; ++i) {
    const char c = literal[i];
    if (HexDigitValue(c) < 0 && c != ':' && c != '.') return false;
    text[i] = c;
  }
  text[n] = '\0';
  in6_addr address;
  return inet_pton(AF_INET6, text, &address) == 1;
}

}  // namespace

bool IsValidHostPort(std::string_view text) {
  const char* p = text.data();
  const char* const end = p + text.size();
  if (p == end) return false;
  if (*p == '[') {
    const char* const close = static_cast<const char*>(std::memchr(p, ']', text.size()));
    if (close == nullptr) return false;
    if (!IsIpLiteral(std::string_view(p + 1, static_cast<size_t>(close - p - 1)))) return false;
    p = close + 1;
  } else {
    const char* const host = p;
    while (p < end) {
      if (IsRegNameChar(*p)) {
        ++p;
      } else if (*p == '%') {
        if (end - p < 3 || HexDigitValue(p[1]) < 0 || HexDigitValue(p[2]) < 0) return false;
        p += 3;
      } else {
        break;
      }
    }
    if (p == host) return false;
  }
  if (p == end) return true;
  if (*p != ':') return false;
  uint32_t port = 0;
  for (++p; p < end; ++p) {
    if (*p < '0' || *p > '9') return false;
    port = port * 10 + static_cast<uint32_t>(*p - '0');
    if (port > 65535) return false;
  }
  return true;
}

}  // namespace portico::gateway::http
