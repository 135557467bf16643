// backend_table_test: BackendTable from snapshots the real Service and EndpointSlice handlers
// produce through GatewayRuntime: the Service port / slice port join (named and numbered target
// ports), ready endpoints only, missing backends, stable indexes and sharing across rebuilds.
#include "core/runtime/routing/backend_table.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include "core/runtime/routing/routing_test_util.h"

namespace portico::core::routing {
namespace {

using testing::Delete;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::ServiceKey;
using testing::ServiceView;
using testing::SliceKey;
using testing::SliceView;
using testing::Upsert;
using testing::World;

std::vector<std::string> Endpoints(const Backend* b) {
  std::vector<std::string> out;
  if (b == nullptr) return {"<none>"};
  for (const Endpoint& e : b->endpoints) out.push_back(e.address + ":" + std::to_string(e.port));
  return out;
}

std::string Ready(const char* address, bool ready = true) {
  return std::string(R"({"addresses":[")") + address + R"("],"ready":)" +
         (ready ? "true" : "false") + R"(,"serving":true,"terminating":false})";
}

TEST(BackendTableTest, JoinsServicePortsWithSlicePorts) {
  World world;
  world.Apply({
      // Named targetPort: the slice port named like the Service port carries the number.
      Upsert(ServiceKey("infra", "web"),
             ServiceView("infra", "web",
                         R"([{"name":"http","port":80,"protocol":"TCP","targetPort":"web"},)"
                         R"({"name":"admin","port":9000,"protocol":"TCP","targetPort":9001}])")),
      Upsert(SliceKey("infra", "web-a"),
             SliceView("infra", "web-a", "web",
                       R"([{"name":"http","port":3000,"protocol":"TCP"},)"
                       R"({"name":"admin","protocol":"TCP"}])",
                       "[" + Ready("10.0.0.8") + "," + Ready("10.0.0.7") + "," +
                           Ready("10.0.0.9", false) + "]")),
      Upsert(SliceKey("infra", "web-b"),
             SliceView("infra", "web-b", "web", R"([{"name":"http","port":3000,"protocol":"TCP"}])",
                       "[" + Ready("10.0.0.7") + "," + Ready("10.0.1.1") + "]")),
      // Numbered targetPort, unnamed port; IPv6 endpoints.
      Upsert(ServiceKey("infra", "api"),
             ServiceView("infra", "api",
                         R"([{"name":"","port":8080,"protocol":"TCP","targetPort":3000}])")),
      Upsert(SliceKey("infra", "api-6"),
             SliceView("infra", "api-6", "api", R"([{"name":"","port":3000,"protocol":"TCP"}])",
                       "[" + Ready("::1") + "]", "IPv6")),
      // A Service without slices.
      Upsert(ServiceKey("infra", "empty"),
             ServiceView("infra", "empty", R"([{"name":"","port":80,"protocol":"TCP"}])")),
  });
  std::shared_ptr<const BackendTable> table = world.Backends();
  EXPECT_THAT(Endpoints(table->Find("infra/web:80")),
              ElementsAre("10.0.0.7:3000", "10.0.0.8:3000", "10.0.1.1:3000"));  // ready, unique
  // A slice port without a number means the Service port's numeric targetPort.
  EXPECT_THAT(Endpoints(table->Find("infra/web:9000")),
              ElementsAre("10.0.0.7:9001", "10.0.0.8:9001"));
  EXPECT_THAT(Endpoints(table->Find("infra/api:8080")), ElementsAre("::1:3000"));
  EXPECT_THAT(Endpoints(table->Find("infra/empty:80")), IsEmpty());  // exists: 503
  EXPECT_EQ(table->Find("infra/web:81"), nullptr);                   // no such port: 500
  EXPECT_EQ(table->Find("infra/nope:80"), nullptr);
  EXPECT_EQ(table->Find(""), nullptr);

  const Endpoint& v4 = table->Find("infra/web:80")->endpoints[0];
  ASSERT_EQ(v4.sockaddr_len, sizeof(sockaddr_in));
  const auto* sa = reinterpret_cast<const sockaddr_in*>(&v4.sockaddr);
  EXPECT_EQ(ntohs(sa->sin_port), 3000);
  EXPECT_EQ(table->Find("infra/api:8080")->endpoints[0].sockaddr_len, sizeof(sockaddr_in6));

  // Dense indexes below index_limit().
  std::set<uint32_t> indexes;
  for (const Backend* b : table->All()) {
    EXPECT_LT(b->index, table->index_limit());
    indexes.insert(b->index);
  }
  EXPECT_EQ(indexes.size(), table->size());
  EXPECT_EQ(table->size(), 4u);
}

TEST(BackendTableTest, RebuildsKeepIndexesAndShareUnchangedServices) {
  World world;
  world.Apply({Upsert(ServiceKey("infra", "a"),
                      ServiceView("infra", "a", R"([{"name":"","port":80,"protocol":"TCP"}])")),
               Upsert(ServiceKey("infra", "b"),
                      ServiceView("infra", "b", R"([{"name":"","port":80,"protocol":"TCP"}])")),
               Upsert(SliceKey("infra", "b-1"),
                      SliceView("infra", "b-1", "b", R"([{"name":"","port":80,"protocol":"TCP"}])",
                                "[" + Ready("10.0.0.1") + "]"))});
  std::shared_ptr<const BackendTable> first = world.Backends();
  EXPECT_EQ(world.Backends(), first);  // the same snapshot: the same table
  const Backend* a = first->Find("infra/a:80");
  const Backend* b = first->Find("infra/b:80");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  const uint32_t b_index = b->index;

  // Scaling b: a is shared, b is rebuilt with the same index.
  world.Apply({Upsert(SliceKey("infra", "b-1"),
                      SliceView("infra", "b-1", "b", R"([{"name":"","port":80,"protocol":"TCP"}])",
                                "[" + Ready("10.0.0.1") + "," + Ready("10.0.0.2") + "]"))});
  std::shared_ptr<const BackendTable> second = world.Backends();
  EXPECT_EQ(second->Find("infra/a:80"), a);
  EXPECT_EQ(second->Find("infra/b:80")->index, b_index);
  EXPECT_THAT(Endpoints(second->Find("infra/b:80")), ElementsAre("10.0.0.1:80", "10.0.0.2:80"));
  EXPECT_THAT(Endpoints(first->Find("infra/b:80")), ElementsAre("10.0.0.1:80"));  // unchanged

  // A deleted key frees its index for the next new key.
  const uint32_t a_index = a->index;
  world.Apply({Delete(ServiceKey("infra", "a"))});
  EXPECT_EQ(world.Backends()->Find("infra/a:80"), nullptr);
  world.Apply({Upsert(ServiceKey("infra", "c"),
                      ServiceView("infra", "c", R"([{"name":"","port":80,"protocol":"TCP"}])"))});
  EXPECT_EQ(world.Backends()->Find("infra/c:80")->index, a_index);
  EXPECT_EQ(world.Backends()->Find("infra/b:80")->index, b_index);

  // Slices without their Service make no backend.
  world.Apply({Delete(ServiceKey("infra", "b"))});
  EXPECT_EQ(world.Backends()->Find("infra/b:80"), nullptr);
}

TEST(BackendTableTest, ExternalNameResolvesTheDnsNameOnAnyPort) {
  World world;
  world.Apply(
      {Upsert(ServiceKey("infra", "ext"), ServiceView("infra", "ext", "[]", "ExternalName",
                                                      R"("externalName":"api.example.com.")"))});
  std::shared_ptr<const BackendTable> table = world.Backends();
  const Backend* b = table->Find("infra/ext:8443");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->external_name, "api.example.com");
  ASSERT_EQ(b->endpoints.size(), 1u);
  EXPECT_EQ(b->endpoints[0].address, "api.example.com");
  EXPECT_EQ(b->endpoints[0].port, 0);  // the key's port
  EXPECT_EQ(b->endpoints[0].sockaddr_len, 0u);
}

}  // namespace
}  // namespace portico::core::routing
