// http_client_test.cc: server URLs, and what an unreachable server looks like. (Exchanges with a
// real server are covered by the admin server's tests.)
#include "controller/ctl/http_client.h"

#include <gtest/gtest.h>

#include "core/common/percent_encoding.h"

#include "controller/ctl/server_call.h"

namespace portico::ctl {
namespace {

TEST(HttpClientTest, ParsesServerUrls) {
  auto a = HttpClient::Create("http://127.0.0.1:5800/");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->host(), "127.0.0.1");
  EXPECT_EQ(a->port(), "5800");
  auto b = HttpClient::Create("localhost:9000");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->Server(), "localhost:9000");
  auto c = HttpClient::Create("http://[::1]:5800");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->host(), "::1");
  auto d = HttpClient::Create("http://example.com");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->port(), "80");
  EXPECT_FALSE(HttpClient::Create("https://x:1").ok());
  EXPECT_FALSE(HttpClient::Create("http://x:70000").ok());
  EXPECT_FALSE(HttpClient::Create("http://x:1/path").ok());
}

TEST(HttpClientTest, RefusedConnectionNamesTheServer) {
  // Port 1 on loopback: nothing listens there in a test sandbox.
  ServerOptions options{"http://127.0.0.1:1"};
  auto answer = CallServer(options, "GET", "/healthz");
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(answer.status().message().find("127.0.0.1:1"), std::string::npos);
}

TEST(HttpClientTest, BuildsObjectPaths) {
  EXPECT_EQ(ObjectsPath("httproutes", "web", "default"),
            "/api/v1/objects/httproutes/web?namespace=default");
  EXPECT_EQ(ObjectsPath("Gateway.gateway.networking.k8s.io", "", ""),
            "/api/v1/objects/Gateway.gateway.networking.k8s.io");
  EXPECT_EQ(core::PercentEncode("a b/c"), "a%20b%2Fc");
}

}  // namespace
}  // namespace portico::ctl
