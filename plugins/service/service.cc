// service.cc: see service.h.
#include "service.h"

#include <map>
#include <optional>
#include <set>
#include <string>

#include "portico/sdk/fields.h"
#include "portico/sdk/json_writer.h"
#include "portico/sdk/names.h"

namespace portico::plugins::service {
namespace {

using ::portico::sdk::FieldError;
// Port is one normalised Service port.
struct Port {
  std::string name;
  int64_t port = 0;
  std::string protocol;
  int64_t target_port = 0;       // numeric targetPort, or 0 when named
  std::string target_port_name;  // named targetPort (a container port name)
  std::string app_protocol;
};

struct ServiceView {
  std::string type;
  bool headless = false;
  std::string external_name;
  std::vector<Port> ports;
};

bool IsPort(const rapidjson::Value& v) {
  return v.IsInt64() && v.GetInt64() >= 1 && v.GetInt64() <= 65535;
}

StatusOr<Port> ParsePort(const rapidjson::Value& p, const std::string& field, bool node_ports) {
  if (!p.IsObject()) return FieldError(field, "must be an object");
  Port port;
  const rapidjson::Value* number = json::Find(p, "port");
  if (number == nullptr || !IsPort(*number)) return FieldError(field + ".port", "must be 1-65535");
  port.port = number->GetInt64();
  port.protocol = json::GetString(p, "protocol", "TCP");
  if (port.protocol != "TCP" && port.protocol != "UDP" && port.protocol != "SCTP") {
    return FieldError(field + ".protocol", "\"" + port.protocol + "\" is not TCP, UDP or SCTP");
  }
  port.name = json::GetString(p, "name");
  if (!port.name.empty() && !sdk::names::IsDnsLabel(port.name)) {
    return FieldError(field + ".name", "\"" + port.name + "\" is not a DNS label");
  }
  port.target_port = port.port;
  if (const rapidjson::Value* target = json::Find(p, "targetPort"); target != nullptr) {
    if (target->IsString()) {
      port.target_port = 0;
      port.target_port_name = target->GetString();
      if (!sdk::names::IsIanaServiceName(port.target_port_name)) {
        return FieldError(field + ".targetPort",
                          "\"" + port.target_port_name + "\" is not a valid port name");
      }
    } else if (IsPort(*target)) {
      port.target_port = target->GetInt64();
    } else {
      return FieldError(field + ".targetPort", "must be 1-65535 or a port name");
    }
  }
  if (const rapidjson::Value* node_port = json::Find(p, "nodePort"); node_port != nullptr) {
    if (!node_ports) {
      return FieldError(field + ".nodePort", "only allowed for types NodePort and LoadBalancer");
    }
    if (!IsPort(*node_port)) return FieldError(field + ".nodePort", "must be 1-65535");
  }
  port.app_protocol = json::GetString(p, "appProtocol");
  return port;
}

StatusOr<ServiceView> Validate(const rapidjson::Value& spec) {
  ServiceView view;
  view.type = json::GetString(spec, "type", "ClusterIP");
  if (view.type != "ClusterIP" && view.type != "NodePort" && view.type != "LoadBalancer" &&
      view.type != "ExternalName") {
    return FieldError(
        "spec.type",
        "\"" + view.type + "\" is not ClusterIP, NodePort, LoadBalancer or ExternalName");
  }
  std::string cluster_ip = json::GetString(spec, "clusterIP");
  view.headless = cluster_ip == "None";
  if (!cluster_ip.empty() && !view.headless && !sdk::names::IsIPv4(cluster_ip) &&
      !sdk::names::IsIPv6(cluster_ip)) {
    return FieldError("spec.clusterIP", "\"" + cluster_ip + "\" is not an IP address or \"None\"");
  }
  if (view.type == "ExternalName") {
    view.external_name = json::GetString(spec, "externalName");
    std::string trimmed = view.external_name;
    if (!trimmed.empty() && trimmed.back() == '.') trimmed.pop_back();
    if (!sdk::names::IsDnsSubdomain(trimmed)) {
      return FieldError("spec.externalName",
                        "type ExternalName needs a DNS name, got \"" + view.external_name + "\"");
    }
  } else if (view.headless && view.type != "ClusterIP") {
    return FieldError("spec.clusterIP", "\"None\" (headless) requires type ClusterIP");
  }
  const rapidjson::Value* ports = json::Find(spec, "ports");
  size_t count = ports != nullptr && ports->IsArray() ? ports->Size() : 0;
  if (count == 0 && view.type != "ExternalName" && !view.headless) {
    return FieldError("spec.ports", "at least one port is required");
  }
  bool node_ports = view.type == "NodePort" || view.type == "LoadBalancer";
  std::map<std::string, size_t> names;
  std::map<std::pair<int64_t, std::string>, size_t> numbers;
  for (size_t i = 0; i < count; ++i) {
    std::string field = "spec.ports[" + std::to_string(i) + "]";
    PORTICO_ASSIGN_OR_RETURN(
        Port port, ParsePort((*ports)[static_cast<rapidjson::SizeType>(i)], field, node_ports));
    if (count > 1 && port.name.empty()) {
      return FieldError(field + ".name", "is required when a Service has several ports");
    }
    if (auto [it, fresh] = names.emplace(port.name, i); !fresh && !port.name.empty()) {
      return FieldError(field + ".name", "duplicate port name \"" + port.name +
                                             "\" (also spec.ports[" + std::to_string(it->second) +
                                             "])");
    }
    auto key = std::make_pair(port.port, port.protocol);
    if (auto [it, fresh] = numbers.emplace(key, i); !fresh) {
      return FieldError(field, "duplicate port " + std::to_string(port.port) + "/" + port.protocol +
                                   " (also spec.ports[" + std::to_string(it->second) + "])");
    }
    view.ports.push_back(std::move(port));
  }
  return view;
}

void WriteBody(sdk::JsonWriter& w, const ServiceView& view) {
  w.Field("type", view.type).Key("headless").Bool(view.headless);
  if (!view.external_name.empty()) w.Field("externalName", view.external_name);
  w.Key("ports").BeginArray();
  for (const Port& p : view.ports) {
    w.BeginObject().Field("name", p.name).Field("port", p.port).Field("protocol", p.protocol);
    if (p.target_port_name.empty()) {
      w.Field("targetPort", p.target_port);
    } else {
      w.Field("targetPort", p.target_port_name);
    }
    if (!p.app_protocol.empty()) w.Field("appProtocol", p.app_protocol);
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

Status ProcessService(const sdk::Object& obj, sdk::ProcessContext& ctx,
                      sdk::ProcessResult& result) {
  PORTICO_ASSIGN_OR_RETURN(const rapidjson::Document* doc, obj.doc());
  static const rapidjson::Value kEmpty(rapidjson::kObjectType);
  const rapidjson::Value* spec = json::Find(*doc, "spec");
  StatusOr<ServiceView> view = Validate(spec != nullptr && spec->IsObject() ? *spec : kEmpty);
  if (!view.ok()) return view.status().WithPrefix(obj.ref().Display());

  sdk::JsonWriter synced;
  synced.BeginObject().Key("metadata").BeginObject();
  synced.Field("name", obj.ref().name).Field("namespace", obj.ref().ns);
  synced.Field("generation", obj.generation()).EndObject();
  WriteBody(synced, *view);
  result.SetSynced(synced.EndObject().Take());

  sdk::JsonWriter exported;
  exported.BeginObject();
  WriteBody(exported, *view);
  result.SetExport(exported.EndObject().Take());

  sdk::JsonWriter status;
  status.BeginObject();
  sdk::WriteConditions(status, {{"Accepted", "True", "Accepted", ""}}, obj.generation());
  result.SetStatus(status.EndObject().Take());
  return OkStatus();
}

Status StageService(const sdk::Txn& txn, const std::vector<sdk::Change>& changes) {
  return sdk::StageEachView(
      txn, changes, [&](const sdk::Change& change, const rapidjson::Document& view) -> Status {
        sdk::JsonWriter w;
        w.BeginObject().Field("entry", "ports").Field("namespace", change.ref.ns);
        w.Field("service", change.ref.name);
        for (const char* key : {"type", "headless", "externalName", "ports"}) {
          if (const rapidjson::Value* v = json::Find(view, key)) {
            w.Key(std::string_view(key) == "type" ? "serviceType" : key).Value(*v);
          }
        }
        w.EndObject();
        return txn.Put(change.ref.Key(), PORTICO_FORMAT_BACKEND,
                       "ports/" + change.ref.ns + "/" + change.ref.name, w.Take());
      });
}

}  // namespace portico::plugins::service
