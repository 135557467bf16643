// views.cc: see views.h.
#include "views.h"

#include <map>

namespace portico::plugins::gateway {
namespace {

void WriteKinds(sdk::JsonWriter& w, const std::vector<GroupKind>& kinds) {
  w.BeginArray();
  for (const GroupKind& k : kinds) {
    w.BeginObject().Field("group", k.group).Field("kind", k.kind).EndObject();
  }
  w.EndArray();
}

void WriteCertificate(sdk::JsonWriter& w, const ResolvedCertificate& c) {
  w.BeginObject().Key("secretRef").BeginObject().Field("namespace", c.ns);
  w.Field("name", c.name).EndObject().Field("sha256", c.sha256).EndObject();
}

}  // namespace

std::string SyncedJson(const sdk::Object& obj, const GatewaySpec& spec,
                       const std::vector<ListenerResult>& listeners,
                       const ResolvedCertificate* backend_certificate) {
  sdk::JsonWriter w;
  w.BeginObject().Key("metadata").BeginObject().Field("name", obj.ref().name);
  w.Field("namespace", obj.ref().ns).Field("generation", obj.generation()).EndObject();
  w.Field("gatewayClassName", spec.class_name).Key("listeners").BeginArray();
  for (size_t i = 0; i < spec.listeners.size(); ++i) {
    const Listener& l = spec.listeners[i];
    const ListenerResult& r = listeners[i];
    if (!r.Programmable()) continue;
    w.BeginObject().Field("name", l.name).Field("port", l.port).Field("protocol", l.protocol);
    if (!l.hostname.empty()) w.Field("hostname", l.hostname);
    if (l.protocol == "HTTPS") {
      w.Key("tls").BeginObject().Field("mode", l.tls_mode).Key("certificates").BeginArray();
      for (const ResolvedCertificate& c : r.certificates) WriteCertificate(w, c);
      w.EndArray().EndObject();
    }
    w.Key("routeKinds");
    WriteKinds(w, r.supported_kinds);
    w.EndObject();
  }
  w.EndArray().Key("addresses").BeginArray();
  for (const Address& a : spec.addresses) {
    w.BeginObject().Field("type", a.type).Field("value", a.value).EndObject();
  }
  w.EndArray();
  // Client-certificate validation per port, for ports with a programmable HTTPS listener (the
  // listeners of a port share one resolution, so the first such listener's is the port's).
  std::map<int64_t, const FrontendResolution*> by_port;
  for (size_t i = 0; i < spec.listeners.size(); ++i) {
    const ListenerResult& r = listeners[i];
    if (spec.listeners[i].protocol != "HTTPS" || !r.Programmable() || !r.frontend) continue;
    by_port.emplace(spec.listeners[i].port, &*r.frontend);
  }
  if (!by_port.empty()) {
    w.Key("frontendValidation").BeginArray();
    for (const auto& [port, f] : by_port) {
      w.BeginObject().Field("port", port).Field("mode", f->mode);
      w.Key("caCertificates").BeginArray();
      for (const ResolvedCaCertificate& ca : f->ca_certificates) {
        w.BeginObject().Key("ref").BeginObject().Field("kind", ca.kind);
        w.Field("namespace", ca.ns).Field("name", ca.name).EndObject();
        w.Field("sha256", ca.sha256).EndObject();
      }
      w.EndArray().EndObject();
    }
    w.EndArray();
  }
  if (backend_certificate != nullptr) {
    w.Key("backendClientCertificate");
    WriteCertificate(w, *backend_certificate);
  }
  return w.EndObject().Take();
}

std::string ExportJson(const GatewaySpec& spec, const std::vector<ListenerResult>& listeners,
                       const std::string& controller_name, bool ours) {
  sdk::JsonWriter w;
  w.BeginObject().Field("gatewayClassName", spec.class_name);
  w.Field("controllerName", controller_name).Key("ours").Bool(ours);
  w.Key("listeners").BeginArray();
  for (size_t i = 0; i < spec.listeners.size(); ++i) {
    const Listener& l = spec.listeners[i];
    const ListenerResult& r = listeners[i];
    w.BeginObject().Field("name", l.name).Field("port", l.port).Field("protocol", l.protocol);
    if (!l.hostname.empty()) w.Field("hostname", l.hostname);
    w.Key("accepted").Bool(r.Valid()).Key("programmable").Bool(r.Programmable());
    w.Key("allowedRoutes").BeginObject().Key("namespaces").BeginObject().Field("from", l.from);
    if (l.from == "Selector" && l.selector != nullptr) {
      w.Field("selector", SelectorString(*l.selector));
    }
    w.EndObject().Key("kinds");
    WriteKinds(w, r.supported_kinds);
    w.EndObject().EndObject();
  }
  return w.EndArray().EndObject().Take();
}

std::string StatusJson(const sdk::Object& obj, const GatewaySpec& spec,
                       const std::vector<sdk::Condition>& conditions,
                       const std::vector<ListenerResult>& listeners) {
  sdk::JsonWriter w;
  w.BeginObject();
  sdk::WriteConditions(w, conditions, obj.generation());
  w.Key("listeners").BeginArray();
  for (size_t i = 0; i < spec.listeners.size(); ++i) {
    w.BeginObject().Field("name", spec.listeners[i].name).Key("supportedKinds");
    WriteKinds(w, listeners[i].supported_kinds);
    // Routes contribute "count:listeners[name=<listener>].attachedRoutes" (abi.h).
    w.Field("attachedRoutes", int64_t{0});
    sdk::WriteConditions(w, listeners[i].Conditions(), obj.generation());
    w.EndObject();
  }
  return w.EndArray().EndObject().Take();
}

}  // namespace portico::plugins::gateway
