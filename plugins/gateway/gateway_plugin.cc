// gateway_plugin: the GatewayClass (cluster-scoped, never synced) and Gateway (synced to every
// gateway) kinds of the Gateway API, v1 and v1beta1. See process.h for what is resolved so far.
// Threading: stateless.
#include "portico/sdk/plugin.h"
#include "process.h"
#include "stage.h"
#include "validate.h"

namespace portico::plugins::gateway {
namespace {

void Setup(sdk::Plugin& p) {
  p.Kind(kGroup, "GatewayClass").Process(&ProcessGatewayClass);
  p.Kind(kGroup, "Gateway").Process(&ProcessGateway).Stage(&StageGateway);
}

}  // namespace
}  // namespace portico::plugins::gateway

PORTICO_PLUGIN(portico::plugins::gateway::Setup)
