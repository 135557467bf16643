// ratelimit_plugin: an example third-party kind built with the installed Portico SDK only, which
// acts on traffic: RateLimitPolicy (example.portico.io/v1alpha1), local token buckets per route,
// client address or header value on the HTTPRoutes and Gateways it targets. Its processor and
// handler are in policy.h, its filter type in filter.h.
// Threading: stateless registration; see policy.h and filter.h for the hooks.
#include "filter.h"
#include "policy.h"
#include "portico/sdk/plugin.h"

namespace example::ratelimit {
namespace {

void Setup(portico::sdk::Plugin& p) {
  p.Kind(kGroup, kKind).Process(&ProcessRateLimitPolicy).Stage(&StageRateLimitPolicy);
  p.AddFilterType({kFilterType, PORTICO_PHASE_RATELIMIT, 0, &CreateRateLimitFilter});
}

}  // namespace
}  // namespace example::ratelimit

PORTICO_PLUGIN(example::ratelimit::Setup)
