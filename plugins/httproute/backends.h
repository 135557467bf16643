// backends.h: resolution of an HTTPRoute's references, the route's ResolvedRefs condition, and
// the annotations the synced view carries so gateways never re-resolve:
//  - backendRefs (a rule's, and a RequestMirror filter's): core Services only (otherwise
//    InvalidKind); across namespaces only with a ReferenceGrant (RefNotPermitted); the Service
//    must exist and expose the port (BackendNotFound). A resolved backend gets
//    "key": "<namespace>/<service>:<port>", the backend.v1 key (never endpoints); an invalid one
//    gets "key": "" and "invalid": {reason, message}, and gateways answer 500 for its share.
//  - ExtensionRef filters, through the host's resolve_extension_ref (owned by other kinds, e.g.
//    Webhook): a filter that does not resolve is BackendNotFound (a reference to a resource
//    that does not exist) and is marked "resolved": false; gateways answer 500 for its rule,
//    as the API requires (an unresolved custom filter is never skipped).
// The condition names the first failing reference.
// Threading: one resolver per process() call; reads go through its ProcessContext.
#ifndef PORTICO_PLUGINS_HTTPROUTE_BACKENDS_H_
#define PORTICO_PLUGINS_HTTPROUTE_BACKENDS_H_

#include <string>
#include <vector>

#include "portico/sdk/json_writer.h"
#include "portico/sdk/processor.h"

namespace portico::plugins::httproute {

class RefResolver {
 public:
  RefResolver(sdk::ProcessContext& ctx, std::string route_ns,
              rapidjson::Document::AllocatorType& alloc)
      : ctx_(ctx), ns_(std::move(route_ns)), alloc_(alloc) {}

  // ResolveRule resolves and annotates, in place, every reference of a normalized rule;
  // `field` names it in messages ("spec.rules[0]").
  void ResolveRule(rapidjson::Value& rule, const std::string& field);

  // condition is ResolvedRefs: True, or False with the first failure.
  const sdk::Condition& condition() const { return condition_; }
  // filters are the resolved ExtensionRef targets (Webhooks): the route links them, so they are
  // synced ("toReferrers") to the gateways that hold the route, and only to those.
  const std::vector<sdk::ObjectRef>& filters() const { return filters_; }

 private:
  void Backend(rapidjson::Value& ref, const std::string& field);
  void Filters(rapidjson::Value& owner, const std::string& field);
  void Fail(const std::string& reason, const std::string& message);
  void Set(rapidjson::Value& obj, const char* key, rapidjson::Value value);

  sdk::ProcessContext& ctx_;
  std::string ns_;
  rapidjson::Document::AllocatorType& alloc_;
  sdk::Condition condition_{"ResolvedRefs", "True", "ResolvedRefs", ""};
  std::vector<sdk::ObjectRef> filters_;
};

}  // namespace portico::plugins::httproute

#endif  // PORTICO_PLUGINS_HTTPROUTE_BACKENDS_H_
