// process.cc: the Gateway processor (see process.h).
#include "process.h"

#include <optional>
#include <string>
#include <vector>

#include "listeners.h"
#include "portico/sdk/gateway_api.h"
#include "portico/sdk/json_writer.h"
#include "validate.h"
#include "views.h"

namespace portico::plugins::gateway {
namespace {

// ClassInfo is what the Gateway reads from its GatewayClass's export.
struct ClassInfo {
  bool found = false;
  std::string controller_name;
  bool ours = false;      // the class names Portico's controller
  bool accepted = false;  // and Portico accepted it
};

ClassInfo ReadClass(const std::string& name, sdk::ProcessContext& ctx) {
  ClassInfo info;
  std::optional<std::string> exported = ctx.GetExport({kGroup, "GatewayClass", "", name});
  if (!exported) return info;
  info.found = true;
  auto doc = json::Parse(*exported, "GatewayClass " + name);
  if (!doc.ok()) return info;
  info.controller_name = json::GetString(*doc, "controllerName");
  const rapidjson::Value* accepted = json::Find(*doc, "accepted");
  info.ours = info.controller_name == sdk::gateway_api::kControllerName;
  info.accepted = info.ours && accepted != nullptr && accepted->IsBool() && accepted->GetBool();
  return info;
}

sdk::Condition Accepted(const GatewaySpec& spec, const std::vector<ListenerResult>& listeners) {
  if (!spec.parameters_ref.empty()) {
    return {"Accepted", "False", "InvalidParameters",
            "spec.infrastructure.parametersRef " + spec.parameters_ref +
                ": Portico takes no Gateway parameters"};
  }
  std::string unsupported;
  for (const Address& a : spec.addresses) {
    if (a.type == "IPAddress") continue;
    unsupported += (unsupported.empty() ? "" : ", ") + a.type +
                   (a.value.empty() ? "" : " \"" + a.value + "\"");
  }
  if (!unsupported.empty()) {
    return {"Accepted", "False", "UnsupportedAddress",
            "address types other than IPAddress are not supported: " + unsupported};
  }
  std::string invalid, valid;
  for (size_t i = 0; i < spec.listeners.size(); ++i) {
    std::string& list = listeners[i].Valid() ? valid : invalid;
    list += (list.empty() ? "" : ", ") + spec.listeners[i].name;
    if (!listeners[i].Valid()) list += " (" + listeners[i].accepted.reason + ")";
  }
  if (invalid.empty()) return {"Accepted", "True", "Accepted", ""};
  if (valid.empty()) {
    return {"Accepted", "False", "ListenersNotValid", "no listener is valid: " + invalid};
  }
  return {"Accepted", "True", "ListenersNotValid",
          "listeners not valid: " + invalid + "; accepted: " + valid};
}

// InsecureFrontendMode is the InsecureFrontendValidationMode=True condition when an HTTPS
// listener's client-certificate validation (spec.tls.frontend) is AllowInsecureFallback.
std::optional<sdk::Condition> InsecureFrontendMode(const GatewaySpec& spec) {
  std::string listeners;
  for (const Listener& l : spec.listeners) {
    if (l.protocol != "HTTPS") continue;
    const FrontendValidation* v = FrontendValidationFor(spec, l.port);
    if (v == nullptr || v->mode != "AllowInsecureFallback") continue;
    listeners += (listeners.empty() ? "" : ", ") + l.name;
  }
  if (listeners.empty()) return std::nullopt;
  return sdk::Condition{"InsecureFrontendValidationMode", "True", "ConfigurationChanged",
                        "client-certificate validation mode AllowInsecureFallback accepts clients "
                        "without a trusted certificate on listeners: " +
                            listeners};
}

sdk::Condition Programmed(const sdk::Condition& accepted) {
  if (accepted.status != "True") {
    return {"Programmed", "False", "Invalid", "the Gateway is not accepted"};
  }
  return {"Programmed", "Unknown", "Pending", "waiting for a gateway to apply it"};
}

}  // namespace

Status ProcessGateway(const sdk::Object& obj, sdk::ProcessContext& ctx,
                      sdk::ProcessResult& result) {
  PORTICO_ASSIGN_OR_RETURN(const rapidjson::Document* doc, obj.doc());
  static const rapidjson::Value kEmpty(rapidjson::kObjectType);
  const rapidjson::Value* spec_json = json::Find(*doc, "spec");
  StatusOr<GatewaySpec> spec = ParseGateway(spec_json != nullptr ? *spec_json : kEmpty);
  if (!spec.ok()) return spec.status().WithPrefix(obj.ref().Display());

  ClassInfo cls = ReadClass(spec->class_name, ctx);
  // References (Secrets, ReferenceGrants) are resolved only for our own Gateways.
  std::vector<ListenerResult> listeners =
      ResolveListeners(*spec, obj.ref(), cls.ours ? &ctx : nullptr);
  // spec.tls.backend.clientCertificateRef: the certificate presented to TLS backends.
  std::optional<ResolvedCertificate> backend_certificate;
  std::optional<sdk::Condition> backend_failure;
  if (cls.ours && spec->backend_client_certificate) {
    backend_certificate = ResolveCertificateRef(
        *spec->backend_client_certificate, "spec.tls.backend.clientCertificateRef",
        "InvalidClientCertificateRef", obj.ref(), ctx, &backend_failure);
  }
  result.SetExport(ExportJson(*spec, listeners, cls.controller_name, cls.ours));
  if (!cls.found) {
    sdk::JsonWriter status;
    status.BeginObject();
    sdk::WriteConditions(status,
                         {{"Accepted", "Unknown", "Pending",
                           "GatewayClass \"" + spec->class_name + "\" does not exist"},
                          {"Programmed", "Unknown", "Pending", "waiting for the GatewayClass"}},
                         obj.generation());
    result.SetStatus(status.EndObject().Take());
    return OkStatus();
  }
  if (!cls.ours) return OkStatus();  // another controller's Gateway: not ours to judge

  sdk::Condition accepted = Accepted(*spec, listeners);
  if (!cls.accepted) {
    accepted = {"Accepted", "False", "Invalid",
                "GatewayClass \"" + spec->class_name + "\" is not accepted"};
  }
  if (accepted.status == "True") {
    result.SetSynced(
        SyncedJson(obj, *spec, listeners, backend_certificate ? &*backend_certificate : nullptr));
    // Sync scope: a Gateway goes to gateways serving it or its class; its certificates' material
    // goes wherever it goes.
    result.LinkParent({kGroup, "GatewayClass", "", spec->class_name});
    if (backend_certificate) {
      result.LinkReference({"", "Secret", backend_certificate->ns, backend_certificate->name});
    }
    // The CA bundles its programmable listeners validate client certificates against, too.
    for (const ListenerResult& l : listeners) {
      if (!l.Programmable()) continue;
      for (const ResolvedCertificate& c : l.certificates) {
        result.LinkReference({"", "Secret", c.ns, c.name});
      }
      if (!l.frontend) continue;
      for (const ResolvedCaCertificate& ca : l.frontend->ca_certificates) {
        result.LinkReference({"", ca.kind, ca.ns, ca.name});
      }
    }
  }
  std::vector<sdk::Condition> conditions{accepted, Programmed(accepted)};
  if (spec->backend_client_certificate) {
    conditions.push_back(
        backend_failure.value_or(sdk::Condition{"ResolvedRefs", "True", "ResolvedRefs", ""}));
  }
  if (auto insecure = InsecureFrontendMode(*spec)) conditions.push_back(std::move(*insecure));
  result.SetStatus(StatusJson(obj, *spec, conditions, listeners));
  return OkStatus();
}

}  // namespace portico::plugins::gateway
