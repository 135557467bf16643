// validate.cc: see validate.h.
#include "validate.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>

#include "portico/sdk/fields.h"
#include "portico/sdk/names.h"
#include "template.h"

namespace portico::plugins::webhook {
namespace {

using ::portico::sdk::FieldError;
using ::portico::sdk::Quoted;
constexpr int64_t kMaxTimeoutMs = 60 * 1000;

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  });
  return s;
}

bool IsHopByHop(const std::string& lower) {
  static const std::set<std::string> kHopByHop = {
      "connection",        "keep-alive", "proxy-connection", "te",  "trailer",
      "transfer-encoding", "upgrade",    "content-length",   "host"};
  return kHopByHop.count(lower) > 0;
}

StatusOr<std::vector<std::string>> ParseHeaders(const rapidjson::Value& spec, const char* name) {
  std::vector<std::string> out;
  const rapidjson::Value* list = json::Find(spec, name);
  if (list == nullptr || !list->IsArray()) return out;
  std::set<std::string> seen;
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
    std::string field = "spec." + std::string(name) + "[" + std::to_string(i) + "]";
    const rapidjson::Value& v = (*list)[i];
    std::string header = v.IsString() ? v.GetString() : "";
    if (!sdk::names::IsHeaderName(header)) {
      return FieldError(field, Quoted(header) + " is not a valid header name");
    }
    std::string lower = Lower(header);
    if (IsHopByHop(lower)) {
      return FieldError(field,
                        Quoted(header) + " is a hop-by-hop or framing header and cannot be copied");
    }
    if (!seen.insert(lower).second) {
      return FieldError(field,
                        "duplicate header " + Quoted(header) + " (names are case-insensitive)");
    }
    out.push_back(lower);
  }
  return out;
}

}  // namespace

StatusOr<UrlTarget> ParseUrl(const std::string& url, const std::string& field) {
  UrlTarget out;
  size_t scheme_end = url.find("://");
  out.scheme = scheme_end == std::string::npos ? "" : Lower(url.substr(0, scheme_end));
  if (out.scheme != "http" && out.scheme != "https") {
    return FieldError(field, Quoted(url) + " must start with http:// or https://");
  }
  if (url.find('#') != std::string::npos) {
    return FieldError(field, Quoted(url) + " must not have a fragment");
  }
  std::string rest = url.substr(scheme_end + 3);
  size_t authority_end = rest.find_first_of("/?");
  std::string authority = rest.substr(0, authority_end);
  std::string tail = authority_end == std::string::npos ? "" : rest.substr(authority_end);
  if (authority.find('@') != std::string::npos) {
    return FieldError(field, Quoted(url) + " must not carry user information");
  }
  std::string port_text;
  bool has_port = false;
  if (!authority.empty() && authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == std::string::npos) {
      return FieldError(field, Quoted(url) + " has an unterminated IPv6 address");
    }
    out.host = authority.substr(1, close - 1);
    if (!sdk::names::IsIPv6(out.host)) {
      return FieldError(field, Quoted(out.host) + " is not an IPv6 address");
    }
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') {
        return FieldError(field, Quoted(url) + " has a malformed authority");
      }
      has_port = true;
      port_text = authority.substr(close + 2);
    }
  } else {
    size_t colon = authority.find(':');
    out.host = Lower(authority.substr(0, colon));
    if (colon != std::string::npos) {
      has_port = true;
      port_text = authority.substr(colon + 1);
    }
    if (!sdk::names::IsIPv4(out.host) && !sdk::names::IsDnsSubdomain(out.host)) {
      return FieldError(field, Quoted(out.host) + " is not a valid host");
    }
  }
  out.port = out.scheme == "https" ? 443 : 80;
  if (has_port) {
    bool digits = !port_text.empty() && port_text.size() <= 5 &&
                  std::all_of(port_text.begin(), port_text.end(),
                              [](char c) { return c >= '0' && c <= '9'; });
    out.port = digits ? std::stoll(port_text) : 0;
    if (out.port < 1 || out.port > 65535) {
      return FieldError(field, Quoted(url) + " has an invalid port");
    }
  }
  size_t q = tail.find('?');
  out.path = tail.substr(0, q);
  if (q != std::string::npos) out.query = tail.substr(q + 1);
  return out;
}

