// store_key.h: StoreKey, the identity of an object in the processed store:
// (group, kind, namespace, name), with ordering, hashing and the work-queue key form
// "group/kind/namespace/name" ("gateway.networking.k8s.io/HTTPRoute/default/web").
//
// Thread-safety: value type; no shared state.
#ifndef PORTICO_CORE_STORE_STORE_KEY_H_
#define PORTICO_CORE_STORE_STORE_KEY_H_

#include <compare>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "portico/sdk/status.h"

namespace portico::core {

// StoreKey names one object. `group` is empty for the core API group (Secret, Service) and
// `ns` is empty for cluster-scoped kinds; `kind` and `name` are required.
struct StoreKey {
  std::string group;
  std::string kind;
  std::string ns;  // the Kubernetes namespace
  std::string name;

  friend auto operator<=>(const StoreKey&, const StoreKey&) = default;
  friend bool operator==(const StoreKey&, const StoreKey&) = default;

  // ToString renders "group/kind/ns/name", the form work-queue keys take.
  std::string ToString() const;
  // Parse is the inverse of ToString; the result must pass Validate.
  static StatusOr<StoreKey> Parse(std::string_view text);
  // Validate requires a kind and a name and no '/' in any part (it separates them in ToString).
  Status Validate() const;
};

// StoreKeyHash hashes a StoreKey for unordered containers.
struct StoreKeyHash {
  size_t operator()(const StoreKey& key) const noexcept;
};

}  // namespace portico::core

template <>
struct std::hash<portico::core::StoreKey> : portico::core::StoreKeyHash {};

#endif  // PORTICO_CORE_STORE_STORE_KEY_H_
