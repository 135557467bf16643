// admin_server_test.cc: the admin API over a real socket, on a FakeBackend: routing, status codes,
// JSON shapes, limits and HTTP framing.
#include "core/admin/admin_server.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "controller/admin/admin_router.h"
#include "controller/admin/fake_backend.h"
#include "controller/ctl/http_client.h"
#include "core/plugin/plugin_json.h"
#include "portico/sdk/json.h"

namespace portico::controller::admin {
namespace {

using ::testing::HasSubstr;

constexpr size_t kBodyLimit = 4096;

class AdminServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    router_ = std::make_unique<AdminRouter>(&backend_, [] { return int64_t{1'700'000'060'000}; });
    core::admin::AdminServerOptions options;
    options.port = 0;
    options.max_body_bytes = kBodyLimit;
    server_ = std::make_unique<core::admin::AdminServer>(
        options, [this](const AdminRequest& r) { return router_->Handle(r); });
    ASSERT_TRUE(server_->Start().ok());
    ASSERT_NE(server_->port(), 0);
    auto client = ctl::HttpClient::Create("http://127.0.0.1:" + std::to_string(server_->port()),
                                          std::chrono::seconds(10));
    ASSERT_TRUE(client.ok());
    client_ = std::make_unique<ctl::HttpClient>(*client);
  }
  void TearDown() override { server_->Stop(); }

  ctl::HttpResponse Call(std::string_view method, std::string_view target,
                         std::string_view body = {}) {
    auto response = client_->Do(method, target, body, "application/yaml");
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? *response : ctl::HttpResponse{};
  }

  rapidjson::Document Json(const ctl::HttpResponse& response) {
    auto doc = json::Parse(response.body, "response");
    EXPECT_TRUE(doc.ok()) << doc.status() << "\n" << response.body;
    return doc.ok() ? std::move(doc).value() : rapidjson::Document();
  }

  // Raw sends bytes on a fresh connection and reads until the server closes it.
  std::string Raw(const std::string& bytes) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(server_->port());
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    timeval timeout{10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    size_t sent = 0;
    while (sent < bytes.size()) {
      ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;  // the server may stop reading (413): keep what it answered
      sent += static_cast<size_t>(n);
    }
    std::string out;
    char buffer[4096];
    ssize_t n;
    while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0)
      out.append(buffer, static_cast<size_t>(n));
    close(fd);
    return out;
  }

  static constexpr char kRoute[] = R"(apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: web
  namespace: prod
spec:
  parentRefs: [{name: gw}]
)";
  static constexpr char kGatewayClass[] = R"(---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: portico}
spec: {controllerName: portico.io/gateway-controller}
)";

  FakeBackend backend_;
  std::unique_ptr<AdminRouter> router_;
  std::unique_ptr<core::admin::AdminServer> server_;
  std::unique_ptr<ctl::HttpClient> client_;
};

TEST_F(AdminServerTest, HealthAndReadiness) {
  auto health = Call("GET", "/healthz");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.content_type, "application/json");
  auto not_ready = Call("GET", "/readyz");
  EXPECT_EQ(not_ready.status, 503);
  EXPECT_THAT(json::GetString(Json(not_ready), "error"), HasSubstr("not ready"));
  backend_.ready = true;
  EXPECT_EQ(Call("GET", "/readyz").status, 200);
}