// ParseRequest reads spec.request: custom headers (templates or Secret keys), the body template
// and the presence policy.
Status ParseRequest(const rapidjson::Value& spec, WebhookSpec* out) {
  const rapidjson::Value* request = json::Find(spec, "request");
  if (request == nullptr || !request->IsObject()) return OkStatus();
  std::set<std::string> seen;
  if (const rapidjson::Value* headers = json::Find(*request, "headers");
      headers != nullptr && headers->IsArray()) {
    for (rapidjson::SizeType i = 0; i < headers->Size(); ++i) {
      const std::string field = "spec.request.headers[" + std::to_string(i) + "]";
      const rapidjson::Value& h = (*headers)[i];
      CustomHeader header;
      header.name = Lower(json::GetString(h, "name"));
      if (!sdk::names::IsHeaderName(header.name)) {
        return FieldError(field + ".name", Quoted(header.name) + " is not a valid header name");
      }
      if (IsHopByHop(header.name)) {
        return FieldError(
            field + ".name",
            Quoted(header.name) + " is a hop-by-hop or framing header and cannot be set");
      }
      if (!seen.insert(header.name).second) {
        return FieldError(field + ".name", "duplicate header " + Quoted(header.name));
      }
      const rapidjson::Value* value = json::Find(h, "value");
      const rapidjson::Value* from = json::Find(h, "valueFrom");
      if ((value != nullptr) == (from != nullptr)) {
        return FieldError(field, "exactly one of value and valueFrom must be set");
      }
      if (value != nullptr) {
        header.value = value->IsString() ? value->GetString() : "";
        PORTICO_RETURN_IF_ERROR(Template::Parse(header.value, field + ".value").status());
      } else {
        const rapidjson::Value* ref = json::Find(*from, "secretKeyRef");
        header.secret_name = ref != nullptr ? json::GetString(*ref, "name") : "";
        header.secret_key = ref != nullptr ? json::GetString(*ref, "key") : "";
        if (header.secret_name.empty() || header.secret_key.empty()) {
          return FieldError(field + ".valueFrom.secretKeyRef", "needs name and key");
        }
      }
      out->request_headers.push_back(std::move(header));
    }
  }
  if (const rapidjson::Value* body = json::Find(*request, "body"); body && body->IsString()) {
    out->body = body->GetString();
    PORTICO_RETURN_IF_ERROR(Template::Parse(*out->body, "spec.request.body").status());
  }
  out->missing = json::GetString(*request, "missingValue", "Omit");
  if (out->missing != "Omit" && out->missing != "Empty" && out->missing != "Fail") {
    return FieldError("spec.request.missingValue",
                      Quoted(out->missing) + " is not Omit, Empty or Fail");
  }
  out->missing_status = json::GetInt(*request, "missingStatus").value_or(400);
  if (out->missing_status < 400 || out->missing_status > 599) {
    return FieldError("spec.request.missingStatus", "must be 400-599");
  }
  return OkStatus();
}

// ParseHealth reads spec.health (passive health: consecutive failed calls mark the target
// unhealthy for a while).
Status ParseHealth(const rapidjson::Value& spec, WebhookSpec* out) {
  const rapidjson::Value* health = json::Find(spec, "health");
  if (health == nullptr || !health->IsObject()) return OkStatus();
  out->health_failures = json::GetInt(*health, "consecutiveFailures").value_or(5);
  if (out->health_failures < 1 || out->health_failures > 1000) {
    return FieldError("spec.health.consecutiveFailures", "must be 1-1000");
  }
  const std::string period = json::GetString(*health, "unhealthyFor", "10s");
  std::optional<int64_t> ms = sdk::names::ParseDuration(period);
  if (!ms || *ms < 1 || *ms > 3600 * 1000) {
    return FieldError("spec.health.unhealthyFor",
                      Quoted(period) + " must be a duration between 1ms and 1h");
  }
  out->health_unhealthy_ms = *ms;
  return OkStatus();
}

// ParseTargets reads spec.targetRefs: Gateways and HTTPRoutes (rules by sectionName) of the
// Webhook's own namespace, each at most once.
Status ParseTargets(const rapidjson::Value& spec, WebhookSpec* out) {
  const rapidjson::Value* refs = json::Find(spec, "targetRefs");
  if (refs == nullptr || !refs->IsArray()) return OkStatus();
  std::set<std::string> seen;
  for (rapidjson::SizeType i = 0; i < refs->Size(); ++i) {
    const std::string field = "spec.targetRefs[" + std::to_string(i) + "]";
    const rapidjson::Value& r = (*refs)[i];
    TargetRef t{json::GetString(r, "kind"), json::GetString(r, "name"),
                json::GetString(r, "sectionName")};
    if (json::GetString(r, "group") != "gateway.networking.k8s.io" ||
        (t.kind != "Gateway" && t.kind != "HTTPRoute")) {
      return FieldError(field,
                        "must be a Gateway or an HTTPRoute (group gateway.networking.k8s.io)");
    }
    if (!sdk::names::IsDnsSubdomain(t.name)) {
      return FieldError(field + ".name", Quoted(t.name) + " is not a valid name");
    }
    if (t.kind == "Gateway" && !t.section.empty()) {
      return FieldError(field + ".sectionName", "is only supported for an HTTPRoute (a rule name)");
    }
    if (!seen.insert(t.kind + "/" + t.name + "/" + t.section).second) {
      return FieldError(field, "duplicate target " + t.kind + " " + t.name);
    }
    out->targets.push_back(std::move(t));
  }
  return OkStatus();
}

