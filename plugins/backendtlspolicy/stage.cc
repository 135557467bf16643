// stage.cc: see stage.h.
#include "stage.h"

#include "portico/sdk/fields.h"
#include "portico/sdk/json_writer.h"

namespace portico::plugins::backendtlspolicy {
namespace {

using sdk::FieldError;
using sdk::RequiredString;

const rapidjson::Value* Array(const rapidjson::Value& v, const char* name) {
  const rapidjson::Value* a = json::Find(v, name);
  return a != nullptr && a->IsArray() ? a : nullptr;
}

// WriteTrust writes the view's caCertificates, wellKnownCACertificates or invalid (exactly one).
Status WriteTrust(sdk::JsonWriter& w, const rapidjson::Value& view) {
  const rapidjson::Value* cas = json::Find(view, "caCertificates");
  const rapidjson::Value* well_known = json::Find(view, "wellKnownCACertificates");
  const rapidjson::Value* invalid = json::Find(view, "invalid");
  if ((cas != nullptr) + (well_known != nullptr) + (invalid != nullptr) != 1) {
    return FieldError("caCertificates",
                      "exactly one of caCertificates, wellKnownCACertificates and invalid must "
                      "be present");
  }
  if (invalid != nullptr) {
    if (!invalid->IsString()) return FieldError("invalid", "must be a string");
    w.Field("invalid", invalid->GetString());
    return OkStatus();
  }
  if (well_known != nullptr) {
    if (!well_known->IsString() || std::string_view(well_known->GetString()) != "System") {
      return FieldError("wellKnownCACertificates", "must be \"System\"");
    }
    w.Field("wellKnownCACertificates", "System");
    return OkStatus();
  }
  if (!cas->IsArray() || cas->Empty()) {
    return FieldError("caCertificates", "must be a non-empty array");
  }
  w.Key("caCertificates").BeginArray();
  for (rapidjson::SizeType i = 0; i < cas->Size(); ++i) {
    const rapidjson::Value& c = (*cas)[i];
    std::string field = "caCertificates[" + std::to_string(i) + "]";
    const rapidjson::Value* ref = c.IsObject() ? json::Find(c, "ref") : nullptr;
    if (ref == nullptr || !ref->IsObject()) return FieldError(field + ".ref", "is required");
    PORTICO_ASSIGN_OR_RETURN(std::string kind, RequiredString(*ref, "kind", field + ".ref"));
    if (kind != "ConfigMap" && kind != "Secret") {
      return FieldError(field + ".ref.kind", "\"" + kind + "\" is not ConfigMap or Secret");
    }
    PORTICO_ASSIGN_OR_RETURN(std::string ns, RequiredString(*ref, "namespace", field + ".ref"));
    PORTICO_ASSIGN_OR_RETURN(std::string name, RequiredString(*ref, "name", field + ".ref"));
    PORTICO_ASSIGN_OR_RETURN(std::string sha256, RequiredString(c, "sha256", field));
    w.BeginObject().Key("ref").BeginObject().Field("kind", kind).Field("namespace", ns);
    w.Field("name", name).EndObject().Field("sha256", sha256).EndObject();
  }
  w.EndArray();
  return OkStatus();
}

Status WriteSubjectAltNames(sdk::JsonWriter& w, const rapidjson::Value& view) {
  w.Key("subjectAltNames").BeginArray();
  const rapidjson::Value* sans = json::Find(view, "subjectAltNames");
  if (sans != nullptr && !sans->IsArray()) return FieldError("subjectAltNames", "must be an array");
  for (rapidjson::SizeType i = 0; sans != nullptr && i < sans->Size(); ++i) {
    const rapidjson::Value& s = (*sans)[i];
    std::string field = "subjectAltNames[" + std::to_string(i) + "]";
    if (!s.IsObject()) return FieldError(field, "must be an object");
    PORTICO_ASSIGN_OR_RETURN(std::string type, RequiredString(s, "type", field));
    const char* key = type == "Hostname" ? "hostname" : type == "URI" ? "uri" : nullptr;
    if (key == nullptr)
      return FieldError(field + ".type", "\"" + type + "\" is not Hostname or URI");
    PORTICO_ASSIGN_OR_RETURN(std::string value, RequiredString(s, key, field));
    w.BeginObject().Field("type", type).Field(key, value).EndObject();
  }
  w.EndArray();
  return OkStatus();
}

}  // namespace

StatusOr<std::vector<BackendEntry>> TranslatePolicy(const sdk::ObjectRef& ref,
                                                    const rapidjson::Value& view) {
  const rapidjson::Value* targets = Array(view, "targets");
  if (targets == nullptr || targets->Empty()) {
    return FieldError("targets", "must be a non-empty array");
  }
  PORTICO_ASSIGN_OR_RETURN(std::string hostname, RequiredString(view, "hostname", ""));
  // The settings every target's entry shares, checked once.
  sdk::JsonWriter shared;
  shared.BeginObject();
  PORTICO_RETURN_IF_ERROR(WriteTrust(shared, view));
  PORTICO_RETURN_IF_ERROR(WriteSubjectAltNames(shared, view));
  const std::string settings = shared.EndObject().Take();
  auto parsed = json::Parse(settings, "settings");
  if (!parsed.ok()) return parsed.status();

  std::vector<BackendEntry> out;
  for (rapidjson::SizeType i = 0; i < targets->Size(); ++i) {
    const rapidjson::Value& t = (*targets)[i];
    std::string field = "targets[" + std::to_string(i) + "]";
    if (!t.IsObject()) return FieldError(field, "must be an object");
    PORTICO_ASSIGN_OR_RETURN(std::string service, RequiredString(t, "service", field));
    std::string section = json::GetString(t, "sectionName");
    sdk::JsonWriter w;
    w.BeginObject().Field("entry", "tls").Field("namespace", ref.ns).Field("service", service);
    if (!section.empty()) w.Field("sectionName", section);
    w.Key("policy").BeginObject().Field("namespace", ref.ns).Field("name", ref.name).EndObject();
    w.Field("hostname", hostname);
    for (const auto& m : parsed->GetObject()) w.Key(m.name.GetString()).Value(m.value);
    std::string id = "tls/" + ref.ns + "/" + service + (section.empty() ? "" : "/" + section);
    out.push_back({std::move(id), w.EndObject().Take()});
  }
  return out;
}

Status StageBackendTlsPolicy(const sdk::Txn& txn, const std::vector<sdk::Change>& changes) {
  return sdk::StageEachView(
      txn, changes, [&](const sdk::Change& change, const rapidjson::Document& view) -> Status {
        StatusOr<std::vector<BackendEntry>> entries = TranslatePolicy(change.ref, view);
        if (!entries.ok()) {
          txn.Nack(change.ref, change.ref.Display() + ": " + entries.status().message());
          return OkStatus();
        }
        for (const BackendEntry& e : *entries) {
          PORTICO_RETURN_IF_ERROR(txn.Put(change.ref.Key(), PORTICO_FORMAT_BACKEND, e.id, e.json));
        }
        return OkStatus();
      });
}

}  // namespace portico::plugins::backendtlspolicy
