// configmap_plugin: the ConfigMap kind (core/v1, namespaced). The ConfigMap itself stays on the
// controller; its synced view is the CA material derived from it (a certificate.v1 "ca" entry),
// synced "toReferrers": only gateways holding an object that links to it (a Gateway's
// spec.tls.frontend caCertificateRefs) receive it.
//
// The processor checks what the schema cannot: keys are valid ([-._a-zA-Z0-9]+, at most 253
// characters, not "." or ".."), unique across data and binaryData, binaryData values are base64,
// and the total stays under Kubernetes' 1 MiB. A "ca.crt" key (in data, or in binaryData) is a
// CA bundle checked with OpenSSL (plugins/x509: every PEM block an X.509 certificate, at least
// one); an unusable one leaves the ConfigMap stored (its data is valid) with
// Accepted=False/InvalidCACertificate, so that a Gateway referencing it reports
// InvalidCACertificateRef.
//
// Export (never the material): {"keys": [...], "ca": {valid, message (when not valid), sha256,
// certificates}} ("ca" only with a "ca.crt" key), the shape the Secret plugin exports for its
// "ca.crt", so that the Gateway plugin resolves CA references of both kinds alike.
// Synced view (only for a usable bundle): {"ca": {"entry": "ca", "configMapRef": {namespace,
// name}, "sha256": <hex SHA-256 of caPem>, "caPem": "..."}}; the gateway handler stages it as
// certificate.v1 "ca/configmap/<namespace>/<name>" (docs/contributions.md).
// Threading: stateless; process() may run concurrently for different ConfigMaps.
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "portico/sdk/handler.h"
#include "portico/sdk/json_writer.h"
#include "portico/sdk/plugin.h"
#include "portico/sdk/secret_data.h"
#include "x509/ca_bundle.h"

namespace portico::plugins::configmap {
namespace {

constexpr size_t kMaxConfigMapBytes = 1024 * 1024;
constexpr char kCaKey[] = "ca.crt";

// IsDataKey: Kubernetes config keys, [-._a-zA-Z0-9]+, at most 253 characters, not "." or "..".
bool IsDataKey(std::string_view key) {
  if (key.empty() || key.size() > 253 || key == "." || key == "..") return false;
  for (char c : key) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

// WithoutLineBreaks drops CR and LF, which Kubernetes' base64 decoder ignores.
std::string WithoutLineBreaks(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c != '\r' && c != '\n') out += c;
  }
  return out;
}

Status ProcessConfigMap(const sdk::Object& obj, sdk::ProcessContext&, sdk::ProcessResult& result) {
  PORTICO_ASSIGN_OR_RETURN(const rapidjson::Document* doc, obj.doc());
  const std::string who = obj.ref().Display();
  auto error = [&](const std::string& field, const std::string& what) {
    return InvalidArgumentError(who + ": " + field + ": " + what);
  };

  std::set<std::string> keys;
  std::optional<std::string> ca_pem;
  size_t total = 0;
  for (const char* section : {"data", "binaryData"}) {
    const bool binary = section == std::string_view("binaryData");
    const rapidjson::Value* map = json::Find(*doc, section);
    if (map == nullptr || map->IsNull()) continue;
    if (!map->IsObject()) return error(section, "must be an object");
    for (const auto& m : map->GetObject()) {
      std::string key(m.name.GetString(), m.name.GetStringLength());
      std::string field = std::string(section) + "[\"" + key + "\"]";
      if (!IsDataKey(key)) {
        return error(field, "invalid key (allowed: letters, digits, '-', '_', '.')");
      }
      if (!m.value.IsString()) return error(field, "must be a string");
      if (!keys.insert(key).second) return error(field, "duplicate of a key in data");
      std::string value(m.value.GetString(), m.value.GetStringLength());
      if (binary) {
        std::optional<std::string> decoded = sdk::Base64Decode(WithoutLineBreaks(value));
        if (!decoded) return error(field, "not valid base64");
        value = std::move(*decoded);
      }
      total += value.size();
      if (key == kCaKey) ca_pem = std::move(value);
    }
  }
  if (total > kMaxConfigMapBytes) {
    return error("data", "total size " + std::to_string(total) + " bytes exceeds 1 MiB");
  }

  std::optional<x509::CaBundle> ca;
  if (ca_pem) ca = x509::CheckCaBundle(*ca_pem);

  sdk::JsonWriter e;
  e.BeginObject().Key("keys").BeginArray();
  for (const auto& key : keys) e.String(key);
  e.EndArray();
  if (ca) {
    e.Key("ca").BeginObject().Key("valid").Bool(ca->valid);
    if (!ca->valid) e.Field("message", std::string(kCaKey) + ": " + ca->message);
    e.Field("sha256", ca->sha256).Field("certificates", int64_t{ca->certificates}).EndObject();
  }
  result.SetExport(e.EndObject().Take());

  if (ca && ca->valid) {
    sdk::JsonWriter v;
    v.BeginObject().Key("ca").BeginObject().Field("entry", "ca");
    v.Key("configMapRef").BeginObject().Field("namespace", obj.ref().ns);
    v.Field("name", obj.ref().name).EndObject();
    v.Field("sha256", ca->sha256).Field("caPem", *ca_pem).EndObject();
    result.SetSynced(v.EndObject().Take());
  }

  sdk::Condition accepted{"Accepted", "True", "Accepted", ""};
  if (ca && !ca->valid) {
    accepted = {"Accepted", "False", "InvalidCACertificate",
                std::string(kCaKey) + ": " + ca->message};
  }
  sdk::JsonWriter s;
  s.BeginObject();
  sdk::WriteConditions(s, {accepted}, obj.generation());
  result.SetStatus(s.EndObject().Take());
  return OkStatus();
}

// StageConfigMap puts the CA bundle of each ConfigMap as a certificate.v1 "ca" entry.
Status StageConfigMap(const sdk::Txn& txn, const std::vector<sdk::Change>& changes) {
  return sdk::StageEachView(
      txn, changes, [&](const sdk::Change& change, const rapidjson::Document& view) -> Status {
        const rapidjson::Value* entry = json::Find(view, "ca");
        if (entry == nullptr || !entry->IsObject() || json::GetString(*entry, "sha256").empty() ||
            json::GetString(*entry, "caPem").empty()) {
          txn.Nack(change.ref, change.ref.Display() +
                                   ": synced view has no \"ca\" entry with sha256 and caPem");
          return OkStatus();
        }
        std::string id = "ca/configmap/" + change.ref.ns + "/" + change.ref.name;
        return txn.Put(change.ref.Key(), PORTICO_FORMAT_CERTIFICATE, id, json::Serialize(*entry));
      });
}

void Setup(sdk::Plugin& p) {
  p.Kind("", "ConfigMap").Process(&ProcessConfigMap).Stage(&StageConfigMap);
}

}  // namespace
}  // namespace portico::plugins::configmap

PORTICO_PLUGIN(portico::plugins::configmap::Setup)
