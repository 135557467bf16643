// stage.cc: see stage.h.
#include "stage.h"

#include <optional>
#include <string>

#include "portico/sdk/fields.h"
#include "portico/sdk/json_writer.h"

namespace portico::plugins::tls {
namespace {

using sdk::FieldError;
using sdk::RequiredString;

// WriteStrings copies the array of non-empty strings `key` (absent: empty).
Status WriteStrings(sdk::JsonWriter& w, const rapidjson::Value& obj, const char* key,
                    const std::string& field) {
  const rapidjson::Value* v = json::Find(obj, key);
  std::string name = field.empty() ? key : field + "." + key;
  if (v != nullptr && !v->IsArray()) return FieldError(name, "must be an array");
  w.Key(key).BeginArray();
  for (rapidjson::SizeType i = 0; v != nullptr && i < v->Size(); ++i) {
    const rapidjson::Value& s = (*v)[i];
    if (!s.IsString() || s.GetStringLength() == 0) {
      return FieldError(name + "[" + std::to_string(i) + "]", "must be a non-empty string");
    }
    w.String({s.GetString(), s.GetStringLength()});
  }
  w.EndArray();
  return OkStatus();
}

// WriteNamespacedName writes {"namespace", "name"} from `obj` (both required).
Status WriteNamespacedName(sdk::JsonWriter& w, const rapidjson::Value* obj,
                           const std::string& field) {
  if (obj == nullptr || !obj->IsObject()) return FieldError(field, "must be an object");
  PORTICO_ASSIGN_OR_RETURN(std::string ns, RequiredString(*obj, "namespace", field));
  PORTICO_ASSIGN_OR_RETURN(std::string name, RequiredString(*obj, "name", field));
  w.BeginObject().Field("namespace", ns).Field("name", name).EndObject();
  return OkStatus();
}

// WriteMaterialRef writes {"secretRef": {namespace, name}, "sha256"}.
Status WriteMaterialRef(sdk::JsonWriter& w, const rapidjson::Value& v, const std::string& field) {
  if (!v.IsObject()) return FieldError(field, "must be an object");
  w.BeginObject().Key("secretRef");
  PORTICO_RETURN_IF_ERROR(WriteNamespacedName(w, json::Find(v, "secretRef"), field + ".secretRef"));
  PORTICO_ASSIGN_OR_RETURN(std::string sha256, RequiredString(v, "sha256", field));
  w.Field("sha256", sha256).EndObject();
  return OkStatus();
}

Status WriteTargets(sdk::JsonWriter& w, const rapidjson::Value& view) {
  const rapidjson::Value* targets = json::Find(view, "targets");
  if (targets == nullptr || !targets->IsArray() || targets->Empty()) {
    return FieldError("targets", "must be a non-empty array");
  }
  w.Key("targets").BeginArray();
  for (rapidjson::SizeType i = 0; i < targets->Size(); ++i) {
    const rapidjson::Value& t = (*targets)[i];
    std::string field = "targets[" + std::to_string(i) + "]";
    if (!t.IsObject()) return FieldError(field, "must be an object");
    w.BeginObject().Key("gateway");
    PORTICO_RETURN_IF_ERROR(WriteNamespacedName(w, json::Find(t, "gateway"), field + ".gateway"));
    if (json::Find(t, "listener") != nullptr) {
      PORTICO_ASSIGN_OR_RETURN(std::string listener, RequiredString(t, "listener", field));
      w.Field("listener", listener);
    }
    w.EndObject();
  }
  w.EndArray();
  return OkStatus();
}

Status WriteClientCertificate(sdk::JsonWriter& w, const rapidjson::Value& c) {
  const std::string field = "clientCertificate";
  if (!c.IsObject()) return FieldError(field, "must be an object");
  PORTICO_ASSIGN_OR_RETURN(std::string mode, RequiredString(c, "mode", field));
  if (mode != "None" && mode != "Optional" && mode != "Require") {
    return FieldError(field + ".mode", "\"" + mode + "\" is not None, Optional or Require");
  }
  w.Key("clientCertificate").BeginObject().Field("mode", mode);
  if (json::Find(c, "verifyDepth") != nullptr) {
    std::optional<int64_t> depth = json::GetInt(c, "verifyDepth");
    if (!depth || *depth < 1)
      return FieldError(field + ".verifyDepth", "must be a positive integer");
    w.Field("verifyDepth", *depth);
  }
  const rapidjson::Value* cas = json::Find(c, "caCertificates");
  if (cas != nullptr && !cas->IsArray()) {
    return FieldError(field + ".caCertificates", "must be an array");
  }
  if (mode != "None" && (cas == nullptr || cas->Empty())) {
    return FieldError(field + ".caCertificates", "must name a CA when mode is " + mode);
  }
  w.Key("caCertificates").BeginArray();
  for (rapidjson::SizeType i = 0; cas != nullptr && i < cas->Size(); ++i) {
    PORTICO_RETURN_IF_ERROR(
        WriteMaterialRef(w, (*cas)[i], field + ".caCertificates[" + std::to_string(i) + "]"));
  }
  w.EndArray();
  PORTICO_RETURN_IF_ERROR(WriteStrings(w, c, "allowedSans", field));
  w.EndObject();
  return OkStatus();
}

}  // namespace

StatusOr<std::string> TranslateTlsPolicy(const sdk::ObjectRef& ref, const rapidjson::Value& view) {
  std::optional<int64_t> created = json::GetInt(view, "createdUnixMs");
  if (!created || *created < 0) return FieldError("createdUnixMs", "must be a Unix time in ms");
  sdk::JsonWriter w;
  w.BeginObject().Field("entry", "tlsPolicy").Key("policy").BeginObject();
  w.Field("namespace", ref.ns).Field("name", ref.name).EndObject();
  w.Field("createdUnixMs", *created);
  PORTICO_RETURN_IF_ERROR(WriteTargets(w, view));
  PORTICO_RETURN_IF_ERROR(WriteStrings(w, view, "hostnames", ""));
  if (const rapidjson::Value* cert = json::Find(view, "certificate"); cert != nullptr) {
    w.Key("certificate");
    PORTICO_RETURN_IF_ERROR(WriteMaterialRef(w, *cert, "certificate"));
  }
  PORTICO_ASSIGN_OR_RETURN(std::string min_version, RequiredString(view, "minVersion", ""));
  PORTICO_ASSIGN_OR_RETURN(std::string max_version, RequiredString(view, "maxVersion", ""));
  w.Field("minVersion", min_version).Field("maxVersion", max_version);
  PORTICO_RETURN_IF_ERROR(WriteStrings(w, view, "ciphers", ""));
  const rapidjson::Value* alpn = json::Find(view, "alpn");
  if (alpn == nullptr || !alpn->IsArray() || alpn->Empty()) {
    return FieldError("alpn", "must be a non-empty array");
  }
  PORTICO_RETURN_IF_ERROR(WriteStrings(w, view, "alpn", ""));
  if (const rapidjson::Value* cc = json::Find(view, "clientCertificate"); cc != nullptr) {
    PORTICO_RETURN_IF_ERROR(WriteClientCertificate(w, *cc));
  }
  return w.EndObject().Take();
}

Status StageTlsPolicy(const sdk::Txn& txn, const std::vector<sdk::Change>& changes) {
  return sdk::StageEachView(
      txn, changes, [&](const sdk::Change& change, const rapidjson::Document& view) -> Status {
        StatusOr<std::string> entry = TranslateTlsPolicy(change.ref, view);
        if (!entry.ok()) {
          txn.Nack(change.ref, change.ref.Display() + ": " + entry.status().message());
          return OkStatus();
        }
        return txn.Put(change.ref.Key(), PORTICO_FORMAT_LISTENER_SET,
                       "tlspolicy/" + change.ref.ns + "/" + change.ref.name, *entry);
      });
}

}  // namespace portico::plugins::tls
