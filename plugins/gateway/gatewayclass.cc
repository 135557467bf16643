// gatewayclass.cc: the GatewayClass processor (see process.h). A class is ours when its
// controllerName is Portico's (sdk/gateway_api.h); only ours get a status.
#include <string>

#include "portico/sdk/gateway_api.h"
#include "portico/sdk/json_writer.h"
#include "portico/sdk/names.h"
#include "process.h"

namespace portico::plugins::gateway {
namespace {

// IsControllerName: a domain-prefixed path, e.g. "portico.io/gateway-controller".
bool IsControllerName(std::string_view s) {
  size_t slash = s.find('/');
  if (s.size() > 253 || slash == std::string_view::npos || slash + 1 == s.size()) return false;
  if (!sdk::names::IsDnsSubdomain(s.substr(0, slash))) return false;
  for (char c : s.substr(slash + 1)) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              std::string_view("/-._~%!$&'()*+,;=:").find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

}  // namespace

Status ProcessGatewayClass(const sdk::Object& obj, sdk::ProcessContext& ctx,
                           sdk::ProcessResult& result) {
  PORTICO_ASSIGN_OR_RETURN(const rapidjson::Document* doc, obj.doc());
  const std::string who = obj.ref().Display();
  std::string controller = json::GetString(*doc, "spec.controllerName");
  if (!IsControllerName(controller)) {
    return InvalidArgumentError(
        who + ": spec.controllerName: \"" + controller +
        "\" is not a domain-prefixed path (e.g. portico.io/gateway-controller)");
  }
  if (const rapidjson::Value* p = json::FindPath(*doc, "spec.parametersRef")) {
    std::string group = json::GetString(*p, "group");
    std::string kind = json::GetString(*p, "kind");
    std::string ns = json::GetString(*p, "namespace");
    if (!sdk::names::IsGroup(group)) {
      return InvalidArgumentError(who + ": spec.parametersRef.group: \"" + group +
                                  "\" is not a valid group");
    }
    if (!sdk::names::IsKind(kind)) {
      return InvalidArgumentError(who + ": spec.parametersRef.kind: \"" + kind +
                                  "\" is not a valid kind");
    }
    if (json::GetString(*p, "name").empty()) {
      return InvalidArgumentError(who + ": spec.parametersRef.name: is required");
    }
    if (!ns.empty() && !sdk::names::IsDnsLabel(ns)) {
      return InvalidArgumentError(who + ": spec.parametersRef.namespace: \"" + ns +
                                  "\" is not a valid namespace");
    }
  }
  bool ours = controller == sdk::gateway_api::kControllerName;
  // Portico takes no class parameters: a class of ours that names some is not accepted, as the
  // API asks for a parametersRef of an unsupported kind.
  sdk::Condition accepted{"Accepted", "True", "Accepted", ""};
  if (const rapidjson::Value* p = json::FindPath(*doc, "spec.parametersRef")) {
    std::string group = json::GetString(*p, "group");
    accepted = {"Accepted", "False", "InvalidParameters",
                "spec.parametersRef " + json::GetString(*p, "kind") +
                    (group.empty() ? "" : "." + group) + " " + json::GetString(*p, "name") +
                    ": Portico takes no GatewayClass parameters"};
  }
  sdk::JsonWriter exported;
  exported.BeginObject().Field("controllerName", controller);
  exported.Key("accepted").Bool(ours && accepted.status == "True");
  result.SetExport(exported.EndObject().Take());
  if (!ours) return OkStatus();  // another controller's class: its status is not ours to write
  sdk::JsonWriter status;
  status.BeginObject();
  sdk::WriteConditions(status, {accepted}, obj.generation());
  result.SetStatus(status.EndObject().Take());
  return OkStatus();
}

}  // namespace portico::plugins::gateway
