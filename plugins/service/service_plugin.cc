// service_plugin: the Service (core/v1) and EndpointSlice (discovery.k8s.io/v1) kinds, both
// synced to every gateway and staged as backend.v1 contributions (docs/contributions.md): the
// gateway joins a Service's ports with its slices' endpoints, so scaling touches no route.
// Threading: stateless; see service.h and endpointslice.h.
#include "endpointslice.h"
#include "portico/sdk/plugin.h"
#include "service.h"

namespace portico::plugins::service {
namespace {

void Setup(sdk::Plugin& p) {
  p.Kind("", "Service").Process(&ProcessService).Stage(&StageService);
  p.Kind(kDiscoveryGroup, "EndpointSlice")
      .Process(&ProcessEndpointSlice)
      .Stage(&StageEndpointSlice);
}

}  // namespace
}  // namespace portico::plugins::service

PORTICO_PLUGIN(portico::plugins::service::Setup)
