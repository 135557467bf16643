// grant.cc: see grant.h.
#include "grant.h"

namespace portico::plugins::referencegrant {
namespace {

bool IsDnsLabel(std::string_view s) {
  if (s.empty() || s.size() > 63 || s.front() == '-' || s.back() == '-') return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

// IsGroup: "" (core) or a DNS subdomain.
bool IsGroup(std::string_view s) {
  if (s.empty()) return true;
  if (s.size() > 253) return false;
  while (true) {
    size_t dot = s.find('.');
    if (!IsDnsLabel(s.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    s.remove_prefix(dot + 1);
  }
}

// IsKind: ^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$, at most 63 characters.
bool IsKind(std::string_view s) {
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  auto alnum = [&](char c) { return alpha(c) || (c >= '0' && c <= '9'); };
  if (s.empty() || s.size() > 63 || !alpha(s.front()) || !alnum(s.back())) return false;
  for (char c : s) {
    if (!alnum(c) && c != '-') return false;
  }
  return true;
}

Status CheckGroupKind(const rapidjson::Value& entry, const std::string& field) {
  if (!entry.IsObject()) return InvalidArgumentError(field + ": must be an object");
  const rapidjson::Value* group = json::Find(entry, "group");
  if (group == nullptr || !group->IsString()) {
    return InvalidArgumentError(field + ".group: is required (\"\" for the core group)");
  }
  if (!IsGroup(json::GetString(entry, "group"))) {
    return InvalidArgumentError(field + ".group: \"" + json::GetString(entry, "group") +
                                "\" is not a valid API group");
  }
  std::string kind = json::GetString(entry, "kind");
  if (!IsKind(kind)) {
    return InvalidArgumentError(field + ".kind: \"" + kind + "\" is not a valid kind");
  }
  return OkStatus();
}

const rapidjson::Value* List(const rapidjson::Value& spec, const char* name) {
  const rapidjson::Value* list = json::Find(spec, name);
  return list != nullptr && list->IsArray() ? list : nullptr;
}

}  // namespace

StatusOr<Grant> ParseSpec(const rapidjson::Value& spec) {
  Grant grant;
  const rapidjson::Value* from = List(spec, "from");
  if (from == nullptr || from->Empty()) {
    return InvalidArgumentError("spec.from: at least one entry is required");
  }
  const rapidjson::Value* to = List(spec, "to");
  if (to == nullptr || to->Empty()) {
    return InvalidArgumentError("spec.to: at least one entry is required");
  }
  for (rapidjson::SizeType i = 0; i < from->Size(); ++i) {
    const rapidjson::Value& f = (*from)[i];
    std::string field = "spec.from[" + std::to_string(i) + "]";
    PORTICO_RETURN_IF_ERROR(CheckGroupKind(f, field));
    std::string ns = json::GetString(f, "namespace");
    if (!IsDnsLabel(ns)) {
      return InvalidArgumentError(field + ".namespace: \"" + ns + "\" is not a valid namespace");
    }
    grant.from.push_back({json::GetString(f, "group"), json::GetString(f, "kind"), ns});
  }
  for (rapidjson::SizeType i = 0; i < to->Size(); ++i) {
    const rapidjson::Value& t = (*to)[i];
    std::string field = "spec.to[" + std::to_string(i) + "]";
    PORTICO_RETURN_IF_ERROR(CheckGroupKind(t, field));
    const rapidjson::Value* name = json::Find(t, "name");
    if (name != nullptr &&
        (!name->IsString() || name->GetStringLength() == 0 || name->GetStringLength() > 253)) {
      return InvalidArgumentError(field + ".name: must be a non-empty name when given");
    }
    grant.to.push_back(
        {json::GetString(t, "group"), json::GetString(t, "kind"), json::GetString(t, "name")});
  }
  return grant;
}

std::string ExportJson(const Grant& grant) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("from");
  w.StartArray();
  for (const GrantFrom& f : grant.from) {
    w.StartObject();
    w.Key("group");
    w.String(f.group);
    w.Key("kind");
    w.String(f.kind);
    w.Key("namespace");
    w.String(f.ns);
    w.EndObject();
  }
  w.EndArray();
  w.Key("to");
  w.StartArray();
  for (const GrantTo& t : grant.to) {
    w.StartObject();
    w.Key("group");
    w.String(t.group);
    w.Key("kind");
    w.String(t.kind);
    if (!t.name.empty()) {
      w.Key("name");
      w.String(t.name);
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

Grant ParseExport(const rapidjson::Value& exported) {
  Grant grant;
  if (const rapidjson::Value* from = List(exported, "from")) {
    for (const auto& f : from->GetArray()) {
      grant.from.push_back({json::GetString(f, "group"), json::GetString(f, "kind"),
                            json::GetString(f, "namespace")});
    }
  }
  if (const rapidjson::Value* to = List(exported, "to")) {
    for (const auto& t : to->GetArray()) {
      grant.to.push_back(
          {json::GetString(t, "group"), json::GetString(t, "kind"), json::GetString(t, "name")});
    }
  }
  return grant;
}

bool Permits(const Grant& grant, std::string_view from_group, std::string_view from_kind,
             std::string_view from_ns, const sdk::ObjectRef& to) {
  bool from_ok = false;
  for (const GrantFrom& f : grant.from) {
    if (f.group == from_group && f.kind == from_kind && f.ns == from_ns) {
      from_ok = true;
      break;
    }
  }
  if (!from_ok) return false;
  for (const GrantTo& t : grant.to) {
    if (t.group == to.group && t.kind == to.kind && (t.name.empty() || t.name == to.name)) {
      return true;
    }
  }
  return false;
}

bool ReferenceAllowed(sdk::ProcessContext& ctx, std::string_view from_group,
                      std::string_view from_kind, std::string_view from_ns,
                      const sdk::ObjectRef& to) {
  if (to.ns.empty() || to.ns == from_ns) return true;  // no grant needed in the same namespace
  auto listed =
      json::Parse(ctx.ListExports(kGroup, "ReferenceGrant", to.ns), "ReferenceGrant list");
  if (!listed.ok() || !listed->IsArray()) return false;
  for (const auto& item : listed->GetArray()) {
    const rapidjson::Value* exported = json::Find(item, "export");
    if (exported == nullptr) continue;
    if (Permits(ParseExport(*exported), from_group, from_kind, from_ns, to)) return true;
  }
  return false;
}

}  // namespace portico::plugins::referencegrant
