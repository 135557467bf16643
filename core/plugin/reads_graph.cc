#include "core/plugin/reads_graph.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <set>
#include <string>

namespace portico::core {
namespace {

using Graph = std::map<KindId, std::set<KindId>>;  // kind -> kinds it reads (present, not self)

// StronglyConnected returns the strongly connected components (Tarjan) of `nodes` in `graph`.
std::vector<std::set<KindId>> StronglyConnected(const Graph& graph, const std::set<KindId>& nodes) {
  std::map<KindId, int> index;
  std::map<KindId, int> low;
  std::set<KindId> on_stack;
  std::vector<KindId> stack;
  std::vector<std::set<KindId>> out;
  int next = 0;
  // Recursion depth is bounded by the number of kinds (tens), so recursion is fine here.
  std::function<void(const KindId&)> visit = [&](const KindId& v) {
    index[v] = low[v] = next++;
    stack.push_back(v);
    on_stack.insert(v);
    for (const KindId& w : graph.at(v)) {
      if (!nodes.contains(w)) continue;
      if (!index.contains(w)) {
        visit(w);
        low[v] = std::min(low[v], low[w]);
      } else if (on_stack.contains(w)) {
        low[v] = std::min(low[v], index[w]);
      }
    }
    if (low[v] == index[v]) {
      std::set<KindId> component;
      KindId w;
      do {
        w = stack.back();
        stack.pop_back();
        on_stack.erase(w);
        component.insert(w);
      } while (!(w == v));
      out.push_back(std::move(component));
    }
  };
  for (const KindId& v : nodes) {
    if (!index.contains(v)) visit(v);
  }
  return out;
}

// ShortestCycle returns a shortest closed path from the smallest kind of `component` back to it,
// exploring successors in (group, kind) order so the result is deterministic.
std::vector<KindId> ShortestCycle(const Graph& graph, const std::set<KindId>& component) {
  const KindId& start = *component.begin();
  std::map<KindId, KindId> parent;
  std::deque<KindId> queue{start};
  std::set<KindId> seen{start};
  while (!queue.empty()) {
    KindId v = queue.front();
    queue.pop_front();
    for (const KindId& w : graph.at(v)) {
      if (!component.contains(w)) continue;
      if (w == start) {
        std::vector<KindId> path{start};
        for (KindId at = v; !(at == start); at = parent.at(at)) path.push_back(at);
        std::reverse(path.begin() + 1, path.end());
        path.push_back(start);
        return path;
      }
      if (seen.insert(w).second) {
        parent[w] = v;
        queue.push_back(w);
      }
    }
  }
  return {start, start};  // unreachable for a component of two or more kinds
}

}  // namespace

ReadsOrder OrderByReads(const std::map<KindId, std::vector<KindId>>& reads) {
  Graph graph;
  std::map<KindId, std::set<KindId>> readers;  // kind -> kinds that read it
  for (const auto& [kind, targets] : reads) {
    auto& edges = graph[kind];
    for (const KindId& target : targets) {
      if (target == kind || !reads.contains(target)) continue;
      edges.insert(target);
      readers[target].insert(kind);
    }
  }

  // Kahn's algorithm; the ready set is ordered, which gives the (group, kind) tie-break.
  ReadsOrder result;
  std::map<KindId, size_t> pending;
  std::set<KindId> ready;
  for (const auto& [kind, edges] : graph) {
    pending[kind] = edges.size();
    if (edges.empty()) ready.insert(kind);
  }
  while (!ready.empty()) {
    KindId next = *ready.begin();
    ready.erase(ready.begin());
    for (const KindId& reader : readers[next]) {
      if (--pending[reader] == 0) ready.insert(reader);
    }
    result.order.push_back(std::move(next));
  }
  if (result.order.size() == graph.size()) return result;

  std::set<KindId> left;
  for (const auto& [kind, count] : pending) {
    if (count > 0) left.insert(kind);
  }
  std::set<KindId> on_cycle;
  for (const auto& component : StronglyConnected(graph, left)) {
    if (component.size() < 2) continue;
    on_cycle.insert(component.begin(), component.end());
    result.cycles.push_back(ShortestCycle(graph, component));
  }
  std::sort(result.cycles.begin(), result.cycles.end());
  for (const KindId& kind : left) {
    if (!on_cycle.contains(kind)) result.blocked.push_back(kind);
  }
  return result;
}

std::string CycleString(const std::vector<KindId>& cycle) {
  std::string out;
  for (const KindId& id : cycle) {
    if (!out.empty()) out += " -> ";
    out += id.ToString();
  }
  return out;
}

}  // namespace portico::core
