// admin_server_test.cc: the generic AdminServer over a real socket with a trivial handler:
// framing, keep-alive, 100-continue, body limit, handler exceptions, bind failures and the Server
// header. The controller's routes over this server are tested in controller/admin.
#include "core/admin/admin_server.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace portico::core::admin {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr size_t kBodyLimit = 1024;

AdminResponse Echo(const AdminRequest& request) {
  if (request.path == "/throw") throw std::runtime_error("boom");
  std::string body = "{\"method\":\"" + request.method + "\",\"path\":\"" + request.path +
                     "\",\"bytes\":" + std::to_string(request.body.size()) + "}";
  return JsonResponse(200, body);
}

class CoreAdminServerTest : public ::testing::Test {
 protected:
  void SetUp() override { StartWith(""); }

  void StartWith(const std::string& token) {
    AdminServerOptions options;
    options.port = 0;
    options.max_body_bytes = kBodyLimit;
    options.server_name = "portico-test";
    options.bearer_token = token;
    server_ = std::make_unique<AdminServer>(options, Echo);
    ASSERT_TRUE(server_->Start().ok());
    ASSERT_NE(server_->port(), 0);
  }

  // Raw sends bytes on a fresh connection and reads until the server closes it.
  std::string Raw(const std::string& bytes) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(server_->port());
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    timeval timeout{10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    size_t sent = 0;
    while (sent < bytes.size()) {
      ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    std::string out;
    char buffer[4096];
    ssize_t n;
    while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0)
      out.append(buffer, static_cast<size_t>(n));
    close(fd);
    return out;
  }

  std::unique_ptr<AdminServer> server_;
};

TEST_F(CoreAdminServerTest, KeepAliveDecodedPathAndServerHeader) {
  std::string two =
      Raw("GET /a%20b?x=1 HTTP/1.1\r\nHost: x\r\n\r\n"
          "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc");
  EXPECT_THAT(two, StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(two, HasSubstr("Server: portico-test"));
  EXPECT_THAT(two, HasSubstr("\"path\":\"/a b\""));
  EXPECT_THAT(two, HasSubstr("{\"method\":\"POST\",\"path\":\"/p\",\"bytes\":3}"));
}

TEST_F(CoreAdminServerTest, ContinueGarbageAndExceptions) {
  EXPECT_THAT(Raw("POST /p HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                  "Connection: close\r\nContent-Length: 2\r\n\r\nhi"),
              StartsWith("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200"));
  EXPECT_THAT(Raw("NOT HTTP AT ALL\r\n\r\n"), StartsWith("HTTP/1.1 400"));
  EXPECT_THAT(Raw("GET /throw HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
              StartsWith("HTTP/1.1 500"));
}

TEST_F(CoreAdminServerTest, BodyLimitAnswers413) {
  std::string big(kBodyLimit + 1, 'x');
  EXPECT_THAT(Raw("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(big.size()) +
                  "\r\n\r\n" + big),
              StartsWith("HTTP/1.1 413"));
  char size[16];
  std::snprintf(size, sizeof(size), "%zx", big.size());
  EXPECT_THAT(Raw("POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
                  std::string(size) + "\r\n" + big + "\r\n0\r\n\r\n"),
              StartsWith("HTTP/1.1 413"));
}

TEST_F(CoreAdminServerTest, BearerTokenGuardsAllButTheProbes) {
  EXPECT_THAT(Raw("GET /api HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
              StartsWith("HTTP/1.1 200"));  // no token configured: open
  server_.reset();
  StartWith("s3cret-token");
  std::string none = Raw("GET /api HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(none, StartsWith("HTTP/1.1 401"));
  EXPECT_THAT(none, HasSubstr("WWW-Authenticate: Bearer realm=\"portico-admin\""));
  EXPECT_THAT(none, Not(HasSubstr("\"path\"")));  // the handler never ran
  EXPECT_THAT(Raw("GET /api HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret-tokeX\r\n"
                  "Connection: close\r\n\r\n"),
              StartsWith("HTTP/1.1 401"));
  EXPECT_THAT(Raw("GET /api HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret\r\n"
                  "Connection: close\r\n\r\n"),
              StartsWith("HTTP/1.1 401"));
  EXPECT_THAT(Raw("GET /api HTTP/1.1\r\nHost: x\r\nAuthorization: bearer s3cret-token\r\n"
                  "Connection: close\r\n\r\n"),
              StartsWith("HTTP/1.1 200"));
  // A refusal keeps the connection: the next request with the token is answered.
  std::string two =
      Raw("GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
          "GET /b HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret-token\r\n"
          "Connection: close\r\n\r\n");
  EXPECT_THAT(two, StartsWith("HTTP/1.1 401"));
  EXPECT_THAT(two, HasSubstr("\"path\":\"/b\""));
  for (const char* probe : {"/healthz", "/readyz"}) {
    EXPECT_THAT(
        Raw(std::string("GET ") + probe + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
        StartsWith("HTTP/1.1 200"))
        << probe;
  }
}

TEST(CoreAdminServerStartTest, BindFailureNamesTheAddress) {
  AdminServerOptions options;
  options.port = 0;
  AdminServer first(options, Echo);
  ASSERT_TRUE(first.Start().ok());
  options.port = first.port();
  AdminServer second(options, Echo);
  Status status = second.Start();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_THAT(status.message(), HasSubstr("127.0.0.1:" + std::to_string(first.port())));
  first.Stop();
  first.Stop();  // idempotent
}

}  // namespace
}  // namespace portico::core::admin
