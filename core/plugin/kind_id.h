// kind_id.h: KindId, the (group, kind) identity of a resource kind, and the "Kind.group" syntax
// that manifests and the ABI use in `reads`.
//
// Thread-safety: a value type; no shared state.
#ifndef PORTICO_CORE_PLUGIN_KIND_ID_H_
#define PORTICO_CORE_PLUGIN_KIND_ID_H_

#include <compare>
#include <string>
#include <string_view>

namespace portico::core {

// KindId identifies a kind. `group` is empty for the core group (Secret, Service, Namespace).
// Ordered by group, then kind: the deterministic tie-break of every kind listing.
struct KindId {
  std::string group;
  std::string kind;

  // Parse reads "Kind.group" ("GatewayClass.gateway.networking.k8s.io") or "Kind" alone for the
  // core group ("Secret"): the kind is everything before the first dot.
  static KindId Parse(std::string_view ref);

  // ToString renders "Kind.group", or "Kind" for the core group (the inverse of Parse).
  std::string ToString() const;

  friend bool operator==(const KindId&, const KindId&) = default;
  friend auto operator<=>(const KindId&, const KindId&) = default;
};

}  // namespace portico::core

#endif  // PORTICO_CORE_PLUGIN_KIND_ID_H_
