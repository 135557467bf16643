// httproute_plugin: the HTTPRoute kind of the Gateway API (v1 and v1beta1), synced to every
// gateway. See process.h for what is resolved so far.
// Threading: stateless.
#include "portico/sdk/plugin.h"
#include "process.h"
#include "stage.h"
#include "validate.h"

namespace portico::plugins::httproute {
namespace {

void Setup(sdk::Plugin& p) {
  p.Kind(kGroup, "HTTPRoute").Process(&ProcessRoute).Stage(&StageRoute);
}

}  // namespace
}  // namespace portico::plugins::httproute

PORTICO_PLUGIN(portico::plugins::httproute::Setup)
