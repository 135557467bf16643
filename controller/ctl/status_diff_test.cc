// status_diff_test.cc: portico-ctl status and diff. The pure parts run on canned answers shaped
// like the admin APIs'; the commands run against the real admin routers: the controller's on a
// FakeBackend and the gateway's on a real GatewayRuntime, each served by a real AdminServer on a
// loopback port.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "controller/admin/admin_router.h"
#include "controller/admin/fake_backend.h"
#include "controller/ctl/diff_command.h"
#include "controller/ctl/status_command.h"
#include "core/admin/admin_server.h"
#include "core/common/sha256.h"
#include "gateway/admin/gateway_admin.h"
#include "portico/sdk/json.h"

namespace portico::ctl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kGw[] = "gateway.networking.k8s.io";

rapidjson::Document ParseJson(std::string_view text) {
  StatusOr<rapidjson::Document> doc = json::Parse(text, "test JSON");
  EXPECT_TRUE(doc.ok()) << doc.status();
  return doc.ok() ? std::move(doc).value() : rapidjson::Document();
}

std::vector<std::string> Lines(const std::vector<DiffEntry>& entries) {
  std::vector<std::string> out;
  for (const DiffEntry& e : entries) out.push_back(FormatDiffEntry(e));
  return out;
}

// The controller's answer (GET /api/v1/gateways/NAME/synced) and the gateway's (GET
// /api/v1/synced), as the renderers write them.
constexpr char kControllerAnswer[] = R"({"name":"edge-1","total":4,
  "objects":[{"key":"gateway.networking.k8s.io/HTTPRoute/default/web","hash":"aaaaaaaaaaaaaaaa01"}],
  "kinds":{
    "Gateway.gateway.networking.k8s.io":{"infra/web":"1111111111112222"},
    "HTTPRoute.gateway.networking.k8s.io":{"default/api":"bbbbbbbbbbbb01","default/web":"aaaaaaaaaaaa01"},
    "Service":{"default/svc":"cccccccccccc01"}}})";
constexpr char kGatewayAnswer[] = R"({"version":12,"serverId":"00000000000000aa",
  "fromSnapshot":false,"total":4,
  "kinds":{
    "GatewayClass.gateway.networking.k8s.io":{"portico":"dddddddddddd01"},
    "HTTPRoute.gateway.networking.k8s.io":{"default/web":"aaaaaaaaaaaa01","default/zeta":"eeee"},
    "Service":{"default/svc":"cccccccccccc02ffff"}}})";

TEST(DiffSyncedTest, MarksMissingExtraAndChangedObjectsSorted) {
  rapidjson::Document c = ParseJson(kControllerAnswer);
  rapidjson::Document g = ParseJson(kGatewayAnswer);
  StatusOr<SyncedKinds> controller = ParseSyncedKinds(c, "controller");
  StatusOr<SyncedKinds> gateway = ParseSyncedKinds(g, "gateway");
  ASSERT_TRUE(controller.ok()) << controller.status();
  ASSERT_TRUE(gateway.ok()) << gateway.status();
  EXPECT_EQ((*controller)["Service"]["default/svc"], "cccccccccccc01");
  EXPECT_THAT(Lines(DiffSynced(*controller, *gateway)),
              ElementsAre("+ Gateway.gateway.networking.k8s.io infra/web",
                          "- GatewayClass.gateway.networking.k8s.io portico",
                          "+ HTTPRoute.gateway.networking.k8s.io default/api",
                          "- HTTPRoute.gateway.networking.k8s.io default/zeta",
                          "~ Service default/svc controller=cccccccccccc gateway=cccccccccccc"));
  EXPECT_TRUE(DiffSynced(*controller, *controller).empty());
  EXPECT_TRUE(DiffSynced({}, {}).empty());
  // An empty kind on one side is no difference.
  SyncedKinds with_empty = *controller;
  with_empty["Secret"];
  EXPECT_TRUE(DiffSynced(with_empty, *controller).empty());
}

TEST(DiffSyncedTest, RefusesAnswersOfAnotherShape) {
  rapidjson::Document no_kinds = ParseJson(R"({"items":[]})");
  StatusOr<SyncedKinds> a = ParseSyncedKinds(no_kinds, "gateway http://x:1");
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.status().message(), HasSubstr("gateway http://x:1"));
  rapidjson::Document bad_kind = ParseJson(R"({"kinds":{"Service":[]}})");
  EXPECT_FALSE(ParseSyncedKinds(bad_kind, "c").ok());
  rapidjson::Document bad_hash = ParseJson(R"({"kinds":{"Service":{"a/b":3}}})");
  StatusOr<SyncedKinds> c = ParseSyncedKinds(bad_hash, "c");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("kinds[\"Service\"][\"a/b\"]"));
}

