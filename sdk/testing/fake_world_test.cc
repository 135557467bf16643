// fake_world_test: FakeWorld's fixed-point settling over the probe fixture plugin, and its
// implementation of abi.h's contribution topic grammar.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "portico/sdk/testing/fake_world.h"

namespace portico::sdk::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kGroup[] = "test.portico.io";

std::string Probe(std::string_view name, std::string_view spec) {
  return R"({"apiVersion":"test.portico.io/v1","kind":"Probe","metadata":{"name":")" +
         std::string(name) + R"(","namespace":"ns1"},"spec":)" + std::string(spec) + "}";
}

std::string Apply(std::string_view status, std::string_view topic, std::string_view body,
                  bool* applied = nullptr) {
  auto doc = json::Parse(status);
  EXPECT_TRUE(doc.ok());
  bool ok = FakeWorld::ApplyContribution(*doc, topic, body);
  if (applied != nullptr) *applied = ok;
  return json::Serialize(*doc);
}

TEST(fake_world, CountAddsToExistingFieldsOnly) {
  const std::string status =
      R"({"listeners":[{"name":"a.b","attachedRoutes":0},{"name":"c","attachedRoutes":5}]})";
  bool applied = false;
  EXPECT_EQ(Apply(status, "count:listeners[name=a.b].attachedRoutes", "", &applied),
            R"({"listeners":[{"name":"a.b","attachedRoutes":1},{"name":"c","attachedRoutes":5}]})");
  EXPECT_TRUE(applied);
  EXPECT_EQ(Apply(status, "count:listeners[name=c].attachedRoutes", "3"),
            R"({"listeners":[{"name":"a.b","attachedRoutes":0},{"name":"c","attachedRoutes":8}]})");
  for (const char* skipped :
       {"count:listeners[name=x].attachedRoutes", "count:other", "count:listeners[name=c].missing",
        "count:listeners[name=c]", "bump:listeners", "count:", "count:listeners[name=c"}) {
    EXPECT_EQ(Apply(status, skipped, "", &applied), status) << skipped;
    EXPECT_FALSE(applied) << skipped;
  }
}

TEST(fake_world, AppendCreatesWhatIsMissing) {
  EXPECT_EQ(Apply("{}", "append:parentsOf", R"({"a":1})"), R"({"parentsOf":[{"a":1}]})");
  EXPECT_EQ(Apply(R"({"parentsOf":[1]})", "append:parentsOf", "2"), R"({"parentsOf":[1,2]})");
  EXPECT_EQ(Apply("{}", "append:listeners[name=x].routes", R"("r")"),
            R"({"listeners":[{"name":"x","routes":["r"]}]})");
}

class fake_world_settle : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(host_.Load(PROBE_PLUGIN_PATH).ok()); }
  FakeHost host_;
};

TEST_F(fake_world_settle, ReprocessesUntilAFixedPoint) {
  FakeWorld world(host_);
  // b reads a's export and contributes to a; a exports what c exports... in reverse order.
  ASSERT_TRUE(world
                  .Put(Probe("b", R"({"get":[{"group":"test.portico.io","kind":"Probe",)"
                                  R"("namespace":"ns1","name":"a"}],"contribute":[{"target":{)"
                                  R"("group":"test.portico.io","kind":"Probe","namespace":"ns1",)"
                                  R"("name":"a"},"topic":"append:seenBy","value":"b"}]})"))
                  .ok());
  ASSERT_TRUE(world.Put(Probe("a", R"({"export":{"v":1}})")).ok());
  EXPECT_FALSE(world.Put(R"({"apiVersion":"x/v1","kind":"Nope","metadata":{"name":"n"}})").ok());
  ASSERT_TRUE(world.Settle().ok());
  const ObjectRef a{kGroup, "Probe", "ns1", "a"};
  const ObjectRef b{kGroup, "Probe", "ns1", "b"};
  EXPECT_THAT(*world.Outcome(b)->synced, HasSubstr(R"("results":[{"v":1}])"));
  EXPECT_EQ(world.OwnStatus(a), R"({"now":1700000000000})");
  EXPECT_EQ(world.AggregatedStatus(a), R"({"now":1700000000000,"seenBy":["b"]})");
  EXPECT_THAT(world.ContributionsTo(a), ElementsAre("Probe ns1/b append:seenBy"));

  world.Remove(a);
  ASSERT_TRUE(world.Settle().ok());
  EXPECT_THAT(*world.Outcome(b)->synced, HasSubstr(R"("results":[null])"));
  EXPECT_EQ(world.AggregatedStatus(a), std::nullopt);
  EXPECT_EQ(world.refs(), std::vector<ObjectRef>{b});
}

TEST_F(fake_world_settle, FailingObjectsKeepNoResult) {
  FakeWorld world(host_);
  ASSERT_TRUE(world.Put(Probe("a", R"({"export":{"v":1}})")).ok());
  ASSERT_TRUE(world.Settle().ok());
  ASSERT_TRUE(world.Put(Probe("a", R"({"fail":"broken"})")).ok());  // replaces, same ref
  ASSERT_TRUE(world.Settle().ok());
  const ObjectRef a{kGroup, "Probe", "ns1", "a"};
  EXPECT_THAT(world.Outcome(a)->status.message(), HasSubstr("spec.fail: broken"));
  EXPECT_EQ(host_.GetExport(a), std::nullopt);
  EXPECT_FALSE(world.Settle({ObjectRef{kGroup, "Probe", "ns1", "missing"}}).ok());
}

}  // namespace
}  // namespace portico::sdk::testing
