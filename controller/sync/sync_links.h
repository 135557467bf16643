// sync_links.h: SyncLinks, the sync-scope links processors declare (abi.h,
// portico_process_result.link) between processed objects, from which the ConfigSync server
// decides which gateway receives which object (DESIGN.md §5):
//  - parent links (PORTICO_LINK_PARENT): the object goes to every gateway that holds the parent
//    (an HTTPRoute to its Gateways, a Gateway to its GatewayClass, a TLSPolicy to its targets);
//  - reference links (PORTICO_LINK_REFERENCE): the referenced object, of a kind synced
//    "toReferrers", goes to every gateway that holds the referrer (a Gateway to the Secret whose
//    certificate material it serves).
// A processing run's links replace that object's previous ones; deleting the object drops them.
//
// Ordering: the reconciler sets an object's links before it writes the object's synced view to
// the store, so a ConfigSync stream that sees the store's new version also sees the new links.
//
// Thread-safety: every method may be called from any thread (one internal mutex). Values are
// returned by copy.
#ifndef PORTICO_CONTROLLER_SYNC_SYNC_LINKS_H_
#define PORTICO_CONTROLLER_SYNC_SYNC_LINKS_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "core/store/store_key.h"

namespace portico::controller::sync {

class SyncLinks {
 public:
  SyncLinks() = default;
  SyncLinks(const SyncLinks&) = delete;
  SyncLinks& operator=(const SyncLinks&) = delete;

  // Set replaces `object`'s links. Generation() moves only when something changed.
  void Set(const core::StoreKey& object, std::vector<core::StoreKey> parents,
           std::vector<core::StoreKey> references);
  // Remove drops every link `object` declared (links pointing at it stay: their declarers own
  // them).
  void Remove(const core::StoreKey& object);

  // ParentsOf: the objects `object` declared as parents, sorted.
  std::vector<core::StoreKey> ParentsOf(const core::StoreKey& object) const;
  // ChildrenOf: the objects that declared `object` as a parent, sorted.
  std::vector<core::StoreKey> ChildrenOf(const core::StoreKey& object) const;
  // ReferencesOf: the objects `object` declared as references, sorted.
  std::vector<core::StoreKey> ReferencesOf(const core::StoreKey& object) const;
  // ReferrersOf: the objects that declared `object` as a reference, sorted.
  std::vector<core::StoreKey> ReferrersOf(const core::StoreKey& object) const;

  // Generation counts the changes to the link graph (0 when no link was ever set).
  uint64_t Generation() const;
  // Size is the number of objects with at least one link (tests: no residue after deletes).
  size_t Size() const;

 private:
  struct Links {
    std::set<core::StoreKey> parents;
    std::set<core::StoreKey> references;
  };
  void Unlink(const core::StoreKey& object, const Links& links);  // requires mu_

  mutable std::mutex mu_;
  std::map<core::StoreKey, Links> links_;                         // declarer -> its links
  std::map<core::StoreKey, std::set<core::StoreKey>> children_;   // parent -> declarers
  std::map<core::StoreKey, std::set<core::StoreKey>> referrers_;  // referenced -> declarers
  uint64_t generation_ = 0;
};

}  // namespace portico::controller::sync

#endif  // PORTICO_CONTROLLER_SYNC_SYNC_LINKS_H_
