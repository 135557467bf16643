// referencegrant_test: the ReferenceGrant plugin and its reference policy in the SDK's fake host.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "portico/sdk/testing/fake_host.h"

namespace portico::plugins::referencegrant {
namespace {

using sdk::ObjectRef;
using sdk::testing::FakeHost;
using sdk::testing::ProcessOutcome;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kGatewayGroup[] = "gateway.networking.k8s.io";
constexpr char kInfra[] = "gateway-conformance-infra";
constexpr char kWeb[] = "gateway-conformance-web-backend";

// From the conformance test HTTPRouteReferenceGrant (httproute-reference-grant.yaml).
constexpr char kRouteToServiceGrant[] = R"({
  "apiVersion": "gateway.networking.k8s.io/v1", "kind": "ReferenceGrant",
  "metadata": {"name": "reference-grant", "namespace": "gateway-conformance-web-backend"},
  "spec": {"from": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute",
                     "namespace": "gateway-conformance-infra"}],
           "to": [{"group": "", "kind": "Service", "name": "web-backend"}]}})";

// From GatewaySecretReferenceGrantAllInNamespace: no name, every Secret of the namespace.
constexpr char kGatewayToAllSecretsGrant[] = R"({
  "apiVersion": "gateway.networking.k8s.io/v1beta1", "kind": "ReferenceGrant",
  "metadata": {"name": "reference-grant-all-in-namespace",)"
                                             R"( "namespace": "gateway-conformance-web-backend"},
  "spec": {"from": [{"group": "gateway.networking.k8s.io", "kind": "Gateway",
                     "namespace": "gateway-conformance-infra"}],
           "to": [{"group": "", "kind": "Secret"}]}})";

ObjectRef Service(std::string ns, std::string name) { return {"", "Service", ns, name}; }
ObjectRef Secret(std::string ns, std::string name) { return {"", "Secret", ns, name}; }

class plugin_referencegrant : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(host_.Load(PLUGIN_PATH).ok()); }
  bool RouteMay(const ObjectRef& to, std::string from_ns = kInfra) {
    return host_.ReferenceAllowed(kGatewayGroup, "HTTPRoute", from_ns, to);
  }
  FakeHost host_;
};

TEST_F(plugin_referencegrant, RegistersTheKindAndThePolicy) {
  const auto* kind = host_.FindKind(kGatewayGroup, "ReferenceGrant");
  ASSERT_NE(kind, nullptr);
  EXPECT_EQ(kind->versions, (std::vector<std::string>{"v1", "v1beta1"}));
  EXPECT_EQ(kind->short_names, std::vector<std::string>{"refgrant"});
  EXPECT_EQ(kind->sync_policy, PORTICO_SYNC_NEVER);
  EXPECT_TRUE(kind->capabilities & PORTICO_CAP_REFERENCE_POLICY);
  EXPECT_TRUE(host_.has_reference_policy());
}

TEST_F(plugin_referencegrant, ExportsFromAndTo) {
  ProcessOutcome out = host_.Process(kGatewayGroup, "ReferenceGrant", kRouteToServiceGrant);
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(out.export_json,
            R"({"from":[{"group":"gateway.networking.k8s.io","kind":"HTTPRoute","namespace":)"
            R"("gateway-conformance-infra"}],"to":[{"group":"","kind":"Service",)"
            R"("name":"web-backend"}]})");
  EXPECT_EQ(out.status_json, R"({"conditions":[{"type":"Accepted","status":"True","reason":)"
                             R"("Accepted","message":"","observedGeneration":1}]})");
  EXPECT_FALSE(out.synced.has_value());
  out = host_.Process(kGatewayGroup, "ReferenceGrant", kGatewayToAllSecretsGrant);
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.export_json, HasSubstr(R"("to":[{"group":"","kind":"Secret"}])"));
}

TEST_F(plugin_referencegrant, RejectsInvalidSpecs) {
  host_.set_validate_schema(false);
  const std::string head =
      R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"ReferenceGrant",)"
      R"("metadata":{"name":"g","namespace":"web"},"spec":)";
  const std::string from =
      R"({"group":"gateway.networking.k8s.io","kind":"HTTPRoute","namespace":"infra"})";
  const std::string to = R"({"group":"","kind":"Service"})";
  struct Case {
    std::string spec;
    const char* message;
  } cases[] = {
      {R"({"from":[],"to":[)" + to + "]}",
       "ReferenceGrant web/g: spec.from: at least one entry is required"},
      {R"({"from":[)" + from + "]}",
       "ReferenceGrant web/g: spec.to: at least one entry is required"},
      {R"({"from":[{"group":"gateway.networking.k8s.io","kind":"HTTPRoute",)"
       R"("namespace":"Infra"}],"to":[)" +
           to + "]}",
       "spec.from[0].namespace: \"Infra\" is not a valid namespace"},
      {R"({"from":[{"kind":"HTTPRoute","namespace":"infra"}],"to":[)" + to + "]}",
       "spec.from[0].group: is required"},
      {"{\"from\":[" + from + R"(],"to":[)" + to + R"(,{"group":"","kind":"9Service"}]})",
       "spec.to[1].kind: \"9Service\" is not a valid kind"},
      {"{\"from\":[" + from + R"(],"to":[{"group":"Bad_Group","kind":"Service"}]})",
       "spec.to[0].group: \"Bad_Group\" is not a valid API group"},
      {"{\"from\":[" + from + R"(],"to":[{"group":"","kind":"Service","name":""}]})",
       "spec.to[0].name: must be a non-empty name when given"},
  };
  for (const Case& c : cases) {
    ProcessOutcome out = host_.Process(kGatewayGroup, "ReferenceGrant", head + c.spec + "}");
    EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument) << c.spec;
    EXPECT_THAT(out.status.message(), HasSubstr(c.message));
  }
}

