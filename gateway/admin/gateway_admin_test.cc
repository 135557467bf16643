// gateway_admin_test.cc: the gateway admin API's routes and JSON shapes over a real runtime
// (no plugins: objects are only held) and a scripted sync status.
#include "gateway/admin/gateway_admin.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/common/sha256.h"
#include "portico/sdk/json.h"

namespace portico::gateway {
namespace {

using core::admin::AdminRequest;
using core::admin::AdminResponse;
using ::testing::HasSubstr;

core::SyncedChange Upsert(core::StoreKey key, std::string json) {
  std::string hash = core::Sha256Hex(json);
  return core::SyncedChange{PORTICO_CHANGE_UPSERT, std::move(key), std::move(hash),
                            std::make_shared<const std::string>(std::move(json))};
}

class GatewayAdminTest : public ::testing::Test {
 protected:
  GatewayAdminTest() : runtime_(plugins_, nullptr) {
    GatewayAdminInfo info;
    info.name = "edge-1";
    info.version = "1.2.3";
    info.gateways = {"infra/web"};
    info.gateway_class = "portico";
    info.addresses = {"192.0.2.1"};
    info.snapshot_path = "/var/lib/portico/snap";
    info.started_unix_ms = 1'700'000'000'000;
    status_.client_id = "abc";
    status_.controller = "127.0.0.1:5810";
    router_ = std::make_unique<GatewayAdminRouter>(
        info, &plugins_, &runtime_, [this] { return status_; },
        [] { return int64_t{1'700'000'061'000}; }, [this] { return plane_; });
  }

  AdminResponse Get(std::string path, std::map<std::string, std::string, std::less<>> query = {}) {
    AdminRequest request;
    request.method = "GET";
    request.path = std::move(path);
    request.query = std::move(query);
    return router_->Handle(request);
  }

  rapidjson::Document Json(const AdminResponse& response) {
    auto doc = json::Parse(response.body, "response");
    EXPECT_TRUE(doc.ok()) << doc.status() << "\n" << response.body;
    return doc.ok() ? std::move(doc).value() : rapidjson::Document();
  }

