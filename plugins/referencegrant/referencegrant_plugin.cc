// referencegrant_plugin: the ReferenceGrant kind (gateway.networking.k8s.io v1 and v1beta1,
// namespaced, never synced) and the host's reference policy.
//
// The processor validates the grant and exports its from/to lists; the policy (grant.h) answers
// the host's reference_allowed() from those exports, so the Gateway API rule lives here, not in
// the kinds that reference across namespaces.
// Threading: stateless; process() and the policy may run concurrently.
#include <string>

#include "grant.h"
#include "portico/sdk/plugin.h"

namespace portico::plugins::referencegrant {
namespace {

std::string AcceptedStatus(int64_t generation) {
  return R"({"conditions":[{"type":"Accepted","status":"True","reason":"Accepted","message":"",)"
         R"("observedGeneration":)" +
         std::to_string(generation) + "}]}";
}

Status ProcessReferenceGrant(const sdk::Object& obj, sdk::ProcessContext& ctx,
                             sdk::ProcessResult& result) {
  PORTICO_ASSIGN_OR_RETURN(const rapidjson::Document* doc, obj.doc());
  const rapidjson::Value* spec = json::Find(*doc, "spec");
  if (spec == nullptr || !spec->IsObject()) {
    return InvalidArgumentError(obj.ref().Display() + ": spec: is required");
  }
  StatusOr<Grant> grant = ParseSpec(*spec);
  if (!grant.ok()) return grant.status().WithPrefix(obj.ref().Display());
  result.SetExport(ExportJson(*grant));
  result.SetStatus(AcceptedStatus(obj.generation()));
  return OkStatus();
}

void Setup(sdk::Plugin& p) {
  p.Kind(kGroup, "ReferenceGrant").Process(&ProcessReferenceGrant);
  p.SetReferencePolicy(&ReferenceAllowed);
}

}  // namespace
}  // namespace portico::plugins::referencegrant

PORTICO_PLUGIN(portico::plugins::referencegrant::Setup)
