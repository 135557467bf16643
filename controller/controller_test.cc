// controller_test.cc: the Controller with the real plugins, a real FileConfigCenter on a
// temporary directory and its reconciler: start-up, apply (created / configured / unchanged,
// validated before writing, wait), delete, reload and wipe-all.
#include "controller/controller.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "controller/center/config_files.h"
#include "core/sync/inventory.h"
#include "portico/sdk/json.h"
#include "portico/sync/v1/sync.grpc.pb.h"

namespace portico::controller {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kGatewayApi[] = "gateway.networking.k8s.io";

constexpr char kBase[] = R"(apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: portico}
spec: {controllerName: portico.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web, namespace: default}
spec:
  gatewayClassName: portico
  listeners: [{name: http, protocol: HTTP, port: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: echo, namespace: default}
spec:
  ports: [{port: 80, targetPort: 3000}]
)";

constexpr char kRoute[] = R"(apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: echo, namespace: default}
spec:
  parentRefs: [{name: web}]
  rules: [{backendRefs: [{name: echo, port: 80}]}]
)";

class ControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "portico-controller-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = fs::path(pattern) / "conf";
    plugin_dir_ = fs::path(pattern) / "plugins";
    fs::create_directories(dir_);
    // Copies, not links: a new inode is a new library instance, and a plugin registers once
    // per instance (the loader never unloads).
    fs::create_directories(plugin_dir_);
    for (const auto& entry : fs::directory_iterator(PORTICO_PLUGIN_OUTPUT_DIR)) {
      if (entry.path().extension() == ".so") {
        fs::copy_file(entry.path(), plugin_dir_ / entry.path().filename());
      }
    }
    std::ofstream(dir_ / "base.yaml") << kBase;
  }
  void TearDown() override {
    if (controller_ != nullptr) controller_->Stop();
    controller_.reset();
    fs::remove_all(dir_.parent_path());
  }

  void StartController(bool testing = false, bool sync = false) {
    ControllerOptions options;
    if (sync) options.sync = ControllerSyncOptions{"127.0.0.1", 0, {}};
    options.config_dir = dir_;
    options.plugin_dir = plugin_dir_;
    options.debounce = std::chrono::milliseconds(10);
    options.testing = testing;
    options.version = "test";
    options.wait_timeout = std::chrono::seconds(20);
    auto created = Controller::Create(options);
    ASSERT_TRUE(created.ok()) << created.status();
    controller_ = std::move(created).value();
    ASSERT_TRUE(controller_->Start().ok());
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!controller_->Ready() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_TRUE(controller_->Ready());
  }

  const core::KindInfo* Kind(const char* name) {
    auto kind = controller_->Plugins().registry.Resolve(name);
    EXPECT_TRUE(kind.ok()) << name;
    return kind.ok() ? *kind : nullptr;
  }

  std::optional<rapidjson::Document> Object(const char* group, const char* kind, const char* ns,
                                            const char* name) {
    auto view = controller_->Get(sdk::ObjectRef{group, kind, ns, name});
    if (!view) return std::nullopt;
    auto doc = json::Parse(view->json);
    EXPECT_TRUE(doc.ok());
    return std::move(doc).value();
  }

  fs::path dir_;         // the config directory
  fs::path plugin_dir_;  // this test's copies of the built plugins
  std::unique_ptr<Controller> controller_;
};

