// filter.cc: the portico.io/Webhook filter type (see process.h).
#include <memory>
#include <string>

#include "process.h"
#include "validate.h"

namespace portico::plugins::webhook {
namespace {

// WebhookFilter holds one Webhook's configuration. For now it lets every request through: the
// outbound call (FilterHost::HttpCall to the target with the forwarded headers, then
// failurePolicy on errors and timeouts, and the upstream/response header copies) comes with the
// gateway's request pipeline and async HTTP client in a later issue.
// Threading: immutable after creation; hooks are safe on every worker.
class WebhookFilter : public sdk::Filter {
 public:
  WebhookFilter(std::string target, int64_t timeout_ms, std::string failure_policy)
      : target_(std::move(target)),
        timeout_ms_(timeout_ms),
        failure_policy_(std::move(failure_policy)) {}

  portico_filter_status OnRequest(const sdk::HttpView& request,
                                  const sdk::FilterHost& host) override {
    return PORTICO_FILTER_CONTINUE;
  }

 private:
  std::string target_;
  int64_t timeout_ms_;
  std::string failure_policy_;
};

}  // namespace

StatusOr<std::unique_ptr<sdk::Filter>> CreateWebhookFilter(std::string_view config) {
  PORTICO_ASSIGN_OR_RETURN(rapidjson::Document doc, json::Parse(config, "Webhook filter config"));
  const rapidjson::Value* target = json::Find(doc, "target");
  std::optional<int64_t> timeout = json::GetInt(doc, "timeoutMs");
  if (target == nullptr || !target->IsObject() || !timeout) {
    return InvalidArgumentError(
        "Webhook filter config: needs target and timeoutMs (a Webhook's synced view)");
  }
  return std::unique_ptr<sdk::Filter>(new WebhookFilter(
      json::Serialize(*target), *timeout, json::GetString(doc, "failurePolicy", "Fail")));
}

}  // namespace portico::plugins::webhook