TEST_F(AdminServerTest, InfoPluginsAndKinds) {
  backend_.ready = true;
  ASSERT_EQ(Call("POST", "/api/v1/apply", kRoute).status, 200);
  auto info = Json(Call("GET", "/api/v1/info"));
  EXPECT_EQ(json::GetString(info, "serverId"), "00000000000000aa");
  EXPECT_EQ(json::GetString(info, "version"), "9.9.9");
  EXPECT_EQ(json::GetString(info, "started"), "2023-11-14T22:13:20Z");
  EXPECT_EQ(json::GetInt(info, "uptimeSeconds"), 60);
  EXPECT_EQ(json::GetString(info, "configSource"), "file:/fake");
  EXPECT_TRUE(info["ready"].GetBool());
  EXPECT_EQ(json::GetInt(info, "head"), 42);
  EXPECT_EQ(info["objects"]["HTTPRoute.gateway.networking.k8s.io"].GetInt(), 1);

  auto plugins = Json(Call("GET", "/api/v1/plugins"));
  ASSERT_TRUE(plugins["items"].IsArray());
  auto records = core::ParsePluginsJson(plugins["items"]);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[0].DisplayName(), "gateway");
  EXPECT_EQ(json::GetString(plugins["items"][0], "sha256"), std::string(64, 'b'));
  EXPECT_EQ(json::GetString(plugins["items"][1], "status"), "rejected");

  auto kinds = Json(Call("GET", "/api/v1/kinds"));
  std::vector<std::string> order;
  for (const auto& k : kinds["items"].GetArray()) order.push_back(json::GetString(k, "kind"));
  auto index = [&order](const std::string& kind) {
    return std::find(order.begin(), order.end(), kind) - order.begin();
  };
  EXPECT_EQ(order.size(), 5u);
  EXPECT_LT(index("GatewayClass"), index("Gateway"));
  EXPECT_LT(index("Gateway"), index("HTTPRoute"));
  const auto& gateway = kinds["items"][static_cast<rapidjson::SizeType>(index("Gateway"))];
  EXPECT_EQ(json::GetString(gateway, "plural"), "gateways");
  EXPECT_EQ(std::string(gateway["shortNames"][0].GetString()), "gtw");
  EXPECT_EQ(json::GetString(gateway, "scope"), "Namespaced");
  EXPECT_EQ(json::GetString(gateway, "sync"), "always");
  EXPECT_EQ(std::string(gateway["reads"][0].GetString()), "GatewayClass.gateway.networking.k8s.io");
  EXPECT_EQ(std::string(gateway["capabilities"][0].GetString()), "processor");
}

TEST_F(AdminServerTest, ObjectsResolveKindsLikeKubectl) {
  auto applied = Call("POST", "/api/v1/apply?wait=true", std::string(kRoute) + kGatewayClass);
  ASSERT_EQ(applied.status, 200) << applied.body;
  EXPECT_TRUE(backend_.last_wait);
  auto items = Json(applied);
  ASSERT_EQ(items["items"].Size(), 2u);
  EXPECT_EQ(json::GetString(items["items"][0], "result"), "created");
  EXPECT_EQ(json::GetString(items["items"][0], "plural"), "httproutes");
  EXPECT_EQ(json::GetString(items["items"][1], "kind"), "GatewayClass");
  EXPECT_EQ(items["items"][1].FindMember("namespace"), items["items"][1].MemberEnd());

  for (const char* kind :
       {"httproutes", "httproute", "HTTPRoute", "HTTPRoute.gateway.networking.k8s.io",
        "httproutes.v1.gateway.networking.k8s.io"}) {
    auto list = Call("GET", std::string("/api/v1/objects/") + kind);
    ASSERT_EQ(list.status, 200) << kind << ": " << list.body;
    auto doc = Json(list);
    EXPECT_EQ(json::GetString(doc, "kind"), "List");
    ASSERT_EQ(doc["items"].Size(), 1u) << kind;
    EXPECT_EQ(json::GetString(doc["items"][0], "metadata.name"), "web");
    EXPECT_EQ(json::GetString(doc["items"][0]["status"]["conditions"][0], "type"), "Accepted");
    EXPECT_EQ(json::GetString(doc["items"][0], "portico.source.file"), "applied.yaml");
  }
  EXPECT_EQ(Json(Call("GET", "/api/v1/objects/httproutes?namespace=prod"))["items"].Size(), 1u);
  EXPECT_EQ(Json(Call("GET", "/api/v1/objects/httproutes?namespace=dev"))["items"].Size(), 0u);
  EXPECT_EQ(Json(Call("GET", "/api/v1/objects/gtw"))["items"].Size(), 0u);

  auto one = Call("GET", "/api/v1/objects/httproutes/prod/web");
  ASSERT_EQ(one.status, 200);
  EXPECT_EQ(json::GetString(Json(one), "metadata.namespace"), "prod");
  EXPECT_EQ(Call("GET", "/api/v1/objects/httproutes/web?namespace=prod").status, 200);
  EXPECT_EQ(Call("GET", "/api/v1/objects/gatewayclasses/portico").status, 200);
  EXPECT_EQ(Call("GET", "/api/v1/objects/gc/portico/").status, 200);

  auto missing = Call("GET", "/api/v1/objects/httproutes/prod/nope");
  EXPECT_EQ(missing.status, 404);
  auto error = Json(missing);
  EXPECT_EQ(json::GetString(error, "error"),
            "httproutes.gateway.networking.k8s.io \"nope\" not found in namespace \"prod\"");
  EXPECT_EQ(json::GetString(error, "reason"), "NotFound");
  EXPECT_EQ(json::GetInt(error, "code"), 404);

  auto unknown = Call("GET", "/api/v1/objects/widgets");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(json::GetString(Json(unknown), "error"),
            "the server doesn't have a resource type \"widgets\"");
  auto cluster = Call("GET", "/api/v1/objects/gatewayclasses/default/portico");
  EXPECT_EQ(cluster.status, 400);
  EXPECT_THAT(json::GetString(Json(cluster), "error"), HasSubstr("cluster-scoped"));
}

