// webhook_plugin: the Webhook kind (portico.io/v1alpha1), a route filter HTTPRoutes attach with
// an ExtensionRef: its processor, its gateway handler (a filter_binding.v1 entry per Webhook)
// and its filter type portico.io/Webhook, which makes the outbound call (process.h, filter.cc).
// Threading: stateless.
#include "portico/sdk/plugin.h"
#include "process.h"
#include "validate.h"

namespace portico::plugins::webhook {
namespace {

void Setup(sdk::Plugin& p) {
  p.Kind(kGroup, "Webhook").Process(&ProcessWebhook).Stage(&StageWebhook);
  p.AddFilterType({kFilterType, PORTICO_PHASE_AUTHZ, 0, &CreateWebhookFilter});
}

}  // namespace
}  // namespace portico::plugins::webhook

PORTICO_PLUGIN(portico::plugins::webhook::Setup)
