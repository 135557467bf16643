// namespace_plugin: the Namespace kind (core/v1, cluster-scoped, never synced).
//
// The processor validates what the schema cannot (the name is a DNS label, label keys and
// values have Kubernetes syntax) and exports the Namespace's labels, adding the
// kubernetes.io/metadata.name label Kubernetes sets on every Namespace, so that routes can be
// matched against a listener's allowedRoutes namespace selector.
// Threading: stateless; process() may run concurrently for different Namespaces.
#include <map>
#include <string>
#include <string_view>

#include "portico/sdk/plugin.h"

namespace portico::plugins::ns {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

constexpr char kNameLabel[] = "kubernetes.io/metadata.name";

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// IsDnsLabel: RFC 1123 label, lower case, at most 63 characters.
bool IsDnsLabel(std::string_view s) {
  if (s.empty() || s.size() > 63 || s.front() == '-' || s.back() == '-') return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

// IsDnsSubdomain: dot-separated DNS labels, at most 253 characters.
bool IsDnsSubdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  while (true) {
    size_t dot = s.find('.');
    if (!IsDnsLabel(s.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    s.remove_prefix(dot + 1);
  }
}

// IsLabelValue: empty, or at most 63 characters [A-Za-z0-9-_.] starting and ending alphanumeric.
bool IsLabelValue(std::string_view s) {
  if (s.empty()) return true;
  if (s.size() > 63 || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// IsLabelKey: [prefix/]name, prefix a DNS subdomain, name a non-empty label value.
bool IsLabelKey(std::string_view key) {
  size_t slash = key.find('/');
  std::string_view name = slash == std::string_view::npos ? key : key.substr(slash + 1);
  if (slash != std::string_view::npos && !IsDnsSubdomain(key.substr(0, slash))) return false;
  return !name.empty() && IsLabelValue(name);
}

void Field(Writer& w, std::string_view key, std::string_view value) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}

void WriteAccepted(Writer& w, int64_t generation) {
  w.StartObject();
  Field(w, "type", "Accepted");
  Field(w, "status", "True");
  Field(w, "reason", "Accepted");
  Field(w, "message", "");
  w.Key("observedGeneration");
  w.Int64(generation);
  w.EndObject();
}

Status ProcessNamespace(const sdk::Object& obj, sdk::ProcessContext& ctx,
                        sdk::ProcessResult& result) {
  PORTICO_ASSIGN_OR_RETURN(const rapidjson::Document* doc, obj.doc());
  const std::string& name = obj.ref().name;
  const std::string who = obj.ref().Display();
  if (!IsDnsLabel(name)) {
    return InvalidArgumentError(who + ": metadata.name: \"" + name +
                                "\" is not a DNS label (lower case alphanumerics and '-', at most "
                                "63 characters)");
  }
  std::map<std::string, std::string> labels;
  if (const rapidjson::Value* l = json::FindPath(*doc, "metadata.labels"); l != nullptr) {
    if (!l->IsObject()) return InvalidArgumentError(who + ": metadata.labels: must be an object");
    for (const auto& m : l->GetObject()) {
      std::string key(m.name.GetString(), m.name.GetStringLength());
      std::string field = "metadata.labels[\"" + key + "\"]";
      if (!IsLabelKey(key)) return InvalidArgumentError(who + ": " + field + ": invalid label key");
      if (!m.value.IsString()) {
        return InvalidArgumentError(who + ": " + field + ": must be a string");
      }
      std::string value(m.value.GetString(), m.value.GetStringLength());
      if (!IsLabelValue(value)) {
        return InvalidArgumentError(who + ": " + field + ": invalid label value \"" + value + "\"");
      }
      labels[key] = value;
    }
  }
  labels[kNameLabel] = name;  // Kubernetes always sets it, overriding any given value

  rapidjson::StringBuffer exp;
  Writer e(exp);
  e.StartObject();
  Field(e, "name", name);
  e.Key("labels");
  e.StartObject();
  for (const auto& [k, v] : labels) Field(e, k, v);
  e.EndObject();
  e.EndObject();
  result.SetExport(std::string(exp.GetString(), exp.GetSize()));

  rapidjson::StringBuffer st;
  Writer s(st);
  s.StartObject();
  Field(s, "phase", "Active");
  s.Key("conditions");
  s.StartArray();
  WriteAccepted(s, obj.generation());
  s.EndArray();
  s.EndObject();
  result.SetStatus(std::string(st.GetString(), st.GetSize()));
  return OkStatus();
}

void Setup(sdk::Plugin& p) { p.Kind("", "Namespace").Process(&ProcessNamespace); }

}  // namespace
}  // namespace portico::plugins::ns

PORTICO_PLUGIN(portico::plugins::ns::Setup)
