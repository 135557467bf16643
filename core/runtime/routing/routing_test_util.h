// routing_test_util.h: helpers for the routing tests: the real Gateway, HTTPRoute and Service
// plugins loaded through the real loader, synced views in the shapes their processors write, and
// a World that applies them through GatewayRuntime and builds route and backend tables from the
// committed snapshots (each table built with the previous one, as the data plane does).
//
// Threading: test thread only, except RoutingPlugins() (loaded once, then read-only).
#ifndef PORTICO_CORE_RUNTIME_ROUTING_ROUTING_TEST_UTIL_H_
#define PORTICO_CORE_RUNTIME_ROUTING_ROUTING_TEST_UTIL_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/plugin/plugin_loader.h"
#include "core/runtime/gateway_runtime.h"
#include "core/runtime/routing/backend_table.h"
#include "core/runtime/routing/route_table.h"

namespace portico::core::routing::testing {

// RoutingPlugins: gateway, httproute, service and what they read, loaded once per process.
const PluginSet& RoutingPlugins();

SyncedChange Upsert(const StoreKey& key, std::string json);
SyncedChange Delete(const StoreKey& key);

StoreKey GatewayKey(std::string_view ns, std::string_view name);
StoreKey RouteKey(std::string_view ns, std::string_view name);
StoreKey ServiceKey(std::string_view ns, std::string_view name);
StoreKey SliceKey(std::string_view ns, std::string_view name);

// Listener is one listener of a Gateway view (routeKinds: HTTPRoute).
std::string Listener(std::string_view name, int port, std::string_view hostname = "",
                     std::string_view protocol = "HTTP");
// GatewayView is a Gateway's synced view; `addresses` are IPAddress values.
std::string GatewayView(std::string_view ns, std::string_view name,
                        const std::vector<std::string>& listeners,
                        const std::vector<std::string>& addresses = {});
// Parent is one resolved parent of an HTTPRoute view (effective hostnames).
std::string Parent(std::string_view gateway_ns, std::string_view gateway, std::string_view listener,
                   const std::vector<std::string>& hostnames = {});
// PathMatch is an HTTPRouteMatch with only a path ("PathPrefix", "Exact", "RegularExpression");
// `more` is appended inside the object (e.g. R"("method":"GET")").
std::string PathMatch(std::string_view type, std::string_view value, std::string_view more = "");
// Rule is a rule of an HTTPRoute view: `matches` (a JSON array; "" = none), one backend.
std::string Rule(int index, std::string_view matches, std::string_view backend_key,
                 std::string_view more = "");
// RouteView is an HTTPRoute's synced view.
std::string RouteView(std::string_view ns, std::string_view name,
                      const std::vector<std::string>& parents,
                      const std::vector<std::string>& rules,
                      std::string_view created = "2023-11-14T22:13:20Z");
// ServiceView / SliceView: a Service and an EndpointSlice of it. `ports` and `endpoints` are
// JSON arrays.
std::string ServiceView(std::string_view ns, std::string_view name, std::string_view ports,
                        std::string_view type = "ClusterIP", std::string_view extra = "");
std::string SliceView(std::string_view ns, std::string_view name, std::string_view service,
                      std::string_view ports, std::string_view endpoints,
                      std::string_view address_type = "IPv4");

// Request is a request for World::Route.
struct Request {
  std::string host;
  std::string path;
  std::string method = "GET";
  std::map<std::string, std::string> headers;  // names in lower case
  std::string query;
};

// Describe renders a match: "<route ns>/<name> <rule id>", "no-listener" or "no-route".
std::string Describe(const MatchResult& result);

class World {
 public:
  World();
  // Apply runs one transaction (every change must apply: no nack), then rebuilds both tables.
  void Apply(std::vector<SyncedChange> changes);
  // Routes / Backends build tables from the current snapshot with the previous table (the same
  // table again when nothing changed).
  std::shared_ptr<const RouteTable> Routes();
  std::shared_ptr<const BackendTable> Backends();
  // Route matches `request` on the current route table (Describe); Backend names the first
  // backend key of the matched rule instead ("no-route", "no-listener" otherwise).
  std::string Route(std::string_view address, uint16_t port, const Request& request);
  std::string Backend(std::string_view address, uint16_t port, const Request& request);
  GatewayRuntime& runtime() { return runtime_; }

 private:
  GatewayRuntime runtime_;
  uint64_t version_ = 0;
  std::shared_ptr<const RouteTable> routes_;
  std::shared_ptr<const BackendTable> backends_;
};

// MatchRequest matches `request` on `table`.
MatchResult MatchRequest(const RouteTable& table, std::string_view address, uint16_t port,
                         const Request& request);

}  // namespace portico::core::routing::testing

#endif  // PORTICO_CORE_RUNTIME_ROUTING_ROUTING_TEST_UTIL_H_