TEST_F(plugin_referencegrant, SameNamespaceNeedsNoGrant) {
  std::vector<std::string> reads;
  EXPECT_TRUE(host_.ReferenceAllowed(kGatewayGroup, "HTTPRoute", kInfra,
                                     Service(kInfra, "infra-backend-v1"), &reads));
  EXPECT_THAT(reads, ElementsAre("reference HTTPRoute gateway-conformance-infra -> Service "
                                 "gateway-conformance-infra/infra-backend-v1 allowed"));
}

TEST_F(plugin_referencegrant, CrossNamespaceNeedsAMatchingGrant) {
  std::vector<std::string> reads;
  EXPECT_FALSE(host_.ReferenceAllowed(kGatewayGroup, "HTTPRoute", kInfra,
                                      Service(kWeb, "web-backend"), &reads));
  // The miss is a read, so the asking route is requeued when a grant appears there.
  EXPECT_THAT(reads, ElementsAre("list ReferenceGrant gateway-conformance-web-backend",
                                 "reference HTTPRoute gateway-conformance-infra -> Service "
                                 "gateway-conformance-web-backend/web-backend denied"));

  ASSERT_TRUE(host_.Apply(kRouteToServiceGrant).ok());
  EXPECT_TRUE(RouteMay(Service(kWeb, "web-backend")));
  EXPECT_FALSE(RouteMay(Service(kWeb, "other-backend")));         // the grant names one Service
  EXPECT_FALSE(RouteMay(Service(kWeb, "web-backend"), "other"));  // from another namespace
  EXPECT_FALSE(RouteMay(Secret(kWeb, "web-backend")));            // another kind
  EXPECT_FALSE(RouteMay(Service("gateway-conformance-app-backend", "web-backend")));
  EXPECT_FALSE(
      host_.ReferenceAllowed(kGatewayGroup, "Gateway", kInfra, Service(kWeb, "web-backend")));
  EXPECT_FALSE(host_.ReferenceAllowed("", "HTTPRoute", kInfra, Service(kWeb, "web-backend")));

  host_.Delete({kGatewayGroup, "ReferenceGrant", kWeb, "reference-grant"});
  EXPECT_FALSE(RouteMay(Service(kWeb, "web-backend")));
}

TEST_F(plugin_referencegrant, GrantWithoutNameCoversEveryObjectOfTheKind) {
  ASSERT_TRUE(host_.Apply(kGatewayToAllSecretsGrant).ok());
  EXPECT_TRUE(
      host_.ReferenceAllowed(kGatewayGroup, "Gateway", kInfra, Secret(kWeb, "certificate")));
  EXPECT_TRUE(host_.ReferenceAllowed(kGatewayGroup, "Gateway", kInfra, Secret(kWeb, "anything")));
  EXPECT_FALSE(
      host_.ReferenceAllowed(kGatewayGroup, "HTTPRoute", kInfra, Secret(kWeb, "certificate")));
}

TEST_F(plugin_referencegrant, AnyOfSeveralGrantsSuffices) {
  ASSERT_TRUE(host_.Apply(kRouteToServiceGrant).ok());
  ASSERT_TRUE(host_.Apply(kGatewayToAllSecretsGrant).ok());
  EXPECT_TRUE(RouteMay(Service(kWeb, "web-backend")));
  EXPECT_TRUE(host_.ReferenceAllowed(kGatewayGroup, "Gateway", kInfra, Secret(kWeb, "x")));
}

TEST_F(plugin_referencegrant, AnInvalidUpdateKeepsTheLastGoodGrant) {
  ASSERT_TRUE(host_.Apply(kRouteToServiceGrant).ok());
  host_.set_validate_schema(false);
  ProcessOutcome out =
      host_.Apply(R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"ReferenceGrant",
      "metadata":{"name":"reference-grant","namespace":"gateway-conformance-web-backend"},
      "spec":{"from":[],"to":[]}})");
  EXPECT_FALSE(out.ok());
  EXPECT_TRUE(RouteMay(Service(kWeb, "web-backend")));
}

}  // namespace
}  // namespace portico::plugins::referencegrant
