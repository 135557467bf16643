// routing_test_util.cc: see routing_test_util.h.
#include "core/runtime/routing/routing_test_util.h"

#include <gtest/gtest.h>

#include "core/common/sha256.h"
#include "portico/sdk/fields.h"

namespace portico::core::routing::testing {
namespace {

using ::portico::sdk::Quoted;
constexpr char kGatewayGroup[] = "gateway.networking.k8s.io";

std::string Strings(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i > 0 ? "," : "") + Quoted(items[i]);
  return out + "]";
}

std::string Joined(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i > 0 ? "," : "") + items[i];
  return out + "]";
}

}  // namespace

const PluginSet& RoutingPlugins() {
  static const PluginSet* plugins = [] {
    std::vector<std::filesystem::path> files;
    for (const char* name : {"namespace", "secret", "configmap", "referencegrant", "service",
                             "gateway", "httproute"}) {
      files.emplace_back(std::string(PORTICO_PLUGIN_OUTPUT_DIR) + "/libportico-" + name + ".so");
    }
    auto* set = new PluginSet(LoadPluginFiles(files));
    for (const std::string& line : set->RefusalLines()) ADD_FAILURE() << line;
    return set;  // lives for the process, like the libraries
  }();
  return *plugins;
}

SyncedChange Upsert(const StoreKey& key, std::string json) {
  std::string hash = Sha256Hex(json);
  return SyncedChange{PORTICO_CHANGE_UPSERT, key, std::move(hash),
                      std::make_shared<const std::string>(std::move(json))};
}

SyncedChange Delete(const StoreKey& key) {
  return SyncedChange{PORTICO_CHANGE_DELETE, key, "", nullptr};
}

StoreKey GatewayKey(std::string_view ns, std::string_view name) {
  return StoreKey{kGatewayGroup, "Gateway", std::string(ns), std::string(name)};
}
StoreKey RouteKey(std::string_view ns, std::string_view name) {
  return StoreKey{kGatewayGroup, "HTTPRoute", std::string(ns), std::string(name)};
}
StoreKey ServiceKey(std::string_view ns, std::string_view name) {
  return StoreKey{"", "Service", std::string(ns), std::string(name)};
}
StoreKey SliceKey(std::string_view ns, std::string_view name) {
  return StoreKey{"discovery.k8s.io", "EndpointSlice", std::string(ns), std::string(name)};
}

std::string Listener(std::string_view name, int port, std::string_view hostname,
                     std::string_view protocol) {
  std::string out = R"({"name":)" + Quoted(name) + R"(,"port":)" + std::to_string(port) +
                    R"(,"protocol":)" + Quoted(protocol);
  if (!hostname.empty()) out += R"(,"hostname":)" + Quoted(hostname);
  if (protocol == "HTTPS") {
    out += R"(,"tls":{"mode":"Terminate","certificates":[{"secretRef":{"namespace":"infra",)"
           R"("name":"cert"},"sha256":"9f86d0"}]})";
  }
  return out + R"(,"routeKinds":[{"group":"gateway.networking.k8s.io","kind":"HTTPRoute"}]})";
}

std::string GatewayView(std::string_view ns, std::string_view name,
                        const std::vector<std::string>& listeners,
                        const std::vector<std::string>& addresses) {
  std::vector<std::string> addrs;
  for (const std::string& a : addresses) {
    addrs.push_back(R"({"type":"IPAddress","value":)" + Quoted(a) + "}");
  }
  return R"({"metadata":{"name":)" + Quoted(name) + R"(,"namespace":)" + Quoted(ns) +
         R"(,"generation":1},"gatewayClassName":"portico","listeners":)" + Joined(listeners) +
         R"(,"addresses":)" + Joined(addrs) + "}";
}

std::string Parent(std::string_view gateway_ns, std::string_view gateway, std::string_view listener,
                   const std::vector<std::string>& hostnames) {
  return R"({"gateway":{"namespace":)" + Quoted(gateway_ns) + R"(,"name":)" + Quoted(gateway) +
         R"(},"listener":)" + Quoted(listener) + R"(,"hostnames":)" + Strings(hostnames) + "}";
}

