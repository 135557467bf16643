// process.cc: see process.h.
#include "process.h"

#include <optional>
#include <string>
#include <vector>

#include "portico/sdk/json_writer.h"
#include "validate.h"

namespace portico::plugins::gateway {
namespace {

// ListenerStatus is what resolution found for one listener.
struct ListenerStatus {
  std::vector<GroupKind> supported_kinds;
  sdk::Condition accepted{"Accepted", "True", "Accepted", ""};
  sdk::Condition resolved{"ResolvedRefs", "True", "ResolvedRefs", ""};
};

bool ProtocolSupported(const Listener& l) {
  return l.protocol == "HTTP" || (l.protocol == "HTTPS" && l.tls_mode == "Terminate");
}

// CheckCertificate returns the ResolvedRefs=False condition for a bad reference, if any.
std::optional<sdk::Condition> CheckCertificate(const CertificateRef& ref, const sdk::ObjectRef& gw,
                                               sdk::ProcessContext& ctx) {
  std::string ns = ref.ns.empty() ? gw.ns : ref.ns;
  std::string name = ns + "/" + ref.name;
  if (!ref.group.empty() || ref.kind != "Secret") {
    return sdk::Condition{"ResolvedRefs", "False", "InvalidCertificateRef",
                          "certificateRef " + ref.kind +
                              (ref.group.empty() ? "" : "." + ref.group) + " " + name +
                              ": only core Secrets are supported"};
  }
  if (ns != gw.ns &&
      !ctx.ReferenceAllowed(kGroup, "Gateway", gw.ns, {"", "Secret", ns, ref.name})) {
    return sdk::Condition{
        "ResolvedRefs", "False", "RefNotPermitted",
        "Secret " + name + " is in another namespace and no ReferenceGrant allows it"};
  }
  std::optional<std::string> secret = ctx.GetSecret(ns, ref.name);
  if (!secret) {
    return sdk::Condition{"ResolvedRefs", "False", "InvalidCertificateRef",
                          "Secret " + name + " does not exist"};
  }
  auto doc = json::Parse(*secret, "Secret " + name);
  bool tls = doc.ok() && json::GetString(*doc, "type") == "kubernetes.io/tls";
  const rapidjson::Value* data = doc.ok() ? json::Find(*doc, "data") : nullptr;
  auto has = [&](const char* key) {  // keys contain dots: look members up, not paths
    const rapidjson::Value* v = data != nullptr ? json::Find(*data, key) : nullptr;
    return v != nullptr && v->IsString() && v->GetStringLength() > 0;
  };
  bool keys = has("tls.crt") && has("tls.key");
  if (!tls || !keys) {
    return sdk::Condition{
        "ResolvedRefs", "False", "InvalidCertificateRef",
        "Secret " + name + " is not a kubernetes.io/tls Secret with tls.crt and tls.key"};
  }
  return std::nullopt;  // PEM parsing and key matching come with certificate.v1
}

ListenerStatus ResolveListener(const Listener& l, const sdk::ObjectRef& gw,
                               sdk::ProcessContext& ctx) {
  ListenerStatus s;
  if (!ProtocolSupported(l)) {
    s.accepted = {"Accepted", "False", "UnsupportedProtocol",
                  "protocol " + l.protocol + (l.has_tls ? " with tls mode " + l.tls_mode : "") +
                      " is not supported"};
    return s;
  }
  std::string invalid;
  if (!l.kinds_given) s.supported_kinds.push_back({kGroup, "HTTPRoute"});
  for (const GroupKind& k : l.kinds) {
    if (k.group == kGroup && k.kind == "HTTPRoute") {
      if (s.supported_kinds.empty()) s.supported_kinds.push_back(k);
    } else {
      invalid += (invalid.empty() ? "" : ", ") + k.kind + (k.group.empty() ? "" : "." + k.group);
    }
  }
  if (!invalid.empty()) {
    s.resolved = {"ResolvedRefs", "False", "InvalidRouteKinds",
                  "unsupported route kinds: " + invalid};
  }
  if (l.has_tls && l.tls_mode == "Terminate") {
    for (const CertificateRef& ref : l.certificate_refs) {
      if (auto bad = CheckCertificate(ref, gw, ctx)) {
        s.resolved = *bad;
        break;
      }
    }
  }
  return s;
}

void WriteKinds(sdk::JsonWriter& w, const std::vector<GroupKind>& kinds) {
  w.BeginArray();
  for (const GroupKind& k : kinds) {
    w.BeginObject().Field("group", k.group).Field("kind", k.kind).EndObject();
  }
  w.EndArray();
}

std::string SyncedJson(const sdk::Object& obj, const GatewaySpec& spec) {
  sdk::JsonWriter w;
  w.BeginObject().Key("metadata").BeginObject().Field("name", obj.ref().name);
  w.Field("namespace", obj.ref().ns).Field("generation", obj.generation()).EndObject();
  w.Field("gatewayClassName", spec.class_name).Key("listeners").BeginArray();
  for (const Listener& l : spec.listeners) {
    w.BeginObject().Field("name", l.name).Field("port", l.port).Field("protocol", l.protocol);
    if (!l.hostname.empty()) w.Field("hostname", l.hostname);
    if (l.has_tls) {
      w.Key("tls").BeginObject().Field("mode", l.tls_mode).Key("certificateRefs").BeginArray();
      for (const CertificateRef& c : l.certificate_refs) {
        w.BeginObject().Field("group", c.group).Field("kind", c.kind);
        w.Field("namespace", c.ns.empty() ? obj.ref().ns : c.ns).Field("name", c.name).EndObject();
      }
      w.EndArray().EndObject();
    }
    w.EndObject();
  }
  w.EndArray().Key("addresses").BeginArray();
  for (const Address& a : spec.addresses) {
    w.BeginObject().Field("type", a.type).Field("value", a.value).EndObject();
  }
  w.EndArray();
  return w.EndObject().Take();
}

std::string ExportJson(const GatewaySpec& spec, const std::vector<ListenerStatus>& statuses) {
  sdk::JsonWriter w;
  w.BeginObject().Field("gatewayClassName", spec.class_name).Key("listeners").BeginArray();
  for (size_t i = 0; i < spec.listeners.size(); ++i) {
    const Listener& l = spec.listeners[i];
    w.BeginObject().Field("name", l.name).Field("port", l.port).Field("protocol", l.protocol);
    if (!l.hostname.empty()) w.Field("hostname", l.hostname);
    w.Key("allowedRoutes").BeginObject().Key("namespaces").BeginObject().Field("from", l.from);
    if (l.from == "Selector" && l.selector != nullptr) w.Key("selector").Value(*l.selector);
    w.EndObject().Key("kinds");
    WriteKinds(w, statuses[i].supported_kinds);
    w.EndObject().EndObject();
  }
  return w.EndArray().EndObject().Take();
}

std::string StatusJson(const sdk::Object& obj, const GatewaySpec& spec,
                       const sdk::Condition& accepted,
                       const std::vector<ListenerStatus>& statuses) {
  sdk::JsonWriter w;
  w.BeginObject();
  sdk::WriteConditions(w, {accepted}, obj.generation());
  w.Key("listeners").BeginArray();
  for (size_t i = 0; i < spec.listeners.size(); ++i) {
    w.BeginObject().Field("name", spec.listeners[i].name).Key("supportedKinds");
    WriteKinds(w, statuses[i].supported_kinds);
    sdk::WriteConditions(w, {statuses[i].accepted, statuses[i].resolved}, obj.generation());
    w.EndObject();
  }
  return w.EndArray().EndObject().Take();
}

}  // namespace

Status ProcessGateway(const sdk::Object& obj, sdk::ProcessContext& ctx,
                      sdk::ProcessResult& result) {
  PORTICO_ASSIGN_OR_RETURN(const rapidjson::Document* doc, obj.doc());
  static const rapidjson::Value kEmpty(rapidjson::kObjectType);
  const rapidjson::Value* spec_json = json::Find(*doc, "spec");
  StatusOr<GatewaySpec> spec = ParseGateway(spec_json != nullptr ? *spec_json : kEmpty);
  if (!spec.ok()) return spec.status().WithPrefix(obj.ref().Display());

  bool class_found = ctx.GetExport({kGroup, "GatewayClass", "", spec->class_name}).has_value();
  std::vector<ListenerStatus> statuses;
  bool any_accepted = false;
  for (const Listener& l : spec->listeners) {
    statuses.push_back(ResolveListener(l, obj.ref(), ctx));
    any_accepted = any_accepted || statuses.back().accepted.status == "True";
  }
  sdk::Condition accepted{"Accepted", "True", "Accepted", ""};
  if (!class_found) {
    accepted = {"Accepted", "Unknown", "Pending",
                "GatewayClass \"" + spec->class_name + "\" not found"};
  } else if (!any_accepted) {
    accepted = {"Accepted", "False", "ListenersNotValid", "no listener is valid"};
  }
  result.SetSynced(SyncedJson(obj, *spec));
  result.SetExport(ExportJson(*spec, statuses));
  result.SetStatus(StatusJson(obj, *spec, accepted, statuses));
  return OkStatus();
}

}  // namespace portico::plugins::gateway
