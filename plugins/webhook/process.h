// process.h: the Webhook processor and its filter type.
//
// The processor validates (validate.h), resolves the target Service (exists, has the port,
// permitted across namespaces by the reference policy) and the CA Secret (exists, has ca.crt,
// permitted), and writes the synced view, which is the filter's configuration on gateways
// (target, path, method, timeoutMs, failurePolicy, header lists, tls), an export HTTPRoutes
// resolve through ExtensionRef ({"filterType":"portico.io/Webhook", ...}) and the status.
//
// Header lists: forwardHeaders are copied from the client request onto the webhook call;
// upstreamHeaders from a 2xx webhook response onto the request sent upstream; responseHeaders
// from a denying (non-2xx) webhook response onto the response returned to the client.
// Threading: stateless; may run concurrently for different Webhooks.
#ifndef PORTICO_PLUGINS_WEBHOOK_PROCESS_H_
#define PORTICO_PLUGINS_WEBHOOK_PROCESS_H_

#include <memory>
#include <string_view>

#include "portico/sdk/filter.h"
#include "portico/sdk/handler.h"
#include "portico/sdk/processor.h"

namespace portico::plugins::webhook {

Status ProcessWebhook(const sdk::Object& obj, sdk::ProcessContext& ctx, sdk::ProcessResult& result);

// CreateWebhookFilter builds the portico.io/Webhook filter from a Webhook's synced view.
StatusOr<std::unique_ptr<sdk::Filter>> CreateWebhookFilter(std::string_view config);

// StageWebhook (gateway handler) contributes each Webhook as a filter_binding.v1 entry.
Status StageWebhook(const sdk::Txn& txn, const std::vector<sdk::Change>& changes);

}  // namespace portico::plugins::webhook

#endif  // PORTICO_PLUGINS_WEBHOOK_PROCESS_H_