TEST_F(AdminServerTest, ApplyValidatesAndNeverEchoesSecrets) {
  auto empty = Call("POST", "/api/v1/apply", "  \n");
  EXPECT_EQ(empty.status, 400);
  auto unknown = Call("POST", "/api/v1/apply",
                      "apiVersion: x.io/v1\nkind: Widget\n"
                      "metadata: {name: w}\n");
  EXPECT_EQ(unknown.status, 422);
  EXPECT_THAT(json::GetString(Json(unknown), "error"), HasSubstr("unknown kind Widget"));
  auto broken = Call("POST", "/api/v1/apply", "a: [\n");
  EXPECT_EQ(broken.status, 422);
  auto partly = Call("POST", "/api/v1/apply", std::string(kRoute) + "---\napiVersion: v1\n");
  EXPECT_EQ(partly.status, 422);
  EXPECT_THAT(json::GetString(Json(partly), "error"), HasSubstr("document 2 (line"));
  EXPECT_EQ(Json(Call("GET", "/api/v1/objects/httproutes?namespace=prod"))["items"].Size(), 0u)
      << "nothing is written when one document is bad";

  auto secret =
      Call("POST", "/api/v1/apply",
           "apiVersion: v1\nkind: Secret\nmetadata: {name: tls}\ntype: kubernetes.io/tls\n"
           "data: {tls.key: c2VjcmV0LWtleS1tYXRlcmlhbA==}\n");
  ASSERT_EQ(secret.status, 200) << secret.body;
  EXPECT_THAT(secret.body, ::testing::Not(HasSubstr("c2VjcmV0")));
  EXPECT_FALSE(backend_.last_wait);
  auto shown = Call("GET", "/api/v1/objects/secrets/default/tls");
  EXPECT_THAT(shown.body, ::testing::Not(HasSubstr("c2VjcmV0")));
}

TEST_F(AdminServerTest, DeleteErrorsReloadAndWipe) {
  ASSERT_EQ(Call("POST", "/api/v1/apply", kRoute).status, 200);
  auto deleted = Call("DELETE", "/api/v1/objects/httproutes/prod/web?wait=true");
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_TRUE(backend_.last_wait);
  auto body = Json(deleted);
  EXPECT_EQ(json::GetString(body, "deleted.kind"), "HTTPRoute");
  EXPECT_EQ(json::GetString(body, "deleted.namespace"), "prod");
  EXPECT_EQ(Call("DELETE", "/api/v1/objects/httproutes/prod/web").status, 404);

  backend_.errors.push_back({{"routes/bad.yaml", 3}, "", "routes/bad.yaml:3:1: bad indent"});
  auto errors = Json(Call("GET", "/api/v1/errors"));
  ASSERT_EQ(errors["items"].Size(), 1u);
  EXPECT_EQ(json::GetString(errors["items"][0], "file"), "routes/bad.yaml");
  EXPECT_EQ(json::GetInt(errors["items"][0], "line"), 3);
  EXPECT_EQ(json::GetString(errors["items"][0], "message"), "routes/bad.yaml:3:1: bad indent");
  EXPECT_EQ(errors["items"][0].FindMember("violations"), errors["items"][0].MemberEnd());
  ConfigError refused{{"web.yaml", 2}, "HTTPRoute prod/web", "web.yaml:2: HTTPRoute prod/web: ..."};
  refused.violations = {{"spec.a", "must be a string (got 1)", 7}, {"", "no good", 0}};
  refused.refused_generation = 5;
  refused.serving_generation = 4;
  backend_.errors.push_back(refused);
  errors = Json(Call("GET", "/api/v1/errors"));
  ASSERT_EQ(errors["items"].Size(), 2u);
  const rapidjson::Value& item = errors["items"][1];
  EXPECT_EQ(json::GetInt(item, "refusedGeneration"), 5);
  EXPECT_EQ(json::GetInt(item, "servingGeneration"), 4);
  EXPECT_EQ(json::Serialize(item["violations"]),
            R"j([{"field":"spec.a","line":7,"message":"must be a string (got 1)"},)j"
            R"j({"field":"","message":"no good"}])j");

  auto reloaded = Json(Call("POST", "/api/v1/reload"));
  EXPECT_EQ(json::GetString(reloaded, "serverId"), "00000000000000b1");

  ASSERT_EQ(Call("POST", "/api/v1/apply", kRoute).status, 200);
  EXPECT_EQ(Call("POST", "/api/v1/admin/wipe-all").status, 404);
  backend_.testing = true;
  auto wiped = Call("POST", "/api/v1/admin/wipe-all");
  ASSERT_EQ(wiped.status, 200);
  EXPECT_EQ(json::GetInt(Json(wiped), "deleted"), 1);
}

