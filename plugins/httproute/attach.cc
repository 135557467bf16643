// attach.cc: see attach.h.
#include "attach.h"

#include "portico/sdk/hostname.h"
#include "portico/sdk/label_selector.h"
#include "validate.h"

namespace portico::plugins::httproute {
namespace {

constexpr char kNameLabel[] = "kubernetes.io/metadata.name";

// Listener is one listener as the Gateway exports it.
struct Listener {
  std::string name;
  int64_t port = 0;
  std::string hostname;
  std::string from;
  std::string selector;
  bool http_route_allowed = false;
};

std::vector<Listener> ParseListeners(const rapidjson::Value& gateway) {
  std::vector<Listener> out;
  const rapidjson::Value* listeners = json::Find(gateway, "listeners");
  if (listeners == nullptr || !listeners->IsArray()) return out;
  for (const auto& l : listeners->GetArray()) {
    Listener listener;
    listener.name = json::GetString(l, "name");
    listener.port = json::GetInt(l, "port").value_or(0);
    listener.hostname = json::GetString(l, "hostname");
    listener.from = json::GetString(l, "allowedRoutes.namespaces.from", "Same");
    listener.selector = json::GetString(l, "allowedRoutes.namespaces.selector");
    if (const rapidjson::Value* kinds = json::FindPath(l, "allowedRoutes.kinds");
        kinds != nullptr && kinds->IsArray()) {
      for (const auto& k : kinds->GetArray()) {
        listener.http_route_allowed =
            listener.http_route_allowed ||
            (json::GetString(k, "group") == kGroup && json::GetString(k, "kind") == "HTTPRoute");
      }
    }
    out.push_back(std::move(listener));
  }
  return out;
}

bool NamespaceAllowed(const Listener& l, const std::string& gateway_ns, const RouteScope& route) {
  if (l.from == "All") return true;
  if (l.from == "Same") return route.ns() == gateway_ns;
  if (l.from == "Selector") {
    StatusOr<sdk::LabelSelector> selector = sdk::LabelSelector::Parse(l.selector);
    return selector.ok() && selector->Matches(route.NamespaceLabels());
  }
  return false;  // an unknown policy admits nobody
}

sdk::Condition NotAccepted(const std::string& reason, const std::string& message) {
  return {"Accepted", "False", reason, message};
}

}  // namespace

const std::map<std::string, std::string>& RouteScope::NamespaceLabels() const {
  if (labels_) return *labels_;
  labels_.emplace();
  if (std::optional<std::string> exported = ctx_.GetExport({"", "Namespace", "", ns_})) {
    auto doc = json::Parse(*exported, "Namespace " + ns_);
    const rapidjson::Value* labels = doc.ok() ? json::Find(*doc, "labels") : nullptr;
    if (labels != nullptr && labels->IsObject()) {
      for (const auto& m : labels->GetObject()) {
        if (m.value.IsString()) (*labels_)[m.name.GetString()] = m.value.GetString();
      }
    }
  }
  (*labels_)[kNameLabel] = ns_;
  return *labels_;
}

Attachment Attach(const rapidjson::Value& parent_ref, const RouteScope& route) {
  Attachment out;
  if (json::GetString(parent_ref, "group") != kGroup ||
      json::GetString(parent_ref, "kind") != "Gateway") {
    return out;  // another kind of parent (a mesh Service, a ListenerSet): not ours
  }
  out.gateway = {kGroup, "Gateway", json::GetString(parent_ref, "namespace"),
                 json::GetString(parent_ref, "name")};
  std::optional<std::string> exported = route.ctx().GetExport(out.gateway);
  if (!exported) return out;  // a parent nobody can resolve is not listed
  auto gateway = json::Parse(*exported, out.gateway.Display());
  const rapidjson::Value* ours = gateway.ok() ? json::Find(*gateway, "ours") : nullptr;
  if (ours == nullptr || !ours->IsBool() || !ours->GetBool()) return out;
  out.judged = true;

  const std::string who = out.gateway.Display();
  std::string section = json::GetString(parent_ref, "sectionName");
  std::optional<int64_t> port = json::GetInt(parent_ref, "port");
  std::vector<Listener> selected;
  for (Listener& l : ParseListeners(*gateway)) {
    if (!section.empty() && l.name != section) continue;
    if (port && l.port != *port) continue;
    selected.push_back(std::move(l));
  }
  if (selected.empty()) {
    std::string wanted = section.empty() ? "listener" : "listener named \"" + section + "\"";
    if (port) wanted += " on port " + std::to_string(*port);
    out.accepted = NotAccepted("NoMatchingParent", who + " has no " + wanted);
    return out;
  }
  std::vector<Listener> allowed;
  for (Listener& l : selected) {
    if (l.http_route_allowed && NamespaceAllowed(l, out.gateway.ns, route)) {
      allowed.push_back(std::move(l));
    }
  }
  if (allowed.empty()) {
    out.accepted = NotAccepted("NotAllowedByListeners",
                               "no listener of " + who + " selected by this parentRef allows " +
                                   "HTTPRoutes from namespace " + route.ns());
    return out;
  }
  for (const Listener& l : allowed) {
    sdk::hostname::Intersection i = sdk::hostname::IntersectAll(l.hostname, route.hostnames());
    if (i.matches) out.listeners.push_back({l.name, std::move(i.hostnames)});
  }
  if (out.listeners.empty()) {
    out.accepted = NotAccepted(
        "NoMatchingListenerHostname",
        "no listener of " + who + " allowing this route has a hostname matching the route's");
    return out;
  }
  out.accepted = {"Accepted", "True", "Accepted", ""};
  return out;
}

}  // namespace portico::plugins::httproute
