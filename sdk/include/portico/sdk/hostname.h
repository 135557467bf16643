// hostname.h: Gateway API hostname semantics shared by the Gateway and route plugins: wildcard
// matching ("*.example.com" matches "a.example.com" and "a.b.example.com", never
// "example.com"), the intersection of a listener's hostname with a route's hostnames (what the
// route serves on that listener), and overlap between two listeners' hostnames.
//
// Hostnames are compared as written: the validators have already checked that they are lower
// case DNS names, optionally with a leading "*." label. Header-only, std only.
// Threading: pure functions.
#ifndef PORTICO_SDK_HOSTNAME_H_
#define PORTICO_SDK_HOSTNAME_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace portico::sdk::hostname {

// IsWildcard: "*.suffix".
inline bool IsWildcard(std::string_view h) { return h.size() > 2 && h.substr(0, 2) == "*."; }

// Matches reports whether `pattern` (precise, or "*.suffix") matches `host`. A wildcard host is
// matched label-wise: "*.a.example.com" is within "*.example.com".
inline bool Matches(std::string_view pattern, std::string_view host) {
  if (!IsWildcard(pattern)) return pattern == host;
  std::string_view suffix = pattern.substr(1);  // ".example.com"
  if (IsWildcard(host)) host.remove_prefix(2);  // "*.a.example.com" -> "a.example.com"
  return host.size() > suffix.size() && host.substr(host.size() - suffix.size()) == suffix;
}

// Intersect returns the hostnames a route hostname serves on a listener hostname (both
// non-empty): the more specific of the two when one contains the other, nothing otherwise.
// ("*.example.com", "a.example.com") -> "a.example.com"; ("a.example.com", "*.example.com") ->
// "a.example.com"; ("*.example.com", "*.a.example.com") -> "*.a.example.com".
inline std::optional<std::string> Intersect(std::string_view listener, std::string_view route) {
  if (listener == route) return std::string(route);
  if (Matches(listener, route)) return std::string(route);
  if (Matches(route, listener)) return std::string(listener);
  return std::nullopt;
}

// Intersection is the outcome of matching a route's hostnames against one listener.
struct Intersection {
  bool matches = false;                // the route may attach to the listener
  std::vector<std::string> hostnames;  // what it serves there; empty means any host
};

// IntersectAll applies the HTTPRoute hostnames rules: a listener without hostname takes the
// route's hostnames (any host when the route has none); a route without hostnames takes the
// listener's; otherwise the route hostnames that intersect the listener's, and no match when
// none does (route hostnames outside the listener's are ignored).
inline Intersection IntersectAll(std::string_view listener, const std::vector<std::string>& route) {
  Intersection out;
  if (listener.empty()) {
    out.matches = true;
    out.hostnames = route;
    return out;
  }
  if (route.empty()) {
    out.matches = true;
    out.hostnames.emplace_back(listener);
    return out;
  }
  for (const std::string& r : route) {
    std::optional<std::string> h = Intersect(listener, r);
    if (!h) continue;
    bool seen = false;
    for (const std::string& existing : out.hostnames) seen = seen || existing == *h;
    if (!seen) out.hostnames.push_back(std::move(*h));
  }
  out.matches = !out.hostnames.empty();
  return out;
}

// Overlap reports whether two listener hostnames can both match one request host (one equals
// or contains the other). Empty hostnames ("any host", the fallback) overlap nothing here:
// hostname precedence already sends every request to the most specific listener.
inline bool Overlap(std::string_view a, std::string_view b) {
  if (a.empty() || b.empty()) return false;
  return Intersect(a, b).has_value();
}

}  // namespace portico::sdk::hostname

#endif  // PORTICO_SDK_HOSTNAME_H_
