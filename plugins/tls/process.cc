// process.cc: see process.h.
#include "process.h"

#include <optional>
#include <string>
#include <vector>

#include "portico/sdk/json_writer.h"
#include "validate.h"

namespace portico::plugins::tls {
namespace {

sdk::Condition AcceptTarget(const TargetRef& target, const std::string& ns,
                            sdk::ProcessContext& ctx) {
  std::string gateway = "Gateway " + ns + "/" + target.name;
  std::optional<std::string> exported = ctx.GetExport({kGatewayGroup, "Gateway", ns, target.name});
  if (!exported) return {"Accepted", "False", "TargetNotFound", gateway + " does not exist"};
  auto doc = json::Parse(*exported, gateway);
  const rapidjson::Value* listeners = doc.ok() ? json::Find(*doc, "listeners") : nullptr;
  bool section_found = false;
  bool tls_listener = false;
  if (listeners != nullptr && listeners->IsArray()) {
    for (const auto& l : listeners->GetArray()) {
      if (!target.section_name.empty() && json::GetString(l, "name") != target.section_name) {
        continue;
      }
      section_found = true;
      std::string protocol = json::GetString(l, "protocol");
      tls_listener = tls_listener || protocol == "HTTPS" || protocol == "TLS";
    }
  }
  if (!target.section_name.empty() && !section_found) {
    return {"Accepted", "False", "TargetNotFound",
            gateway + " has no listener \"" + target.section_name + "\""};
  }
  if (!tls_listener) {
    return {"Accepted", "False", "Invalid",
            target.section_name.empty() ? gateway + " has no HTTPS or TLS listener"
                                        : "listener \"" + target.section_name + "\" of " + gateway +
                                              " is not HTTPS or TLS"};
  }
  return {"Accepted", "True", "Accepted", ""};
}

// CheckSecret returns a ResolvedRefs=False condition when a referenced Secret is unusable.
std::optional<sdk::Condition> CheckSecret(const SecretRef& ref, const std::string& ns,
                                          const std::string& field, bool certificate,
                                          sdk::ProcessContext& ctx) {
  std::string secret_ns = ref.ns.empty() ? ns : ref.ns;
  std::string secret = "Secret " + secret_ns + "/" + ref.name;
  const char* bad_reason = certificate ? "InvalidCertificateRef" : "InvalidCACertificateRef";
  if (secret_ns != ns &&
      !ctx.ReferenceAllowed(kGroup, "TLSPolicy", ns, {"", "Secret", secret_ns, ref.name})) {
    return sdk::Condition{
        "ResolvedRefs", "False", "RefNotPermitted",
        field + ": " + secret + " is in another namespace and no ReferenceGrant allows it"};
  }
  std::optional<std::string> data = ctx.GetSecret(secret_ns, ref.name);
  if (!data) {
    return sdk::Condition{"ResolvedRefs", "False", bad_reason,
                          field + ": " + secret + " does not exist"};
  }
  auto doc = json::Parse(*data, secret);
  const rapidjson::Value* values = doc.ok() ? json::Find(*doc, "data") : nullptr;
  auto has = [&](const char* key) {
    return values != nullptr && json::Find(*values, key) != nullptr;
  };
  if (certificate && (json::GetString(*doc, "type") != "kubernetes.io/tls" || !has("tls.crt") ||
                      !has("tls.key"))) {
    return sdk::Condition{
        "ResolvedRefs", "False", bad_reason,
        field + ": " + secret + " is not a kubernetes.io/tls Secret with tls.crt and tls.key"};
  }
  if (!certificate && !has("ca.crt")) {
    return sdk::Condition{"ResolvedRefs", "False", bad_reason,
                          field + ": " + secret + " has no ca.crt"};
  }
  return std::nullopt;
}

sdk::Condition ResolveSecrets(const TlsPolicySpec& spec, const std::string& ns,
                              sdk::ProcessContext& ctx) {
  std::optional<sdk::Condition> bad;
  if (spec.certificate) bad = CheckSecret(*spec.certificate, ns, "spec.certificateRef", true, ctx);
  if (spec.client_certificate) {
    for (size_t i = 0; !bad && i < spec.client_certificate->ca_refs.size(); ++i) {
      bad = CheckSecret(spec.client_certificate->ca_refs[i], ns,
                        "spec.clientCertificate.caCertificateRefs[" + std::to_string(i) + "]",
                        false, ctx);
    }
  }
  return bad ? *bad : sdk::Condition{"ResolvedRefs", "True", "ResolvedRefs", ""};
}

void WriteTarget(sdk::JsonWriter& w, const TargetRef& t, const std::string& ns) {
  w.BeginObject()
      .Field("group", t.group)
      .Field("kind", t.kind)
      .Field("namespace", ns)
      .Field("name", t.name);
  if (!t.section_name.empty()) w.Field("sectionName", t.section_name);
  w.EndObject();
}

void WriteSecretRef(sdk::JsonWriter& w, const SecretRef& ref, const std::string& ns) {
  w.BeginObject()
      .Field("namespace", ref.ns.empty() ? ns : ref.ns)
      .Field("name", ref.name)
      .EndObject();
}

void WriteTargetsAndHostnames(sdk::JsonWriter& w, const TlsPolicySpec& spec,
                              const std::string& ns) {
  w.Key("targetRefs").BeginArray();
  for (const TargetRef& t : spec.targets) WriteTarget(w, t, ns);
  w.EndArray().Key("hostnames").BeginArray();
  for (const auto& h : spec.hostnames) w.String(h);
  w.EndArray();
}

std::string SyncedJson(const sdk::Object& obj, const TlsPolicySpec& spec) {
  const std::string& ns = obj.ref().ns;
  sdk::JsonWriter w;
  w.BeginObject().Key("metadata").BeginObject().Field("name", obj.ref().name);
  w.Field("namespace", ns).Field("generation", obj.generation()).EndObject();
  WriteTargetsAndHostnames(w, spec, ns);
  if (spec.certificate) {
    w.Key("certificateRef");
    WriteSecretRef(w, *spec.certificate, ns);
  }
  w.Field("minVersion", spec.min_version)
      .Field("maxVersion", spec.max_version)
      .Key("ciphers")
      .BeginArray();
  for (const auto& c : spec.ciphers) w.String(c);
  w.EndArray();
  if (spec.client_certificate) {
    w.Key("clientCertificate").BeginObject().Field("mode", spec.client_certificate->mode);
    w.Key("caCertificateRefs").BeginArray();
    for (const SecretRef& ref : spec.client_certificate->ca_refs) WriteSecretRef(w, ref, ns);
    w.EndArray();
    if (spec.client_certificate->verify_depth) {
      w.Field("verifyDepth", *spec.client_certificate->verify_depth);
    }
    w.EndObject();
  }
  return w.EndObject().Take();
}

}  // namespace

Status ProcessTlsPolicy(const sdk::Object& obj, sdk::ProcessContext& ctx,
                        sdk::ProcessResult& result) {
  PORTICO_ASSIGN_OR_RETURN(const rapidjson::Document* doc, obj.doc());
  static const rapidjson::Value kEmpty(rapidjson::kObjectType);
  const rapidjson::Value* spec_json = json::Find(*doc, "spec");
  StatusOr<TlsPolicySpec> spec = ParseTlsPolicy(spec_json != nullptr ? *spec_json : kEmpty);
  if (!spec.ok()) return spec.status().WithPrefix(obj.ref().Display());
  const std::string& ns = obj.ref().ns;

  std::vector<sdk::Condition> accepted;
  for (const TargetRef& t : spec->targets) accepted.push_back(AcceptTarget(t, ns, ctx));
  sdk::Condition resolved = ResolveSecrets(*spec, ns, ctx);

  result.SetSynced(SyncedJson(obj, *spec));
  // Sync scope: the policy goes with its Gateways, its Secrets' material with the policy.
  for (const TargetRef& t : spec->targets)
    result.LinkParent({kGatewayGroup, "Gateway", ns, t.name});
  auto link_secret = [&](const SecretRef& ref) {
    result.LinkReference({"", "Secret", ref.ns.empty() ? ns : ref.ns, ref.name});
  };
  if (spec->certificate) link_secret(*spec->certificate);
  if (spec->client_certificate) {
    for (const SecretRef& ref : spec->client_certificate->ca_refs) link_secret(ref);
  }
  sdk::JsonWriter exported;
  exported.BeginObject();
  WriteTargetsAndHostnames(exported, *spec, ns);
  result.SetExport(exported.EndObject().Take());

  sdk::JsonWriter status;
  status.BeginObject().Key("ancestors").BeginArray();
  for (size_t i = 0; i < spec->targets.size(); ++i) {
    status.BeginObject().Key("ancestorRef");
    WriteTarget(status, spec->targets[i], ns);
    sdk::WriteConditions(status, {accepted[i], resolved}, obj.generation());
    status.EndObject();
  }
  result.SetStatus(status.EndArray().EndObject().Take());
  return OkStatus();
}

}  // namespace portico::plugins::tls
