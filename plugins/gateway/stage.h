// stage.h: the Gateway's gateway-side handler. It translates a synced Gateway view (views.h:
// listeners the controller accepted, their certificates as {secretRef, sha256}, route kinds,
// spec.addresses) into listener_set.v1 "listeners" entries (docs/contributions.md): one entry per
// (address, port), the listeners on that port grouped in written order.
//  - address: each distinct spec.addresses value of type IPAddress ("" when the Gateway has none,
//    or for an IPAddress entry without value: the address the gateway process binds);
//  - id: "gateway/<namespace>/<name>/<port>", with "/<address>" appended when the address is set;
//  - frontendValidation: the view's entry for the port (client-certificate validation of its
//    HTTPS listeners, spec.tls.frontend), {mode, caCertificates: [{ref, sha256}]}; absent when
//    the port has none;
//  - backendClientCertificate: the view's {secretRef, sha256} (the Gateway's
//    spec.tls.backend.clientCertificateRef, the keyPair entry's sha256), in every entry of the
//    Gateway; absent when the view has none.
// A view that cannot be translated (not the shape views.h writes) is nacked: the Gateway keeps
// its last good entries and the rest of the batch applies. A delete drops every entry.
// Threading: stateless; stage() runs on the gateway's sync thread.
#ifndef PORTICO_PLUGINS_GATEWAY_STAGE_H_
#define PORTICO_PLUGINS_GATEWAY_STAGE_H_

#include <string>
#include <vector>

#include "portico/sdk/handler.h"
#include "portico/sdk/json.h"
#include "portico/sdk/types.h"

namespace portico::plugins::gateway {

// ListenerSetEntry is one listener_set.v1 contribution: its id and JSON.
struct ListenerSetEntry {
  std::string id;
  std::string json;
};

// TranslateGateway turns the synced view of Gateway `ref` into its listener_set.v1 entries;
// an InvalidArgument error names the field the view lacks.
StatusOr<std::vector<ListenerSetEntry>> TranslateGateway(const sdk::ObjectRef& ref,
                                                         const rapidjson::Value& view);

// StageGateway is the Gateway kind's stage hook.
Status StageGateway(const sdk::Txn& txn, const std::vector<sdk::Change>& changes);

}  // namespace portico::plugins::gateway

#endif  // PORTICO_PLUGINS_GATEWAY_STAGE_H_
