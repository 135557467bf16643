#include "core/admin/admin_auth.h"

#include <arpa/inet.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace portico::core::admin {

bool IsLoopbackAddress(std::string_view address) {
  if (address == "localhost") return true;
  std::string text(address);
  if (text.size() > 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6) != 1) return false;
  if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
  return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
}

StatusOr<std::string> LoadAdminToken(const std::string& path, std::string_view setting) {
  std::string where = std::string(setting) + " \"" + path + "\"";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return InvalidArgumentError(where + ": " + std::strerror(errno));
  }
  if ((st.st_mode & 077) != 0) {
    return InvalidArgumentError(where + " is readable by group or others (mode " + [&] {
      std::ostringstream mode;
      mode << std::oct << (st.st_mode & 0777);
      return mode.str();
    }() + "): chmod 600 it");
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  if (!in.good() && !in.eof()) return InvalidArgumentError(where + ": cannot be read");
  std::string token = content.str();
  const char* kSpace = " \t\r\n";
  size_t begin = token.find_first_not_of(kSpace);
  if (begin == std::string::npos) return InvalidArgumentError(where + " is empty");
  token = token.substr(begin, token.find_last_not_of(kSpace) - begin + 1);
  if (token.find_first_of(kSpace) != std::string::npos) {
    return InvalidArgumentError(where + ": the token must be one word without whitespace");
  }
  return token;
}

Status CheckAdminExposure(std::string_view address, bool has_token,
                          std::string_view address_setting, std::string_view token_setting) {
  if (has_token || IsLoopbackAddress(address)) return OkStatus();
  return InvalidArgumentError(std::string(address_setting) + " \"" + std::string(address) +
                              "\" is not a loopback address: set " + std::string(token_setting) +
                              " so that the admin API requires a bearer token");
}

bool IsOpenAdminPath(std::string_view path) { return path == "/healthz" || path == "/readyz"; }

bool BearerTokenMatches(std::string_view authorization, std::string_view token) {
  if (token.empty()) return true;
  constexpr std::string_view kScheme = "Bearer ";
  if (authorization.size() < kScheme.size()) return false;
  // The scheme is case-insensitive (RFC 9110 §11.1).
  for (size_t i = 0; i < kScheme.size(); ++i) {
    char c = authorization[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    char k = kScheme[i];
    if (k >= 'A' && k <= 'Z') k = static_cast<char>(k - 'A' + 'a');
    if (c != k) return false;
  }
  std::string_view given = authorization.substr(kScheme.size());
  unsigned char diff = given.size() == token.size() ? 0 : 1;
  for (size_t i = 0; i < token.size(); ++i) {
    diff |= static_cast<unsigned char>(token[i] ^ (i < given.size() ? given[i] : 0));
  }
  return diff == 0;
}

}  // namespace portico::core::admin
