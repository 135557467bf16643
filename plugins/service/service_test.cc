// service_test: the Service and EndpointSlice kinds in the SDK's fake host: validation, synced
// views, exports and the backend.v1 contributions their handlers stage.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "portico/sdk/testing/fake_host.h"

namespace portico::plugins::service {
namespace {

using sdk::ObjectRef;
using sdk::testing::FakeChange;
using sdk::testing::FakeHost;
using sdk::testing::ProcessOutcome;
using sdk::testing::StageOutcome;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// From the conformance base manifests (three named ports, h2c and websocket).
constexpr char kInfraBackendV1[] = R"({"apiVersion":"v1","kind":"Service","metadata":{
  "name":"infra-backend-v1","namespace":"gateway-conformance-infra"},"spec":{
  "selector":{"app":"infra-backend-v1"},"ports":[
    {"name":"first-port","protocol":"TCP","port":8080,"targetPort":3000},
    {"name":"second-port","protocol":"TCP","appProtocol":"kubernetes.io/h2c","port":8081,)"
                                   R"("targetPort":3001},
    {"name":"third-port","protocol":"TCP","appProtocol":"kubernetes.io/ws","port":8082,)"
                                   R"("targetPort":3000}]}})";

// From HTTPRouteServiceTypes: a headless Service and a manually written slice.
constexpr char kHeadless[] = R"({"apiVersion":"v1","kind":"Service","metadata":{
  "name":"headless-manual-endpointslices","namespace":"gateway-conformance-infra"},"spec":{
  "clusterIP":"None","ports":[{"name":"first-port","protocol":"TCP","port":8080,)"
                             R"("targetPort":3000}]}})";
constexpr char kSlice[] = R"({"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{
  "name":"headless-manual-endpointslices-ip4","namespace":"gateway-conformance-infra",
  "labels":{"kubernetes.io/service-name":"headless-manual-endpointslices"}},
  "addressType":"IPv4","ports":[{"name":"first-port","port":3000,"protocol":"TCP"}],
  "endpoints":[{"addresses":["127.0.2.1"],"conditions":{"ready":true}},
               {"addresses":["127.0.2.2"],"conditions":{"ready":false,"terminating":true}},
               {"addresses":["127.0.2.3"]}]})";

std::string ServiceWithSpec(std::string_view spec) {
  return R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"default"},)"
         R"("spec":)" +
         std::string(spec) + "}";
}
std::string SliceWith(std::string_view body) {
  return R"({"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":"web-1",)"
         R"("namespace":"default","labels":{"kubernetes.io/service-name":"web"}},)" +
         std::string(body) + "}";
}

class plugin_service : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(host_.Load(PLUGIN_PATH).ok()); }
  ProcessOutcome Service(const std::string& json) { return host_.Process("", "Service", json); }
  ProcessOutcome Slice(const std::string& json) {
    return host_.Process("discovery.k8s.io", "EndpointSlice", json);
  }
  FakeHost host_;
};

TEST_F(plugin_service, RegistersBothKinds) {
  const auto* svc = host_.FindKind("", "Service");
  ASSERT_NE(svc, nullptr);
  EXPECT_EQ(svc->short_names, std::vector<std::string>{"svc"});
  EXPECT_EQ(svc->sync_policy, PORTICO_SYNC_ALWAYS);
  EXPECT_NE(svc->stage, nullptr);
  const auto* slice = host_.FindKind("discovery.k8s.io", "EndpointSlice");
  ASSERT_NE(slice, nullptr);
  EXPECT_EQ(slice->reads, std::vector<std::string>{"Service"});
  EXPECT_EQ(slice->plural, "endpointslices");
  EXPECT_NE(slice->stage, nullptr);
}

