// sync_scope.h: which processed objects a gateway receives over ConfigSync (DESIGN.md §5).
//
// A gateway's roots are the Gateways its Hello names plus, when the Hello names a GatewayClass,
// the GatewayClass object itself: the one kind this file names (kGatewayClassGroup/Kind; core
// never names kinds). An object X with a synced view goes to gateway G iff G announced a handler
// for X's kind (KindHandler with PORTICO_CAP_HANDLER) and X's kind policy says so:
//   ALWAYS        every gateway;
//   ATTACHED      InScope(X): X is a root, or a parent of X (SyncLinks::ParentsOf) is InScope;
//   TO_REFERRERS  some referrer R of X (SyncLinks::ReferrersOf) with a synced view goes to G;
//   NEVER         no gateway.
// An object wanted by its policy but of a kind G has no handler for is kNoHandler: not sent, and
// reported in its status (sync_feedback.h).
//
// Thread-safety: SyncPolicies and GatewayScope are immutable once built and may be shared;
// ScopeEvaluator is single-threaded (one per batch computation) and memoizes within its life,
// so it must not outlive the consistent view it was given (one batch).
#ifndef PORTICO_CONTROLLER_SYNC_SYNC_SCOPE_H_
#define PORTICO_CONTROLLER_SYNC_SYNC_SCOPE_H_

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "controller/sync/sync_links.h"
#include "core/plugin/kind_registry.h"
#include "core/store/store_key.h"
#include "portico/sdk/abi.h"
#include "portico/sdk/status.h"
#include "portico/sync/v1/sync.pb.h"

namespace portico::controller::sync {

// The GatewayClass a Hello names becomes the root {group, kind, "", class}.
inline constexpr char kGatewayClassGroup[] = "gateway.networking.k8s.io";
inline constexpr char kGatewayClassKind[] = "GatewayClass";
// A Hello's gateway key without group/kind means a Gateway of this group and kind.
inline constexpr char kGatewayGroup[] = "gateway.networking.k8s.io";
inline constexpr char kGatewayKind[] = "Gateway";

// SyncPolicies maps (group, kind) to the kind's sync policy; unknown kinds never sync.
class SyncPolicies {
 public:
  SyncPolicies() = default;
  static SyncPolicies FromRegistry(const core::KindRegistry& registry);

  void Set(std::string group, std::string kind, portico_sync_policy policy);
  portico_sync_policy Of(std::string_view group, std::string_view kind) const;
  portico_sync_policy Of(const core::StoreKey& key) const { return Of(key.group, key.kind); }
  // Syncs: the kind's objects go to some gateways (policy other than NEVER).
  bool Syncs(const core::StoreKey& key) const { return Of(key) != PORTICO_SYNC_NEVER; }

 private:
  struct Entry {
    std::string group;
    std::string kind;
    portico_sync_policy policy;
  };
  std::vector<Entry> entries_;  // a handful of kinds: a linear scan beats hashing two strings
};

// GatewayScope is what a Hello says about where a gateway stands: its roots and the kinds it
// can stage.
struct GatewayScope {
  std::set<core::StoreKey> gateways;  // Hello.gateways (group/kind defaulted to Gateway)
  std::string gateway_class;          // Hello.gateway_class ("" when none)
  std::set<core::StoreKey> roots;     // gateways + the GatewayClass key when a class is named
  std::set<std::pair<std::string, std::string>> handled_kinds;  // (group, kind) with a handler

  // FromHello reads the scope of `hello`; INVALID_ARGUMENT for a gateway key without a name.
  static StatusOr<GatewayScope> FromHello(const portico::sync::v1::Hello& hello);

  bool Handles(const core::StoreKey& key) const;
  bool IsRoot(const core::StoreKey& key) const { return roots.contains(key); }
  // ClassRoot is the GatewayClass root key; only meaningful when gateway_class is set.
  core::StoreKey ClassRoot() const;
  // Serves: `key` is a Gateway this gateway serves (a named one, or a child of its class root
  // given the object's parents): the objects whose status.addresses it reports.
  bool Serves(const core::StoreKey& key, const std::vector<core::StoreKey>& parents) const;

  friend bool operator==(const GatewayScope&, const GatewayScope&) = default;
};

// Delivery is the decision for one object and one gateway.
enum class Delivery {
  kSend,        // the gateway receives it
  kOutOfScope,  // its policy does not send it to this gateway
  kNoHandler,   // its policy would, but the gateway announced no handler for the kind
  kNever,       // its kind never syncs
};

std::string_view DeliveryName(Delivery delivery);

// ScopeEvaluator decides Delivery for objects of one gateway against one view of the links.
// `has_view(key)` says whether an object exists with a non-null synced view (TO_REFERRERS
// follows only such referrers). See the file comment for threading.
class ScopeEvaluator {
 public:
  using HasView = std::function<bool(const core::StoreKey&)>;

  ScopeEvaluator(const GatewayScope& scope, const SyncPolicies& policies, const SyncLinks& links,
                 HasView has_view);

  // PrecomputeAttached walks down from the roots (SyncLinks::ChildrenOf) once, so InScope is a
  // set lookup: the right mode when deciding every object (snapshots, link changes).
  void PrecomputeAttached();

  // Decide: where `key` (an object with a synced view) goes for this gateway.
  Delivery Decide(const core::StoreKey& key);
  // InScope: `key` is a root or has a parent in scope (transitively; cycles are safe).
  bool InScope(const core::StoreKey& key);
  // SentReferrer: an object that references `key` (a reference link) is sent to this gateway.
  bool SentReferrer(const core::StoreKey& key);

 private:
  const GatewayScope& scope_;
  const SyncPolicies& policies_;
  const SyncLinks& links_;
  HasView has_view_;
  bool precomputed_ = false;
  std::unordered_set<core::StoreKey> attached_;        // precomputed InScope set
  std::unordered_map<core::StoreKey, bool> in_scope_;  // memo (DFS mode)
  std::unordered_map<core::StoreKey, Delivery> decided_;
  std::unordered_set<core::StoreKey> deciding_;  // TO_REFERRERS recursion guard
  uint64_t cycle_hits_ = 0;                      // answers cut by the guard are not memoized
};

}  // namespace portico::controller::sync

#endif  // PORTICO_CONTROLLER_SYNC_SYNC_SCOPE_H_
