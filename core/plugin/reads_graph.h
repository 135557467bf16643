// reads_graph.h: orders kinds by their `reads` edges (a kind after every kind it reads) and finds
// the cycles that make such an order impossible (DESIGN.md §3: reads must be acyclic; they order
// start-up and, reversed, deletion).
//
// Thread-safety: a pure function.
#ifndef PORTICO_CORE_PLUGIN_READS_GRAPH_H_
#define PORTICO_CORE_PLUGIN_READS_GRAPH_H_

#include <map>
#include <vector>

#include "core/plugin/kind_id.h"

namespace portico::core {

// ReadsOrder is the result of OrderByReads.
struct ReadsOrder {
  // Every kind that is neither on a cycle nor reads (transitively) a kind on one; each kind comes
  // after the kinds it reads; among kinds that are free at the same time, by (group, kind).
  std::vector<KindId> order;
  // One closed path per cycle, starting at its smallest kind: {A, B, A} means A reads B reads A.
  // Ordered by their first kind.
  std::vector<std::vector<KindId>> cycles;
  // Kinds left out of `order` only because they read (transitively) a kind on a cycle.
  std::vector<KindId> blocked;
};

// OrderByReads orders the kinds keyed in `reads` (kind -> the kinds it reads). Edges to kinds
// not in the map and self-edges (a kind reading its own kind) are ignored.
ReadsOrder OrderByReads(const std::map<KindId, std::vector<KindId>>& reads);

// CycleString renders a cycle as "A.g -> B.g -> A.g".
std::string CycleString(const std::vector<KindId>& cycle);

}  // namespace portico::core

#endif  // PORTICO_CORE_PLUGIN_READS_GRAPH_H_