TEST_F(plugin_service, ServiceSyncsANormalisedViewAndExportsItsPorts) {
  ProcessOutcome out = Service(kInfraBackendV1);
  ASSERT_TRUE(out.ok()) << out.status;
  const std::string ports =
      R"("type":"ClusterIP","headless":false,"ports":[)"
      R"({"name":"first-port","port":8080,"protocol":"TCP","targetPort":3000},)"
      R"({"name":"second-port","port":8081,"protocol":"TCP","targetPort":3001,)"
      R"("appProtocol":"kubernetes.io/h2c"},)"
      R"({"name":"third-port","port":8082,"protocol":"TCP","targetPort":3000,)"
      R"("appProtocol":"kubernetes.io/ws"}])";
  EXPECT_EQ(out.synced,
            R"({"metadata":{"name":"infra-backend-v1","namespace":"gateway-conformance-infra",)"
            R"("generation":1},)" +
                ports + "}");
  EXPECT_EQ(out.export_json, "{" + ports + "}");
  EXPECT_EQ(out.status_json,
            R"({"conditions":[{"type":"Accepted","status":"True","reason":"Accepted",)"
            R"("message":"","observedGeneration":1}]})");
}

TEST_F(plugin_service, SelectorEditsDoNotChangeTheSyncedView) {
  std::string a =
      Service(ServiceWithSpec(R"({"selector":{"app":"a"},"ports":[{"port":80}]})")).synced.value();
  std::string b =
      Service(ServiceWithSpec(R"({"selector":{"app":"b"},"ports":[{"port":80,"protocol":"TCP"}]})"))
          .synced.value();
  EXPECT_EQ(a, b);
  EXPECT_THAT(a, HasSubstr(R"("ports":[{"name":"","port":80,"protocol":"TCP","targetPort":80}])"));
}

