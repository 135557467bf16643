// apply_documents_test.cc: the apply check validates every document before anything is written.
#include "controller/admin/apply_documents.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/plugin/kind_registry.h"

namespace portico::controller::admin {
namespace {

using ::testing::HasSubstr;

class ApplyDocumentsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    core::KindInfo route;
    route.id = {"gateway.networking.k8s.io", "HTTPRoute"};
    route.versions = {"v1"};
    route.plural = "httproutes";
    route.schema = R"({"type":"object","properties":{"spec":{"type":"object",
        "properties":{"hostnames":{"type":"array","items":{"type":"string"}}}}}})";
    route.plugin_name = "httproute";
    ASSERT_TRUE(registry_.AddKind(route).ok());
    core::KindInfo gc;
    gc.id = {"gateway.networking.k8s.io", "GatewayClass"};
    gc.versions = {"v1"};
    gc.plural = "gatewayclasses";
    gc.scope = PORTICO_SCOPE_CLUSTER;
    ASSERT_TRUE(registry_.AddKind(gc).ok());
    auto validator = ObjectValidator::Create(registry_);
    ASSERT_TRUE(validator.ok()) << validator.status();
    validator_ = std::make_unique<ObjectValidator>(std::move(validator).value());
  }

  core::KindRegistry registry_;
  std::unique_ptr<ObjectValidator> validator_;
};

TEST_F(ApplyDocumentsTest, AcceptsYamlAndJson) {
  auto prepared = PrepareApply(R"(apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web}
---
{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
 "metadata": {"name": "portico"}}
)",
                               *validator_);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  ASSERT_EQ(prepared->size(), 2u);
  EXPECT_EQ((*prepared)[0].validated.ref.ns, "default");
  EXPECT_EQ((*prepared)[0].line, 1);
  EXPECT_EQ((*prepared)[1].validated.ref.Display(), "GatewayClass portico");
  EXPECT_EQ((*prepared)[1].api_version, "gateway.networking.k8s.io/v1");
  EXPECT_NE((*prepared)[0].content_hash, (*prepared)[1].content_hash);
}

TEST_F(ApplyDocumentsTest, NamesEveryBadDocument) {
  auto prepared = PrepareApply(R"(apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web}
spec: {hostnames: [7]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ok}
---
- not an object
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ok}
)",
                               *validator_);
  ASSERT_FALSE(prepared.ok());
  EXPECT_EQ(prepared.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(prepared.status().message(), HasSubstr("nothing was written"));
  EXPECT_THAT(prepared.status().message(), HasSubstr("document 1 (line 1): HTTPRoute default/web"));
  EXPECT_THAT(prepared.status().message(), HasSubstr("document 3 (line 10): not an object"));
  EXPECT_THAT(prepared.status().message(), HasSubstr("document 4 (line 12): HTTPRoute default/ok "
                                                     "appears more than once"));
}

TEST_F(ApplyDocumentsTest, EveryViolationAndObjectLimits) {
  ObjectLimits limits;
  limits.max_annotation_bytes = 8;
  auto prepared = PrepareApply(R"(apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web}
spec: {hostnames: [7, "a.example", 8]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: big, annotations: {a: "123456789"}}
)",
                               *validator_, {}, limits);
  ASSERT_FALSE(prepared.ok());
  EXPECT_THAT(prepared.status().message(), HasSubstr("spec.hostnames[0]: must be"));
  EXPECT_THAT(prepared.status().message(), HasSubstr("; spec.hostnames[2]: must be"));
  EXPECT_THAT(prepared.status().message(),
              HasSubstr("document 2 (line 6): HTTPRoute big: metadata.annotations: keys and "
                        "values hold 10 bytes, more than the limit of 8"));
}

TEST_F(ApplyDocumentsTest, UnknownKindsAreNotFound) {
  auto prepared =
      PrepareApply("apiVersion: x.io/v1\nkind: Widget\nmetadata: {name: w}\n", *validator_);
  ASSERT_FALSE(prepared.ok());
  EXPECT_EQ(prepared.status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(PrepareApply("", *validator_).ok());
  EXPECT_FALSE(PrepareApply("a: [", *validator_).ok());
}

TEST(ContentHashTest, EqualForEqualDocuments) {
  auto a = json::Parse(R"({"a":1,"b":[true]})");
  auto b = json::Parse("{ \"a\": 1, \"b\": [ true ] }");
  auto c = json::Parse(R"({"a":2,"b":[true]})");
  EXPECT_EQ(ContentHash(*a), ContentHash(*b));
  EXPECT_NE(ContentHash(*a), ContentHash(*c));
}

}  // namespace
}  // namespace portico::controller::admin
