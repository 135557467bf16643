// secret_plugin: the Secret kind (core/v1, namespaced). The Secret itself stays on the
// controller; its synced view is the TLS material derived from it (certificate.v1 entries), synced
// "toReferrers": only gateways holding an object that links to it (a Gateway's certificateRefs, a
// TLSPolicy's) receive it.
//
// The processor checks what the schema cannot: data keys are valid, data values are base64,
// stringData merges over data, the total stays under Kubernetes' 1 MiB, and typed Secrets carry
// their required keys (kubernetes.io/tls needs tls.crt and tls.key). The material of a
// kubernetes.io/tls Secret is checked with OpenSSL (tls_material.h): a Secret whose material is
// unusable is still stored (its data is valid), with Accepted=False and the reason, so that a
// Gateway referencing it reports InvalidCertificateRef with that reason.
//
// A "ca.crt" key (any type) is a CA bundle, checked like a ConfigMap's (plugins/x509): every
// PEM block an X.509 certificate, at least one; an unusable one makes the Secret
// Accepted=False/InvalidCACertificate (unless its TLS material already did).
//
// The export is secret-free: the type and the key names, for kubernetes.io/tls
// {tlsValid, reason, message, sha256, sans, notBeforeUnixMs, notAfterUnixMs}, and with a
// "ca.crt" key "ca": {valid, reason and message (when not valid), sha256, certificates}, the same
// shape as the ConfigMap plugin's, so that a Gateway resolves CA references of both kinds alike.
// Material is read only through the host's get_secret().
//
// Synced view (only when there is usable material): {"keyPair": <certificate.v1 keyPair entry> (a
// valid kubernetes.io/tls pair), "ca": <certificate.v1 ca entry> (a usable "ca.crt")}; the gateway
// handler stages them as cert/<ns>/<name> and ca/<ns>/<name>. When a new version's material is
// unusable, the entries of the previous synced view (ProcessContext::PreviousSynced) are synced
// again, so gateways keep serving what they served; the export then names it ("serving":
// {sha256, sans} for a key pair, "ca.servingSha256") and the status says it keeps serving.
// Threading: stateless; process() may run concurrently for different Secrets.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "portico/sdk/handler.h"
#include "portico/sdk/json_writer.h"
#include "portico/sdk/plugin.h"
#include "tls_material.h"

