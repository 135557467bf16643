// stage.h: the HTTPRoute's gateway-side handler. It translates a synced route view (process.cc:
// metadata, parents with effective hostnames, the normalised and resolved rules that gateways
// can implement, each with its spec index) into one route_rules.v1 entry
// "httproute/<namespace>/<name>" (docs/contributions.md), with every Gateway API semantic the core
// needs precomputed:
//  - one rule entry per (rule, match) pair, id "<rule index>.<match index>"; a rule without
//    matches gets the default PathPrefix "/";
//  - match: path types mapped (Exact, PathPrefix -> Prefix, RegularExpression -> Regex), header
//    names lower-cased and, like query parameters, only the first entry of a name kept;
//  - action: weighted backend keys, a rule's RequestRedirect as `redirect` (port derived from an
//    explicit scheme), the other filters in written order (builtin or ExtensionRef binding),
//    backend-level filters per backend, timeouts in milliseconds;
//  - precedence: the Gateway API's "matching precedence" as a string the core compares bytewise,
//    smallest first (PrecedenceKey below; regex paths rank after Exact and before PathPrefix).
// A view that cannot be translated is nacked: the route keeps its last good entry and the rest of
// the batch applies. A delete drops the entry.
// Threading: stateless; stage() runs on the gateway's sync thread.
#ifndef PORTICO_PLUGINS_HTTPROUTE_STAGE_H_
#define PORTICO_PLUGINS_HTTPROUTE_STAGE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "portico/sdk/handler.h"
#include "portico/sdk/json.h"
#include "portico/sdk/timestamp.h"
#include "portico/sdk/types.h"

namespace portico::plugins::httproute {

// PathClass orders path match types for precedence: Exact, then Regex, then Prefix. The Gateway
// API leaves regex precedence to implementations; like Envoy Gateway, Portico ranks a regex above
// every prefix, so a catch-all PathPrefix "/" (the default match) never shadows regex rules.
enum class PathClass { kExact = 0, kRegex = 1, kPrefix = 2 };

// MatchRank is what the Gateway API ranks one match by, before ties across routes.
struct MatchRank {
  PathClass path = PathClass::kPrefix;
  size_t path_length = 0;  // characters (bytes) of the path value as written
  bool method = false;
  size_t headers = 0;  // effective header matches (distinct names)
  size_t query = 0;    // effective query parameter matches (distinct names)
};

// kUnknownCreatedUnixMs stands for a route without creationTimestamp: it ranks as the youngest.
inline constexpr int64_t kUnknownCreatedUnixMs = 99999999999999;

// PrecedenceKey encodes, smallest first under bytewise comparison:
//   "p:<C>:<LLLL>/m:<M>/h:<HH>/q:<QQ>/t:<TTTTTTTTTTTTTT>/n:<namespace>/<name> /r:<RRRR>.<IIII>"
// C path class (0 Exact, 1 Regex, 2 Prefix); LLLL 9999 - path length; M 0 with a method, 1
// without; HH 99 - header matches; QQ 99 - query matches; T creation time in Unix ms (14 digits);
// then "{namespace}/{name}" closed by a space (below every name character, so a name sorts before
// its extensions); RRRR rule index, IIII match index. Numbers are zero-padded and clamped.
std::string PrecedenceKey(const MatchRank& rank, int64_t created_unix_ms, std::string_view ns,
                          std::string_view name, int64_t rule_index, int64_t match_index);

// ParseDurationMs parses a Gateway API duration ("10s", "500ms", "1h2m", "0s": 1 to 4 groups of
// 1-5 digits and a unit h, m, s or ms) into milliseconds.
StatusOr<int64_t> ParseDurationMs(std::string_view text);

// ParseTimestampUnixMs (portico/sdk/timestamp.h) parses metadata.creationTimestamp.
using sdk::ParseTimestampUnixMs;

// TranslateRoute turns the synced view of HTTPRoute `ref` into its route_rules.v1 entry JSON; an
// InvalidArgument error names the field the view lacks or gets wrong.
StatusOr<std::string> TranslateRoute(const sdk::ObjectRef& ref, const rapidjson::Value& view);

// StageRoute is the HTTPRoute kind's stage hook.
Status StageRoute(const sdk::Txn& txn, const std::vector<sdk::Change>& changes);

}  // namespace portico::plugins::httproute

#endif  // PORTICO_PLUGINS_HTTPROUTE_STAGE_H_
