// grant.h: the ReferenceGrant model: parsing and validating a spec, its export, and the
// Gateway API rule deciding whether a grant permits a reference.
//
// Threading: pure functions over caller-owned values.
#ifndef PORTICO_PLUGINS_REFERENCEGRANT_GRANT_H_
#define PORTICO_PLUGINS_REFERENCEGRANT_GRANT_H_

#include <string>
#include <string_view>
#include <vector>

#include "portico/sdk/json.h"
#include "portico/sdk/processor.h"
#include "portico/sdk/status.h"
#include "portico/sdk/types.h"

namespace portico::plugins::referencegrant {

inline constexpr char kGroup[] = "gateway.networking.k8s.io";

// GrantFrom: objects of (group, kind) in `ns` are trusted.
struct GrantFrom {
  std::string group;
  std::string kind;
  std::string ns;
};

// GrantTo: they may reference objects of (group, kind) in the grant's namespace, named `name`
// (any name when empty).
struct GrantTo {
  std::string group;
  std::string kind;
  std::string name;
};

struct Grant {
  std::vector<GrantFrom> from;
  std::vector<GrantTo> to;
};

// ParseSpec validates a ReferenceGrant spec; errors name the field ("spec.from[0].namespace").
StatusOr<Grant> ParseSpec(const rapidjson::Value& spec);

// ExportJson renders the export: {"from":[{group,kind,namespace}],"to":[{group,kind[,name]}]}.
std::string ExportJson(const Grant& grant);

// ParseExport reads an export back (as listed by the host); tolerant of missing fields.
Grant ParseExport(const rapidjson::Value& exported);

// Permits applies one grant (which lives in `to.ns`) to a reference.
bool Permits(const Grant& grant, std::string_view from_group, std::string_view from_kind,
             std::string_view from_ns, const sdk::ObjectRef& to);

// ReferenceAllowed is the reference policy: same-namespace references need no grant; others
// need a ReferenceGrant in the target's namespace, listed through `ctx` so the asking object is
// requeued when grants there change.
bool ReferenceAllowed(sdk::ProcessContext& ctx, std::string_view from_group,
                      std::string_view from_kind, std::string_view from_ns,
                      const sdk::ObjectRef& to);

}  // namespace portico::plugins::referencegrant

#endif  // PORTICO_PLUGINS_REFERENCEGRANT_GRANT_H_