namespace portico::plugins::secret {
namespace {

constexpr size_t kMaxSecretBytes = 1024 * 1024;

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

// DecodedBase64Size returns the decoded size of standard, padded base64, or -1 when invalid.
int64_t DecodedBase64Size(std::string_view s) {
  if (s.size() % 4 != 0) return -1;
  size_t padding = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool alphabet = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '+' || c == '/';
    if (c == '=') {
      if (i + 2 < s.size()) return -1;  // padding only in the last two positions
      ++padding;
    } else if (!alphabet || padding > 0) {
      return -1;
    }
  }
  return static_cast<int64_t>(s.size() / 4 * 3 - padding);
}

// RequiredKeys lists the keys a typed Secret must carry; `any_of` means one of them suffices.
struct Requirement {
  std::vector<std::string> keys;
  bool any_of = false;
};
std::optional<Requirement> RequiredKeys(std::string_view type) {
  if (type == "kubernetes.io/tls") return Requirement{{"tls.crt", "tls.key"}};
  if (type == "kubernetes.io/basic-auth") return Requirement{{"username", "password"}, true};
  if (type == "kubernetes.io/ssh-auth") return Requirement{{"ssh-privatekey"}};
  if (type == "kubernetes.io/dockerconfigjson") return Requirement{{".dockerconfigjson"}};
  if (type == "kubernetes.io/dockercfg") return Requirement{{".dockercfg"}};
  return std::nullopt;
}

// DataValue returns the decoded value of `key`: stringData wins over data, as in Kubernetes.
// Only called after validation, so data values are valid base64.
std::string DataValue(const rapidjson::Value& doc, const char* key) {
  if (const rapidjson::Value* map = json::Find(doc, "stringData"); map != nullptr) {
    if (const rapidjson::Value* v = json::Find(*map, key); v != nullptr && v->IsString()) {
      return std::string(v->GetString(), v->GetStringLength());
    }
  }
  if (const rapidjson::Value* map = json::Find(doc, "data"); map != nullptr) {
    if (const rapidjson::Value* v = json::Find(*map, key); v != nullptr && v->IsString()) {
      return Base64Decode({v->GetString(), v->GetStringLength()}).value_or("");
    }
  }
  return "";
}

Status ProcessSecret(const sdk::Object& obj, sdk::ProcessContext& ctx, sdk::ProcessResult& result) {
  PORTICO_ASSIGN_OR_RETURN(const rapidjson::Document* doc, obj.doc());
  const std::string who = obj.ref().Display();
  auto error = [&](const std::string& field, const std::string& what) {
    return InvalidArgumentError(who + ": " + field + ": " + what);
  };
  std::string type = json::GetString(*doc, "type", "Opaque");
  if (type.empty()) type = "Opaque";

  std::set<std::string> keys;
  int64_t total = 0;
  for (const char* section : {"data", "stringData"}) {
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
      std::string_view value(m.value.GetString(), m.value.GetStringLength());
      int64_t size = static_cast<int64_t>(value.size());
      if (section == std::string_view("data")) {
        size = DecodedBase64Size(value);
        if (size < 0) return error(field, "not valid base64");
      }
      total += size;
      keys.insert(key);
    }
  }
  if (total > static_cast<int64_t>(kMaxSecretBytes)) {
    return error("data", "total size " + std::to_string(total) + " bytes exceeds 1 MiB");
  }
  if (auto required = RequiredKeys(type)) {
    size_t present = 0;
    for (const auto& key : required->keys) {
      if (keys.count(key) > 0) {
        ++present;
      } else if (!required->any_of) {
        return error("data", "type " + type + " requires key \"" + key + "\"");
      }
    }
    if (required->any_of && present == 0) {
      return error("data", "type " + type + " requires at least one of \"" + required->keys[0] +
                               "\" or \"" + required->keys[1] + "\"");
    }
  }
  if (type == "kubernetes.io/service-account-token") {
    // Annotation keys contain dots, so look the member up directly rather than by path.
    const rapidjson::Value* annotations = json::FindPath(*doc, "metadata.annotations");
    if (annotations == nullptr ||
        json::Find(*annotations, "kubernetes.io/service-account.name") == nullptr) {
      return error("metadata.annotations",
                   "type " + type + " requires annotation \"kubernetes.io/service-account.name\"");
    }
  }

  std::optional<TlsMaterial> tls;
  if (type == "kubernetes.io/tls") {
    tls = CheckTlsMaterial(DataValue(*doc, "tls.crt"), DataValue(*doc, "tls.key"), ctx.NowUnixMs());
  }
  const std::string ca_pem = keys.count("ca.crt") > 0 ? DataValue(*doc, "ca.crt") : "";
  std::optional<x509::CaBundle> ca;
  if (keys.count("ca.crt") > 0) ca = CheckCaBundle(ca_pem);

  // Material that became unusable keeps what this Secret served before (the previous synced
  // view's entries), so that gateways go on serving it while the status says why the new one
  // is refused. Without a previous view (never valid, or a restarted controller) nothing is
  // served.
  std::optional<rapidjson::Document> previous;
  if ((tls && !tls->valid) || (ca && !ca->valid)) {
    if (std::optional<std::string> text = ctx.PreviousSynced()) {
      auto parsed = json::Parse(*text, "previous synced view");
      if (parsed.ok()) previous = std::move(*parsed);
    }
  }
  auto kept = [&](const char* part) -> const rapidjson::Value* {
    if (!previous) return nullptr;
    const rapidjson::Value* entry = json::Find(*previous, part);
    return entry != nullptr && entry->IsObject() ? entry : nullptr;
  };
  const rapidjson::Value* kept_pair = tls && !tls->valid ? kept("keyPair") : nullptr;
  const rapidjson::Value* kept_ca = ca && !ca->valid ? kept("ca") : nullptr;

