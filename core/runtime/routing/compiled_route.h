// compiled_route.h: one route_rules.v1 entry parsed and compiled once (regexes checked, actions
// parsed into RouteAction), and the per-request checks of a rule's match (method, headers, query
// parameters, path regex). Internal to the route table (route_table.h).
//
// Thread-safety: a CompiledRoute is immutable once compiled and shared between consecutive route
// tables and their shards; RuleMatches may run on any number of threads at once (RE2 objects are
// thread-safe). Ownership: shared_ptr; a CompiledRoute keeps the digest of the entry JSON it was
// compiled from (not the JSON) to recognise it unchanged.
#ifndef PORTICO_CORE_RUNTIME_ROUTING_COMPILED_ROUTE_H_
#define PORTICO_CORE_RUNTIME_ROUTING_COMPILED_ROUTE_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/sha256.h"
#include "core/runtime/routing/lazy_regex.h"
#include "core/runtime/routing/route_types.h"
#include "portico/sdk/status.h"

namespace portico::core::routing::internal {

enum class PathMatchType : uint8_t { kExact, kPrefix, kRegex };

// ValueMatch is one header or query parameter match.
struct ValueMatch {
  std::string name;  // headers: lower case; query parameters: as written (case-sensitive)
  std::string value;
  bool is_regex = false;  // type "Regex": `value` is an RE2 pattern (full match)
  LazyRegex regex;        // is_regex: built from `value` on first use
  ValueMatch();
  ValueMatch(ValueMatch&&) noexcept;
  ValueMatch& operator=(ValueMatch&&) noexcept;
  ~ValueMatch();
};

// CompiledRule is one (rule, match) entry.
struct CompiledRule {
  PathMatchType path_type = PathMatchType::kPrefix;
  std::string path_value;                      // as written
  LazyRegex path_regex;                        // kRegex: built from path_value on first use
  std::string method;                          // "" = any
  std::vector<ValueMatch> headers;
  std::vector<ValueMatch> query;
  std::string precedence;  // opaque; bytewise smaller wins
  RouteAction action;

  CompiledRule();
  CompiledRule(CompiledRule&&) noexcept;
  CompiledRule& operator=(CompiledRule&&) noexcept;
  ~CompiledRule();

  // IndexKey is the key the path index files the rule under: the exact path, the prefix
  // without its trailing '/' ("/" -> ""), or the regex's literal prefix.
  std::string IndexKey() const;
};

// ParentRef is one `parents[]` item: a Gateway listener and the effective hostnames.
struct ParentRef {
  std::string listener;                // "<gateway namespace>/<gateway name>/<listener name>"
  std::vector<std::string> hostnames;  // lower case; empty = any host the listener accepts
};

struct CompiledRoute {
  Digest128 digest;  // of the entry JSON it was compiled from (its identity)
  // "<group>/<kind>" of the route, checked against listener routeKinds; interned process-wide
  // (a handful of distinct values, never freed) so routes do not each hold a copy.
  const std::string* group_kind = nullptr;
  std::vector<ParentRef> parents;
  std::vector<CompiledRule> rules;
};

// CompileRoute parses and compiles one route_rules.v1 entry (`id` names it in errors; `digest` is
// the entry's, kept as the route's identity). An error
// (malformed entry, a regex RE2 rejects) names the field.
StatusOr<std::shared_ptr<const CompiledRoute>> CompileRoute(const std::string& id,
                                                            std::string_view json,
                                                            const Digest128& digest);

// RuleMatches runs the checks of `rule` other than the path's exact/prefix index lookup:
// method, headers, query parameters, then the path regex (kRegex). Allocation-free.
bool RuleMatches(const CompiledRule& rule, const RequestView& request);

// QueryParamMatches reports whether `query` (raw "a=1&b=2") has parameter `m.name` (the first
// occurrence, percent-decoded) with a value matching `m`. Exposed for tests.
bool QueryParamMatches(std::string_view query, const ValueMatch& m);

}  // namespace portico::core::routing::internal

#endif  // PORTICO_CORE_RUNTIME_ROUTING_COMPILED_ROUTE_H_