TEST(StatusRenderTest, ErrorRowsListEveryViolation) {
  rapidjson::Document errors = ParseJson(R"j([
    {"file":"bad.yaml","line":3,"object":"","message":"bad.yaml:3:1: bad indent"},
    {"file":"web.yaml","line":2,"object":"HTTPRoute default/web","message":"...",
     "refusedGeneration":5,"servingGeneration":4,
     "violations":[{"field":"spec.a","line":9,"message":"must be a string (got 1)"},
                   {"field":"","message":"no good"}]}])j");
  std::ostringstream out;
  RenderErrorTable(errors, out);
  EXPECT_EQ(out.str(),
            "\n"
            "WHERE        OBJECT                  PROBLEM\n"
            "bad.yaml:3   -                       bad.yaml:3:1: bad indent\n"
            "web.yaml:2   HTTPRoute default/web   generation 5 refused; generation 4 serves\n"
            "web.yaml:9   HTTPRoute default/web   spec.a: must be a string (got 1)\n"
            "web.yaml:2   HTTPRoute default/web   no good\n");
  std::ostringstream none;
  RenderErrorTable(ParseJson("[]"), none);
  EXPECT_EQ(none.str(), "");
}

TEST(StatusRenderTest, SummaryAndGatewayRows) {
  rapidjson::Document info = ParseJson(R"({"serverId":"0123456789abcdef","version":"1.0.0",
    "configSource":"file:/etc/portico","ready":true,"head":57,"objectsTotal":12,
    "configErrors":2,"uptimeSeconds":3700,"connectedGateways":2})");
  rapidjson::Document gateways = ParseJson(R"([
    {"name":"edge-1","clientId":"c1","gateways":["infra/web","infra/api"],"gatewayClass":"",
     "addresses":["192.0.2.1"],"ackedVersion":57,"head":57,"lag":0,
     "connected":"2100-01-01T00:00:00Z","nacks":[]},
    {"name":"","clientId":"c2","gateways":[],"gatewayClass":"portico","addresses":[],
     "ackedVersion":50,"head":57,"lag":7,"connected":"2099-12-31T23:55:00Z",
     "nacks":[{"key":"k","hash":"h","reason":"r"}]}])");
  std::ostringstream out;
  RenderStatusTable("http://127.0.0.1:5800", info, gateways, 4102444800 + 65, out);
  EXPECT_EQ(out.str(),
            "Controller: http://127.0.0.1:5800\n"
            "Server ID:  0123456789abcdef\n"
            "Version:    1.0.0\n"
            "Config:     file:/etc/portico\n"
            "Ready:      true\n"
            "Head:       57\n"
            "Objects:    12\n"
            "Errors:     2\n"
            "Uptime:     61m\n"
            "Gateways:   2 connected\n"
            "\n"
            "NAME     SERVES                ADDRESSES   ACKED   HEAD   LAG   NACKS   "
            "CONNECTED-SINCE\n"
            "edge-1   infra/web,infra/api   192.0.2.1   57      57     0     0       "
            "2100-01-01T00:00:00Z (65s)\n"
            "c2       class=portico         <none>      50      57     7     1       "
            "2099-12-31T23:55:00Z (6m5s)\n");

  std::ostringstream none;
  rapidjson::Document empty = ParseJson("[]");
  RenderStatusTable("s", info, empty, 0, none);
  EXPECT_THAT(none.str(), HasSubstr("Gateways:   0 connected\n"));
  EXPECT_THAT(none.str(), Not(HasSubstr("NAME")));

  std::ostringstream js;
  RenderStatusJson(info, gateways, js);
  rapidjson::Document both = ParseJson(js.str());
  EXPECT_EQ(json::GetString(both, "controller.serverId"), "0123456789abcdef");
  ASSERT_TRUE(both["gateways"].IsArray());
  EXPECT_EQ(both["gateways"].Size(), 2u);
}

