#include "controller/reconcile/object_json.h"

#include <vector>

#include "portico/sdk/json_writer.h"
#include "portico/sdk/secret_data.h"

namespace portico::controller {
namespace {

constexpr char kLastApplied[] = "kubectl.kubernetes.io/last-applied-configuration";

bool IsIgnoredForSpec(const rapidjson::Value& name) {
  std::string_view n(name.GetString(), name.GetStringLength());
  return n == "metadata" || n == "status";
}

size_t CountSpecMembers(const rapidjson::Value& v) {
  size_t n = 0;
  for (const auto& m : v.GetObject()) {
    if (!IsIgnoredForSpec(m.name)) ++n;
  }
  return n;
}

// StringValues collects the string values of the objects at `field` of `doc`.
void StringValues(const rapidjson::Value& doc, const char* field, std::vector<std::string>* out) {
  const rapidjson::Value* obj = json::Find(doc, field);
  if (obj == nullptr || !obj->IsObject()) return;
  for (const auto& m : obj->GetObject()) {
    if (m.value.IsString()) out->emplace_back(m.value.GetString(), m.value.GetStringLength());
  }
}

void ReplaceAll(std::string& text, const std::string& from, std::string_view to) {
  if (from.empty()) return;
  for (size_t pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos)) {
    text.replace(pos, from.size(), to);
    pos += to.size();
  }
}

}  // namespace

bool SpecEqual(const rapidjson::Value& a, const rapidjson::Value& b) {
  if (!a.IsObject() || !b.IsObject()) return a == b;
  if (CountSpecMembers(a) != CountSpecMembers(b)) return false;
  for (const auto& m : a.GetObject()) {
    if (IsIgnoredForSpec(m.name)) continue;
    auto other = b.FindMember(m.name);
    if (other == b.MemberEnd() || !(other->value == m.value)) return false;
  }
  return true;
}

std::map<std::string, std::string> LabelsOf(const rapidjson::Value& doc) {
  std::map<std::string, std::string> labels;
  const rapidjson::Value* l = json::FindPath(doc, "metadata.labels");
  if (l == nullptr || !l->IsObject()) return labels;
  for (const auto& m : l->GetObject()) {
    if (!m.value.IsString()) continue;
    labels.emplace(std::string(m.name.GetString(), m.name.GetStringLength()),
                   std::string(m.value.GetString(), m.value.GetStringLength()));
  }
  return labels;
}

void SetMetadataStamps(rapidjson::Value& doc, rapidjson::Value::AllocatorType& allocator,
                       int64_t generation, std::string_view creation_timestamp) {
  if (!doc.IsObject()) return;
  auto metadata = doc.FindMember("metadata");
  if (metadata == doc.MemberEnd() || !metadata->value.IsObject()) {
    if (metadata != doc.MemberEnd()) doc.RemoveMember(metadata);
    doc.AddMember("metadata", rapidjson::Value(rapidjson::kObjectType), allocator);
    metadata = doc.FindMember("metadata");
  }
  rapidjson::Value& meta = metadata->value;
  meta.RemoveMember("generation");
  meta.AddMember("generation", rapidjson::Value(generation), allocator);
  meta.RemoveMember("creationTimestamp");
  meta.AddMember(
      "creationTimestamp",
      rapidjson::Value(creation_timestamp.data(),
                       static_cast<rapidjson::SizeType>(creation_timestamp.size()), allocator),
      allocator);
}

void AddNamespaceNameLabel(const sdk::ObjectRef& ref, rapidjson::Value& doc,
                           rapidjson::Value::AllocatorType& allocator) {
  static constexpr char kNameLabel[] = "kubernetes.io/metadata.name";
  if (!ref.group.empty() || ref.kind != "Namespace" || !doc.IsObject()) return;
  auto metadata = doc.FindMember("metadata");
  if (metadata == doc.MemberEnd() || !metadata->value.IsObject()) return;
  auto labels = metadata->value.FindMember("labels");
  if (labels == metadata->value.MemberEnd() || !labels->value.IsObject()) {
    if (labels != metadata->value.MemberEnd()) metadata->value.RemoveMember(labels);
    metadata->value.AddMember("labels", rapidjson::Value(rapidjson::kObjectType), allocator);
    labels = metadata->value.FindMember("labels");
  }
  labels->value.RemoveMember(kNameLabel);
  labels->value.AddMember(rapidjson::StringRef(kNameLabel),
                          rapidjson::Value(ref.name.c_str(), allocator), allocator);
}

bool IsSecret(const sdk::ObjectRef& ref) { return ref.group.empty() && ref.kind == "Secret"; }

std::string SecretPayload(const rapidjson::Value& doc) {
  std::map<std::string, std::string> data = sdk::SecretData(doc);
  sdk::JsonWriter w;
  w.BeginObject().Field("type", json::GetString(doc, "type", "Opaque")).Key("data").BeginObject();
  for (const auto& [key, value] : data) w.Field(key, value);
  return w.EndObject().EndObject().Take();
}

void RedactSecret(rapidjson::Value& doc, rapidjson::Value::AllocatorType& allocator) {
  if (!doc.IsObject()) return;
  for (const char* field : {"data", "stringData"}) {
    auto it = doc.FindMember(field);
    if (it == doc.MemberEnd() || !it->value.IsObject()) continue;
    for (auto& m : it->value.GetObject()) m.value.SetString(kRedacted, allocator);
  }
  auto metadata = doc.FindMember("metadata");
  if (metadata == doc.MemberEnd() || !metadata->value.IsObject()) return;
  auto annotations = metadata->value.FindMember("annotations");
  if (annotations == metadata->value.MemberEnd() || !annotations->value.IsObject()) return;
  auto last = annotations->value.FindMember(kLastApplied);
  if (last != annotations->value.MemberEnd()) last->value.SetString(kRedacted, allocator);
}

std::string RedactSecretText(std::string message, const rapidjson::Value& doc) {
  // Schema errors end with a quotation of the offending value: "... (got "c2VjcmV0...")". The
  // value may hold any character, so everything from the quotation on is cut.
  if (size_t pos = message.find(" (got "); pos != std::string::npos) {
    message.resize(pos);
    message += std::string(" (got ") + kRedacted + ")";
  }
  std::vector<std::string> values;
  StringValues(doc, "data", &values);
  StringValues(doc, "stringData", &values);
  for (const std::string& v : values) {
    if (v.size() >= 4) ReplaceAll(message, v, kRedacted);
  }
  return message;
}

}  // namespace portico::controller
