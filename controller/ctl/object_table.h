// object_table.h: how `portico-ctl get` prints objects as a table, kubectl-style:
//   [NAMESPACE]  NAME  <kind columns>  STATUS  AGE
// NAMESPACE only with -A (and only when some object has one). Kind columns: GatewayClass
// CONTROLLER; Gateway CLASS, ADDRESS; HTTPRoute HOSTNAMES; Service TYPE, PORT(S); Secret TYPE.
// STATUS summarises conditions (status.conditions, or the union of status.parents[].conditions
// for routes): "Accepted,ResolvedRefs" when all are True, a False or Unknown one as
// "ResolvedRefs=False(BackendNotFound)"; "Error: ..." when the controller could not process the
// object; "-" without conditions. AGE comes from metadata.creationTimestamp.
//
// Thread-safety: pure functions.
#ifndef PORTICO_CONTROLLER_CTL_OBJECT_TABLE_H_
#define PORTICO_CONTROLLER_CTL_OBJECT_TABLE_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "portico/sdk/json.h"

namespace portico::ctl {

// PrintObjectTable prints `objects` (admin API objects) at wall-clock time `now_unix_s`.
void PrintObjectTable(const std::vector<const rapidjson::Value*>& objects, bool all_namespaces,
                      int64_t now_unix_s, std::ostream& out);

// StatusSummary renders the STATUS cell of one object: its conditions and those of each entry of
// status.parents (routes) and status.ancestors (policies), the worst of each type.
std::string StatusSummary(const rapidjson::Value& object);

// HumanAge renders a duration the way kubectl does: "45s", "3m12s", "17m", "5h4m", "20h",
// "3d4h", "12d", "2y40d".
std::string HumanAge(int64_t seconds);

// ParseRfc3339 reads "2024-05-01T12:00:00Z" (fractional seconds and numeric offsets accepted)
// into Unix seconds.
std::optional<int64_t> ParseRfc3339(std::string_view text);

}  // namespace portico::ctl

#endif  // PORTICO_CONTROLLER_CTL_OBJECT_TABLE_H_
