// namespace_test: the Namespace plugin loaded into the SDK's fake host.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "portico/sdk/testing/fake_host.h"

namespace portico::plugins::ns {
namespace {

using sdk::testing::FakeHost;
using sdk::testing::ProcessOutcome;
using ::testing::HasSubstr;

class plugin_namespace : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(host_.Load(PLUGIN_PATH).ok()); }
  ProcessOutcome Process(const std::string& json) { return host_.Process("", "Namespace", json); }
  FakeHost host_;
};

TEST_F(plugin_namespace, RegistersTheKindFromItsManifest) {
  const auto* kind = host_.FindKind("", "Namespace");
  ASSERT_NE(kind, nullptr);
  EXPECT_EQ(kind->scope, PORTICO_SCOPE_CLUSTER);
  EXPECT_EQ(kind->short_names, std::vector<std::string>{"ns"});
  EXPECT_EQ(kind->plural, "namespaces");
  EXPECT_EQ(kind->sync_policy, PORTICO_SYNC_NEVER);
  EXPECT_TRUE(kind->reads.empty());
  EXPECT_FALSE(kind->schema.empty());
}

TEST_F(plugin_namespace, ExportsLabelsWithTheMetadataNameLabel) {
  // From the Gateway API conformance base manifests.
  ProcessOutcome out = Process(R"({"apiVersion":"v1","kind":"Namespace","metadata":{
      "name":"gateway-conformance-infra","labels":{"gateway-conformance":"infra"}}})");
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(out.ref.Display(), "Namespace gateway-conformance-infra");
  EXPECT_EQ(out.export_json,
            R"({"name":"gateway-conformance-infra","labels":{"gateway-conformance":"infra",)"
            R"("kubernetes.io/metadata.name":"gateway-conformance-infra"}})");
  EXPECT_EQ(out.status_json,
            R"({"phase":"Active","conditions":[{"type":"Accepted","status":"True",)"
            R"("reason":"Accepted","message":"","observedGeneration":1}]})");
  EXPECT_FALSE(out.synced.has_value());  // never synced
  EXPECT_TRUE(out.reads.empty());
}

TEST_F(plugin_namespace, SynthesisedLabelOverridesAGivenOne) {
  ProcessOutcome out = Process(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"web",
      "generation":4,"labels":{"kubernetes.io/metadata.name":"other"}}})");
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(out.export_json, R"({"name":"web","labels":{"kubernetes.io/metadata.name":"web"}})");
  EXPECT_THAT(*out.status_json, HasSubstr(R"("observedGeneration":4)"));
  out = Process(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"bare"}})");
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(out.export_json, R"({"name":"bare","labels":{"kubernetes.io/metadata.name":"bare"}})");
}

TEST_F(plugin_namespace, RejectsInvalidNamesAndLabels) {
  host_.set_validate_schema(false);  // reach the processor's own checks
  struct Case {
    const char* metadata;
    const char* message;
  } cases[] = {
      {R"({"name":"Web"})", "Namespace Web: metadata.name: \"Web\" is not a DNS label"},
      {R"({"name":"a.b"})", "Namespace a.b: metadata.name: \"a.b\" is not a DNS label"},
      {R"({"name":"web","labels":{"-bad":"x"}})",
       "Namespace web: metadata.labels[\"-bad\"]: invalid label key"},
      {R"({"name":"web","labels":{"Example.com/x":"x"}})",
       "Namespace web: metadata.labels[\"Example.com/x\"]: invalid label key"},
      {R"({"name":"web","labels":{"team":"a b"}})",
       "Namespace web: metadata.labels[\"team\"]: invalid label value \"a b\""},
      {R"({"name":"web","labels":{"team":1}})",
       "Namespace web: metadata.labels[\"team\"]: must be a string"},
  };
  for (const Case& c : cases) {
    ProcessOutcome out = Process(
        std::string(R"({"apiVersion":"v1","kind":"Namespace","metadata":)") + c.metadata + "}");
    EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument) << c.metadata;
    EXPECT_THAT(out.status.message(), HasSubstr(c.message));
  }
}

TEST_F(plugin_namespace, ValidLabelSyntaxIsAccepted) {
  ProcessOutcome out = Process(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"web",
      "labels":{"example.com/team":"a_b.c-d","empty":"","app.kubernetes.io/name":"web"}}})");
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.export_json, HasSubstr(R"("app.kubernetes.io/name":"web","empty":"")"));
}

}  // namespace
}  // namespace portico::plugins::ns
