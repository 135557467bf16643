// process.cc: see process.h.
#include "process.h"

#include <optional>
#include <string>
#include <vector>

#include "normalize.h"
#include "portico/sdk/json_writer.h"
#include "validate.h"

namespace portico::plugins::httproute {
namespace {

const rapidjson::Value* Array(const rapidjson::Value& v, const char* name) {
  const rapidjson::Value* a = json::Find(v, name);
  return a != nullptr && a->IsArray() ? a : nullptr;
}

sdk::Condition ResolveParent(const rapidjson::Value& parent, sdk::ProcessContext& ctx) {
  std::string group = json::GetString(parent, "group");
  std::string kind = json::GetString(parent, "kind");
  std::string ns = json::GetString(parent, "namespace");
  std::string name = json::GetString(parent, "name");
  std::string gateway = "Gateway " + ns + "/" + name;
  if (group != kGroup || kind != "Gateway") {
    return {"Accepted", "False", "NoMatchingParent",
            "parent kind " + kind + "." + group + " is not supported"};
  }
  std::optional<std::string> exported = ctx.GetExport({kGroup, "Gateway", ns, name});
  if (!exported) return {"Accepted", "False", "NoMatchingParent", gateway + " does not exist"};
  auto doc = json::Parse(*exported, gateway);
  std::string section = json::GetString(parent, "sectionName");
  std::optional<int64_t> port = json::GetInt(parent, "port");
  if (section.empty() && !port) return {"Accepted", "True", "Accepted", ""};
  const rapidjson::Value* listeners = doc.ok() ? Array(*doc, "listeners") : nullptr;
  if (listeners != nullptr) {
    for (const auto& l : listeners->GetArray()) {
      if (!section.empty() && json::GetString(l, "name") != section) continue;
      if (port && json::GetInt(l, "port") != port) continue;
      return {"Accepted", "True", "Accepted", ""};
    }
  }
  std::string wanted = !section.empty() ? "listener \"" + section + "\"" : "";
  if (port) {
    wanted += (wanted.empty() ? "listener" : "") + std::string(" on port ") + std::to_string(*port);
  }
  return {"Accepted", "False", "NoMatchingParent", gateway + " has no " + wanted};
}

// Resolver checks every reference of the route, recording the first failure.
class Resolver {
 public:
  Resolver(sdk::ProcessContext& ctx, std::string route_ns) : ctx_(ctx), ns_(std::move(route_ns)) {}

  void Backend(const rapidjson::Value& ref, const std::string& field) {
    std::string group = json::GetString(ref, "group");
    std::string kind = json::GetString(ref, "kind", "Service");
    std::string ns = json::GetString(ref, "namespace", ns_);
    std::string name = json::GetString(ref, "name");
    std::string service = "Service " + ns + "/" + name;
    if (!group.empty() || kind != "Service") {
      return Fail("InvalidKind", field + ": backend kind " + kind +
                                     (group.empty() ? "" : "." + group) + " is not supported");
    }
    if (ns != ns_ && !ctx_.ReferenceAllowed(kGroup, "HTTPRoute", ns_, {"", "Service", ns, name})) {
      return Fail(
          "RefNotPermitted",
          field + ": " + service + " is in another namespace and no ReferenceGrant allows it");
    }
    std::optional<std::string> exported = ctx_.GetExport({"", "Service", ns, name});
    if (!exported) return Fail("BackendNotFound", field + ": " + service + " does not exist");
    std::optional<int64_t> port = json::GetInt(ref, "port");
    auto doc = json::Parse(*exported, service);
    const rapidjson::Value* ports = doc.ok() ? Array(*doc, "ports") : nullptr;
    if (!port || ports == nullptr || ports->Empty()) return;  // e.g. ExternalName: any port
    for (const auto& p : ports->GetArray()) {
      if (json::GetInt(p, "port") == port) return;
    }
    Fail("BackendNotFound", field + ": " + service + " has no port " + std::to_string(*port));
  }