  core::PluginSet plugins_;
  core::GatewayRuntime runtime_;
  SyncStatus status_;
  server::DataPlaneStats plane_;
  std::unique_ptr<GatewayAdminRouter> router_;
};

TEST_F(GatewayAdminTest, DataPlaneCountersAreShownAndExported) {
  plane_.generation = 7;
  plane_.workers = 2;
  plane_.connections_accepted = 11;
  plane_.connections_open = 3;
  plane_.requests = 40;
  plane_.responses = {0, 0, 30, 1, 8, 1};
  plane_.upstream_connects = 5;
  plane_.upstream_reuses = 25;
  plane_.upstream_open = 4;
  rapidjson::Document doc = Json(Get("/api/v1/dataplane"));
  EXPECT_EQ(doc["generation"].GetUint64(), 7u);
  EXPECT_EQ(doc["workers"].GetUint64(), 2u);
  EXPECT_EQ(doc["connectionsOpen"].GetUint64(), 3u);
  EXPECT_EQ(doc["requests"].GetUint64(), 40u);
  EXPECT_EQ(doc["responses"]["2xx"].GetUint64(), 30u);
  EXPECT_EQ(doc["responses"]["4xx"].GetUint64(), 8u);
  EXPECT_EQ(doc["upstreamReuses"].GetUint64(), 25u);
  std::string metrics = Get("/metrics").body;
  EXPECT_THAT(metrics, HasSubstr("portico_gateway_requests_total 40\n"));
  EXPECT_THAT(metrics, HasSubstr("# TYPE portico_gateway_responses_total counter\n"));
  EXPECT_THAT(metrics, HasSubstr("portico_gateway_responses_total{code=\"5xx\"} 1\n"));
  EXPECT_THAT(metrics, HasSubstr("portico_gateway_connections_open 3\n"));
  EXPECT_THAT(metrics, HasSubstr("portico_gateway_upstream_connects_total 5\n"));
}

TEST_F(GatewayAdminTest, HealthAndReadinessSayWhichSource) {
  EXPECT_EQ(Get("/healthz").status, 200);
  AdminResponse not_ready = Get("/readyz");
  EXPECT_EQ(not_ready.status, 503);
  EXPECT_THAT(not_ready.body, HasSubstr("127.0.0.1:5810"));
  status_.ready = true;
  status_.from_snapshot = true;
  EXPECT_EQ(Get("/readyz").body, R"({"ready":true,"source":"snapshot file"})"
                                 "\n");
  status_.from_snapshot = false;
  EXPECT_EQ(Get("/readyz").body, R"({"ready":true,"source":"controller"})"
                                 "\n");
}

TEST_F(GatewayAdminTest, InfoShowsIdentityAndSyncState) {
  status_.connected = true;
  status_.ready = true;
  status_.server_id = "srv-a";
  status_.applied_version = 7;
  status_.server_head = 10;
  status_.reconnects = 2;
  rapidjson::Document info = Json(Get("/api/v1/info"));
  EXPECT_EQ(json::GetString(info, "name"), "edge-1");
  EXPECT_EQ(json::GetString(info, "clientId"), "abc");
  EXPECT_EQ(json::GetString(info, "controller"), "127.0.0.1:5810");
  EXPECT_TRUE(info["connected"].GetBool());
  EXPECT_EQ(json::GetString(info, "serverId"), "srv-a");
  EXPECT_EQ(info["appliedVersion"].GetUint64(), 7u);
  EXPECT_EQ(info["serverHead"].GetUint64(), 10u);
  EXPECT_EQ(info["lag"].GetUint64(), 3u);
  EXPECT_FALSE(info["fromSnapshot"].GetBool());
  EXPECT_EQ(json::GetString(info, "readySource"), "controller");
  EXPECT_EQ(info["gateways"][0].GetString(), std::string("infra/web"));
  EXPECT_EQ(json::GetString(info, "gatewayClass"), "portico");
  EXPECT_EQ(info["uptimeSeconds"].GetInt64(), 61);
  EXPECT_EQ(json::GetString(info, "started"), "2023-11-14T22:13:20Z");
  EXPECT_EQ(info["reconnects"].GetUint64(), 2u);
}

TEST_F(GatewayAdminTest, SyncedListsKeysAndHashesPerKind) {
  core::StoreKey route{"gateway.networking.k8s.io", "HTTPRoute", "default", "r1"};
  core::StoreKey klass{"gateway.networking.k8s.io", "GatewayClass", "", "portico"};
  core::StoreKey service{"", "Service", "infra", "web"};
  runtime_.Apply({Upsert(route, "{}"), Upsert(klass, "{\"a\":1}"), Upsert(service, "{}")}, true, 3);
  status_.applied_version = 3;
  status_.server_id = "srv-a";
  rapidjson::Document all = Json(Get("/api/v1/synced"));
  EXPECT_EQ(all["total"].GetUint64(), 3u);
  EXPECT_EQ(all["version"].GetUint64(), 3u);
  EXPECT_EQ(json::GetString(all, "serverId"), "srv-a");
  const auto& kinds = all["kinds"];
  EXPECT_EQ(kinds["HTTPRoute.gateway.networking.k8s.io"]["default/r1"].GetString(),
            core::Sha256Hex("{}"));
  EXPECT_EQ(kinds["GatewayClass.gateway.networking.k8s.io"]["portico"].GetString(),
            core::Sha256Hex("{\"a\":1}"));
  EXPECT_TRUE(kinds["Service"].HasMember("infra/web"));

  // ?kind=: kinds no loaded plugin provides match exactly ("Kind.group" or "Kind").
  rapidjson::Document services = Json(Get("/api/v1/synced", {{"kind", "Service"}}));
  EXPECT_EQ(services["total"].GetUint64(), 1u);
  EXPECT_TRUE(services["kinds"].HasMember("Service"));
  rapidjson::Document routes =
      Json(Get("/api/v1/synced", {{"kind", "HTTPRoute.gateway.networking.k8s.io"}}));
  EXPECT_EQ(routes["total"].GetUint64(), 1u);
  EXPECT_EQ(Get("/api/v1/synced", {{"kind", "Nope"}}).status, 404);
}

TEST_F(GatewayAdminTest, RuntimeStatsHistoryPluginsAndMetrics) {
  core::StoreKey service{"", "Service", "infra", "web"};
  runtime_.Apply({Upsert(service, "{}")}, true, 4);
  status_.applied_version = 4;
  status_.server_head = 6;
  status_.connected = true;
  status_.nacks_sent = 2;
  rapidjson::Document stats = Json(Get("/api/v1/runtime"));
  EXPECT_EQ(stats["syncedObjects"].GetUint64(), 1u);
  EXPECT_EQ(stats["syncedByKind"]["Service"].GetUint64(), 1u);
  EXPECT_EQ(stats["version"].GetUint64(), 4u);
  EXPECT_TRUE(stats.HasMember("entriesByFormat"));
  rapidjson::Document history = Json(Get("/api/v1/runtime/history"));
  ASSERT_EQ(history["items"].Size(), 1u);
  EXPECT_TRUE(history["items"][0]["replaceAll"].GetBool());
  EXPECT_EQ(history["items"][0]["version"].GetUint64(), 4u);
  EXPECT_EQ(Get("/api/v1/plugins").body, R"({"items":[],"filterTypes":[]})"
                                         "\n");

  AdminResponse metrics = Get("/metrics");
  EXPECT_EQ(metrics.content_type, kGatewayMetricsContentType);
  EXPECT_THAT(metrics.body, HasSubstr("\nportico_gateway_sync_connected 1\n"));
  EXPECT_THAT(metrics.body, HasSubstr("\nportico_gateway_sync_applied_version 4\n"));
  EXPECT_THAT(metrics.body, HasSubstr("\nportico_gateway_sync_lag 2\n"));
  EXPECT_THAT(metrics.body, HasSubstr("\nportico_gateway_sync_nacks_total 2\n"));
  EXPECT_THAT(metrics.body, HasSubstr("\nportico_gateway_runtime_commits_total 1\n"));
  EXPECT_THAT(metrics.body,
              HasSubstr("portico_gateway_runtime_synced_objects_by_kind{kind=\"Service\"} 1\n"));
}

TEST_F(GatewayAdminTest, MethodsAndUnknownPaths) {
  AdminRequest post;
  post.method = "POST";
  post.path = "/api/v1/info";
  AdminResponse response = router_->Handle(post);
  EXPECT_EQ(response.status, 405);
  ASSERT_EQ(response.headers.size(), 1u);
  EXPECT_EQ(response.headers[0].second, "GET");
  EXPECT_EQ(Get("/nope").status, 404);
  EXPECT_EQ(Get("/api/v1/info/").status, 200);
}

}  // namespace
}  // namespace portico::gateway
