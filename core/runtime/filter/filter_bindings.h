// filter_bindings.h: FilterBindings, the plugin filter instances of a runtime snapshot, one per
// filter_binding.v1 entry (docs/contributions.md): {"filterType": NAME, "config": {...}}, keyed by
// the entry's id (the filter object's key "group/Kind/namespace/name", which a route rule's
// {"binding": id} names). Built at prepare time, never on the request path: each entry's filter
// type (registered by a plugin) creates the instance from its config; an entry whose type no
// loaded plugin provides, or whose config the type refuses, is refused (its owner is nacked with
// the reason, and rules using it answer 500 until it is fixed). Unchanged entries (same digest)
// keep their instance from the previous table.
//
// Policy attachment: an entry with {"attach": {"targets": [{"gateway": {namespace, name}} |
// {"route": {namespace, name}, "rule"?: name}], "created": RFC 3339}} also runs for every request
// of its targets, after the rule's own filters: AttachedTo lists them in chain order (the filter
// type's phase and order key, then specificity: rule, route, Gateway; then age and id).
//
// Threading: immutable once built; Find from any worker. Ownership: shares its instances with
// the tables built after it; a request pins the table through its snapshot.
#ifndef PORTICO_CORE_RUNTIME_FILTER_FILTER_BINDINGS_H_
#define PORTICO_CORE_RUNTIME_FILTER_FILTER_BINDINGS_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/plugin/kind_registry.h"
#include "core/runtime/filter/plugin_filter.h"
#include "core/runtime/runtime_types.h"

namespace portico::core::filter {

// BindingRefusal is an owner whose binding could not be made, and why.
struct BindingRefusal {
  std::string owner;
  std::string reason;
};

class FilterBindings {
 public:
  // Build makes the bindings of `next`; `previous` (may be null) lends unchanged instances.
  static std::shared_ptr<const FilterBindings> Build(const RuntimeSnapshot& next,
                                                     const KindRegistry& registry,
                                                     const FilterBindings* previous,
                                                     std::vector<BindingRefusal>* refusals);

  // Find returns the instance bound to `id`, or nullptr.
  const HttpFilter* Find(std::string_view id) const;
  size_t size() const { return entries_.size(); }

  // AttachedTo appends to `out`, in chain order, the filters attached to the rule `rule_name`
  // of route `route_key` ("namespace/name"), to that route, or to a Gateway of `gateway_keys`
  // ("namespace/name"). Nothing to do (one test) when no entry attaches.
  void AttachedTo(std::string_view route_key, std::string_view rule_name,
                  const std::vector<std::string_view>& gateway_keys,
                  std::vector<const HttpFilter*>* out) const;
  bool has_attached() const { return !attached_.empty(); }

 private:
  struct Entry {
    Digest128 digest;
    std::shared_ptr<const PluginFilter> filter;
    std::vector<std::string> targets;  // attach keys ("rule:ns/name/rule", "route:..", ..)
    std::string created;
  };
  // Attached is one attachment, with what orders it in a chain.
  struct Attached {
    const HttpFilter* filter;
    int phase;
    int32_t order;
    int specificity;  // 0 rule, 1 route, 2 Gateway
    const std::string* created;
    const std::string* id;
  };
  std::map<std::string, Entry, std::less<>> entries_;
  std::map<std::string, std::vector<Attached>, std::less<>> attached_;  // by attach key
};

}  // namespace portico::core::filter

#endif  // PORTICO_CORE_RUNTIME_FILTER_FILTER_BINDINGS_H_
