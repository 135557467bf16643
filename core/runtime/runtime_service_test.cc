// GatewayRuntime with the real service plugin (Service + EndpointSlice -> backend.v1).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/runtime/gateway_runtime.h"
#include "core/runtime/runtime_test_util.h"

namespace portico::core {
namespace {

using ::portico::core::testing::Delete;
using ::portico::core::testing::EntryJson;
using ::portico::core::testing::EntryOwner;
using ::portico::core::testing::ExpectEmptyStats;
using ::portico::core::testing::Ids;
using ::portico::core::testing::TestPlugins;
using ::portico::core::testing::Upsert;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const std::string kBackend = PORTICO_FORMAT_BACKEND;
const StoreKey kService{"", "Service", "infra", "web"};
const StoreKey kSlice{"discovery.k8s.io", "EndpointSlice", "infra", "web-abc12"};

std::string ServiceView(int port) {
  return R"({"metadata":{"name":"web","namespace":"infra","generation":1},"type":"ClusterIP",)"
         R"("headless":false,"ports":[{"name":"http","port":)" +
         std::to_string(port) + R"(,"protocol":"TCP","targetPort":3000}]})";
}

std::string SliceView(std::string_view address) {
  return R"({"metadata":{"name":"web-abc12","namespace":"infra","generation":1},)"
         R"("serviceName":"web","addressType":"IPv4",)"
         R"("ports":[{"name":"http","port":3000,"protocol":"TCP"}],)"
         R"("endpoints":[{"addresses":[")" +
         std::string(address) + R"("],"ready":true,"serving":true,"terminating":false}]})";
}

TEST(RuntimeServiceTest, ServiceAndSliceBecomeBackendEntries) {
  GatewayRuntime rt(TestPlugins(), nullptr);
  ApplyResult r =
      rt.Apply({Upsert(kSlice, SliceView("10.0.0.7")), Upsert(kService, ServiceView(80))}, true, 1);
  ASSERT_TRUE(r.committed);
  EXPECT_THAT(r.nacks, IsEmpty());
  auto s = rt.Current();
  EXPECT_THAT(Ids(*s),
              ElementsAre("backend.v1 endpoints/infra/web-abc12", "backend.v1 ports/infra/web"));
  EXPECT_EQ(EntryOwner(*s, kBackend, "ports/infra/web"), "/Service/infra/web");
  EXPECT_EQ(EntryOwner(*s, kBackend, "endpoints/infra/web-abc12"),
            "discovery.k8s.io/EndpointSlice/infra/web-abc12");
  EXPECT_THAT(*EntryJson(*s, kBackend, "ports/infra/web"), HasSubstr(R"("port":80)"));
  EXPECT_THAT(*EntryJson(*s, kBackend, "endpoints/infra/web-abc12"), HasSubstr("10.0.0.7"));
  EXPECT_EQ(rt.Stats().synced_by_kind.at("Service"), 1u);
  EXPECT_EQ(rt.Stats().synced_by_kind.at("EndpointSlice.discovery.k8s.io"), 1u);

  // Scaling touches only the slice's entry.
  r = rt.Apply({Upsert(kSlice, SliceView("10.0.0.8"))}, false, 2);
  ASSERT_TRUE(r.committed);
  CommitRecord record = rt.History().back();
  EXPECT_THAT(record.changed, ElementsAre(EntryKey(kBackend, "endpoints/infra/web-abc12")));
  EXPECT_THAT(record.added, IsEmpty());
  EXPECT_EQ(rt.Current()->Find(kBackend, "ports/infra/web")->json,
            s->Find(kBackend, "ports/infra/web")->json);  // the same bytes, shared

  // A view the handler cannot translate is nacked and the Service keeps its last good version.
  SyncedChange bad = Upsert(kService, "[]");
  r = rt.Apply({bad}, false, 3);
  EXPECT_FALSE(r.committed);
  ASSERT_EQ(r.nacks.size(), 1u);
  EXPECT_EQ(r.nacks[0].key, kService);
  EXPECT_EQ(r.nacks[0].hash, bad.hash);
  EXPECT_EQ(r.nacks[0].reason, "synced view is not a JSON object");
  EXPECT_THAT(*EntryJson(*rt.Current(), kBackend, "ports/infra/web"), HasSubstr(R"("port":80)"));

  r = rt.Apply({Delete(kService), Delete(kSlice)}, false, 4);
  EXPECT_TRUE(r.committed);
  EXPECT_TRUE(rt.Current()->formats.empty());
  ExpectEmptyStats(rt.Stats());
}

}  // namespace
}  // namespace portico::core
