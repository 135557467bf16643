// stage.h: the BackendTLSPolicy's gateway-side handler. It translates a synced policy view
// (process.h: the targets the policy applies to and the resolved settings) into backend.v1
// "tls" entries (docs/contributions.md), one per target, owned by the policy:
//  - id "tls/<namespace>/<service>" for a target without sectionName (every port of the
//    Service), "tls/<namespace>/<service>/<sectionName>" for one port (more specific: it wins
//    for that port);
//  - {"entry": "tls", namespace, service, sectionName?, policy: {namespace, name}, hostname,
//    then exactly one of caCertificates [{ref: {kind, namespace, name}, sha256}] (non-empty),
//    wellKnownCACertificates ("System") or invalid (the reason the backend must be refused),
//    subjectAltNames [{type: "Hostname", hostname} | {type: "URI", uri}]}.
// A view that is not that shape is nacked: the policy keeps its last good entries and the rest
// of the batch applies. A delete drops every entry.
// Threading: stateless; stage() runs on the gateway's sync thread.
#ifndef PORTICO_PLUGINS_BACKENDTLSPOLICY_STAGE_H_
#define PORTICO_PLUGINS_BACKENDTLSPOLICY_STAGE_H_

#include <string>
#include <vector>

#include "portico/sdk/handler.h"
#include "portico/sdk/json.h"
#include "portico/sdk/types.h"

namespace portico::plugins::backendtlspolicy {

// BackendEntry is one backend.v1 contribution: its id and JSON.
struct BackendEntry {
  std::string id;
  std::string json;
};

// TranslatePolicy turns the synced view of policy `ref` into its backend.v1 entries; an
// InvalidArgument error names the field the view lacks.
StatusOr<std::vector<BackendEntry>> TranslatePolicy(const sdk::ObjectRef& ref,
                                                    const rapidjson::Value& view);

// StageBackendTlsPolicy is the kind's stage hook.
Status StageBackendTlsPolicy(const sdk::Txn& txn, const std::vector<sdk::Change>& changes);

}  // namespace portico::plugins::backendtlspolicy

#endif  // PORTICO_PLUGINS_BACKENDTLSPOLICY_STAGE_H_
