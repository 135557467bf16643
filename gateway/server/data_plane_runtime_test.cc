// DataPlane as the consumer of a real GatewayRuntime with the real Gateway, HTTPRoute and Service
// plugins: committed snapshots serve traffic, a bind failure nacks the Gateway and rolls it back
// while the rest keeps serving, and a deleted Gateway's listener closes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/runtime/gateway_runtime.h"
#include "core/runtime/routing/routing_test_util.h"
#include "gateway/server/data_plane.h"
#include "gateway/server/proxy_test_util.h"

namespace portico::gateway::server {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using namespace ::portico::core::routing::testing;
using namespace ::portico::gateway::server::testing;

std::string Ready(const std::string& address) {
  return R"([{"addresses":[")" + address +
         R"("],"ready":true,"serving":true,"terminating":false}])";
}

TEST(DataPlaneRuntimeTest, CommitsServeAndBindFailuresRollBack) {
  TestUpstream upstream("a");
  ReservedPort port;
  DataPlaneOptions options;
  options.workers = 2;
  options.default_address = "127.0.0.1";
  DataPlane plane(options);
  ASSERT_TRUE(plane.Start().ok());
  core::GatewayRuntime runtime(RoutingPlugins(), &plane);
  auto wait_for_workers = [&](uint64_t generation) {
    return WaitFor([&] { return plane.MinWorkerGeneration() == generation; });
  };

  const std::string up = std::to_string(upstream.port());
  core::ApplyResult r = runtime.Apply(
      {Upsert(GatewayKey("infra", "web"),
              GatewayView("infra", "web", {Listener("http", port.port())})),
       Upsert(
           ServiceKey("infra", "a"),
           ServiceView("infra", "a",
                       R"([{"name":"http","port":80,"protocol":"TCP","targetPort":)" + up + "}]")),
       Upsert(SliceKey("infra", "a-1"),
              SliceView("infra", "a-1", "a",
                        R"([{"name":"http","port":)" + up + R"(,"protocol":"TCP"}])",
                        Ready("127.0.0.1"))),
       Upsert(RouteKey("infra", "r"), RouteView("infra", "r", {Parent("infra", "web", "http")},
                                                {Rule(0, "", "infra/a:80")}))},
      true, 1);
  ASSERT_TRUE(r.committed);
  EXPECT_THAT(r.nacks, IsEmpty());
  ASSERT_TRUE(wait_for_workers(r.generation));
  TestClient client(port.port());
  Response response = client.Get("/hello");
  EXPECT_EQ(response.status, 200) << response.error;
  EXPECT_EQ(response.body, "upstream=a target=/hello\n");

  // A second Gateway on a port another socket holds (without SO_REUSEPORT): nacked, rolled back.
  int blocker = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(blocker, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(blocker, 1), 0);
  socklen_t length = sizeof(addr);
  getsockname(blocker, reinterpret_cast<sockaddr*>(&addr), &length);
  const uint16_t taken = ntohs(addr.sin_port);
  r = runtime.Apply({Upsert(GatewayKey("infra", "blocked"),
                            GatewayView("infra", "blocked", {Listener("http", taken)}))},
                    false, 2);
  ASSERT_EQ(r.nacks.size(), 1u);
  EXPECT_EQ(r.nacks[0].key, GatewayKey("infra", "blocked"));
  EXPECT_THAT(r.nacks[0].reason, HasSubstr("cannot listen on 127.0.0.1:" + std::to_string(taken)));
  EXPECT_FALSE(r.committed);  // nothing else changed
  EXPECT_EQ(plane.Listeners().size(), 1u);
  EXPECT_EQ(client.Get("/again").status, 200);
  close(blocker);

  // Deleting the Gateway closes its listener; its open connection answers 404 and closes.
  r = runtime.Apply({Delete(GatewayKey("infra", "web"))}, false, 3);
  ASSERT_TRUE(r.committed);
  ASSERT_TRUE(wait_for_workers(r.generation));
  EXPECT_TRUE(plane.Listeners().empty());
  EXPECT_TRUE(WaitFor([&] { return !TestClient(port.port()).connected(); }));
  EXPECT_EQ(client.Get("/gone").status, 404);
}

}  // namespace
}  // namespace portico::gateway::server
