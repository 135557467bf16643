// stage.h: the TLSPolicy's gateway-side handler. It translates a synced TLSPolicy view
// (process.h: the targets the policy applies to after conflicts, its Secrets as
// {secretRef, sha256}) into one listener_set.v1 "tlsPolicy" entry (docs/contributions.md), id
// "tlspolicy/<namespace>/<name>", owned by the policy:
//   {"entry": "tlsPolicy", "policy": {namespace, name}, "createdUnixMs", "targets":
//    [{"gateway": {namespace, name}, "listener"?}], "hostnames", "certificate"?: {secretRef,
//    sha256}, "minVersion", "maxVersion", "ciphers", "alpn", "clientCertificate"?: {"mode"
//    (None|Optional|Require), "verifyDepth"?, "caCertificates": [{secretRef, sha256}],
//    "allowedSans"}}
// A view that cannot be translated (not the shape process.cc writes) is nacked: the policy keeps
// its last good entry and the rest of the batch applies. A delete drops the entry.
// Threading: stateless; stage() runs on the gateway's sync thread.
#ifndef PORTICO_PLUGINS_TLS_STAGE_H_
#define PORTICO_PLUGINS_TLS_STAGE_H_

#include <string>
#include <vector>

#include "portico/sdk/handler.h"
#include "portico/sdk/json.h"
#include "portico/sdk/types.h"

namespace portico::plugins::tls {

// TranslateTlsPolicy turns the synced view of TLSPolicy `ref` into its listener_set.v1 entry
// JSON; an InvalidArgument error names the field the view lacks or gets wrong.
StatusOr<std::string> TranslateTlsPolicy(const sdk::ObjectRef& ref, const rapidjson::Value& view);

// StageTlsPolicy is the TLSPolicy kind's stage hook.
Status StageTlsPolicy(const sdk::Txn& txn, const std::vector<sdk::Change>& changes);

}  // namespace portico::plugins::tls

#endif  // PORTICO_PLUGINS_TLS_STAGE_H_
