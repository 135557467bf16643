// policy_plugin: a fake host fixture providing only a reference policy: references to objects
// named "public-*" are allowed; others when a Probe labelled grant-from=<from namespace> exists
// in the target's namespace (read through the context, so the read is recorded).
// Threading: stateless.
#include <string>

#include "portico/sdk/plugin.h"

namespace {

bool Allowed(portico::sdk::ProcessContext& ctx, std::string_view from_group,
             std::string_view from_kind, std::string_view from_ns,
             const portico::sdk::ObjectRef& to) {
  if (to.name.rfind("public-", 0) == 0) return true;
  std::string grants =
      ctx.ListExports("test.portico.io", "Probe", to.ns, "grant-from=" + std::string(from_ns));
  auto doc = portico::json::Parse(grants);
  return doc.ok() && doc->IsArray() && !doc->Empty();
}

void Setup(portico::sdk::Plugin& p) { p.SetReferencePolicy(&Allowed); }

}  // namespace

PORTICO_PLUGIN(Setup)
