// route_table.h: RouteTable, the core-owned, kind-agnostic route table of the gateway data plane
// (DESIGN.md §4), built from a RuntimeSnapshot's listener_set.v1 and route_rules.v1 entries
// (docs/contributions.md).
//
// Lookup, all precomputed at build time:
//   (address, port) -> listener set -> listener by the request host (exact hostname, then the
//   most specific wildcard, then the listener without hostname: Gateway API listener isolation)
//   -> the routes attached to that listener, by their effective hostnames (exact host, then the
//   wildcard suffixes from the most specific, then "any"; the most specific hostname with ANY
//   matching rule wins) -> per (listener, hostname) shard: the path as an exact hash, the
//   segment-wise prefixes of the path (hash probes at '/' boundaries), regexes indexed by their
//   literal prefix (RE2 full match) -> candidates ranked at build time by the rules' opaque
//   `precedence` strings (bytewise, smallest wins) -> method, header and query checks. The first
//   candidate (smallest precedence) passing every check wins.
//
// Rebuilds reuse what did not change: a route entry whose JSON is unchanged keeps its compiled
// rules (and regexes); a (listener set, listener, hostname) shard whose contributing routes are
// all unchanged is shared with the previous table; a snapshot whose listener_set.v1 and
// route_rules.v1 maps are the previous table's returns the previous table itself.
//
// Thread-safety: a built table is immutable; Match, SelectListener, Sockets and the accessors
// may be called from any number of threads at once without locks. Match does not allocate
// (RE2 may allocate its DFA cache the first time a regex runs, and takes its internal reader
// lock while it runs). Build is for one thread (the sync thread, from RuntimeConsumer::Prepare).
// Ownership: pointers returned by Match/SelectListener live as long as the table.
#ifndef PORTICO_CORE_RUNTIME_ROUTING_ROUTE_TABLE_H_
#define PORTICO_CORE_RUNTIME_ROUTING_ROUTE_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/runtime/routing/route_types.h"
#include "core/runtime/runtime_types.h"

namespace portico::core::routing {

namespace internal {
struct CompiledRoute;
struct ListenerSetNode;
class Shard;
}  // namespace internal

// RouteTableStats counts what a table holds (admin, tests, benchmarks).
struct RouteTableStats {
  size_t listener_sets = 0;
  size_t listeners = 0;      // merged listeners over every set
  size_t routes = 0;         // route_rules.v1 entries compiled
  size_t rules = 0;          // rule entries (rule, match) compiled
  size_t shards = 0;         // (listener set, listener, hostname) shards
  size_t shards_reused = 0;  // shards shared with the previous table by Build
  size_t routes_reused = 0;  // compiled routes shared with the previous table by Build
};

class RouteTable : public std::enable_shared_from_this<RouteTable> {
 public:
  // Build indexes `snapshot`. `previous` (may be null) is the table built from the snapshot
  // before; what did not change is shared with it (see the file comment). Never fails: what it
  // cannot use is left out and listed in Refusals().
  static std::shared_ptr<const RouteTable> Build(const RuntimeSnapshot& snapshot,
                                                 const RouteTable* previous);

  RouteTable(const RouteTable&) = delete;
  RouteTable& operator=(const RouteTable&) = delete;
  ~RouteTable();

  // Sockets lists every (address, port, protocol) to bind, sorted, with the owning Gateways.
  std::vector<ListenerSocketSpec> Sockets() const;

  // Match routes a request that arrived on the socket of listener set (address, port) (as
  // listed by Sockets()). Lock-free and allocation-free (see the file comment).
  MatchResult Match(std::string_view address, uint16_t port, const RequestView& request) const;

  // SelectListener returns the listener of set (address, port) that takes `host` (any case, an
  // optional ":port" ignored), or nullptr. For 421 checks (the SNI's listener vs the Host's).
  const ListenerInfo* SelectListener(std::string_view address, uint16_t port,
                                     std::string_view host) const;

  // Refusals lists the owners whose contributions were left out, sorted by owner.
  const std::vector<Refusal>& Refusals() const { return refusals_; }

  const RouteTableStats& Stats() const { return stats_; }

 private:
  struct Token {};

 public:
  explicit RouteTable(Token);  // use Build

 private:
  const internal::ListenerSetNode* FindSet(std::string_view address, uint16_t port) const;

  // The formats this table was built from (Build returns `this` when both are unchanged).
  std::shared_ptr<const FormatEntries> listener_source_;
  std::shared_ptr<const FormatEntries> route_source_;

  std::vector<std::unique_ptr<internal::ListenerSetNode>> sets_;  // sorted by (port, address)
  // Every compiled route, in entry id order (reused by the next Build when unchanged).
  std::vector<std::shared_ptr<const internal::CompiledRoute>> routes_;
  // Every shard by its key (address, port, listener hostname, route hostname).
  std::map<std::string, std::shared_ptr<const internal::Shard>> shards_;
  std::vector<Refusal> refusals_;
  RouteTableStats stats_;
};

// RefusalNacks turns refusals into the nacks RuntimeConsumer::Prepare returns (owners that are
// not object keys are skipped; hash is left empty, the runtime ignores it).
std::vector<SyncNack> RefusalNacks(const std::vector<Refusal>& refusals);

}  // namespace portico::core::routing

#endif  // PORTICO_CORE_RUNTIME_ROUTING_ROUTE_TABLE_H_