  sdk::JsonWriter e;
  e.BeginObject().Field("type", type).Key("keys").BeginArray();
  for (const auto& key : keys) e.String(key);
  e.EndArray();
  if (tls) {
    e.Key("tlsValid").Bool(tls->valid);
    if (!tls->valid) e.Field("reason", tls->reason).Field("message", tls->message);
    e.Field("sha256", tls->sha256).Key("sans").BeginArray();
    for (const auto& san : tls->sans) e.String(san);
    e.EndArray();
    e.Field("notBeforeUnixMs", tls->not_before_unix_ms);
    e.Field("notAfterUnixMs", tls->not_after_unix_ms);
    if (kept_pair != nullptr) {
      // What gateways still serve: {sha256, sans} of the previous key pair.
      e.Key("serving").BeginObject().Field("sha256", json::GetString(*kept_pair, "sha256"));
      e.Key("sans").BeginArray();
      if (const rapidjson::Value* sans = json::Find(*kept_pair, "sans"); sans && sans->IsArray()) {
        for (const auto& san : sans->GetArray()) {
          if (san.IsString()) e.String({san.GetString(), san.GetStringLength()});
        }
      }
      e.EndArray().EndObject();
    }
  }
  if (ca) {
    e.Key("ca").BeginObject().Key("valid").Bool(ca->valid);
    if (!ca->valid) {
      e.Field("reason", "InvalidCACertificate").Field("message", "ca.crt: " + ca->message);
    }
    e.Field("sha256", ca->sha256).Field("certificates", int64_t{ca->certificates});
    if (kept_ca != nullptr) e.Field("servingSha256", json::GetString(*kept_ca, "sha256"));
    e.EndObject();
  }
  result.SetExport(e.EndObject().Take());

  const bool ca_valid = ca && ca->valid;
  if ((tls && tls->valid) || ca_valid || kept_pair != nullptr || kept_ca != nullptr) {
    const sdk::ObjectRef& ref = obj.ref();
    auto secret_ref = [&](sdk::JsonWriter& w) {
      w.Key("secretRef")
          .BeginObject()
          .Field("namespace", ref.ns)
          .Field("name", ref.name)
          .EndObject();
    };
    sdk::JsonWriter v;
    v.BeginObject();
    if (tls && tls->valid) {
      v.Key("keyPair").BeginObject().Field("entry", "keyPair");
      secret_ref(v);
      v.Field("sha256", tls->sha256)
          .Field("chainPem", DataValue(*doc, "tls.crt"))
          .Field("keyPem", DataValue(*doc, "tls.key"))
          .Key("sans")
          .BeginArray();
      for (const auto& san : tls->sans) v.String(san);
      v.EndArray()
          .Field("notBeforeUnixMs", tls->not_before_unix_ms)
          .Field("notAfterUnixMs", tls->not_after_unix_ms)
          .EndObject();
    } else if (kept_pair != nullptr) {
      v.Key("keyPair").Value(*kept_pair);
    }
    if (ca_valid) {
      v.Key("ca").BeginObject().Field("entry", "ca");
      secret_ref(v);
      v.Field("sha256", ca->sha256).Field("caPem", ca_pem).EndObject();
    } else if (kept_ca != nullptr) {
      v.Key("ca").Value(*kept_ca);
    }
    result.SetSynced(v.EndObject().Take());
  }

  sdk::Condition accepted{"Accepted", "True", "Accepted", ""};
  const std::string keeps = "; the previous material keeps serving";
  if (tls && !tls->valid) {
    accepted = {"Accepted", "False", tls->reason,
                tls->message + (kept_pair != nullptr ? keeps : std::string())};
  } else if (ca && !ca->valid) {
    accepted = {"Accepted", "False", "InvalidCACertificate",
                "ca.crt: " + ca->message + (kept_ca != nullptr ? keeps : std::string())};
  }
  sdk::JsonWriter s;
  s.BeginObject();
  sdk::WriteConditions(s, {accepted}, obj.generation());
  result.SetStatus(s.EndObject().Take());
  return OkStatus();
}

// StageSecret puts the material of each Secret as certificate.v1 entries.
Status StageSecret(const sdk::Txn& txn, const std::vector<sdk::Change>& changes) {
  return sdk::StageEachView(
      txn, changes, [&](const sdk::Change& change, const rapidjson::Document& view) -> Status {
        const std::string owner = change.ref.Key();
        const std::string suffix = change.ref.ns + "/" + change.ref.name;
        for (const char* part : {"keyPair", "ca"}) {
          const rapidjson::Value* entry = json::Find(view, part);
          if (entry == nullptr || !entry->IsObject()) continue;
          std::string id = (part == std::string_view("ca") ? "ca/" : "cert/") + suffix;
          PORTICO_RETURN_IF_ERROR(
              txn.Put(owner, PORTICO_FORMAT_CERTIFICATE, id, json::Serialize(*entry)));
        }
        return OkStatus();
      });
}

void Setup(sdk::Plugin& p) { p.Kind("", "Secret").Process(&ProcessSecret).Stage(&StageSecret); }

}  // namespace
}  // namespace portico::plugins::secret

PORTICO_PLUGIN(portico::plugins::secret::Setup)
