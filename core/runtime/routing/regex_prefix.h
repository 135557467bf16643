// regex_prefix.h: LiteralPrefix, the literal text every string a regular expression fully matches
// starts with ("/api/v[0-9]+" -> "/api/v"), so the route table indexes regex paths by it and runs
// only the regexes whose prefix the request path starts with.
//
// Conservative: the result may be shorter than the longest true prefix, never longer ("" when in
// doubt: a top-level alternation, a leading group or flag, a class escape, non-ASCII bytes).
// Threading: a pure function.
#ifndef PORTICO_CORE_RUNTIME_ROUTING_REGEX_PREFIX_H_
#define PORTICO_CORE_RUNTIME_ROUTING_REGEX_PREFIX_H_

#include <string>
#include <string_view>

namespace portico::core::routing {

// LiteralPrefix returns the literal prefix of RE2 `pattern` under a full (anchored) match.
std::string LiteralPrefix(std::string_view pattern);

}  // namespace portico::core::routing

#endif  // PORTICO_CORE_RUNTIME_ROUTING_REGEX_PREFIX_H_
