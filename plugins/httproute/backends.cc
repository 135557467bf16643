// backends.cc: see backends.h.
#include "backends.h"

#include <optional>

#include "validate.h"

namespace portico::plugins::httproute {
namespace {

rapidjson::Value* MutableArray(rapidjson::Value& v, const char* name) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(name);
  return it != v.MemberEnd() && it->value.IsArray() ? &it->value : nullptr;
}

rapidjson::Value* MutableObject(rapidjson::Value& v, const char* name) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(name);
  return it != v.MemberEnd() && it->value.IsObject() ? &it->value : nullptr;
}

}  // namespace

void RefResolver::Set(rapidjson::Value& obj, const char* key, rapidjson::Value value) {
  obj.RemoveMember(key);
  obj.AddMember(rapidjson::StringRef(key), value, alloc_);
}

void RefResolver::Fail(const std::string& reason, const std::string& message) {
  if (condition_.status == "True") condition_ = {"ResolvedRefs", "False", reason, message};
}

void RefResolver::Backend(rapidjson::Value& ref, const std::string& field) {
  std::string group = json::GetString(ref, "group");
  std::string kind = json::GetString(ref, "kind", "Service");
  std::string ns = json::GetString(ref, "namespace", ns_);
  std::string name = json::GetString(ref, "name");
  std::optional<int64_t> port = json::GetInt(ref, "port");
  std::string service = "Service " + ns + "/" + name;
  std::string reason, message;
  if (!group.empty() || kind != "Service") {
    reason = "InvalidKind";
    message = field + ": backend kind " + kind + (group.empty() ? "" : "." + group) +
              " is not supported (only core Services are)";
  } else if (ns != ns_ &&
             !ctx_.ReferenceAllowed(kGroup, "HTTPRoute", ns_, {"", "Service", ns, name})) {
    reason = "RefNotPermitted";
    message = field + ": " + service +
              " is in another namespace and no ReferenceGrant there allows HTTPRoutes from " + ns_ +
              " to reference it";
  } else if (std::optional<std::string> exported = ctx_.GetExport({"", "Service", ns, name});
             !exported) {
    reason = "BackendNotFound";
    message = field + ": " + service + " does not exist";
  } else {
    auto doc = json::Parse(*exported, service);
    const rapidjson::Value* ports = doc.ok() ? json::Find(*doc, "ports") : nullptr;
    bool found = port.has_value() && (ports == nullptr || !ports->IsArray() || ports->Empty());
    if (port && ports != nullptr && ports->IsArray()) {
      for (const auto& p : ports->GetArray()) found = found || json::GetInt(p, "port") == *port;
    }
    if (!found) {
      reason = "BackendNotFound";
      message = field + ": " + service + " has no port " +
                (port ? std::to_string(*port) : std::string("(none given)"));
    }
  }
  if (reason.empty()) {
    std::string key = ns + "/" + name + ":" + std::to_string(*port);
    Set(ref, "key", rapidjson::Value(key.c_str(), alloc_));
    return;
  }
  Fail(reason, message);
  Set(ref, "key", rapidjson::Value(""));
  rapidjson::Value invalid(rapidjson::kObjectType);
  invalid.AddMember("reason", rapidjson::Value(reason.c_str(), alloc_), alloc_);
  invalid.AddMember("message", rapidjson::Value(message.c_str(), alloc_), alloc_);
  Set(ref, "invalid", std::move(invalid));
}

void RefResolver::Filters(rapidjson::Value& owner, const std::string& field) {
  rapidjson::Value* filters = MutableArray(owner, "filters");
  if (filters == nullptr) return;
  for (rapidjson::SizeType i = 0; i < filters->Size(); ++i) {
    rapidjson::Value& f = (*filters)[i];
    std::string sub = field + ".filters[" + std::to_string(i) + "]";
    if (rapidjson::Value* mirror = MutableObject(f, "requestMirror")) {
      if (rapidjson::Value* ref = MutableObject(*mirror, "backendRef")) {
        Backend(*ref, sub + ".requestMirror.backendRef");
      }
    }
    if (const rapidjson::Value* ext = json::Find(f, "extensionRef")) {
      sdk::ObjectRef ref{json::GetString(*ext, "group"), json::GetString(*ext, "kind"), ns_,
                         json::GetString(*ext, "name")};
      bool resolved = ctx_.ResolveExtensionRef(ref).has_value();
      if (resolved) filters_.push_back(ref);
      if (!resolved) {
        Fail("BackendNotFound", sub + ".extensionRef: " + ref.Display() + " (group \"" + ref.group +
                                    "\") does not exist or is not a route filter");
      }
      Set(f, "resolved", rapidjson::Value(resolved));
    }
  }
}

void RefResolver::ResolveRule(rapidjson::Value& rule, const std::string& field) {
  Filters(rule, field);
  rapidjson::Value* backends = MutableArray(rule, "backendRefs");
  for (rapidjson::SizeType j = 0; backends != nullptr && j < backends->Size(); ++j) {
    std::string sub = field + ".backendRefs[" + std::to_string(j) + "]";
    Backend((*backends)[j], sub);
    Filters((*backends)[j], sub);
  }
}

}  // namespace portico::plugins::httproute