TEST_F(ControllerTest, StartsReadyWithTheDirectory) {
  std::ofstream(dir_ / "route.yaml") << kRoute;
  StartController();
  admin::ServerInfo info = controller_->Info();
  EXPECT_EQ(info.server_id.size(), 16u);
  EXPECT_EQ(info.server_id.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(info.config_source, "file:" + dir_.string());
  EXPECT_GT(info.started_unix_ms, 0);
  EXPECT_EQ(controller_->List(Kind("httproutes"), "").size(), 1u);
  auto route = Object(kGatewayApi, "HTTPRoute", "default", "echo");
  ASSERT_TRUE(route.has_value());
  EXPECT_EQ(json::GetString((*route)["status"]["parents"][0]["conditions"][0], "type"), "Accepted");
  admin::ControllerStats stats = controller_->Stats();
  EXPECT_TRUE(stats.ready);
  EXPECT_EQ(stats.objects_by_kind["HTTPRoute.gateway.networking.k8s.io"], 1u);
  EXPECT_EQ(stats.objects_by_kind["Service"], 1u);
  EXPECT_GE(stats.plugins_loaded, 8u);
  EXPECT_EQ(stats.plugins_refused, 0u);
  EXPECT_EQ(stats.reconciler.processed_by_kind["HTTPRoute.gateway.networking.k8s.io"], 1u);
}

TEST_F(ControllerTest, ApplyCreatesConfiguresAndKnowsUnchanged) {
  StartController();
  auto created = controller_->Apply(kRoute, /*wait=*/true);
  ASSERT_TRUE(created.ok()) << created.status();
  ASSERT_EQ(created->size(), 1u);
  EXPECT_EQ((*created)[0].result, "created");
  EXPECT_EQ((*created)[0].plural, "httproutes");
  EXPECT_EQ((*created)[0].ref.ns, "default");
  // wait=true: the object is there as soon as Apply returns.
  ASSERT_TRUE(Object(kGatewayApi, "HTTPRoute", "default", "echo").has_value());

  auto again = controller_->Apply(kRoute, true);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)[0].result, "unchanged");

  std::string changed = std::string(kRoute) + "  hostnames: [changed.example.com]\n";
  auto configured = controller_->Apply(changed, true);
  ASSERT_TRUE(configured.ok()) << configured.status();
  EXPECT_EQ((*configured)[0].result, "configured");
  auto route = Object(kGatewayApi, "HTTPRoute", "default", "echo");
  ASSERT_TRUE(route.has_value());
  EXPECT_EQ(std::string((*route)["spec"]["hostnames"][0].GetString()), "changed.example.com");
  EXPECT_EQ(json::GetInt(*route, "metadata.generation"), 2);
}

TEST_F(ControllerTest, ApplyValidatesEverythingBeforeWriting) {
  StartController();
  auto files_before = ListConfigFiles(dir_);
  ASSERT_TRUE(files_before.ok());
  std::string bad = std::string(kRoute) + "---\n" + R"(apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: broken}
spec: {parentRefs: "not a list"}
)";
  auto refused = controller_->Apply(bad, true);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("document 2"));
  EXPECT_THAT(refused.status().message(), HasSubstr("HTTPRoute default/broken"));
  auto files_after = ListConfigFiles(dir_);
  ASSERT_TRUE(files_after.ok());
  EXPECT_EQ(files_after->size(), files_before->size());
  EXPECT_FALSE(Object(kGatewayApi, "HTTPRoute", "default", "echo").has_value());

  auto unknown =
      controller_->Apply("apiVersion: x.io/v1\nkind: Widget\nmetadata: {name: w}\n", false);
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
}

TEST_F(ControllerTest, DeleteWaitsUntilTheObjectIsGone) {
  std::ofstream(dir_ / "route.yaml") << kRoute;
  StartController();
  sdk::ObjectRef ref{kGatewayApi, "HTTPRoute", "default", "echo"};
  ASSERT_TRUE(controller_->Get(ref).has_value());
  Status deleted = controller_->Delete(ref, /*wait=*/true);
  ASSERT_TRUE(deleted.ok()) << deleted;
  EXPECT_FALSE(controller_->Get(ref).has_value());
  EXPECT_FALSE(fs::exists(dir_ / "route.yaml"));
  EXPECT_EQ(controller_->Delete(ref, true).code(), StatusCode::kNotFound);
}

TEST_F(ControllerTest, ReloadStartsANewServerId) {
  StartController();
  std::string before = controller_->Info().server_id;
  ASSERT_TRUE(controller_->Reload().ok());
  EXPECT_NE(controller_->Info().server_id, before);
  EXPECT_EQ(controller_->Stats().reloads, 1u);
}

TEST_F(ControllerTest, WipeAllOnlyInTestingMode) {
  std::ofstream(dir_ / "route.yaml") << kRoute;
  StartController(/*testing=*/false);
  EXPECT_EQ(controller_->WipeAll().status().code(), StatusCode::kNotFound);
  EXPECT_EQ(controller_->List(Kind("httproutes"), "").size(), 1u);
}