TEST_F(plugin_service, HeadlessAndExternalNameServices) {
  ProcessOutcome out = Service(kHeadless);
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.export_json, HasSubstr(R"("headless":true)"));
  out = Service(ServiceWithSpec(R"({"clusterIP":"None"})"));  // headless without ports
  EXPECT_TRUE(out.ok()) << out.status;
  out = Service(ServiceWithSpec(R"({"type":"ExternalName","externalName":"api.example.com."})"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(
      *out.synced,
      HasSubstr(
          R"("type":"ExternalName","headless":false,"externalName":"api.example.com.","ports":[)"
          R"(])"));
  out = Service(ServiceWithSpec(
      R"({"type":"NodePort","ports":[{"port":80,"nodePort":30080,"targetPort":"http"}]})"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.synced, HasSubstr(R"("targetPort":"http")"));
}

TEST_F(plugin_service, ServiceCrossFieldRules) {
  host_.set_validate_schema(false);
  struct Case {
    const char* spec;
    const char* message;
  } cases[] = {
      {R"({"ports":[]})", "Service default/web: spec.ports: at least one port is required"},
      {R"({"ports":[{"port":0}]})", "spec.ports[0].port: must be 1-65535"},
      {R"({"ports":[{"port":65536}]})", "spec.ports[0].port: must be 1-65535"},
      {R"({"ports":[{"name":"a","port":80},{"port":81}]})",
       "spec.ports[1].name: is required when a Service has several ports"},
      {R"({"ports":[{"name":"http","port":80},{"name":"http","port":81}]})",
       "spec.ports[1].name: duplicate port name \"http\" (also spec.ports[0])"},
      {R"({"ports":[{"name":"a","port":80},{"name":"b","port":80,"protocol":"TCP"}]})",
       "spec.ports[1]: duplicate port 80/TCP (also spec.ports[0])"},
      {R"({"ports":[{"name":"Http","port":80}]})",
       "spec.ports[0].name: \"Http\" is not a DNS label"},
      {R"({"ports":[{"port":80,"targetPort":"http--x"}]})",
       "spec.ports[0].targetPort: \"http--x\" is not a valid port name"},
      {R"({"ports":[{"port":80,"targetPort":"1234"}]})",
       "spec.ports[0].targetPort: \"1234\" is not a valid port name"},
      {R"({"ports":[{"port":80,"targetPort":70000}]})",
       "spec.ports[0].targetPort: must be 1-65535 or a port name"},
      {R"({"ports":[{"port":80,"protocol":"HTTP"}]})",
       "spec.ports[0].protocol: \"HTTP\" is not TCP, UDP or SCTP"},
      {R"({"ports":[{"port":80,"nodePort":30080}]})",
       "spec.ports[0].nodePort: only allowed for types NodePort and LoadBalancer"},
      {R"({"type":"ExternalName"})", "spec.externalName: type ExternalName needs a DNS name"},
      {R"({"type":"Weird","ports":[{"port":80}]})", "spec.type: \"Weird\" is not ClusterIP"},
      {R"({"clusterIP":"10.0.0.300","ports":[{"port":80}]})",
       "spec.clusterIP: \"10.0.0.300\" is not an IP"},
      {R"({"type":"NodePort","clusterIP":"None","ports":[{"port":80}]})",
       "spec.clusterIP: \"None\" (headless) requires type ClusterIP"},
  };
  for (const Case& c : cases) {
    ProcessOutcome out = Service(ServiceWithSpec(c.spec));
    EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument) << c.spec;
    EXPECT_THAT(out.status.message(), HasSubstr(c.message)) << c.spec;
  }
}

TEST_F(plugin_service, SliceAppliesConditionDefaultsAndReadsItsService) {
  ProcessOutcome out = Slice(kSlice);
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(
      out.synced,
      R"({"metadata":{"name":"headless-manual-endpointslices-ip4",)"
      R"("namespace":"gateway-conformance-infra",)"
      R"("generation":1},"serviceName":"headless-manual-endpointslices","addressType":"IPv4",)"
      R"("ports":[{"name":"first-port","port":3000,"protocol":"TCP"}],"endpoints":[)"
      R"({"addresses":["127.0.2.1"],"ready":true,"serving":true,"terminating":false},)"
      R"({"addresses":["127.0.2.2"],"ready":false,"serving":false,"terminating":true},)"
      R"({"addresses":["127.0.2.3"],"ready":true,"serving":true,"terminating":false}]})");
  EXPECT_EQ(out.export_json,
            R"({"serviceName":"headless-manual-endpointslices","addressType":"IPv4","endpoints":3,)"
            R"("readyEndpoints":2})");
  EXPECT_THAT(
      out.reads,
      ElementsAre("get Service gateway-conformance-infra/headless-manual-endpointslices miss"));
  EXPECT_THAT(*out.status_json,
              HasSubstr(R"("type":"ResolvedRefs","status":"False","reason":"ServiceNotFound")"));

  // Order independence: once the Service exists, reprocessing the slice resolves it.
  ASSERT_TRUE(host_.Apply(kHeadless).ok());
  out = Slice(kSlice);
  EXPECT_THAT(
      out.reads,
      ElementsAre("get Service gateway-conformance-infra/headless-manual-endpointslices hit"));
  EXPECT_THAT(*out.status_json, HasSubstr(R"("type":"ResolvedRefs","status":"True")"));
}

TEST_F(plugin_service, SliceWithoutEndpointsOrServiceLabel) {
  // From HTTPRouteServiceTypes: slices start empty.
  ProcessOutcome out = Slice(SliceWith(
      R"("addressType":"IPv6","ports":[{"name":"first-port","port":3000,"protocol":"TCP"}])"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.synced, HasSubstr(R"("endpoints":[])"));
  out = Slice(R"({"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{)"
              R"("name":"orphan"},"addressType":"FQDN",
                  "endpoints":[{"addresses":["backend.example.com"]}]})");
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.status_json, HasSubstr(R"("reason":"NoServiceName")"));
  EXPECT_TRUE(out.reads.empty());
}

