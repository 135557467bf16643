#include "controller/sync/sync_scope.h"

#include <deque>

namespace portico::controller::sync {

SyncPolicies SyncPolicies::FromRegistry(const core::KindRegistry& registry) {
  SyncPolicies policies;
  for (const core::KindInfo* kind : registry.Kinds()) {
    policies.Set(kind->id.group, kind->id.kind, kind->sync_policy);
  }
  return policies;
}

void SyncPolicies::Set(std::string group, std::string kind, portico_sync_policy policy) {
  for (Entry& e : entries_) {
    if (e.group == group && e.kind == kind) {
      e.policy = policy;
      return;
    }
  }
  entries_.push_back(Entry{std::move(group), std::move(kind), policy});
}

portico_sync_policy SyncPolicies::Of(std::string_view group, std::string_view kind) const {
  for (const Entry& e : entries_) {
    if (e.kind == kind && e.group == group) return e.policy;
  }
  return PORTICO_SYNC_NEVER;
}

StatusOr<GatewayScope> GatewayScope::FromHello(const portico::sync::v1::Hello& hello) {
  GatewayScope scope;
  for (const portico::sync::v1::ObjectKey& k : hello.gateways()) {
    core::StoreKey key{k.group(), k.kind(), k.namespace_(), k.name()};
    if (key.kind.empty()) {
      key.group = kGatewayGroup;
      key.kind = kGatewayKind;
    }
    if (Status valid = key.Validate(); !valid.ok()) {
      return InvalidArgumentError("hello: gateways: " + valid.message());
    }
    scope.gateways.insert(key);
    scope.roots.insert(std::move(key));
  }
  scope.gateway_class = hello.gateway_class();
  if (!scope.gateway_class.empty()) {
    core::StoreKey root = scope.ClassRoot();
    if (Status valid = root.Validate(); !valid.ok()) {
      return InvalidArgumentError("hello: gateway_class: " + valid.message());
    }
    scope.roots.insert(std::move(root));
  }
  for (const portico::sync::v1::PluginInfo& plugin : hello.plugins()) {
    for (const portico::sync::v1::KindHandler& handler : plugin.kinds()) {
      if ((handler.capabilities() & PORTICO_CAP_HANDLER) == 0) continue;
      scope.handled_kinds.emplace(handler.group(), handler.kind());
    }
  }
  return scope;
}

bool GatewayScope::Handles(const core::StoreKey& key) const {
  // std::set<pair<string,string>> has no heterogeneous lookup; kinds are few.
  for (const auto& [group, kind] : handled_kinds) {
    if (kind == key.kind && group == key.group) return true;
  }
  return false;
}

core::StoreKey GatewayScope::ClassRoot() const {
  return core::StoreKey{kGatewayClassGroup, kGatewayClassKind, "", gateway_class};
}

bool GatewayScope::Serves(const core::StoreKey& key,
                          const std::vector<core::StoreKey>& parents) const {
  if (gateways.contains(key)) return true;
  if (gateway_class.empty()) return false;
  core::StoreKey root = ClassRoot();
  for (const core::StoreKey& p : parents) {
    if (p == root) return true;
  }
  return false;
}

std::string_view DeliveryName(Delivery delivery) {
  switch (delivery) {
    case Delivery::kSend:
      return "send";
    case Delivery::kOutOfScope:
      return "out of scope";
    case Delivery::kNoHandler:
      return "no handler";
    case Delivery::kNever:
      return "never synced";
  }
  return "?";
}

ScopeEvaluator::ScopeEvaluator(const GatewayScope& scope, const SyncPolicies& policies,
                               const SyncLinks& links, HasView has_view)
    : scope_(scope), policies_(policies), links_(links), has_view_(std::move(has_view)) {}

void ScopeEvaluator::PrecomputeAttached() {
  attached_.clear();
  std::deque<core::StoreKey> queue;
  for (const core::StoreKey& root : scope_.roots) {
    if (attached_.insert(root).second) queue.push_back(root);
  }
  while (!queue.empty()) {
    core::StoreKey key = std::move(queue.front());
    queue.pop_front();
    for (core::StoreKey& child : links_.ChildrenOf(key)) {
      if (attached_.insert(child).second) queue.push_back(std::move(child));
    }
  }
  precomputed_ = true;
}

bool ScopeEvaluator::InScope(const core::StoreKey& key) {
  if (precomputed_) return attached_.contains(key);
  if (scope_.IsRoot(key)) return true;
  if (auto it = in_scope_.find(key); it != in_scope_.end()) return it->second;
  // Upward search for a root. A search that finds none proves every visited ancestor out of
  // scope too (were one in scope, `key` would be), so those are memoized as false.
  std::vector<core::StoreKey> stack{key};
  std::unordered_set<core::StoreKey> visited{key};
  while (!stack.empty()) {
    core::StoreKey current = std::move(stack.back());
    stack.pop_back();
    for (core::StoreKey& parent : links_.ParentsOf(current)) {
      if (scope_.IsRoot(parent)) {
        in_scope_[key] = true;
        return true;
      }
      if (auto it = in_scope_.find(parent); it != in_scope_.end()) {
        if (it->second) {
          in_scope_[key] = true;
          return true;
        }
        continue;
      }
      if (visited.insert(parent).second) stack.push_back(std::move(parent));
    }
  }
  for (const core::StoreKey& v : visited) in_scope_[v] = false;
  return false;
}

bool ScopeEvaluator::SentReferrer(const core::StoreKey& key) {
  const std::vector<core::StoreKey> referrers = links_.ReferrersOf(key);
  if (referrers.empty()) return false;
  if (!deciding_.insert(key).second) {
    ++cycle_hits_;
    return false;
  }
  bool sent = false;
  for (const core::StoreKey& referrer : referrers) {
    if (has_view_(referrer) && Decide(referrer) == Delivery::kSend) {
      sent = true;
      break;
    }
  }
  deciding_.erase(key);
  return sent;
}

Delivery ScopeEvaluator::Decide(const core::StoreKey& key) {
  if (auto it = decided_.find(key); it != decided_.end()) return it->second;
  portico_sync_policy policy = policies_.Of(key);
  bool wanted = false;
  uint64_t hits_before = cycle_hits_;
  switch (policy) {
    case PORTICO_SYNC_NEVER:
      return Delivery::kNever;
    case PORTICO_SYNC_ALWAYS:
      wanted = true;
      break;
    case PORTICO_SYNC_ATTACHED:
      // Attached through its parents, or used by what the gateway receives (a Webhook that
      // targets a Gateway, or that an HTTPRoute names in an ExtensionRef).
      wanted = InScope(key) || SentReferrer(key);
      break;
    case PORTICO_SYNC_TO_REFERRERS:
      wanted = SentReferrer(key);
      break;
    default:
      return Delivery::kNever;  // a policy this controller does not know
  }
  Delivery result = !wanted                ? Delivery::kOutOfScope
                    : !scope_.Handles(key) ? Delivery::kNoHandler
                                           : Delivery::kSend;
  if (cycle_hits_ == hits_before) decided_.emplace(key, result);
  return result;
}

}  // namespace portico::controller::sync
