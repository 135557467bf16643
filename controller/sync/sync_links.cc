#include "controller/sync/sync_links.h"

#include <utility>

namespace portico::controller::sync {

using core::StoreKey;
namespace {

std::vector<StoreKey> ToVector(const std::set<StoreKey>& keys) {
  return std::vector<StoreKey>(keys.begin(), keys.end());
}

// Erase removes `declarer` from index[target], dropping the entry once empty.
void Erase(std::map<StoreKey, std::set<StoreKey>>& index, const StoreKey& target,
           const StoreKey& declarer) {
  auto it = index.find(target);
  if (it == index.end()) return;
  it->second.erase(declarer);
  if (it->second.empty()) index.erase(it);
}

}  // namespace

void SyncLinks::Unlink(const StoreKey& object, const Links& links) {
  for (const StoreKey& parent : links.parents) Erase(children_, parent, object);
  for (const StoreKey& ref : links.references) Erase(referrers_, ref, object);
}

void SyncLinks::Set(const StoreKey& object, std::vector<StoreKey> parents,
                    std::vector<StoreKey> references) {
  Links next{std::set<StoreKey>(std::make_move_iterator(parents.begin()),
                                std::make_move_iterator(parents.end())),
             std::set<StoreKey>(std::make_move_iterator(references.begin()),
                                std::make_move_iterator(references.end()))};
  std::lock_guard<std::mutex> lock(mu_);
  auto it = links_.find(object);
  if (it != links_.end()) {
    if (it->second.parents == next.parents && it->second.references == next.references) return;
    Unlink(object, it->second);
    links_.erase(it);
  } else if (next.parents.empty() && next.references.empty()) {
    return;
  }
  ++generation_;
  if (next.parents.empty() && next.references.empty()) return;
  for (const StoreKey& parent : next.parents) children_[parent].insert(object);
  for (const StoreKey& ref : next.references) referrers_[ref].insert(object);
  links_.emplace(object, std::move(next));
}

void SyncLinks::Remove(const StoreKey& object) { Set(object, {}, {}); }

std::vector<StoreKey> SyncLinks::ParentsOf(const StoreKey& object) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = links_.find(object);
  return it == links_.end() ? std::vector<StoreKey>{} : ToVector(it->second.parents);
}

std::vector<StoreKey> SyncLinks::ChildrenOf(const StoreKey& object) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = children_.find(object);
  return it == children_.end() ? std::vector<StoreKey>{} : ToVector(it->second);
}

std::vector<StoreKey> SyncLinks::ReferencesOf(const StoreKey& object) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = links_.find(object);
  return it == links_.end() ? std::vector<StoreKey>{} : ToVector(it->second.references);
}

std::vector<StoreKey> SyncLinks::ReferrersOf(const StoreKey& object) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = referrers_.find(object);
  return it == referrers_.end() ? std::vector<StoreKey>{} : ToVector(it->second);
}

uint64_t SyncLinks::Generation() const {
  std::lock_guard<std::mutex> lock(mu_);
  return generation_;
}

size_t SyncLinks::Size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return links_.size();
}

}  // namespace portico::controller::sync
