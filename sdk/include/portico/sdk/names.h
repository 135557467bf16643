// names.h: syntax checks for Kubernetes and Gateway API names, hostnames, label keys and values,
// header names, IANA service names and Gateway API durations, for plugins' validators.
//
// Header-only. Thread-safety: pure functions.
#ifndef PORTICO_SDK_NAMES_H_
#define PORTICO_SDK_NAMES_H_

#include <arpa/inet.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace portico::sdk::names {

namespace detail {

inline bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsAlpha(char c) { return detail::IsLower(c) || (c >= 'A' && c <= 'Z'); }
inline bool IsAlnum(char c) { return detail::IsAlpha(c) || detail::IsDigit(c); }

}  // namespace detail

inline bool IsIPv4(std::string_view s);

// IsDnsLabel: RFC 1123 label: lower case alphanumerics and '-', at most 63 characters.
inline bool IsDnsLabel(std::string_view s) {
  if (s.empty() || s.size() > 63 || s.front() == '-' || s.back() == '-') return false;
  for (char c : s) {
    if (!detail::IsLower(c) && !detail::IsDigit(c) && c != '-') return false;
  }
  return true;
}

// IsDnsSubdomain: dot-separated DNS labels, at most 253 characters (also Gateway API
// SectionName and object names).
inline bool IsDnsSubdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  while (true) {
    size_t dot = s.find('.');
    if (!IsDnsLabel(s.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    s.remove_prefix(dot + 1);
  }
}

// IsHostname: a Gateway API Hostname: a DNS subdomain, optionally prefixed by "*." when
// `allow_wildcard`; never an IP address.
inline bool IsHostname(std::string_view s, bool allow_wildcard) {
  if (s.size() > 253) return false;
  if (s.substr(0, 2) == "*.") {
    if (!allow_wildcard) return false;
    s.remove_prefix(2);
  }
  return IsDnsSubdomain(s) && !IsIPv4(s);
}

// IsIPv4 / IsIPv6: textual addresses as inet_pton(3) accepts them.
inline bool IsIPv4(std::string_view s) {
  in_addr addr;
  return inet_pton(AF_INET, std::string(s).c_str(), &addr) == 1;
}

inline bool IsIPv6(std::string_view s) {
  in6_addr addr;
  return inet_pton(AF_INET6, std::string(s).c_str(), &addr) == 1;
}

// IsGroup: "" (the core group) or a DNS subdomain.
inline bool IsGroup(std::string_view s) { return s.empty() || IsDnsSubdomain(s); }

// IsKind: ^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$, at most 63 characters.
inline bool IsKind(std::string_view s) {
  if (s.empty() || s.size() > 63 || !detail::IsAlpha(s.front()) || !detail::IsAlnum(s.back()))
    return false;
  for (char c : s) {
    if (!detail::IsAlnum(c) && c != '-') return false;
  }
  return true;
}

// IsHeaderName: an RFC 7230 token (the Gateway API HTTPHeaderName pattern).
inline bool IsHeaderName(std::string_view s) {
  if (s.empty() || s.size() > 256) return false;
  for (char c : s) {
    bool token =
        detail::IsAlnum(c) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    if (!token) return false;
  }
  return true;
}

inline bool IsLabelValue(std::string_view s) {
  if (s.empty()) return true;
  if (s.size() > 63 || !detail::IsAlnum(s.front()) || !detail::IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!detail::IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// IsLabelKey / IsLabelValue: Kubernetes label syntax.
inline bool IsLabelKey(std::string_view s) {
  size_t slash = s.find('/');
  std::string_view name = slash == std::string_view::npos ? s : s.substr(slash + 1);
  if (slash != std::string_view::npos && !IsDnsSubdomain(s.substr(0, slash))) return false;
  return !name.empty() && IsLabelValue(name);
}

// ParseDuration parses a Gateway API Duration (^([0-9]{1,5}(h|m|s|ms)){1,4}$, e.g. "1h30m",
// "500ms") into milliseconds; nullopt when malformed.
inline std::optional<int64_t> ParseDuration(std::string_view s) {
  if (s.empty()) return std::nullopt;
  int64_t total = 0;
  int parts = 0;
  while (!s.empty()) {
    size_t digits = 0;
    int64_t value = 0;
    while (digits < s.size() && detail::IsDigit(s[digits]))
      value = value * 10 + (s[digits++] - '0');
    if (digits == 0 || digits > 5) return std::nullopt;
    s.remove_prefix(digits);
    if (s.substr(0, 2) == "ms") {
      s.remove_prefix(2);
    } else if (!s.empty() && (s[0] == 'h' || s[0] == 'm' || s[0] == 's')) {
      value *= s[0] == 'h' ? 3600000 : s[0] == 'm' ? 60000 : 1000;
      s.remove_prefix(1);
    } else {
      return std::nullopt;
    }
    total += value;
    if (++parts > 4) return std::nullopt;
  }
  return total;
}

// IsIanaServiceName: at most 15 characters [a-z0-9-], with a letter, no leading, trailing or
// doubled '-' (a named targetPort).
inline bool IsIanaServiceName(std::string_view s) {
  if (s.empty() || s.size() > 15 || s.front() == '-' || s.back() == '-') return false;
  if (s.find("--") != std::string_view::npos) return false;
  bool letter = false;
  for (char c : s) {
    if (c >= 'a' && c <= 'z') {
      letter = true;
    } else if (!((c >= '0' && c <= '9') || c == '-')) {
      return false;
    }
  }
  return letter;
}

}  // namespace portico::sdk::names

#endif  // PORTICO_SDK_NAMES_H_
