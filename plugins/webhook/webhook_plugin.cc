// webhook_plugin: the Webhook kind (portico.io/v1alpha1), a route filter HTTPRoutes attach with
// an ExtensionRef, and its filter type portico.io/Webhook (see process.h; the outbound call
// itself comes later, filter.cc).
// Threading: stateless.
#include "portico/sdk/plugin.h"
#include "process.h"
#include "validate.h"

namespace portico::plugins::webhook {
namespace {

void Setup(sdk::Plugin& p) {
  p.Kind(kGroup, "Webhook").Process(&ProcessWebhook);
  p.AddFilterType({kFilterType, PORTICO_PHASE_AUTHZ, 0, &CreateWebhookFilter});
}

}  // namespace
}  // namespace portico::plugins::webhook

PORTICO_PLUGIN(portico::plugins::webhook::Setup)
