// shard.cc: see shard.h.
#include "core/runtime/routing/shard.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

namespace portico::core::routing::internal {

std::shared_ptr<const Shard> Shard::Build(
    std::vector<std::shared_ptr<const CompiledRoute>> routes) {
  auto shard = std::make_shared<Shard>();
  std::sort(routes.begin(), routes.end());  // by address: compared as such on rebuild
  routes.erase(std::unique(routes.begin(), routes.end()), routes.end());
  routes.shrink_to_fit();
  shard->routes_ = std::move(routes);

  // Rank: the position of each rule's precedence string (ties, which well-formed keys never
  // have since they name the route, keep this order).
  std::vector<const CompiledRule*> ranked;
  for (const auto& route : shard->routes_) {
    for (const CompiledRule& rule : route->rules) ranked.push_back(&rule);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const CompiledRule* a, const CompiledRule* b) {
    return a->precedence < b->precedence;
  });

  // Group by (kind, key), each group in rank order.
  std::map<std::pair<uint8_t, std::string>, std::vector<Slot>> groups;
  for (size_t rank = 0; rank < ranked.size(); ++rank) {
    const CompiledRule* rule = ranked[rank];
    Kind kind = rule->path_type == PathMatchType::kExact    ? kExact
                : rule->path_type == PathMatchType::kPrefix ? kPrefix
                                                            : kRegex;
    groups[{kind, rule->IndexKey()}].push_back(Slot{static_cast<uint32_t>(rank), rule});
  }
  shard->slots_.reserve(ranked.size());
  shard->lists_.reserve(groups.size());
  for (const auto& [key, slots] : groups) {
    const auto& [kind, text] = key;
    shard->index_.Add(kind, text, static_cast<uint32_t>(shard->lists_.size()));
    shard->lists_.push_back(
        List{static_cast<uint32_t>(shard->slots_.size()), static_cast<uint32_t>(slots.size())});
    shard->slots_.insert(shard->slots_.end(), slots.begin(), slots.end());
    if (kind == kExact) {
      shard->has_exact_ = true;
      continue;
    }
    shard->max_key_length_ = std::max(shard->max_key_length_, text.size());
    std::vector<uint64_t>& bits = kind == kPrefix ? shard->prefix_lengths_ : shard->regex_lengths_;
    if (bits.size() <= text.size() / 64) bits.resize(text.size() / 64 + 1, 0);
    bits[text.size() / 64] |= uint64_t{1} << (text.size() % 64);
  }
  shard->index_.Seal();
  return shard;
}

const RouteAction* Shard::Match(const RequestView& request) const {
  const std::string_view path = request.path;
  uint32_t best_rank = UINT32_MAX;
  const CompiledRule* best = nullptr;
  // Evaluate walks one candidate list in rank order, stopping at the first rank no better than
  // the best so far.
  auto evaluate = [&](uint32_t list_id) {
    const List& list = lists_[list_id];
    for (uint32_t k = list.begin; k < list.begin + list.count; ++k) {
      const Slot& slot = slots_[k];
      if (slot.rank >= best_rank) return;
      if (RuleMatches(*slot.rule, request)) {
        best_rank = slot.rank;
        best = slot.rule;
        return;
      }
    }
  };

  // One pass over the path holds the hash of each of its prefixes; the lists found are
  // evaluated afterwards, longest key first (the likely winners under Gateway API ordering, so
  // later lists stop at their first candidate).
  constexpr int kMaxHits = 32;
  uint32_t hits[kMaxHits];
  int hit_count = 0;
  auto probe = [&](Kind kind, size_t length, uint64_t hash) {
    uint32_t list = index_.FindHashed(kind, path.substr(0, length), hash);
    if (list == FlatIndex::kNotFound) return;
    if (hit_count == kMaxHits) {
      evaluate(list);  // a path with that many indexed prefixes: no order needed for correctness
    } else {
      hits[hit_count++] = list;
    }
  };
  const size_t scan_end = has_exact_ ? path.size() : std::min(path.size(), max_key_length_);
  uint64_t hash = FlatIndex::kSeed;
  for (size_t i = 0;; ++i) {
    // hash == FlatIndex::Hash(path.substr(0, i))
    if (i <= max_key_length_) {
      if (Bit(prefix_lengths_, i) && (i == path.size() || path[i] == '/')) probe(kPrefix, i, hash);
      if (Bit(regex_lengths_, i)) probe(kRegex, i, hash);
    }
    if (i == scan_end) break;
    hash = FlatIndex::Step(hash, static_cast<unsigned char>(path[i]));
  }
  if (has_exact_) {
    uint32_t list = index_.FindHashed(kExact, path, hash);
    if (list != FlatIndex::kNotFound) evaluate(list);
  }
  for (int h = hit_count - 1; h >= 0; --h) evaluate(hits[h]);
  return best != nullptr ? &best->action : nullptr;
}

size_t Shard::MemoryBytes() const {
  return sizeof(Shard) + index_.MemoryBytes() + lists_.capacity() * sizeof(List) +
         slots_.capacity() * sizeof(Slot) + routes_.capacity() * sizeof(routes_[0]) +
         (prefix_lengths_.capacity() + regex_lengths_.capacity()) * sizeof(uint64_t);
}

}  // namespace portico::core::routing::internal