TEST(StatusRenderTest, HighAvailabilityRows) {
  rapidjson::Document info = ParseJson(R"({"serverId":"s","ha":{"enabled":true,
    "controllerId":"ctl-b","role":"follower","leader":{"id":"ctl-a","leaseId":"694d7d",
    "leaseTtlSeconds":5,"epoch":7,"since":""},"electionError":"",
    "etcd":{"revision":1234,"connected":true,"endpoint":"127.0.0.1:2379"}}})");
  rapidjson::Document none = ParseJson("[]");
  std::ostringstream out;
  RenderStatusTable("s", info, none, 0, out);
  EXPECT_THAT(out.str(), HasSubstr("Gateways:   0 connected\n"
                                   "HA:         ctl-b (follower)\n"
                                   "Leader:     ctl-a (lease 694d7d, TTL 5 s, epoch 7)\n"
                                   "Revision:   1234 (etcd, watching 127.0.0.1:2379)\n"));
  rapidjson::Document lost = ParseJson(R"({"ha":{"enabled":true,"controllerId":"ctl-b",
    "role":"unknown","leader":{"id":""},"electionError":"cannot grant a lease: timeout",
    "etcd":{"revision":9,"connected":false,"endpoint":"127.0.0.1:2379"}}})");
  std::ostringstream no_leader;
  RenderStatusTable("s", lost, none, 0, no_leader);
  EXPECT_THAT(no_leader.str(), HasSubstr("Leader:     none known: cannot grant a lease: timeout\n"
                                         "Revision:   9 (etcd, not connected to 127.0.0.1:2379)"));
  // A controller without etcd shows none of it.
  rapidjson::Document single = ParseJson(R"({"ha":{"enabled":false}})");
  std::ostringstream plain;
  RenderStatusTable("s", single, none, 0, plain);
  EXPECT_THAT(plain.str(), Not(HasSubstr("Leader")));
}

core::SyncedChange Upsert(core::StoreKey key, std::string json) {
  std::string hash = core::Sha256Hex(json);
  return core::SyncedChange{PORTICO_CHANGE_UPSERT, std::move(key), std::move(hash),
                            std::make_shared<const std::string>(std::move(json))};
}

// Live: the real admin routers on loopback.
class StatusDiffCommandTest : public ::testing::Test {
 protected:
  StatusDiffCommandTest() : runtime_(plugins_, nullptr) {}

  void SetUp() override {
    backend_.ready = true;
    controller::sync::ConnectedGateway g;
    g.name = "edge-1";
    g.client_id = "client-1";
    g.peer = "ipv4:127.0.0.1:40000";
    g.gateways = {"default/web"};
    g.addresses = {"192.0.2.7"};
    g.state = "live";
    g.acked_version = 40;
    g.sent_version = 41;
    g.head = 41;
    g.lag = 2;
    g.connected_unix_ms = 4102444800000;  // 2100-01-01
    g.nacks.push_back({"gateway.networking.k8s.io/HTTPRoute/default/bad", "h", "no backend"});
    backend_.gateways = {g};
    backend_.synced["edge-1"] = {{route_.ToString(), core::Sha256Hex("{\"r\":1}")},
                                 {service_.ToString(), core::Sha256Hex("{\"s\":1}")}};
    controller_router_ = std::make_unique<controller::admin::AdminRouter>(&backend_);
    controller_server_ =
        Serve([this](const core::admin::AdminRequest& r) { return controller_router_->Handle(r); });
    server_.server = "http://127.0.0.1:" + std::to_string(controller_server_->port());

    gateway::GatewayAdminInfo info;
    info.name = "edge-1";
    info.gateways = {"default/web"};
    gateway_router_ = std::make_unique<gateway::GatewayAdminRouter>(
        info, &plugins_, &runtime_, [this] { return sync_status_; });
    gateway_server_ =
        Serve([this](const core::admin::AdminRequest& r) { return gateway_router_->Handle(r); });
    gateway_admin_ = "http://127.0.0.1:" + std::to_string(gateway_server_->port());
    sync_status_.client_id = "client-1";
    sync_status_.connected = true;
  }

  void TearDown() override {
    gateway_server_->Stop();
    controller_server_->Stop();
  }

  static std::unique_ptr<core::admin::AdminServer> Serve(core::admin::AdminHandler handler) {
    core::admin::AdminServerOptions options;
    options.port = 0;
    auto server = std::make_unique<core::admin::AdminServer>(options, std::move(handler));
    Status started = server->Start();
    EXPECT_TRUE(started.ok()) << started;
    return server;
  }

  int Diff(const std::string& name, std::string* out, std::string* err,
           std::string gateway_admin = "") {
    DiffOptions options;
    options.gateway = name;
    options.gateway_admin = gateway_admin.empty() ? gateway_admin_ : gateway_admin;
    std::ostringstream o, e;
    int code = RunDiff(options, server_, o, e);
    *out = o.str();
    *err = e.str();
    return code;
  }

  const core::StoreKey route_{kGw, "HTTPRoute", "default", "web"};
  const core::StoreKey service_{"", "Service", "default", "svc"};
  controller::admin::FakeBackend backend_;
  std::unique_ptr<controller::admin::AdminRouter> controller_router_;
  std::unique_ptr<core::admin::AdminServer> controller_server_;
  ServerOptions server_;
  core::PluginSet plugins_;
  core::GatewayRuntime runtime_;
  gateway::SyncStatus sync_status_;
  std::unique_ptr<gateway::GatewayAdminRouter> gateway_router_;
  std::unique_ptr<core::admin::AdminServer> gateway_server_;
  std::string gateway_admin_;
};