StatusOr<WebhookSpec> ParseWebhook(const rapidjson::Value& spec) {
  WebhookSpec out;
  const rapidjson::Value* service = json::Find(spec, "service");
  const rapidjson::Value* url = json::Find(spec, "url");
  if ((service != nullptr) == (url != nullptr)) {
    return FieldError("spec", "exactly one of service and url must be set");
  }
  const rapidjson::Value* path = json::Find(spec, "path");
  if (service != nullptr) {
    out.has_service = true;
    out.service = {json::GetString(*service, "namespace"), json::GetString(*service, "name"),
                   json::GetInt(*service, "port").value_or(0)};
    if (!sdk::names::IsDnsLabel(out.service.name)) {
      return FieldError("spec.service.name",
                        Quoted(out.service.name) + " is not a valid Service name");
    }
    if (!out.service.ns.empty() && !sdk::names::IsDnsLabel(out.service.ns)) {
      return FieldError("spec.service.namespace",
                        Quoted(out.service.ns) + " is not a valid namespace");
    }
    if (out.service.port < 1 || out.service.port > 65535) {
      return FieldError("spec.service.port", "must be 1-65535");
    }
  } else {
    PORTICO_ASSIGN_OR_RETURN(out.url,
                             ParseUrl(url->IsString() ? url->GetString() : "", "spec.url"));
    if (path != nullptr && (!out.url.path.empty() || !out.url.query.empty())) {
      return FieldError("spec.path", "must not be set when spec.url has a path or query");
    }
  }
  out.path = path != nullptr && path->IsString() ? path->GetString() : "";
  if (out.path.empty()) {
    out.path = out.url.path.empty() ? "/" : out.url.path;
    if (!out.url.query.empty()) out.path += "?" + out.url.query;
  } else if (out.path.front() != '/') {
    return FieldError("spec.path", Quoted(out.path) + " must start with \"/\"");
  }
  PORTICO_RETURN_IF_ERROR(Template::Parse(out.path, "spec.path").status());
  out.method = json::GetString(spec, "method", "POST");
  std::string timeout = json::GetString(spec, "timeout", "1s");
  std::optional<int64_t> ms = sdk::names::ParseDuration(timeout);
  if (!ms) {
    return FieldError("spec.timeout",
                      Quoted(timeout) + " is not a duration such as \"500ms\" or \"2s\"");
  }
  if (*ms < 1 || *ms > kMaxTimeoutMs) {
    return FieldError("spec.timeout", Quoted(timeout) + " must be between 1ms and 60s");
  }
  out.timeout_ms = *ms;
  out.failure_policy = json::GetString(spec, "failurePolicy", "Fail");
  if (out.failure_policy != "Fail" && out.failure_policy != "Ignore") {
    return FieldError("spec.failurePolicy", Quoted(out.failure_policy) + " is not Fail or Ignore");
  }
  PORTICO_ASSIGN_OR_RETURN(out.forward_headers, ParseHeaders(spec, "forwardHeaders"));
  PORTICO_ASSIGN_OR_RETURN(out.upstream_headers, ParseHeaders(spec, "upstreamHeaders"));
  PORTICO_ASSIGN_OR_RETURN(out.response_headers, ParseHeaders(spec, "responseHeaders"));
  PORTICO_RETURN_IF_ERROR(ParseRequest(spec, &out));
  PORTICO_RETURN_IF_ERROR(ParseHealth(spec, &out));
  PORTICO_RETURN_IF_ERROR(ParseTargets(spec, &out));
  if (const rapidjson::Value* tls = json::Find(spec, "tls")) {
    if (!out.has_service && out.url.scheme != "https") {
      return FieldError("spec.tls", "requires an https:// url (or a service)");
    }
    out.tls = true;
    const rapidjson::Value* skip = json::Find(*tls, "insecureSkipVerify");
    out.insecure_skip_verify = skip != nullptr && skip->IsBool() && skip->GetBool();
    if (const rapidjson::Value* ca = json::Find(*tls, "caCertificateRef")) {
      if (out.insecure_skip_verify) {
        return FieldError("spec.tls.caCertificateRef",
                          "must not be set together with insecureSkipVerify");
      }
      out.ca_ns = json::GetString(*ca, "namespace");
      out.ca_name = json::GetString(*ca, "name");
      if (out.ca_name.empty()) return FieldError("spec.tls.caCertificateRef.name", "is required");
    }
  } else if (!out.has_service && out.url.scheme == "https") {
    out.tls = true;
  }
  return out;
}

}  // namespace portico::plugins::webhook
