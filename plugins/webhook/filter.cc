// filter.cc: the portico.io/Webhook filter type (see process.h): for each request, one outbound
// call to the Webhook's target through the gateway's HTTP client; a 2xx answer lets the request
// go on, any other answer is returned to the client as it is, and a failed call (timeout,
// refused, reset) follows failurePolicy (Ignore: go on; Fail: 500).
//
// Header lists: forwardHeaders are copied from the client request onto the call;
// upstreamHeaders from a 2xx answer onto the request sent upstream; responseHeaders from the
// answer onto what the client gets (the denial itself, or the upstream's response when allowed:
// kept in the request's state until the response head).
//
// Threading: a WebhookFilter is immutable after creation and shared by every worker; per-request
// data lives in its RequestState.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "process.h"
#include "validate.h"

namespace portico::plugins::webhook {
namespace {

// AllowedState keeps the answer's responseHeaders of an allowed request until its response.
struct AllowedState final : sdk::RequestState {
  std::vector<std::pair<std::string, std::string>> response_headers;
};

std::vector<std::string> Strings(const rapidjson::Value& doc, const char* key) {
  std::vector<std::string> out;
  const rapidjson::Value* list = json::Find(doc, key);
  if (list == nullptr || !list->IsArray()) return out;
  for (const auto& v : list->GetArray()) {
    if (v.IsString()) out.emplace_back(v.GetString(), v.GetStringLength());
  }
  return out;
}

class WebhookFilter : public sdk::Filter {
 public:
  WebhookFilter(std::string backend, std::string url, std::string method, int64_t timeout_ms,
                bool fail_open, std::vector<std::string> forward, std::vector<std::string> upstream,
                std::vector<std::string> response)
      : backend_(std::move(backend)),
        url_(std::move(url)),
        method_(std::move(method)),
        timeout_ms_(timeout_ms),
        fail_open_(fail_open),
        forward_(std::move(forward)),
        upstream_(std::move(upstream)),
        response_(std::move(response)) {}

  std::unique_ptr<sdk::RequestState> NewState() override {
    return std::make_unique<AllowedState>();
  }

  portico_filter_status OnRequest(const sdk::HttpView& request,
                                  const sdk::FilterHost& host) override {
    std::string headers;
    for (const std::string& name : forward_) {
      for (size_t n = 0;; ++n) {
        std::optional<std::string_view> value = request.Header(name, n);
        if (!value) break;
        headers.append(name).append(": ").append(*value).append("\r\n");
      }
    }
    portico_http_call call{};
    call.struct_size = sizeof(call);
    call.method = sdk::Str(method_);
    call.url = sdk::Str(url_);
    call.headers = sdk::Str(headers);
    call.timeout_ms = timeout_ms_;
    call.backend = sdk::Str(backend_);
    AllowedState* state = host.State<AllowedState>();
    Status started = host.HttpCall(
        call, [this, state](const sdk::HttpResponse& answer, const sdk::HttpView& view) {
          return Decide(answer, view, state);
        });
    if (started.ok()) return PORTICO_FILTER_PENDING;
    host.Log(PORTICO_LOG_WARN, "webhook call not started: " + started.message());
    return Failed(request);
  }

  portico_filter_status OnResponse(const sdk::HttpView& response,
                                   const sdk::FilterHost& host) override {
    if (AllowedState* state = host.State<AllowedState>()) {
      for (const auto& [name, value] : state->response_headers) response.SetHeader(name, value);
    }
    return PORTICO_FILTER_CONTINUE;
  }

 private:
  portico_filter_status Decide(const sdk::HttpResponse& answer, const sdk::HttpView& request,
                               AllowedState* state) const {
    if (answer.status == 0) return Failed(request);
    if (answer.status >= 200 && answer.status < 300) {
      for (const std::string& name : upstream_) {
        if (auto value = answer.Header(name)) request.SetHeader(name, *value);
      }
      if (state != nullptr) {
        for (const std::string& name : response_) {
          if (auto value = answer.Header(name)) {
            state->response_headers.emplace_back(name, std::string(*value));
          }
        }
      }
      return PORTICO_FILTER_CONTINUE;
    }
    // Denied: the webhook's answer goes back as it is (status, allowed headers, body).
    request.Respond(answer.status, answer.body);
    for (const std::string& name : response_) {
      if (auto value = answer.Header(name)) request.ReplyHeader(name, *value);
    }
    if (auto type = answer.Header("content-type")) request.ReplyHeader("Content-Type", *type);
    return PORTICO_FILTER_RESPOND;
  }

  portico_filter_status Failed(const sdk::HttpView& request) const {
    if (fail_open_) return PORTICO_FILTER_CONTINUE;
    request.Respond(500, "webhook unavailable\n");
    return PORTICO_FILTER_RESPOND;
  }

  const std::string backend_;  // "namespace/service:port", or "" for a URL target
  const std::string url_;      // path (backend) or http://host:port/path
  const std::string method_;
  const int64_t timeout_ms_;
  const bool fail_open_;
  const std::vector<std::string> forward_;
  const std::vector<std::string> upstream_;
  const std::vector<std::string> response_;
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
  if (json::Find(doc, "tls") != nullptr) {
    return UnimplementedError("Webhook filter config: tls targets are not served yet");
  }
  const std::string path = json::GetString(doc, "path", "/");
  std::string backend, url;
  if (const rapidjson::Value* service = json::Find(*target, "service")) {
    backend = json::GetString(*service, "namespace", "") + "/" +
              json::GetString(*service, "name", "") + ":" +
              std::to_string(json::GetInt(*service, "port").value_or(0));
    url = path;
  } else {
    const std::string scheme = json::GetString(*target, "scheme", "http");
    if (scheme != "http") {
      return UnimplementedError("Webhook filter config: " + scheme + " targets are not served yet");
    }
    std::string host = json::GetString(*target, "host", "");
    if (host.find(':') != std::string::npos) host = "[" + host + "]";
    url =
        "http://" + host + ":" + std::to_string(json::GetInt(*target, "port").value_or(80)) + path;
  }
  return std::unique_ptr<sdk::Filter>(new WebhookFilter(
      std::move(backend), std::move(url), json::GetString(doc, "method", "POST"), *timeout,
      json::GetString(doc, "failurePolicy", "Fail") == "Ignore", Strings(doc, "forwardHeaders"),
      Strings(doc, "upstreamHeaders"), Strings(doc, "responseHeaders")));
}

// StageWebhook contributes each Webhook as a filter_binding.v1 entry: its id is the Webhook's
// key (what a route rule's ExtensionRef binding names), its config the synced view.
Status StageWebhook(const sdk::Txn& txn, const std::vector<sdk::Change>& changes) {
  for (const sdk::Change& change : changes) {
    const std::string key = change.ref.Key();
    if (change.op == PORTICO_CHANGE_DELETE) {
      txn.ClearOwner(key);
      continue;
    }
    std::string binding = "{\"filterType\":\"";
    binding.append(kFilterType).append("\",\"config\":").append(change.json).append("}");
    PORTICO_RETURN_IF_ERROR(txn.Put(key, PORTICO_FORMAT_FILTER_BINDING, key, binding));
  }
  return OkStatus();
}

}  // namespace portico::plugins::webhook