TEST_F(plugin_service, SliceCrossFieldRules) {
  host_.set_validate_schema(false);
  struct Case {
    const char* body;
    const char* message;
  } cases[] = {
      {R"("addressType":"IPv5")",
       "EndpointSlice default/web-1: addressType: \"IPv5\" is not IPv4, IPv6 or FQDN"},
      {R"("addressType":"IPv4","endpoints":[{"addresses":["::1"]}])",
       "endpoints[0].addresses[0]: \"::1\" is not a valid IPv4 address"},
      {R"("addressType":"IPv6","endpoints":[{"addresses":["fd00::1"]},{"addresses":["10.0.0.1"]}])",
       "endpoints[1].addresses[0]: \"10.0.0.1\" is not a valid IPv6 address"},
      {R"("addressType":"IPv4","endpoints":[{"addresses":["010.0.0.1"]}])",
       "\"010.0.0.1\" is not a valid IPv4"},
      {R"("addressType":"FQDN","endpoints":[{"addresses":["Bad_Name"]}])",
       "is not a valid FQDN address"},
      {R"("addressType":"IPv4","endpoints":[{"addresses":[]}])",
       "endpoints[0].addresses: at least one address is required"},
      {R"("addressType":"IPv4","endpoints":[{"addresses":["10.0.0.1"],"conditions":{)"
       R"("ready":"yes"}}])",
       "endpoints[0].conditions.ready: must be a boolean"},
      {R"("addressType":"IPv4","ports":[{"name":"a","port":1},{"name":"a","port":2}])",
       "ports[1].name: duplicate port name \"a\" (also ports[0])"},
      {R"("addressType":"IPv4","ports":[{"port":1},{"port":2}])",
       "ports[1].name: duplicate port name \"\""},
      {R"("addressType":"IPv4","ports":[{"name":"a","port":0}])", "ports[0].port: must be 1-65535"},
      {R"("addressType":"IPv4","ports":[{"name":"a","port":1,"protocol":"ICMP"}])",
       "ports[0].protocol"},
  };
  for (const Case& c : cases) {
    ProcessOutcome out = Slice(SliceWith(c.body));
    EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument) << c.body;
    EXPECT_THAT(out.status.message(), HasSubstr(c.message)) << c.body;
  }
}

TEST_F(plugin_service, HandlersStageBackendEntries) {
  ObjectRef svc{"", "Service", "gateway-conformance-infra", "headless-manual-endpointslices"};
  ObjectRef slice{"discovery.k8s.io", "EndpointSlice", "gateway-conformance-infra",
                  "headless-manual-endpointslices-ip4"};
  StageOutcome out =
      host_.Stage("", "Service", {FakeChange::Upsert(svc, Service(kHeadless).synced.value())});
  ASSERT_TRUE(out.ok()) << out.status;
  out = host_.Stage("discovery.k8s.io", "EndpointSlice",
                    {FakeChange::Upsert(slice, Slice(kSlice).synced.value())});
  ASSERT_TRUE(out.ok()) << out.status;
  ASSERT_EQ(out.puts.size(), 2u);
  const auto& ports =
      out.puts.at({"backend.v1", "ports/gateway-conformance-infra/headless-manual-endpointslices"});
  EXPECT_EQ(ports.owner, "/Service/gateway-conformance-infra/headless-manual-endpointslices");
  EXPECT_EQ(
      ports.json,
      R"({"entry":"ports","namespace":"gateway-conformance-infra",)"
      R"("service":"headless-manual-endpointslices",)"
      R"("serviceType":"ClusterIP","headless":true,"ports":[{"name":"first-port","port":8080,)"
      R"("protocol":"TCP","targetPort":3000}]})");
  const auto& endpoints = out.puts.at(
      {"backend.v1", "endpoints/gateway-conformance-infra/headless-manual-endpointslices-ip4"});
  EXPECT_EQ(endpoints.owner,
            "discovery.k8s.io/EndpointSlice/gateway-conformance-infra/"
            "headless-manual-endpointslices-ip4");
  EXPECT_THAT(
      endpoints.json,
      HasSubstr(
          R"({"entry":"endpoints","namespace":"gateway-conformance-infra",)"
          R"("service":"headless-manual-endpointslices",)"
          R"("slice":"headless-manual-endpointslices-ip4",)"
          R"("addressType":"IPv4","ports":[{"name":"first-port","port":3000,"protocol":"TCP"}],)"
          R"("endpoints":[{"addresses":["127.0.2.1"],"ready":true)"));

  out = host_.Stage("discovery.k8s.io", "EndpointSlice", {FakeChange::Delete(slice)});
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(out.puts.size(), 1u);
  out = host_.Stage("", "Service", {FakeChange::Delete(svc)});
  EXPECT_TRUE(out.puts.empty());
}

TEST_F(plugin_service, HandlersNackUnreadableViews) {
  ObjectRef svc{"", "Service", "default", "web"};
  StageOutcome out = host_.Stage("", "Service", {FakeChange::Upsert(svc, "not json")});
  ASSERT_TRUE(out.ok()) << out.status;
  ASSERT_EQ(out.nacks.size(), 1u);
  EXPECT_EQ(out.nacks[0].first, svc);
  EXPECT_TRUE(out.puts.empty());
}

}  // namespace
}  // namespace portico::plugins::service
