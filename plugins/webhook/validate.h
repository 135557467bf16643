// validate.h: the Webhook model and the rules its JSON Schema cannot express: exactly one of
// service and url; a parsable http(s) URL without a fragment, and no spec.path when the URL has
// one; tls only over https (or to a Service) and insecureSkipVerify excluding a CA; a timeout
// between 1ms and 60s; header lists without duplicates (case-insensitive) or hop-by-hop headers.
//
// Templates (template.h): spec.path, spec.request.headers[].value and spec.request.body are
// parsed here, so a bad one is refused when the Webhook is applied, naming the field.
//
// ParseWebhook applies the defaults (path "/", method POST, timeout 1s, failurePolicy Fail,
// request.missingValue Omit with status 400, no passive health check) and lower-cases header
// names. Errors name the field; the caller prefixes the object.
// Threading: pure functions.
#ifndef PORTICO_PLUGINS_WEBHOOK_VALIDATE_H_
#define PORTICO_PLUGINS_WEBHOOK_VALIDATE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "portico/sdk/json.h"
#include "portico/sdk/status.h"

namespace portico::plugins::webhook {

inline constexpr char kGroup[] = "portico.io";
inline constexpr char kFilterType[] = "portico.io/Webhook";

struct ServiceTarget {
  std::string ns;  // empty: the Webhook's namespace
  std::string name;
  int64_t port = 0;
};

struct UrlTarget {
  std::string scheme;  // "http" or "https"
  std::string host;    // without brackets for IPv6
  int64_t port = 0;    // explicit or the scheme's default
  std::string path;    // "" when the URL has none
  std::string query;   // without "?"
};

// CustomHeader is a header the Webhook adds to its call: a template, or a Secret's value
// (valueFrom.secretKeyRef, same namespace; resolved by the processor).
struct CustomHeader {
  std::string name;  // lower case
  std::string value;
  std::string secret_name, secret_key;  // set: the value comes from this Secret key
};

// TargetRef is a policy attachment (spec.targetRefs): a Gateway or an HTTPRoute of the Webhook's
// namespace, and for a route optionally one rule by name (sectionName).
struct TargetRef {
  std::string kind;  // "Gateway" or "HTTPRoute"
  std::string name;
  std::string section;  // HTTPRoute rule name; "" for the whole route
};

struct WebhookSpec {
  bool has_service = false;
  ServiceTarget service;
  UrlTarget url;
  std::string path;  // the request path on the target (query included when from the URL)
  std::string method;
  int64_t timeout_ms = 0;
  std::string failure_policy;
  std::vector<std::string> forward_headers;   // client request -> webhook call
  std::vector<std::string> upstream_headers;  // webhook 2xx response -> upstream request
  std::vector<std::string> response_headers;  // webhook denial -> client response
  bool tls = false;
  bool insecure_skip_verify = false;
  std::string ca_ns;  // empty: the Webhook's namespace
  std::string ca_name;
  std::vector<CustomHeader> request_headers;  // spec.request.headers
  std::optional<std::string> body;            // spec.request.body (a template)
  std::string missing = "Omit";               // spec.request.missingValue
  int64_t missing_status = 400;               // spec.request.missingStatus
  int64_t health_failures = 0;                // spec.health.consecutiveFailures (0: off)
  int64_t health_unhealthy_ms = 0;            // spec.health.unhealthyFor
  std::vector<TargetRef> targets;             // spec.targetRefs (empty: ExtensionRef only)
};

// ParseUrl parses an absolute http(s) URL; errors name `field`.
StatusOr<UrlTarget> ParseUrl(const std::string& url, const std::string& field);

// ParseWebhook validates a Webhook's spec into the model.
StatusOr<WebhookSpec> ParseWebhook(const rapidjson::Value& spec);

}  // namespace portico::plugins::webhook

#endif  // PORTICO_PLUGINS_WEBHOOK_VALIDATE_H_
