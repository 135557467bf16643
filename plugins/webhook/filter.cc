// filter.cc: the portico.io/Webhook filter type (see process.h): for each request, one outbound
// call to the Webhook's target through the gateway's HTTP client; a 2xx answer lets the request
// go on, any other answer is returned to the client as it is, and a failed call (timeout,
// refused, reset) follows failurePolicy (Ignore: go on; Fail: 500).
//
// The call's path, custom headers and body are templates over the request (template.h), filled
// per request; an absent value follows missingValue (Omit, Empty, Fail with missingStatus).
// Passive health: after health.consecutiveFailures failed calls in a row the target is not
// called for unhealthyFor (requests follow failurePolicy); one answered call resets the count.
//
// Header lists: forwardHeaders are copied from the client request onto the call;
// upstreamHeaders from a 2xx answer onto the request sent upstream; responseHeaders from the
// answer onto what the client gets (the denial itself, or the upstream's response when allowed:
// kept in the request's state until the response head).
//
// Threading: a WebhookFilter is immutable after creation and shared by every worker; per-request
// data lives in its RequestState.
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "process.h"
#include "template.h"
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

// CallShape is what a Webhook's call is made of, parsed from its synced view.
struct CallShape {
  std::string backend;  // "namespace/service:port", or "" for a URL target
  std::string origin;   // "http://host:port" of a URL target
  Template path;
  std::string method;
  int64_t timeout_ms = 0;
  bool fail_open = false;
  std::vector<std::string> forward, upstream, response;
  struct Header {
    std::string name;
    std::optional<Template> value;  // a template, or
    std::string literal;            // a Secret's value
  };
  std::vector<Header> headers;
  std::optional<Template> body;
  Missing missing = Missing::kOmit;
  int missing_status = 400;
  int health_failures = 0;  // 0: no passive health check
  int64_t unhealthy_ms = 0;
};

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class WebhookFilter : public sdk::Filter {
 public:
  explicit WebhookFilter(CallShape shape) : shape_(std::move(shape)) {}

  std::unique_ptr<sdk::RequestState> NewState() override {
    return std::make_unique<AllowedState>();
  }

  portico_filter_status OnRequest(const sdk::HttpView& request,
                                  const sdk::FilterHost& host) override {
    if (shape_.health_failures > 0 && NowMs() < open_until_ms_.load(std::memory_order_relaxed)) {
      return Failed(request);  // marked unhealthy: not called
    }
    const RequestValues values = [&request](std::string_view name) -> std::optional<std::string> {
      std::string_view target = request.Path();
      if (name == "method") return std::string(request.Method());
      if (name == "path") return std::string(target.substr(0, target.find('?')));
      if (name == "query") return std::string(request.Query());
      if (name == "host") return std::string(request.Authority());
      if (name == "client_ip") return std::string(request.ClientAddress());
      if (name == "route") return std::string(request.Route());
      if (name == "rule") return std::string(request.RuleName());
      if (name.rfind("header.", 0) == 0) {
        auto v = request.Header(name.substr(7));
        return v ? std::optional<std::string>(std::string(*v)) : std::nullopt;
      }
      auto v = request.QueryParam(name.substr(6));  // "query.NAME"
      return v ? std::optional<std::string>(std::string(*v)) : std::nullopt;
    };
    std::string url = shape_.origin;
    if (!shape_.path.Render(values, shape_.missing, &url, &PathEscape) &&
        shape_.missing == Missing::kFail) {
      return MissingValue(request);
    }
    std::string headers;
    for (const std::string& name : shape_.forward) {
      for (size_t n = 0;; ++n) {
        std::optional<std::string_view> value = request.Header(name, n);
        if (!value) break;
        headers.append(name).append(": ").append(*value).append("\r\n");
      }
    }
    for (const CallShape::Header& h : shape_.headers) {
      std::string value;
      if (!h.value) {
        value = h.literal;
      } else if (!h.value->Render(values, shape_.missing, &value)) {
        if (shape_.missing == Missing::kFail) return MissingValue(request);
        continue;  // Omit: this header is not sent
      }
      headers.append(h.name).append(": ").append(value).append("\r\n");
    }
    std::string body;
    if (shape_.body && !shape_.body->Render(values, shape_.missing, &body) &&
        shape_.missing == Missing::kFail) {
      return MissingValue(request);
    }
    portico_http_call call{};
    call.struct_size = sizeof(call);
    call.method = sdk::Str(shape_.method);
    call.url = sdk::Str(url);
    call.headers = sdk::Str(headers);
    call.body = sdk::Str(body);
    call.timeout_ms = shape_.timeout_ms;
    call.backend = sdk::Str(shape_.backend);
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
                               AllowedState* state) {
    if (answer.status == 0) {
      CountFailure();
      return Failed(request);
    }
    failures_.store(0, std::memory_order_relaxed);
    if (answer.status >= 200 && answer.status < 300) {
      for (const std::string& name : shape_.upstream) {
        if (auto value = answer.Header(name)) request.SetHeader(name, *value);
      }
      if (state != nullptr) {
        for (const std::string& name : shape_.response) {
          if (auto value = answer.Header(name)) {
            state->response_headers.emplace_back(name, std::string(*value));
          }
        }
      }
      return PORTICO_FILTER_CONTINUE;
    }
    // Denied: the webhook's answer goes back as it is (status, allowed headers, body).
    request.Respond(answer.status, answer.body);
    for (const std::string& name : shape_.response) {
      if (auto value = answer.Header(name)) request.ReplyHeader(name, *value);
    }
    if (auto type = answer.Header("content-type")) request.ReplyHeader("Content-Type", *type);
    return PORTICO_FILTER_RESPOND;
  }

  // CountFailure marks the target unhealthy after health_failures failed calls in a row.
  void CountFailure() {
    if (shape_.health_failures == 0) return;
    if (failures_.fetch_add(1, std::memory_order_relaxed) + 1 >= shape_.health_failures) {
      failures_.store(0, std::memory_order_relaxed);
      open_until_ms_.store(NowMs() + shape_.unhealthy_ms, std::memory_order_relaxed);
    }
  }

  portico_filter_status Failed(const sdk::HttpView& request) const {
    if (shape_.fail_open) return PORTICO_FILTER_CONTINUE;
    request.Respond(500, "webhook unavailable\n");
    return PORTICO_FILTER_RESPOND;
  }

  portico_filter_status MissingValue(const sdk::HttpView& request) const {
    request.Respond(shape_.missing_status, "a value the webhook call needs is missing\n");
    return PORTICO_FILTER_RESPOND;
  }

  const CallShape shape_;
  std::atomic<int> failures_{0};  // failed calls in a row (every worker)
  std::atomic<int64_t> open_until_ms_{0};
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
  CallShape shape;
  PORTICO_ASSIGN_OR_RETURN(shape.path, Template::Parse(json::GetString(doc, "path", "/"), "path"));
  if (const rapidjson::Value* service = json::Find(*target, "service")) {
    shape.backend = json::GetString(*service, "namespace", "") + "/" +
                    json::GetString(*service, "name", "") + ":" +
                    std::to_string(json::GetInt(*service, "port").value_or(0));
  } else {
    const std::string scheme = json::GetString(*target, "scheme", "http");
    if (scheme != "http") {
      return UnimplementedError("Webhook filter config: " + scheme + " targets are not served yet");
    }
    std::string host = json::GetString(*target, "host", "");
    if (host.find(':') != std::string::npos) host = "[" + host + "]";
    shape.origin =
        "http://" + host + ":" + std::to_string(json::GetInt(*target, "port").value_or(80));
  }
  shape.method = json::GetString(doc, "method", "POST");
  shape.timeout_ms = *timeout;
  shape.fail_open = json::GetString(doc, "failurePolicy", "Fail") == "Ignore";
  shape.forward = Strings(doc, "forwardHeaders");
  shape.upstream = Strings(doc, "upstreamHeaders");
  shape.response = Strings(doc, "responseHeaders");
  if (const rapidjson::Value* request = json::Find(doc, "request");
      request && request->IsObject()) {
    if (const rapidjson::Value* headers = json::Find(*request, "headers");
        headers != nullptr && headers->IsArray()) {
      for (const auto& h : headers->GetArray()) {
        CallShape::Header header;
        header.name = json::GetString(h, "name");
        if (const rapidjson::Value* literal = json::Find(h, "literal")) {
          header.literal = literal->IsString() ? literal->GetString() : "";
        } else {
          PORTICO_ASSIGN_OR_RETURN(header.value, Template::Parse(json::GetString(h, "value"),
                                                                 "request.headers." + header.name));
        }
        shape.headers.push_back(std::move(header));
      }
    }
    if (const rapidjson::Value* body = json::Find(*request, "body"); body && body->IsString()) {
      PORTICO_ASSIGN_OR_RETURN(shape.body, Template::Parse(body->GetString(), "request.body"));
    }
    const std::string missing = json::GetString(*request, "missingValue", "Omit");
    shape.missing = missing == "Fail"    ? Missing::kFail
                    : missing == "Empty" ? Missing::kEmpty
                                         : Missing::kOmit;
    shape.missing_status = static_cast<int>(json::GetInt(*request, "missingStatus").value_or(400));
  }
  if (const rapidjson::Value* health = json::Find(doc, "health"); health && health->IsObject()) {
    shape.health_failures =
        static_cast<int>(json::GetInt(*health, "consecutiveFailures").value_or(0));
    shape.unhealthy_ms = json::GetInt(*health, "unhealthyForMs").value_or(0);
  }
  return std::unique_ptr<sdk::Filter>(new WebhookFilter(std::move(shape)));
}

// StageWebhook contributes each Webhook as a filter_binding.v1 entry: its id is the Webhook's
// key (what a route rule's ExtensionRef binding names), its config the synced view, and a Webhook
// attached by targetRefs carries the view's "attach" for the chain builder.
Status StageWebhook(const sdk::Txn& txn, const std::vector<sdk::Change>& changes) {
  return sdk::StageFilterBindings(txn, changes, kFilterType);
}

}  // namespace portico::plugins::webhook
