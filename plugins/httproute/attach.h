// attach.h: the attachment of an HTTPRoute to one parentRef, per the Gateway API.
//
// Only parentRefs to Gateways (gateway.networking.k8s.io/Gateway) that exist and are Portico's
// are judged; others get no status entry (a route's status lists only the parents its
// controller is responsible for). For a Gateway of ours, the listeners the parentRef selects
// (sectionName and port, both when both are set) are narrowed in the order whose failure names
// the reason of Accepted=False:
//   1. no listener selected                                   -> NoMatchingParent
//   2. none allows HTTPRoute (kinds) from the route's namespace
//      (allowedRoutes.namespaces Same, All, or Selector on the Namespace's labels)
//                                                             -> NotAllowedByListeners
//   3. none shares a hostname with the route                  -> NoMatchingListenerHostname
// The remaining listeners are the ones the route attaches to, each with the hostnames the route
// serves there (sdk/hostname.h). A listener's own status (not accepted, unresolved
// certificates) does not prevent attachment: attachedRoutes counts it all the same.
// Threading: stateless; reads go through the caller's ProcessContext (Gateway and Namespace
// exports), recorded by the host.
#ifndef PORTICO_PLUGINS_HTTPROUTE_ATTACH_H_
#define PORTICO_PLUGINS_HTTPROUTE_ATTACH_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "portico/sdk/json_writer.h"
#include "portico/sdk/processor.h"

namespace portico::plugins::httproute {

// RouteScope is what attachment needs to know about the route itself.
class RouteScope {
 public:
  RouteScope(sdk::ProcessContext& ctx, std::string ns, std::vector<std::string> hostnames)
      : ctx_(ctx), ns_(std::move(ns)), hostnames_(std::move(hostnames)) {}

  const std::string& ns() const { return ns_; }
  const std::vector<std::string>& hostnames() const { return hostnames_; }
  sdk::ProcessContext& ctx() const { return ctx_; }
  // NamespaceLabels reads the route's Namespace export once, when a listener selects namespaces
  // by label; a Namespace that does not exist has only its kubernetes.io/metadata.name label.
  const std::map<std::string, std::string>& NamespaceLabels() const;

 private:
  sdk::ProcessContext& ctx_;
  std::string ns_;
  std::vector<std::string> hostnames_;
  mutable std::optional<std::map<std::string, std::string>> labels_;
};

// AttachedListener is a listener the route attaches to and the hostnames it serves there
// (empty: any host).
struct AttachedListener {
  std::string name;
  std::vector<std::string> hostnames;
};

// Attachment is the outcome for one parentRef.
struct Attachment {
  bool judged = false;  // false: not a Gateway of ours; no status entry
  sdk::ObjectRef gateway;
  sdk::Condition accepted{"Accepted", "Unknown", "Pending", ""};
  std::vector<AttachedListener> listeners;
};

// Attach judges one normalized parentRef (group, kind and namespace defaulted).
Attachment Attach(const rapidjson::Value& parent_ref, const RouteScope& route);

}  // namespace portico::plugins::httproute

#endif  // PORTICO_PLUGINS_HTTPROUTE_ATTACH_H_
