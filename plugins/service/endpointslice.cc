// endpointslice.cc: see endpointslice.h.
#include "endpointslice.h"

#include <map>
#include <optional>
#include <string>

#include "portico/sdk/fields.h"
#include "portico/sdk/json_writer.h"
#include "portico/sdk/names.h"

namespace portico::plugins::service {
namespace {

using ::portico::sdk::FieldError;
constexpr size_t kMaxEndpoints = 1000;
constexpr size_t kMaxAddresses = 100;
constexpr size_t kMaxPorts = 100;

struct SlicePort {
  std::string name;
  std::optional<int64_t> port;  // absent: every port
  std::string protocol;
  std::string app_protocol;
};

struct Endpoint {
  std::vector<std::string> addresses;
  bool ready = true;
  bool serving = true;
  bool terminating = false;
  std::string hostname;
  std::string zone;
};

struct SliceView {
  std::string address_type;
  std::vector<SlicePort> ports;
  std::vector<Endpoint> endpoints;
};

bool ValidAddress(std::string_view type, std::string_view address) {
  if (type == "IPv4") return sdk::names::IsIPv4(address);
  if (type == "IPv6") return sdk::names::IsIPv6(address);
  return sdk::names::IsDnsSubdomain(address);  // FQDN
}

StatusOr<std::optional<bool>> OptionalBool(const rapidjson::Value& conditions, const char* name,
                                           const std::string& field) {
  const rapidjson::Value* v = json::Find(conditions, name);
  if (v == nullptr || v->IsNull()) return std::optional<bool>();
  if (!v->IsBool()) return FieldError(field + "." + name, "must be a boolean");
  return std::optional<bool>(v->GetBool());
}

StatusOr<Endpoint> ParseEndpoint(const rapidjson::Value& e, const std::string& field,
                                 const std::string& type) {
  if (!e.IsObject()) return FieldError(field, "must be an object");
  Endpoint endpoint;
  const rapidjson::Value* addresses = json::Find(e, "addresses");
  if (addresses == nullptr || !addresses->IsArray() || addresses->Empty()) {
    return FieldError(field + ".addresses", "at least one address is required");
  }
  if (addresses->Size() > kMaxAddresses) {
    return FieldError(field + ".addresses", "at most 100 addresses");
  }
  for (rapidjson::SizeType j = 0; j < addresses->Size(); ++j) {
    const rapidjson::Value& a = (*addresses)[j];
    std::string address = a.IsString() ? a.GetString() : "";
    if (!ValidAddress(type, address)) {
      return FieldError(field + ".addresses[" + std::to_string(j) + "]",
                        "\"" + address + "\" is not a valid " + type + " address");
    }
    endpoint.addresses.push_back(address);
  }
  if (const rapidjson::Value* c = json::Find(e, "conditions"); c != nullptr && c->IsObject()) {
    std::string cfield = field + ".conditions";
    PORTICO_ASSIGN_OR_RETURN(std::optional<bool> ready, OptionalBool(*c, "ready", cfield));
    PORTICO_ASSIGN_OR_RETURN(std::optional<bool> serving, OptionalBool(*c, "serving", cfield));
    PORTICO_ASSIGN_OR_RETURN(std::optional<bool> terminating,
                             OptionalBool(*c, "terminating", cfield));
    // Kubernetes: an unknown ready state counts as ready; serving defaults to ready.
    endpoint.ready = ready.value_or(true);
    endpoint.serving = serving.value_or(endpoint.ready);
    endpoint.terminating = terminating.value_or(false);
  }
  endpoint.hostname = json::GetString(e, "hostname");
  if (!endpoint.hostname.empty() && !sdk::names::IsDnsLabel(endpoint.hostname)) {
    return FieldError(field + ".hostname", "\"" + endpoint.hostname + "\" is not a DNS label");
  }
  endpoint.zone = json::GetString(e, "zone");
  return endpoint;
}

StatusOr<SliceView> Validate(const rapidjson::Value& doc) {
  SliceView view;
  view.address_type = json::GetString(doc, "addressType");
  if (view.address_type != "IPv4" && view.address_type != "IPv6" && view.address_type != "FQDN") {
    return FieldError("addressType", "\"" + view.address_type + "\" is not IPv4, IPv6 or FQDN");
  }
  if (const rapidjson::Value* ports = json::Find(doc, "ports");
      ports != nullptr && ports->IsArray()) {
    if (ports->Size() > kMaxPorts) return FieldError("ports", "at most 100 ports");
    std::map<std::string, size_t> names;
    for (rapidjson::SizeType i = 0; i < ports->Size(); ++i) {
      const rapidjson::Value& p = (*ports)[i];
      std::string field = "ports[" + std::to_string(i) + "]";
      if (!p.IsObject()) return FieldError(field, "must be an object");
      SlicePort port;
      port.name = json::GetString(p, "name");
      if (!port.name.empty() && !sdk::names::IsDnsLabel(port.name)) {
        return FieldError(field + ".name", "\"" + port.name + "\" is not a DNS label");
      }
      if (auto [it, fresh] = names.emplace(port.name, i); !fresh) {
        return FieldError(field + ".name", "duplicate port name \"" + port.name +
                                               "\" (also ports[" + std::to_string(it->second) +
                                               "])");
      }
      if (const rapidjson::Value* n = json::Find(p, "port"); n != nullptr && !n->IsNull()) {
        if (!n->IsInt64() || n->GetInt64() < 1 || n->GetInt64() > 65535) {
          return FieldError(field + ".port", "must be 1-65535");
        }
        port.port = n->GetInt64();
      }
      port.protocol = json::GetString(p, "protocol", "TCP");
      if (port.protocol != "TCP" && port.protocol != "UDP" && port.protocol != "SCTP") {
        return FieldError(field + ".protocol", "\"" + port.protocol + "\" is not TCP, UDP or SCTP");
      }
      port.app_protocol = json::GetString(p, "appProtocol");
      view.ports.push_back(std::move(port));
    }
  }
  if (const rapidjson::Value* endpoints = json::Find(doc, "endpoints");
      endpoints != nullptr && endpoints->IsArray()) {
    if (endpoints->Size() > kMaxEndpoints) return FieldError("endpoints", "at most 1000 endpoints");
    for (rapidjson::SizeType i = 0; i < endpoints->Size(); ++i) {
      PORTICO_ASSIGN_OR_RETURN(
          Endpoint e, ParseEndpoint((*endpoints)[i], "endpoints[" + std::to_string(i) + "]",
                                    view.address_type));
      view.endpoints.push_back(std::move(e));
    }
  }
  return view;
}

void WriteBody(sdk::JsonWriter& w, const SliceView& view) {
  w.Field("addressType", view.address_type).Key("ports").BeginArray();
  for (const SlicePort& p : view.ports) {
    w.BeginObject().Field("name", p.name);
    if (p.port) w.Field("port", *p.port);
    w.Field("protocol", p.protocol);
    if (!p.app_protocol.empty()) w.Field("appProtocol", p.app_protocol);
    w.EndObject();
  }
  w.EndArray().Key("endpoints").BeginArray();
  for (const Endpoint& e : view.endpoints) {
    w.BeginObject().Key("addresses").BeginArray();
    for (const auto& a : e.addresses) w.String(a);
    w.EndArray();
    w.Key("ready").Bool(e.ready).Key("serving").Bool(e.serving);
    w.Key("terminating").Bool(e.terminating);
    if (!e.hostname.empty()) w.Field("hostname", e.hostname);
    if (!e.zone.empty()) w.Field("zone", e.zone);
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

Status ProcessEndpointSlice(const sdk::Object& obj, sdk::ProcessContext& ctx,
                            sdk::ProcessResult& result) {
  PORTICO_ASSIGN_OR_RETURN(const rapidjson::Document* doc, obj.doc());
  StatusOr<SliceView> view = Validate(*doc);
  if (!view.ok()) return view.status().WithPrefix(obj.ref().Display());

  std::string service;
  if (const rapidjson::Value* labels = json::FindPath(*doc, "metadata.labels")) {
    // The key contains dots, so look the member up directly rather than by path.
    if (const rapidjson::Value* v = json::Find(*labels, kServiceNameLabel); v && v->IsString()) {
      service = v->GetString();
    }
  }
  sdk::Condition resolved{"ResolvedRefs", "True", "ResolvedRefs", ""};
  if (service.empty()) {
    resolved = {
        "ResolvedRefs", "False", "NoServiceName",
        std::string("label ") + kServiceNameLabel + " is not set; no Service uses this slice"};
  } else if (!ctx.GetExport({"", "Service", obj.ref().ns, service})) {
    resolved = {"ResolvedRefs", "False", "ServiceNotFound",
                "Service " + obj.ref().ns + "/" + service + " does not exist (yet)"};
  }

  sdk::JsonWriter synced;
  synced.BeginObject().Key("metadata").BeginObject();
  synced.Field("name", obj.ref().name).Field("namespace", obj.ref().ns);
  synced.Field("generation", obj.generation()).EndObject().Field("serviceName", service);
  WriteBody(synced, *view);
  result.SetSynced(synced.EndObject().Take());

  int64_t ready = 0;
  for (const Endpoint& e : view->endpoints) ready += e.ready ? 1 : 0;
  sdk::JsonWriter exported;
  exported.BeginObject().Field("serviceName", service).Field("addressType", view->address_type);
  exported.Field("endpoints", static_cast<int64_t>(view->endpoints.size()));
  exported.Field("readyEndpoints", ready);
  result.SetExport(exported.EndObject().Take());

  sdk::JsonWriter status;
  status.BeginObject();
  sdk::WriteConditions(status, {{"Accepted", "True", "Accepted", ""}, resolved}, obj.generation());
  result.SetStatus(status.EndObject().Take());
  return OkStatus();
}

Status StageEndpointSlice(const sdk::Txn& txn, const std::vector<sdk::Change>& changes) {
  return sdk::StageEachView(
      txn, changes, [&](const sdk::Change& change, const rapidjson::Document& view) -> Status {
        std::string service = json::GetString(view, "serviceName");
        if (service.empty()) return OkStatus();  // not part of any Service: nothing to route to
        sdk::JsonWriter w;
        w.BeginObject().Field("entry", "endpoints").Field("namespace", change.ref.ns);
        w.Field("service", service).Field("slice", change.ref.name);
        for (const char* key : {"addressType", "ports", "endpoints"}) {
          if (const rapidjson::Value* v = json::Find(view, key)) w.Key(key).Value(*v);
        }
        w.EndObject();
        return txn.Put(change.ref.Key(), PORTICO_FORMAT_BACKEND,
                       "endpoints/" + change.ref.ns + "/" + change.ref.name, w.Take());
      });
}

}  // namespace portico::plugins::service
