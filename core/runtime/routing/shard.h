// shard.h: Shard, the rules of one (listener set, listener, hostname) of the route table, ranked
// by their precedence strings and indexed by path:
//   - Exact paths: one hash probe of the whole path;
//   - Prefix paths (Gateway API PathPrefix, segment-wise; a trailing '/' of the prefix ignored):
//     a hash probe of the path's prefix at every '/' boundary (and the end) whose length some
//     prefix has; a segment trie flattened into one hash table;
//   - Regex paths: filed under their literal prefix (regex_prefix.h); a hash probe at every
//     length some literal prefix has; RE2 full match only for those candidates.
// Each probe hit is a list of candidates sorted by rank (the position of the rule's precedence
// string among the shard's rules); the smallest-ranked candidate passing every check wins, and a
// list is abandoned at the first rank no better than the best so far.
//
// Thread-safety: immutable once built; Match from any number of threads. Ownership: a Shard holds
// the CompiledRoutes it indexes (shared with other shards and the next table).
#ifndef PORTICO_CORE_RUNTIME_ROUTING_SHARD_H_
#define PORTICO_CORE_RUNTIME_ROUTING_SHARD_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "core/runtime/routing/compiled_route.h"
#include "core/runtime/routing/flat_index.h"
#include "core/runtime/routing/route_types.h"

namespace portico::core::routing::internal {

class Shard {
 public:
  // Build ranks and indexes every rule of `routes` (de-duplicated, kept sorted by address).
  static std::shared_ptr<const Shard> Build(
      std::vector<std::shared_ptr<const CompiledRoute>> routes);

  // Match returns the action of the best rule matching `request`, or nullptr. Allocation-free.
  const RouteAction* Match(const RequestView& request) const;

  // routes are the contributing routes, sorted by address (compared on rebuild to reuse the
  // shard).
  const std::vector<std::shared_ptr<const CompiledRoute>>& routes() const { return routes_; }
  size_t rules() const { return slots_.size(); }
  // MemoryBytes is the heap the index holds (not the compiled routes).
  size_t MemoryBytes() const;

 private:
  enum Kind : uint8_t { kExact = 0, kPrefix = 1, kRegex = 2 };
  struct Slot {
    uint32_t rank;
    const CompiledRule* rule;
  };
  struct List {
    uint32_t begin;
    uint32_t count;
  };

  static bool Bit(const std::vector<uint64_t>& bits, size_t i) {
    return i / 64 < bits.size() && ((bits[i / 64] >> (i % 64)) & 1) != 0;
  }

  std::vector<std::shared_ptr<const CompiledRoute>> routes_;
  FlatIndex index_;          // (kind, key) -> list
  std::vector<List> lists_;  // ranges of slots_, each sorted by rank
  std::vector<Slot> slots_;
  std::vector<uint64_t> prefix_lengths_;  // bitset: lengths of prefix keys
  std::vector<uint64_t> regex_lengths_;   // bitset: lengths of regex literal prefixes
  size_t max_key_length_ = 0;             // longest prefix / regex key
  bool has_exact_ = false;
};

}  // namespace portico::core::routing::internal

#endif  // PORTICO_CORE_RUNTIME_ROUTING_SHARD_H_
