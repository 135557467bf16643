// export_test: what an HTTPRoute exports for policies on Services (BackendTLSPolicy finds the
// Gateways reaching a Service through it): the resolved Services of the kept rules' backendRefs
// and RequestMirror filters, each once, and only the Gateways whose parent accepted the route.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "portico/sdk/testing/fake_host.h"

namespace portico::plugins::httproute {
namespace {

using sdk::testing::FakeHost;
using sdk::testing::ProcessOutcome;

constexpr char kClass[] = R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"GatewayClass",
  "metadata":{"name":"portico"},"spec":{"controllerName":"portico.io/gateway-controller"}})";

// Gateway: `name` in namespace `ns`, accepting routes of its own namespace only.
std::string Gateway(std::string_view name, std::string_view ns) {
  return R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway","metadata":{"name":")" +
         std::string(name) + R"(","namespace":")" + std::string(ns) +
         R"("},"spec":{"gatewayClassName":"portico","listeners":[{"name":"http","port":80,)"
         R"("protocol":"HTTP","allowedRoutes":{"namespaces":{"from":"Same"}}}]}})";
}

std::string Service(std::string_view name) {
  return R"({"apiVersion":"v1","kind":"Service","metadata":{"name":")" + std::string(name) +
         R"(","namespace":"infra"},"spec":{"ports":[{"name":"http","port":80},)"
         R"({"name":"https","port":443}]}})";
}

class httproute_export : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* path : {PLUGIN_PATH, GATEWAY_PLUGIN_PATH, SERVICE_PLUGIN_PATH}) {
      ASSERT_TRUE(host_.Load(path).ok()) << path;
    }
    for (const std::string& o : {std::string(kClass), Gateway("open", "infra"),
                                 Gateway("closed", "other"), Service("web"), Service("copy")}) {
      ProcessOutcome out = host_.Apply(o);
      ASSERT_TRUE(out.ok()) << out.status << " for " << o;
    }
  }
  FakeHost host_;
};

TEST_F(httproute_export, ResolvedBackendsAndAcceptingGatewaysOnly) {
  ProcessOutcome out = host_.Process(
      "gateway.networking.k8s.io", "HTTPRoute",
      R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"r",)"
      R"("namespace":"infra"},"spec":{"parentRefs":[{"name":"open"},)"
      R"({"name":"closed","namespace":"other"}],"rules":[)"
      R"({"backendRefs":[{"name":"web","port":443},{"name":"web","port":80},)"
      R"({"name":"missing","port":80},{"name":"web","port":9999}],)"
      R"("filters":[{"type":"RequestMirror","requestMirror":{"backendRef":{"name":"copy",)"
      R"("port":80}}}]},)"
      R"({"backendRefs":[{"name":"web","port":443}]}]}})");
  ASSERT_TRUE(out.ok()) << out.status;
  auto doc = json::Parse(*out.export_json);
  ASSERT_TRUE(doc.ok());
  // Sorted by key, each once; a Service that does not exist or lacks the port is not there.
  EXPECT_EQ(json::Serialize((*doc)["backends"]),
            R"([{"namespace":"infra","name":"copy","port":80},)"
            R"({"namespace":"infra","name":"web","port":443},)"
            R"({"namespace":"infra","name":"web","port":80}])");
  // "closed" accepts only routes of its own namespace: only "open".
  EXPECT_EQ(json::Serialize((*doc)["gateways"]), R"([{"namespace":"infra","name":"open"}])");
}

TEST_F(httproute_export, NoAcceptingGatewayNoneListed) {
  ProcessOutcome out = host_.Process(
      "gateway.networking.k8s.io", "HTTPRoute",
      R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"r",)"
      R"("namespace":"infra"},"spec":{"parentRefs":[{"name":"closed","namespace":"other"}],)"
      R"("rules":[{"backendRefs":[{"name":"web","port":80}]}]}})");
  ASSERT_TRUE(out.ok()) << out.status;
  auto doc = json::Parse(*out.export_json);
  EXPECT_EQ(json::Serialize((*doc)["gateways"]), "[]");
  EXPECT_EQ(json::Serialize((*doc)["backends"]),
            R"([{"namespace":"infra","name":"web","port":80}])");
}

}  // namespace
}  // namespace portico::plugins::httproute
