// gateway_admin.h: GatewayAdminRouter, the gateway's admin API (DESIGN.md §7) served by
// core/admin's AdminServer. JSON keys are camelCase like the controller's admin API.
//
//   GET /healthz                 200 {"status":"ok"}
//   GET /readyz                  200 {"ready":true,"source":"controller"|"snapshot file"} once a
//                                snapshot (from the controller or the snapshot file) is applied;
//                                503 {"error":...} before
//   GET /api/v1/info             name, clientId, controller, connected, serverId, serverIdSeen,
//                                appliedVersion, serverHead, lag, ready, readySource,
//                                fromSnapshot, gateways, gatewayClass, addresses, snapshotPath,
//                                version, started, uptimeSeconds, connects, reconnects,
//                                disconnects, snapshotsApplied, batchesApplied, nacksSent,
//                                rejections, droppedPartials, lastError
//   GET /api/v1/plugins          {"items":[...]} in core/plugin/plugin_json.h's format (what
//                                `portico-ctl list-plugins` parses), "filterTypes":
//                                [{"name","phase","order","plugin"}]
//   GET /api/v1/synced[?kind=K]  {"version","serverId","fromSnapshot","total","kinds":
//                                {"Kind.group": {"ns/name": "<hash>", ...}}} (cluster-scoped
//                                objects: "name"); K resolved like kubectl (plural, short name,
//                                Kind, Kind.group); 404 for an unknown kind
//   GET /api/v1/runtime          the runtime's store statistics (core::RuntimeStats)
//   GET /api/v1/runtime/history  {"items":[CommitRecord...]} oldest first
//   GET /api/v1/dataplane        traffic counters (server::DataPlaneStats): generation, workers,
//                                connectionsAccepted, connectionsOpen, requests, responses
//                                {"1xx".."5xx"}, upstreamConnects, upstreamReuses, upstreamOpen;
//                                404 when the router has no data plane
//   GET /metrics                 Prometheus text (portico_gateway_*)
// Other methods: 405 with Allow; other paths: 404.
//
// Thread-safety: Handle may run on several admin threads at once; it only reads (the runtime's
// and the sync client's accessors are thread-safe). Ownership: borrows plugins and runtime.
#ifndef PORTICO_GATEWAY_ADMIN_GATEWAY_ADMIN_H_
#define PORTICO_GATEWAY_ADMIN_GATEWAY_ADMIN_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/admin/admin_http.h"
#include "core/plugin/plugin_loader.h"
#include "core/runtime/gateway_runtime.h"
#include "gateway/server/data_plane_stats.h"
#include "gateway/sync/sync_client.h"

namespace portico::gateway {

// GatewayAdminInfo: the static facts /api/v1/info shows.
struct GatewayAdminInfo {
  std::string name;
  std::string version;                // of the binary
  std::vector<std::string> gateways;  // "ns/name"
  std::string gateway_class;
  std::vector<std::string> addresses;
  std::string snapshot_path;
  int64_t started_unix_ms = 0;
};

class GatewayAdminRouter {
 public:
  // `sync_status` reports the sync client's state (SyncClient::GetStatus). `now_unix_ms` is the
  // wall clock; empty: the system clock. `plane_stats` reports the data plane's counters
  // (DataPlane::Stats); empty: no data plane section.
  GatewayAdminRouter(GatewayAdminInfo info, const core::PluginSet* plugins,
                     const core::GatewayRuntime* runtime, std::function<SyncStatus()> sync_status,
                     std::function<int64_t()> now_unix_ms = {},
                     std::function<server::DataPlaneStats()> plane_stats = {});

  core::admin::AdminResponse Handle(const core::admin::AdminRequest& request) const;

 private:
  core::admin::AdminResponse Synced(const core::admin::AdminRequest& request) const;

  GatewayAdminInfo info_;
  const core::PluginSet* plugins_;
  const core::GatewayRuntime* runtime_;
  std::function<SyncStatus()> sync_status_;
  std::function<int64_t()> now_unix_ms_;
  std::function<server::DataPlaneStats()> plane_stats_;
};

// RenderGatewayMetrics renders the Prometheus text of /metrics (`plane`: null, no traffic
// counters).
std::string RenderGatewayMetrics(const SyncStatus& sync, const core::RuntimeStats& stats,
                                 const server::DataPlaneStats* plane = nullptr);

// kGatewayMetricsContentType is the Content-Type of /metrics.
inline constexpr char kGatewayMetricsContentType[] = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace portico::gateway

#endif  // PORTICO_GATEWAY_ADMIN_GATEWAY_ADMIN_H_