  void Filters(const rapidjson::Value& owner, const std::string& field) {
    const rapidjson::Value* filters = Array(owner, "filters");
    if (filters == nullptr) return;
    for (rapidjson::SizeType i = 0; i < filters->Size(); ++i) {
      const rapidjson::Value& f = (*filters)[i];
      std::string sub = field + ".filters[" + std::to_string(i) + "]";
      if (const rapidjson::Value* mirror = json::FindPath(f, "requestMirror.backendRef")) {
        Backend(*mirror, sub + ".requestMirror.backendRef");
      }
      if (const rapidjson::Value* ext = json::Find(f, "extensionRef")) {
        sdk::ObjectRef ref{json::GetString(*ext, "group"), json::GetString(*ext, "kind"), ns_,
                           json::GetString(*ext, "name")};
        if (!ctx_.ResolveExtensionRef(ref)) {
          Fail("FilterNotFound", sub + ".extensionRef: " + ref.Display() +
                                     " does not exist or is not a route filter");
        }
      }
    }
  }

  const sdk::Condition& result() const { return result_; }

 private:
  void Fail(const std::string& reason, const std::string& message) {
    if (result_.status == "True") result_ = {"ResolvedRefs", "False", reason, message};
  }

  sdk::ProcessContext& ctx_;
  std::string ns_;
  sdk::Condition result_{"ResolvedRefs", "True", "ResolvedRefs", ""};
};

sdk::Condition ResolveReferences(const rapidjson::Value& spec, const std::string& route_ns,
                                 sdk::ProcessContext& ctx) {
  Resolver resolver(ctx, route_ns);
  const rapidjson::Value* rules = Array(spec, "rules");
  for (rapidjson::SizeType i = 0; rules != nullptr && i < rules->Size(); ++i) {
    const rapidjson::Value& rule = (*rules)[i];
    std::string field = "spec.rules[" + std::to_string(i) + "]";
    resolver.Filters(rule, field);
    const rapidjson::Value* backends = Array(rule, "backendRefs");
    for (rapidjson::SizeType j = 0; backends != nullptr && j < backends->Size(); ++j) {
      std::string sub = field + ".backendRefs[" + std::to_string(j) + "]";
      resolver.Backend((*backends)[j], sub);
      resolver.Filters((*backends)[j], sub);
    }
  }
  return resolver.result();
}

void WriteMembers(sdk::JsonWriter& w, const rapidjson::Value& spec,
                  std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    w.Key(key);
    const rapidjson::Value* v = json::Find(spec, key);
    if (v != nullptr) {
      w.Value(*v);
    } else {
      w.BeginArray().EndArray();
    }
  }
}

}  // namespace

Status ProcessRoute(const sdk::Object& obj, sdk::ProcessContext& ctx, sdk::ProcessResult& result) {
  PORTICO_ASSIGN_OR_RETURN(const rapidjson::Document* doc, obj.doc());
  static const rapidjson::Value kEmpty(rapidjson::kObjectType);
  const rapidjson::Value* spec_json = json::Find(*doc, "spec");
  const rapidjson::Value& spec_in =
      spec_json != nullptr && spec_json->IsObject() ? *spec_json : kEmpty;
  PORTICO_RETURN_IF_ERROR(ValidateRoute(spec_in).WithPrefix(obj.ref().Display()));
  rapidjson::Document spec = NormalizeRoute(spec_in, obj.ref().ns);

  std::vector<sdk::Condition> accepted;
  const rapidjson::Value* parents = Array(spec, "parentRefs");
  for (rapidjson::SizeType i = 0; parents != nullptr && i < parents->Size(); ++i) {
    accepted.push_back(ResolveParent((*parents)[i], ctx));
  }
  sdk::Condition resolved = ResolveReferences(spec, obj.ref().ns, ctx);

  sdk::JsonWriter synced;
  synced.BeginObject().Key("metadata").BeginObject().Field("name", obj.ref().name);
  synced.Field("namespace", obj.ref().ns).Field("generation", obj.generation()).EndObject();
  WriteMembers(synced, spec, {"parentRefs", "hostnames", "rules"});
  result.SetSynced(synced.EndObject().Take());

  sdk::JsonWriter exported;
  exported.BeginObject();
  WriteMembers(exported, spec, {"parentRefs", "hostnames"});
  result.SetExport(exported.EndObject().Take());

  sdk::JsonWriter status;
  status.BeginObject().Key("parents").BeginArray();
  for (size_t i = 0; i < accepted.size(); ++i) {
    status.BeginObject().Key("parentRef").Value((*parents)[static_cast<rapidjson::SizeType>(i)]);
    sdk::WriteConditions(status, {accepted[i], resolved}, obj.generation());
    status.EndObject();
  }
  result.SetStatus(status.EndArray().EndObject().Take());
  return OkStatus();
}

}  // namespace portico::plugins::httproute