TEST_F(StatusDiffCommandTest, DiffIsZeroWhenTheGatewayHoldsWhatTheControllerBelieves) {
  runtime_.Apply({Upsert(route_, "{\"r\":1}"), Upsert(service_, "{\"s\":1}")}, true, 40);
  std::string out, err;
  EXPECT_EQ(Diff("edge-1", &out, &err), 0) << err;
  EXPECT_EQ(out, "no differences\n");
  EXPECT_EQ(err, "");
  // The client id names the same gateway on both sides (the real server answers by client id
  // too; the fake needs the entry).
  backend_.synced["client-1"] = backend_.synced["edge-1"];
  EXPECT_EQ(Diff("client-1", &out, &err), 0) << err;
}

TEST_F(StatusDiffCommandTest, DiffIsOneAndListsEachDifference) {
  core::StoreKey extra{"", "Service", "default", "old"};
  runtime_.Apply({Upsert(route_, "{\"r\":2}"), Upsert(extra, "{}")}, true, 39);
  sync_status_.applied_version = 39;
  sync_status_.server_head = 41;
  std::string out, err;
  EXPECT_EQ(Diff("edge-1", &out, &err), 1) << err;
  std::string controller_hash = core::Sha256Hex("{\"r\":1}").substr(0, 12);
  std::string gateway_hash = core::Sha256Hex("{\"r\":2}").substr(0, 12);
  EXPECT_EQ(out, "~ HTTPRoute.gateway.networking.k8s.io default/web controller=" + controller_hash +
                     " gateway=" + gateway_hash +
                     "\n"
                     "- Service default/old\n"
                     "+ Service default/svc\n");
  EXPECT_THAT(err, HasSubstr("2 versions behind"));
}

TEST_F(StatusDiffCommandTest, DiffErrorsAreTwo) {
  std::string out, err;
  EXPECT_EQ(Diff("", &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("--gateway NAME"));
  // Not connected to the controller.
  EXPECT_EQ(Diff("edge-9", &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("Error from server (NotFound): no gateway named \"edge-9\""));
  // The gateway at the URL is another one.
  backend_.synced["edge-2"] = {};
  EXPECT_EQ(Diff("edge-2", &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("is \"edge-1\", not \"edge-2\""));
  // The gateway's admin cannot be reached (port 1: nothing listens in a sandbox).
  EXPECT_EQ(Diff("edge-1", &out, &err, "http://127.0.0.1:1"), 2);
  EXPECT_THAT(err, HasSubstr("127.0.0.1:1"));
  EXPECT_THAT(err, HasSubstr("is portico-gateway's admin API there?"));
  EXPECT_THAT(err, Not(HasSubstr("portico-controller")));
  EXPECT_EQ(out, "");
}

TEST_F(StatusDiffCommandTest, StatusPrintsTheControllerAndItsGateways) {
  StatusOptions options;
  options.now_unix_s = 4102444800 + 130;
  std::ostringstream out, err;
  ASSERT_EQ(RunStatus(options, server_, out, err), 0) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("Server ID:  00000000000000aa\n"));
  EXPECT_THAT(out.str(), HasSubstr("Ready:      true\n"));
  EXPECT_THAT(out.str(), HasSubstr("Head:       42\n"));
  EXPECT_THAT(out.str(), HasSubstr("Gateways:   1 connected\n"));
  EXPECT_THAT(out.str(),
              HasSubstr("NAME     SERVES        ADDRESSES   ACKED   HEAD   LAG   NACKS   "
                        "CONNECTED-SINCE\n"
                        "edge-1   default/web   192.0.2.7   40      41     2     1       "
                        "2100-01-01T00:00:00Z (2m10s)\n"));

  options.output = "json";
  std::ostringstream js;
  ASSERT_EQ(RunStatus(options, server_, js, err), 0);
  rapidjson::Document doc = ParseJson(js.str());
  EXPECT_EQ(json::GetString(doc, "controller.serverId"), "00000000000000aa");
  ASSERT_TRUE(doc["gateways"].IsArray());
  ASSERT_EQ(doc["gateways"].Size(), 1u);
  EXPECT_EQ(json::GetString(doc["gateways"][0], "name"), "edge-1");
  EXPECT_EQ(doc["gateways"][0]["ackedVersion"].GetUint64(), 40u);

  ServerOptions unreachable{"http://127.0.0.1:1"};
  std::ostringstream o2, e2;
  EXPECT_EQ(RunStatus(StatusOptions{}, unreachable, o2, e2), 1);
  EXPECT_THAT(e2.str(), HasSubstr("127.0.0.1:1"));
}

}  // namespace
}  // namespace portico::ctl