TEST_F(AdminServerTest, MetricsArePrometheusText) {
  backend_.ready = true;
  auto metrics = Call("GET", "/metrics");
  ASSERT_EQ(metrics.status, 200);
  EXPECT_THAT(metrics.content_type, HasSubstr("text/plain; version=0.0.4"));
  EXPECT_THAT(metrics.body, HasSubstr("\nportico_controller_ready 1\n"));
  EXPECT_THAT(metrics.body,
              HasSubstr("portico_controller_processed_total{kind=\"HTTPRoute\",group=\"gateway."
                        "networking.k8s.io\"} 5\n"));
  EXPECT_THAT(metrics.body,
              HasSubstr("portico_controller_processed_total{kind=\"Secret\",group=\"\"} 0\n"));
  EXPECT_THAT(metrics.body, HasSubstr("portico_controller_processing_failures_total 1\n"));
  EXPECT_THAT(metrics.body, HasSubstr("portico_controller_plugins_refused 1\n"));
  EXPECT_THAT(metrics.body, HasSubstr("# TYPE portico_controller_objects gauge\n"));
}

TEST_F(AdminServerTest, ConnectedGatewaysAndWhatTheyHold) {
  rapidjson::Document none = Json(Call("GET", "/api/v1/gateways"));
  ASSERT_TRUE(none["items"].IsArray());
  EXPECT_EQ(none["items"].Size(), 0u);
  sync::ConnectedGateway gw;
  gw.name = "edge-1";
  gw.client_id = "c1";
  gw.peer = "ipv4:127.0.0.1:5555";
  gw.gateways = {"default/web"};
  gw.addresses = {"10.0.0.1"};
  gw.state = "live";
  gw.acked_version = 40;
  gw.head = 42;
  gw.lag = 2;
  gw.connected_unix_ms = 1'700'000'000'000;
  gw.plugins = {{"gateway", "1.0.0", "ab12", {"Gateway.gateway.networking.k8s.io"}, {}},
                {"webhook", "1.0.0", "cd34", {"Webhook.portico.io"}, {"webhook (authz)"}}};
  gw.nacks = {{"gateway.networking.k8s.io/HTTPRoute/default/bad", "abc", "bad regex"}};
  backend_.gateways = {gw};
  backend_.synced["edge-1"] = {{"/Service/default/svc", "h1"},
                               {"gateway.networking.k8s.io/HTTPRoute/default/web", "h2"}};
  auto list = Call("GET", "/api/v1/gateways");
  ASSERT_EQ(list.status, 200);
  rapidjson::Document doc = Json(list);
  ASSERT_TRUE(doc["items"].IsArray());
  ASSERT_EQ(doc["items"].Size(), 1u);
  const rapidjson::Value& item = doc["items"][0];
  EXPECT_EQ(json::GetString(item, "name"), "edge-1");
  EXPECT_EQ(json::GetString(item, "clientId"), "c1");
  EXPECT_EQ(item["ackedVersion"].GetUint64(), 40u);
  EXPECT_EQ(item["lag"].GetUint64(), 2u);
  EXPECT_EQ(item["connectedUnixMs"].GetInt64(), 1'700'000'000'000);
  EXPECT_STREQ(item["gateways"][0].GetString(), "default/web");
  EXPECT_STREQ(item["inventory"][0]["name"].GetString(), "gateway");
  EXPECT_STREQ(item["inventory"][0]["sha256"].GetString(), "ab12");
  EXPECT_STREQ(item["inventory"][0]["handlers"][0].GetString(),
               "Gateway.gateway.networking.k8s.io");
  EXPECT_STREQ(item["inventory"][1]["filterTypes"][0].GetString(), "webhook (authz)");
  EXPECT_STREQ(item["nacks"][0]["reason"].GetString(), "bad regex");

  auto synced = Call("GET", "/api/v1/gateways/edge-1/synced");
  ASSERT_EQ(synced.status, 200);
  rapidjson::Document held = Json(synced);
  EXPECT_EQ(held["total"].GetUint64(), 2u);
  EXPECT_STREQ(held["objects"][0]["key"].GetString(), "/Service/default/svc");
  EXPECT_STREQ(held["kinds"]["HTTPRoute.gateway.networking.k8s.io"]["default/web"].GetString(),
               "h2");
  EXPECT_STREQ(held["kinds"]["Service"]["default/svc"].GetString(), "h1");
  EXPECT_EQ(Call("GET", "/api/v1/gateways/nobody/synced").status, 404);
  EXPECT_EQ(Call("POST", "/api/v1/gateways").status, 405);

  auto metrics = Call("GET", "/metrics");
  EXPECT_THAT(metrics.body, HasSubstr("\nportico_controller_sync_gateways 1\n"));
  EXPECT_THAT(metrics.body, HasSubstr("\nportico_controller_sync_acks_total 9\n"));
  EXPECT_EQ(Json(Call("GET", "/api/v1/info"))["connectedGateways"].GetUint64(), 1u);
}

