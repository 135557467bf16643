// process.cc: see process.h.
#include "process.h"

#include <arpa/inet.h>

#include <map>
#include <optional>
#include <string>

#include "portico/sdk/json_writer.h"
#include "portico/sdk/secret_data.h"
#include "validate.h"

namespace portico::plugins::webhook {
namespace {

std::optional<sdk::Condition> CheckService(const WebhookSpec& spec, const std::string& ns,
                                           sdk::ProcessContext& ctx) {
  std::string service_ns = spec.service.ns.empty() ? ns : spec.service.ns;
  std::string service = "Service " + service_ns + "/" + spec.service.name;
  if (service_ns != ns && !ctx.ReferenceAllowed(kGroup, "Webhook", ns,
                                                {"", "Service", service_ns, spec.service.name})) {
    return sdk::Condition{
        "ResolvedRefs", "False", "RefNotPermitted",
        "spec.service: " + service + " is in another namespace and no ReferenceGrant allows it"};
  }
  std::optional<std::string> exported =
      ctx.GetExport({"", "Service", service_ns, spec.service.name});
  if (!exported) {
    return sdk::Condition{"ResolvedRefs", "False", "BackendNotFound",
                          "spec.service: " + service + " does not exist"};
  }
  auto doc = json::Parse(*exported, service);
  const rapidjson::Value* ports = doc.ok() ? json::Find(*doc, "ports") : nullptr;
  if (ports == nullptr || !ports->IsArray() || ports->Empty()) return std::nullopt;
  for (const auto& p : ports->GetArray()) {
    if (json::GetInt(p, "port") == spec.service.port) return std::nullopt;
  }
  return sdk::Condition{
      "ResolvedRefs", "False", "BackendNotFound",
      "spec.service: " + service + " has no port " + std::to_string(spec.service.port)};
}

std::optional<sdk::Condition> CheckCa(const WebhookSpec& spec, const std::string& ns,
                                      sdk::ProcessContext& ctx) {
  std::string ca_ns = spec.ca_ns.empty() ? ns : spec.ca_ns;
  std::string secret = "Secret " + ca_ns + "/" + spec.ca_name;
  if (ca_ns != ns &&
      !ctx.ReferenceAllowed(kGroup, "Webhook", ns, {"", "Secret", ca_ns, spec.ca_name})) {
    return sdk::Condition{"ResolvedRefs", "False", "RefNotPermitted",
                          "spec.tls.caCertificateRef: " + secret +
                              " is in another namespace and no ReferenceGrant allows it"};
  }
  std::optional<std::string> data = ctx.GetSecret(ca_ns, spec.ca_name);
  auto doc = data ? json::Parse(*data, secret) : StatusOr<rapidjson::Document>(NotFoundError(""));
  const rapidjson::Value* values = doc.ok() ? json::Find(*doc, "data") : nullptr;
  if (values == nullptr || json::Find(*values, "ca.crt") == nullptr) {  // key with a dot: no path
    return sdk::Condition{
        "ResolvedRefs", "False", "InvalidCACertificateRef",
        "spec.tls.caCertificateRef: " + secret + (data ? " has no ca.crt" : " does not exist")};
  }
  return std::nullopt;
}

void WriteList(sdk::JsonWriter& w, std::string_view key, const std::vector<std::string>& items) {
  w.Key(key).BeginArray();
  for (const auto& item : items) w.String(item);
  w.EndArray();
}

bool IsIpLiteral(const std::string& host) {
  unsigned char buffer[16];
  return inet_pton(AF_INET, host.c_str(), buffer) == 1 ||
         inet_pton(AF_INET6, host.c_str(), buffer) == 1;
}

// ResolveSecretHeaders fills the value of every header taken from a Secret (same namespace as
// the Webhook); a missing Secret or key is a ResolvedRefs=False condition.
std::optional<sdk::Condition> ResolveSecretHeaders(WebhookSpec* spec, const std::string& ns,
                                                   sdk::ProcessContext& ctx) {
  for (size_t i = 0; i < spec->request_headers.size(); ++i) {
    CustomHeader& h = spec->request_headers[i];
    if (h.secret_name.empty()) continue;
    const std::string field =
        "spec.request.headers[" + std::to_string(i) + "].valueFrom.secretKeyRef";
    const std::string secret = "Secret " + ns + "/" + h.secret_name;
    std::optional<std::string> data = ctx.GetSecret(ns, h.secret_name);
    auto doc = data ? json::Parse(*data, secret) : StatusOr<rapidjson::Document>(NotFoundError(""));
    std::optional<std::string> value;
    if (doc.ok()) {
      std::map<std::string, std::string> values = sdk::SecretData(*doc);
      if (auto it = values.find(h.secret_key); it != values.end()) {
        value = sdk::Base64Decode(it->second);
      }
    }
    if (!value) {
      return sdk::Condition{
          "ResolvedRefs", "False", "InvalidSecretRef",
          field + ": " + secret +
              (data ? " has no (base64) key " + h.secret_key : " does not exist")};
    }
    h.value = std::move(*value);
  }
  return std::nullopt;
}

std::string SyncedJson(const sdk::Object& obj, const WebhookSpec& spec,
                       const std::string& created) {
  const std::string& ns = obj.ref().ns;
  sdk::JsonWriter w;
  w.BeginObject().Key("metadata").BeginObject().Field("name", obj.ref().name);
  w.Field("namespace", ns).Field("generation", obj.generation()).EndObject();
  w.Key("target").BeginObject();
  if (spec.has_service) {
    w.Key("service").BeginObject().Field("namespace",
                                         spec.service.ns.empty() ? ns : spec.service.ns);
    w.Field("name", spec.service.name).Field("port", spec.service.port).EndObject();
  } else {
    w.Field("scheme", spec.url.scheme).Field("host", spec.url.host).Field("port", spec.url.port);
  }
  w.EndObject().Field("path", spec.path).Field("method", spec.method);
  w.Field("timeoutMs", spec.timeout_ms).Field("failurePolicy", spec.failure_policy);
  WriteList(w, "forwardHeaders", spec.forward_headers);
  WriteList(w, "upstreamHeaders", spec.upstream_headers);
  WriteList(w, "responseHeaders", spec.response_headers);
  // Secret values travel as literals (never parsed as templates), only to gateways that hold a
  // route using this Webhook (sync "toReferrers").
  w.Key("request").BeginObject().Key("headers").BeginArray();
  for (const CustomHeader& h : spec.request_headers) {
    w.BeginObject().Field("name", h.name);
    w.Field(h.secret_name.empty() ? "value" : "literal", h.value).EndObject();
  }
  w.EndArray();
  if (spec.body) w.Field("body", *spec.body);
  w.Field("missingValue", spec.missing).Field("missingStatus", spec.missing_status).EndObject();
  if (spec.health_failures > 0) {
    w.Key("health").BeginObject().Field("consecutiveFailures", spec.health_failures);
    w.Field("unhealthyForMs", spec.health_unhealthy_ms).EndObject();
  }
  if (!spec.targets.empty()) {  // filter_binding.v1 "attach" (docs/contributions.md)
    w.Key("attach").BeginObject().Key("targets").BeginArray();
    for (const TargetRef& t : spec.targets) {
      w.BeginObject();
      w.Key(t.kind == "Gateway" ? "gateway" : "route").BeginObject();
      w.Field("namespace", ns).Field("name", t.name).EndObject();
      if (!t.section.empty()) w.Field("rule", t.section);
      w.EndObject();
    }
    w.EndArray().Field("created", created).EndObject();
  }
  if (spec.tls) {
    w.Key("tls").BeginObject().Key("insecureSkipVerify").Bool(spec.insecure_skip_verify);
    if (!spec.ca_name.empty()) {
      w.Key("caCertificateRef")
          .BeginObject()
          .Field("namespace", spec.ca_ns.empty() ? ns : spec.ca_ns);
      w.Field("name", spec.ca_name).EndObject();
    }
    w.EndObject();
  }
  return w.EndObject().Take();
}

}  // namespace

Status ProcessWebhook(const sdk::Object& obj, sdk::ProcessContext& ctx,
                      sdk::ProcessResult& result) {
  PORTICO_ASSIGN_OR_RETURN(const rapidjson::Document* doc, obj.doc());
  static const rapidjson::Value kEmpty(rapidjson::kObjectType);
  const rapidjson::Value* spec_json = json::Find(*doc, "spec");
  StatusOr<WebhookSpec> spec = ParseWebhook(spec_json != nullptr ? *spec_json : kEmpty);
  if (!spec.ok()) return spec.status().WithPrefix(obj.ref().Display());

  sdk::Condition accepted{"Accepted", "True", "Accepted", ""};
  if (spec->tls || (!spec->has_service && spec->url.scheme == "https")) {
    // Not a stub: the gateway's HTTP client speaks no TLS yet (the TLS issue), so such a Webhook
    // is refused here and its routes answer 500 rather than calling in the clear.
    accepted = {"Accepted", "False", "UnsupportedValue",
                "spec: https and tls webhook targets are not served yet (only http:// URLs and "
                "Services over plain HTTP)"};
  } else if (!spec->has_service && !IsIpLiteral(spec->url.host)) {
    accepted = {"Accepted", "False", "UnsupportedValue",
                "spec.url: host " + spec->url.host +
                    " is a DNS name; webhook URLs must name an IP address for now (or use "
                    "spec.service)"};
  }
  sdk::Condition resolved{"ResolvedRefs", "True", "ResolvedRefs", ""};
  std::optional<sdk::Condition> bad;
  if (spec->has_service) bad = CheckService(*spec, obj.ref().ns, ctx);
  if (!bad && !spec->ca_name.empty()) bad = CheckCa(*spec, obj.ref().ns, ctx);
  if (!bad) bad = ResolveSecretHeaders(&*spec, obj.ref().ns, ctx);
  if (bad) resolved = *bad;

  // Not synced without its Secret values: its rules answer 500 rather than call without them.
  const bool usable = accepted.status == "True" &&
                      (resolved.status == "True" || resolved.reason != "InvalidSecretRef");
  // Attached by targetRefs: it goes with its targets (parent links); used by ExtensionRef: where
  // the routes that name it go (their reference links).
  for (const TargetRef& t : spec->targets) {
    result.LinkParent({"gateway.networking.k8s.io", t.kind, obj.ref().ns, t.name});
  }
  const std::string created = json::GetString(*doc, "metadata.creationTimestamp", "");
  if (usable) result.SetSynced(SyncedJson(obj, *spec, created));
  sdk::JsonWriter exported;
  exported.BeginObject()
      .Field("filterType", kFilterType)
      .Field("failurePolicy", spec->failure_policy);
  if (usable) result.SetExport(exported.EndObject().Take());
  sdk::JsonWriter status;
  status.BeginObject();
  sdk::WriteConditions(status, {accepted, resolved}, obj.generation());
  result.SetStatus(status.EndObject().Take());
  return OkStatus();
}

}  // namespace portico::plugins::webhook