TEST_F(ControllerTest, WipeAllDeletesEverything) {
  std::ofstream(dir_ / "route.yaml") << kRoute;
  StartController(/*testing=*/true);
  auto wiped = controller_->WipeAll();
  ASSERT_TRUE(wiped.ok()) << wiped.status();
  EXPECT_EQ(*wiped, 4u);
  for (const core::KindInfo* kind : controller_->Plugins().registry.Kinds()) {
    EXPECT_TRUE(controller_->List(kind, "").empty()) << kind->id.ToString();
  }
  auto files = ListConfigFiles(dir_);
  ASSERT_TRUE(files.ok());
  EXPECT_TRUE(files->empty());
}

// ConfigSync wiring: a gateway (a gRPC client here) serving Gateway default/web receives the
// processed objects attached to it, and its ack becomes the route's Programmed condition.
TEST_F(ControllerTest, ConfigSyncServesGatewaysAndAcksBecomeProgrammed) {
  namespace pb = portico::sync::v1;
  std::ofstream(dir_ / "route.yaml") << kRoute;
  StartController(/*testing=*/false, /*sync=*/true);
  ASSERT_NE(controller_->SyncPort(), 0);
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(controller_->SyncPort()),
                                     grpc::InsecureChannelCredentials());
  auto stub = pb::ConfigSync::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  auto stream = stub->Watch(&context);
  pb::WatchRequest hello;
  hello.mutable_hello()->set_client_id("test-client");
  hello.mutable_hello()->set_name("edge");
  pb::ObjectKey* served = hello.mutable_hello()->add_gateways();
  served->set_group(kGatewayApi);
  served->set_kind("Gateway");
  served->set_namespace_("default");
  served->set_name("web");
  hello.mutable_hello()->add_addresses("192.0.2.10");
  for (const pb::PluginInfo& p : core::BuildInventory(controller_->Plugins())) {
    *hello.mutable_hello()->add_plugins() = p;
  }
  ASSERT_TRUE(stream->Write(hello));
  std::set<std::string> keys;
  uint64_t version = 0;
  pb::WatchResponse m;
  while (version == 0 && stream->Read(&m)) {
    if (m.has_snapshot()) {
      for (const auto& e : m.snapshot().events())
        keys.insert(e.key().kind() + "/" + e.key().name());
    }
    if (m.has_snapshot_end()) {
      version = m.snapshot_end().version();
      EXPECT_EQ(m.snapshot_end().server_id(), controller_->Info().server_id);
    }
  }
  ASSERT_NE(version, 0u);
  EXPECT_TRUE(keys.contains("Gateway/web"));
  EXPECT_TRUE(keys.contains("HTTPRoute/echo"));
  EXPECT_TRUE(keys.contains("Service/echo"));
  EXPECT_FALSE(keys.contains("GatewayClass/portico"));  // never synced
  pb::WatchRequest ack;
  ack.mutable_ack()->set_version(version);
  ASSERT_TRUE(stream->Write(ack));

  ASSERT_EQ(controller_->Gateways().size(), 1u);
  EXPECT_EQ(controller_->Gateways()[0].name, "edge");
  // The Gateway's Programmed placeholder (Unknown, "waiting for a gateway") takes the feedback,
  // and its status.addresses the gateway's address.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  std::string programmed;
  std::string address;
  while (std::chrono::steady_clock::now() < deadline) {
    auto gateway = Object(kGatewayApi, "Gateway", "default", "web");
    ASSERT_TRUE(gateway.has_value());
    const rapidjson::Value& status = (*gateway)["status"];
    programmed.clear();
    for (const auto& c : status["conditions"].GetArray()) {
      if (json::GetString(c, "type") == "Programmed") {
        programmed = json::GetString(c, "status") + " " + json::GetString(c, "message");
      }
    }
    if (status.HasMember("addresses") && status["addresses"].IsArray() &&
        !status["addresses"].Empty()) {
      address = json::GetString(status["addresses"][0], "value");
    }
    if (programmed.starts_with("True") && !address.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // a poll with a deadline
  }
  EXPECT_EQ(programmed, "True applied by gateway edge");
  EXPECT_EQ(address, "192.0.2.10");
  auto synced = controller_->GatewaySynced("edge");
  ASSERT_TRUE(synced.has_value());
  EXPECT_EQ(synced->size(), keys.size());
  EXPECT_GE(controller_->Stats().sync.acks, 1u);
  context.TryCancel();
}

}  // namespace
}  // namespace portico::controller
