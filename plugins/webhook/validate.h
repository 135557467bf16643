// validate.h: the Webhook model and the rules its JSON Schema cannot express: exactly one of
// service and url; a parsable http(s) URL without a fragment, and no spec.path when the URL has
// one; tls only over https (or to a Service) and insecureSkipVerify excluding a CA; a timeout
// between 1ms and 60s; header lists without duplicates (case-insensitive) or hop-by-hop headers.
//
// ParseWebhook applies the defaults (path "/", method POST, timeout 1s, failurePolicy Fail)
// and lower-cases header names. Errors name the field; the caller prefixes the object.
// Threading: pure functions.
#ifndef PORTICO_PLUGINS_WEBHOOK_VALIDATE_H_
#define PORTICO_PLUGINS_WEBHOOK_VALIDATE_H_

#include <cstdint>
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
};

// ParseUrl parses an absolute http(s) URL; errors name `field`.
StatusOr<UrlTarget> ParseUrl(const std::string& url, const std::string& field);

// ParseWebhook validates a Webhook's spec into the model.
StatusOr<WebhookSpec> ParseWebhook(const rapidjson::Value& spec);

}  // namespace portico::plugins::webhook

#endif  // PORTICO_PLUGINS_WEBHOOK_VALIDATE_H_
