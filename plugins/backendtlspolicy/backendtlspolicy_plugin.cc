// backendtlspolicy_plugin: the BackendTLSPolicy kind (gateway.networking.k8s.io/v1): how
// gateways connect over TLS to the Services it targets, synced to the gateways holding a Gateway
// through which a route reaches those Services ("attached"). process.h resolves it on the
// controller; stage.h turns it into backend.v1 "tls" entries on the gateway.
// Threading: stateless.
#include "portico/sdk/plugin.h"
#include "process.h"
#include "stage.h"
#include "validate.h"

namespace portico::plugins::backendtlspolicy {
namespace {

void Setup(sdk::Plugin& p) {
  p.Kind(kGroup, "BackendTLSPolicy")
      .Process(&ProcessBackendTlsPolicy)
      .Stage(&StageBackendTlsPolicy);
}

}  // namespace
}  // namespace portico::plugins::backendtlspolicy

PORTICO_PLUGIN(portico::plugins::backendtlspolicy::Setup)