std::string PathMatch(std::string_view type, std::string_view value, std::string_view more) {
  std::string out = R"({"path":{"type":)" + Quoted(type) + R"(,"value":)" + Quoted(value) + "}";
  if (!more.empty()) out += "," + std::string(more);
  return out + "}";
}

std::string Rule(int index, std::string_view matches, std::string_view backend_key,
                 std::string_view more) {
  std::string out = R"({"index":)" + std::to_string(index);
  if (!matches.empty()) out += R"(,"matches":)" + std::string(matches);
  out +=
      R"(,"backendRefs":[{"name":"b","port":80,"key":)" + Quoted(backend_key) + R"(,"weight":1}])";
  if (!more.empty()) out += "," + std::string(more);
  return out + "}";
}

std::string RouteView(std::string_view ns, std::string_view name,
                      const std::vector<std::string>& parents,
                      const std::vector<std::string>& rules, std::string_view created) {
  return R"({"metadata":{"name":)" + Quoted(name) + R"(,"namespace":)" + Quoted(ns) +
         R"(,"generation":1,"creationTimestamp":)" + Quoted(created) + R"(},"parents":)" +
         Joined(parents) + R"(,"rules":)" + Joined(rules) + "}";
}

std::string ServiceView(std::string_view ns, std::string_view name, std::string_view ports,
                        std::string_view type, std::string_view extra) {
  std::string out = R"({"metadata":{"name":)" + Quoted(name) + R"(,"namespace":)" + Quoted(ns) +
                    R"(,"generation":1},"type":)" + Quoted(type) + R"(,"headless":false,"ports":)" +
                    std::string(ports);
  if (!extra.empty()) out += "," + std::string(extra);
  return out + "}";
}

std::string SliceView(std::string_view ns, std::string_view name, std::string_view service,
                      std::string_view ports, std::string_view endpoints,
                      std::string_view address_type) {
  return R"({"metadata":{"name":)" + Quoted(name) + R"(,"namespace":)" + Quoted(ns) +
         R"(,"generation":1},"serviceName":)" + Quoted(service) + R"(,"addressType":)" +
         Quoted(address_type) + R"(,"ports":)" + std::string(ports) + R"(,"endpoints":)" +
         std::string(endpoints) + "}";
}

std::string Describe(const MatchResult& result) {
  switch (result.outcome) {
    case MatchOutcome::kNoListener:
      return "no-listener";
    case MatchOutcome::kNoRoute:
      return "no-route";
    case MatchOutcome::kMatched:
      break;
  }
  return result.action->route_key + " " + result.action->rule_id;
}

MatchResult MatchRequest(const RouteTable& table, std::string_view address, uint16_t port,
                         const Request& request) {
  auto headers = HeaderLambda([&](std::string_view name) -> std::optional<std::string_view> {
    auto it = request.headers.find(std::string(name));
    if (it == request.headers.end()) return std::nullopt;
    return std::string_view(it->second);
  });
  RequestView view{request.host, request.path, request.query, request.method, &headers};
  return table.Match(address, port, view);
}

World::World() : runtime_(RoutingPlugins(), nullptr) {}

void World::Apply(std::vector<SyncedChange> changes) {
  ApplyResult r = runtime_.Apply(std::move(changes), false, ++version_);
  for (const SyncNack& n : r.nacks) ADD_FAILURE() << n.key.ToString() << ": " << n.reason;
  Routes();
  Backends();
}

std::shared_ptr<const RouteTable> World::Routes() {
  routes_ = RouteTable::Build(*runtime_.Current(), routes_.get());
  return routes_;
}

std::shared_ptr<const BackendTable> World::Backends() {
  backends_ = BackendTable::Build(*runtime_.Current(), backends_.get());
  return backends_;
}

std::string World::Route(std::string_view address, uint16_t port, const Request& request) {
  if (routes_ == nullptr) Routes();
  return Describe(MatchRequest(*routes_, address, port, request));
}

std::string World::Backend(std::string_view address, uint16_t port, const Request& request) {
  if (routes_ == nullptr) Routes();
  MatchResult result = MatchRequest(*routes_, address, port, request);
  if (result.outcome != MatchOutcome::kMatched) return Describe(result);
  if (result.action->backends.empty()) return "no-backends";
  return result.action->backends.front().key;
}

}  // namespace portico::core::routing::testing