TEST_F(AdminServerTest, MethodsAndUnknownPaths) {
  auto wrong = Call("PUT", "/api/v1/apply", "x");
  EXPECT_EQ(wrong.status, 405);
  bool allow = false;
  for (const auto& [name, value] : wrong.headers) allow |= name == "Allow" && value == "POST";
  EXPECT_TRUE(allow);
  EXPECT_EQ(Call("GET", "/api/v1/apply").status, 405);
  EXPECT_EQ(Call("POST", "/healthz").status, 405);
  EXPECT_EQ(Call("GET", "/nope").status, 404);
  EXPECT_EQ(Call("GET", "/api/v1/objects").status, 404);
  EXPECT_EQ(Call("GET", "/api/v1/objects/a/b/c/d").status, 404);
  EXPECT_EQ(Call("GET", "/api/v1/objects/httproutes/a%2Fb").status, 400);
}

TEST_F(AdminServerTest, BodyLimitAnswers413) {
  std::string big(kBodyLimit + 1, 'x');
  // Declared too big: refused from the header, before the body is read.
  std::string declared = Raw("POST /api/v1/apply HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                             std::to_string(big.size()) + "\r\n\r\n" + big);
  EXPECT_THAT(declared, ::testing::StartsWith("HTTP/1.1 413"));
  EXPECT_THAT(declared, HasSubstr("\"reason\":\"RequestEntityTooLarge\""));
  // Chunked: refused once the body passes the limit.
  std::string chunked =
      Raw("POST /api/v1/apply HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + [&] {
        char size[16];
        std::snprintf(size, sizeof(size), "%zx", big.size());
        return std::string(size) + "\r\n" + big + "\r\n0\r\n\r\n";
      }());
  EXPECT_THAT(chunked, ::testing::StartsWith("HTTP/1.1 413"));
  // The client's client: a 413 is an error with the server's message.
  auto over = client_->Do("POST", "/api/v1/apply", big);
  ASSERT_TRUE(over.ok()) << over.status();
  EXPECT_EQ(over->status, 413);
}

TEST_F(AdminServerTest, FramingKeepAliveContinueAndGarbage) {
  std::string two =
      Raw("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
          "GET /api/v1/info HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(two.find("HTTP/1.1 200"), 0u);
  EXPECT_NE(two.find("HTTP/1.1 200", 10), std::string::npos) << two;
  EXPECT_THAT(two, HasSubstr("\"serverId\""));

  std::string body = kRoute;
  std::string expect =
      Raw("POST /api/v1/apply HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
          "Connection: close\r\nContent-Length: " +
          std::to_string(body.size()) + "\r\n\r\n" + body);
  EXPECT_THAT(expect, ::testing::StartsWith("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200"));

  std::string garbage = Raw("NOT HTTP AT ALL\r\n\r\n");
  EXPECT_THAT(garbage, ::testing::StartsWith("HTTP/1.1 400"));
}

TEST(AdminServerStartTest, BindFailureNamesTheAddress) {
  core::admin::AdminServerOptions options;
  options.port = 0;
  core::admin::AdminServer first(options,
                                 [](const AdminRequest&) { return JsonResponse(200, "{}"); });
  ASSERT_TRUE(first.Start().ok());
  options.port = first.port();
  core::admin::AdminServer second(options,
                                  [](const AdminRequest&) { return JsonResponse(200, "{}"); });
  Status status = second.Start();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_THAT(status.message(), HasSubstr("127.0.0.1:" + std::to_string(first.port())));
  options.address = "not-an-address";
  core::admin::AdminServer third(options,
                                 [](const AdminRequest&) { return JsonResponse(200, "{}"); });
  EXPECT_EQ(third.Start().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace portico::controller::admin
