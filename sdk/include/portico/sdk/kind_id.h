// kind_id.h: KindId, the (group, kind) identity of a resource kind, and the "Kind.group" syntax
// that manifests and the ABI use in `reads`. Shared by the hosts (core/plugin) and the SDK's
// manifest parser and fake host.
//
// Header-only. Thread-safety: a value type; no shared state.
#ifndef PORTICO_SDK_KIND_ID_H_
#define PORTICO_SDK_KIND_ID_H_

#include <compare>
#include <string>
#include <string_view>

namespace portico::sdk {

// KindId identifies a kind. `group` is empty for the core group (Secret, Service, Namespace).
// Ordered by group, then kind: the deterministic tie-break of every kind listing.
struct KindId {
  std::string group;
  std::string kind;

  // Parse reads "Kind.group" ("GatewayClass.gateway.networking.k8s.io") or "Kind" alone for the
  // core group ("Secret"): the kind is everything before the first dot.
  static KindId Parse(std::string_view ref) {
    size_t dot = ref.find('.');
    if (dot == std::string_view::npos) return KindId{"", std::string(ref)};
    return KindId{std::string(ref.substr(dot + 1)), std::string(ref.substr(0, dot))};
  }

  // ToString renders "Kind.group", or "Kind" for the core group (the inverse of Parse).
  std::string ToString() const { return group.empty() ? kind : kind + "." + group; }

  friend bool operator==(const KindId&, const KindId&) = default;
  friend auto operator<=>(const KindId&, const KindId&) = default;
};

}  // namespace portico::sdk

#endif  // PORTICO_SDK_KIND_ID_H_
