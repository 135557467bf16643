// The data plane end to end: a DataPlane with two workers, snapshots built by hand in the
// contribution formats (prepared and committed as GatewayRuntime does), real client sockets and
// real in-test upstreams on 127.0.0.1.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>

#include "core/plugin/plugin_loader.h"
#include "gateway/server/data_plane.h"
#include "gateway/server/proxy_test_util.h"

namespace portico::gateway::server {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using namespace ::portico::gateway::server::testing;

const std::string kListeners = "listener_set.v1";
const std::string kRoutes = "route_rules.v1";
const std::string kBackends = "backend.v1";
const std::string kGatewayOwner = "gateway.networking.k8s.io/Gateway/infra/web";
const std::string kRouteOwner = "gateway.networking.k8s.io/HTTPRoute/infra/r";

class ProxyTest : public ::testing::Test {
 protected:
  void SetUp() override { StartPlane(ProxySettings{}); }

  void StartPlane(ProxySettings settings, upstream::DnsCache::Resolver resolver = nullptr,
                  const core::KindRegistry* registry = nullptr) {
    plane_.reset();
    log_path_ = std::filesystem::temp_directory_path() /
                ("portico-proxy-test-" + std::to_string(getpid()) + ".log");
    std::filesystem::remove(log_path_);
    DataPlaneOptions options;
    options.workers = 2;
    options.default_address = "127.0.0.1";
    options.settings = settings;
    options.resolver = std::move(resolver);
    options.registry = registry;
    options.kernel_migrates = kernel_migrates_;
    if (with_access_log_) {
      auto sink = AccessLogSink::Open(log_path_.string());
      ASSERT_TRUE(sink.ok()) << sink.status().ToString();
      options.access_log = *sink;
    }
    plane_ = std::make_unique<DataPlane>(options);
    ASSERT_TRUE(plane_->Start().ok());
  }

  std::optional<bool> kernel_migrates_;  // DataPlaneOptions::kernel_migrates
  bool with_access_log_ = true;          // (its flush deadline wakes idle workers)

  void TearDown() override {
    plane_.reset();
    std::filesystem::remove(log_path_);
  }

  // Base: Gateway infra/web listening on 127.0.0.1:port_ ("" address = the default), Services
  // infra/a:80 -> upstream a_, infra/b:80 -> upstream b_, infra/empty:80 without endpoints.
  SnapshotBuilder Base() {
    SnapshotBuilder b;
    b.Put(kListeners, "gateway/infra/web/" + std::to_string(port_.port()), kGatewayOwner,
          ListenerSetEntry("infra", "web", "", port_.port(), HttpListener("http")));
    AddService(&b, "a", a_.port());
    AddService(&b, "b", b_.port());
    b.Put(kBackends, "ports/infra/empty", "/Service/infra/empty",
          ServicePortsEntry("infra", "empty", 80, 3000));
    return b;
  }

  // Route infra/r on infra/web's "http" listener.
  static void AddRoute(SnapshotBuilder* b, const std::vector<std::string>& rules,
                       const std::string& hostnames = "[]") {
    b->Put(kRoutes, "httproute/infra/r", kRouteOwner,
           RouteEntry("infra", "r", "infra", "web", "http", rules, hostnames));
  }

  // AddAdminAndRootRoutes: Prefix /admin -> infra/b, Prefix / -> infra/a (the path tests).
  static void AddAdminAndRootRoutes(SnapshotBuilder* b) {
    AddRoute(b, {RuleEntry(0, "Prefix", "/admin", BackendsAction({{"infra/b:80", 1}})),
                 RuleEntry(1, "Prefix", "/", BackendsAction({{"infra/a:80", 1}}))});
  }

  // Apply prepares and commits like GatewayRuntime::Apply and waits until every worker serves it.
  std::vector<core::SyncNack> Apply(const SnapshotBuilder& builder) {
    std::vector<core::SyncNack> nacks = ApplySnapshot(plane_.get(), builder, ++generation_);
    EXPECT_EQ(plane_->MinWorkerGeneration(), generation_);
    return nacks;
  }

  std::string ReadLog() {
    std::ifstream in(log_path_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  ReservedPort port_;
  TestUpstream a_{"a"};
  TestUpstream b_{"b"};
  std::unique_ptr<DataPlane> plane_;
  std::filesystem::path log_path_;
  uint64_t generation_ = 0;
};

TEST_F(ProxyTest, RoutesByPathAndForwardsHeaders) {
  SnapshotBuilder b = Base();
  AddRoute(&b, {RuleEntry(0, "Prefix", "/a", BackendsAction({{"infra/a:80", 1}})),
                RuleEntry(1, "Prefix", "/b", BackendsAction({{"infra/b:80", 1}}))});
  EXPECT_THAT(Apply(b), IsEmpty());

  TestClient client(port_.port());
  ASSERT_TRUE(client.connected());
  Response r = client.Get("/a/x?q=1", "Example.com:8080",
                          "Connection: keep-alive, X-Hop\r\nX-Hop: secret\r\nKeep-Alive: 5\r\n"
                          "X-Forwarded-For: 10.1.1.1\r\nX-Forwarded-Proto: https\r\n"
                          "TE: trailers\r\nX-Custom: kept\r\n");
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "upstream=a target=/a/x?q=1\n");
  ReceivedRequest seen = a_.last();
  EXPECT_EQ(seen.headers["host"], "Example.com:8080");  // preserved as sent
  EXPECT_EQ(seen.headers["x-forwarded-for"], "10.1.1.1, 127.0.0.1");
  EXPECT_EQ(seen.headers["x-forwarded-proto"], "http");
  EXPECT_EQ(seen.headers["x-custom"], "kept");
  EXPECT_EQ(seen.headers.count("x-hop"), 0u);
  EXPECT_EQ(seen.headers.count("keep-alive"), 0u);
  EXPECT_EQ(seen.headers.count("te"), 0u);
  EXPECT_EQ(seen.headers.count("connection"), 0u);

  r = client.Get("/b");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "upstream=b target=/b\n");
  EXPECT_EQ(r.headers["x-upstream"], "b");
}

TEST_F(ProxyTest, PathsAreRoutedAndForwardedInNormalForm) {
  SnapshotBuilder b = Base();
  AddAdminAndRootRoutes(&b);
  EXPECT_THAT(Apply(b), IsEmpty());
  TestClient client(port_.port());
  ASSERT_TRUE(client.connected());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/public/../admin/x", "upstream=b target=/admin/x\n"},
      {"//admin", "upstream=b target=/admin\n"},
      {"/./admin/./y/", "upstream=b target=/admin/y/\n"},
      {"/public\\..\\admin\\z", "upstream=b target=/admin/z\n"},     // '\\' is a slash
      {"/%61dmin/%7e?q=%41", "upstream=b target=/admin/~?q=%41\n"},  // the query is untouched
      {"/../../etc", "upstream=a target=/etc\n"}};
  for (const auto& [path, body] : cases) {
    Response r = client.Get(path);
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_EQ(r.body, body) << path;
  }
  size_t forwarded = a_.requests() + b_.requests();
  Response bad = client.Get("/x%zz");
  EXPECT_EQ(bad.status, 400);
  EXPECT_THAT(bad.body, HasSubstr("invalid path"));
  EXPECT_EQ(a_.requests() + b_.requests(), forwarded);
  EXPECT_TRUE(WaitFor([&] {  // logged as received, with the reason
    return ReadLog().find(R"("path":"/x%zz")") != std::string::npos &&
           ReadLog().find(R"("reason":"invalid_path")") != std::string::npos;
  }));
}

TEST_F(ProxyTest, EscapedSlashesAreRedirectedToTheDecodedPathByDefault) {
  SnapshotBuilder b = Base();
  AddAdminAndRootRoutes(&b);
  Apply(b);
  TestClient client(port_.port());
  Response r = client.Get("/public%2F..%2fadmin/x?q=%2F");
  EXPECT_EQ(r.status, 307);
  EXPECT_EQ(r.headers["location"], "/admin/x?q=%2F");  // the query is untouched
  r = client.Get("/a%5Cb");
  EXPECT_EQ(r.status, 307);
  EXPECT_EQ(r.headers["location"], "/a/b");  // decoded, a backslash is a slash
  EXPECT_EQ(a_.requests() + b_.requests(), 0u);
  r = client.Get("/admin/x?q=%2F");  // where the redirect leads: served
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "upstream=b target=/admin/x?q=%2F\n");
}

TEST_F(ProxyTest, EscapedSlashesCanBeKeptRejectedOrDecoded) {
  struct Case {
    http::EscapedSlashes action;
    int status;
    std::string body;
  };
  const std::vector<Case> cases = {
      {http::EscapedSlashes::kKeepUnchanged, 200, "upstream=a target=/public%2F..%2Fadmin\n"},
      {http::EscapedSlashes::kRejectRequest, 400, "invalid path: an escaped slash (%2F or %5C)\n"},
      {http::EscapedSlashes::kUnescapeAndForward, 200, "upstream=b target=/admin\n"}};
  for (const Case& c : cases) {
    ProxySettings settings;
    settings.escaped_slashes = c.action;
    StartPlane(settings);
    generation_ = 0;
    SnapshotBuilder b = Base();
    AddAdminAndRootRoutes(&b);
    Apply(b);
    TestClient client(port_.port());
    Response r = client.Get("/public%2f..%2Fadmin");
    EXPECT_EQ(r.status, c.status) << static_cast<int>(c.action);
    EXPECT_EQ(r.body, c.body) << static_cast<int>(c.action);
  }
}

TEST_F(ProxyTest, AnEndpointThatRefusesIsSkippedForTheNext) {
  // infra/two has a dead endpoint (a port nobody listens on) and a live one (a): every request
  // is served, whichever endpoint round robin picks first.
  uint16_t dead_port;
  {
    ReservedPort reserved;  // bound, not listening: connecting to it is refused
    dead_port = reserved.port();
  }
  SnapshotBuilder b = Base();
  b.Put(kBackends, "ports/infra/two", "/Service/infra/two",
        ServicePortsEntry("infra", "two", 80, 0));
  b.Put(kBackends, "endpoints/infra/two-1", "discovery.k8s.io/EndpointSlice/infra/two-1",
        EndpointsEntry("infra", "two", "two-1", dead_port, {"127.0.0.1"}));
  b.Put(kBackends, "endpoints/infra/two-2", "discovery.k8s.io/EndpointSlice/infra/two-2",
        EndpointsEntry("infra", "two", "two-2", a_.port(), {"127.0.0.1"}));
  AddRoute(&b, {RuleEntry(0, "Prefix", "/", BackendsAction({{"infra/two:80", 1}}))});
  Apply(b);
  TestClient client(port_.port());
  for (int i = 0; i < 6; ++i) {
    Response r = client.Get("/x");
    EXPECT_EQ(r.status, 200) << i << " " << r.body;
  }
  EXPECT_EQ(a_.requests(), 6u);
  // With the live endpoint gone too, nothing is left to try: 503.
  SnapshotBuilder only_dead = Base();
  only_dead.Put(kBackends, "ports/infra/two", "/Service/infra/two",
                ServicePortsEntry("infra", "two", 80, 0));
  only_dead.Put(kBackends, "endpoints/infra/two-1", "discovery.k8s.io/EndpointSlice/infra/two-1",
                EndpointsEntry("infra", "two", "two-1", dead_port, {"127.0.0.1"}));
  AddRoute(&only_dead, {RuleEntry(0, "Prefix", "/", BackendsAction({{"infra/two:80", 1}}))});
  Apply(only_dead);
  Response r = client.Get("/x");
  EXPECT_EQ(r.status, 503);
}

TEST_F(ProxyTest, NoRouteIs404) {
  SnapshotBuilder b = Base();
  AddRoute(&b, {RuleEntry(0, "Exact", "/only", BackendsAction({{"infra/a:80", 1}}))});
  Apply(b);
  TestClient client(port_.port());
  Response r = client.Get("/other");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.body, "no route\n");
  r = client.Get("/only");  // the connection stays usable
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(a_.requests(), 1u);
  EXPECT_TRUE(WaitFor([&] {  // counted when each request ends
    DataPlaneStats stats = plane_->Stats();
    return stats.requests == 2 && stats.responses[2] == 1 && stats.responses[4] == 1 &&
           stats.responses[5] == 0;
  }));
}

TEST_F(ProxyTest, InvalidBackendsAre500AndMissingEndpoints503) {
  SnapshotBuilder b = Base();
  AddRoute(&b, {RuleEntry(0, "Prefix", "/invalid", BackendsAction({{"", 1}})),
                RuleEntry(1, "Prefix", "/missing", BackendsAction({{"infra/nope:80", 1}})),
                RuleEntry(2, "Prefix", "/none", BackendsAction({})),
                RuleEntry(3, "Prefix", "/empty", BackendsAction({{"infra/empty:80", 1}}))});
  Apply(b);
  TestClient client(port_.port());
  EXPECT_EQ(client.Get("/invalid").status, 500);
  EXPECT_EQ(client.Get("/missing").status, 500);
  EXPECT_EQ(client.Get("/none").status, 500);
  EXPECT_EQ(client.Get("/empty").status, 503);
  EXPECT_EQ(a_.connections() + b_.connections(), 0u);
}

TEST_F(ProxyTest, BadOrClosingUpstreamIs502) {
  SnapshotBuilder b = Base();
  AddRoute(&b, {RuleEntry(0, "Prefix", "/", BackendsAction({{"infra/a:80", 1}}))});
  Apply(b);
  TestClient client(port_.port());
  Response r = client.Get("/bad");
  EXPECT_EQ(r.status, 502);
  r = client.Get("/close");
  EXPECT_EQ(r.status, 502);
  r = client.Get("/fine");
  EXPECT_EQ(r.status, 200);
}

// RetryAction is BackendsAction to infra/a with a retry policy.
std::string RetryAction(std::string_view retry_json) {
  std::string action = BackendsAction({{"infra/a:80", 1}});
  action.pop_back();
  return action + R"(,"retry":)" + std::string(retry_json) + "}";
}

size_t ReceivedFor(const TestUpstream& upstream, std::string_view target) {
  size_t n = 0;
  for (const ReceivedRequest& r : upstream.received()) n += r.target == target ? 1 : 0;
  return n;
}

TEST_F(ProxyTest, RetryPoliciesRetryListedStatusesAndConnectionErrors) {
  SnapshotBuilder b = Base();
  AddRoute(&b, {RuleEntry(0, "Prefix", "/",
                          RetryAction(R"({"codes":[503],"attempts":2,"backoffMs":1})"))});
  Apply(b);
  TestClient client(port_.port());
  // A listed status: the first try and two retries, then the last answer goes to the client.
  EXPECT_EQ(client.Get("/status/503").status, 503);
  EXPECT_EQ(ReceivedFor(a_, "/status/503"), 3u);
  // A status not listed is answered at once.
  EXPECT_EQ(client.Get("/status/500").status, 500);
  EXPECT_EQ(ReceivedFor(a_, "/status/500"), 1u);
  // A connection closed before the response head is a connection error: retried too, then
  // 503 (as Envoy answers a reset after retries).
  TestClient other(port_.port());
  EXPECT_EQ(other.Get("/close").status, 503);
  EXPECT_EQ(ReceivedFor(a_, "/close"), 3u);
  // A request with a body is streamed, not kept: never retried.
  TestClient poster(port_.port());
  ASSERT_TRUE(poster.Send("POST /close-post HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nbody"));
  EXPECT_EQ(poster.Read().status, 502);
  EXPECT_EQ(ReceivedFor(a_, "/close-post"), 1u);
  EXPECT_EQ(client.Get("/fine").status, 200);
}

TEST_F(ProxyTest, RetriesStopAtTheRequestTimeout) {
  SnapshotBuilder b = Base();
  // Every attempt times out after 100 ms; the whole request after 250 ms: the third attempt
  // never completes and the answer is the request timeout's 504.
  std::string action = BackendsAction({{"infra/a:80", 1}}, "[]", 250, 100);
  action.pop_back();
  action += R"(,"retry":{"codes":[],"attempts":10,"backoffMs":0}})";
  AddRoute(&b, {RuleEntry(0, "Prefix", "/", action)});
  Apply(b);
  TestClient client(port_.port());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(client.Get("/slow").status, 504);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, std::chrono::milliseconds(240));
  EXPECT_LT(took, std::chrono::milliseconds(2000));
  EXPECT_TRUE(WaitFor([&] { return ReceivedFor(a_, "/slow") >= 2; }));  // retried on timeout
  EXPECT_LE(ReceivedFor(a_, "/slow"), 4u);
}

TEST_F(ProxyTest, PluginFiltersRunInTheChainAndAFailingOneAnswersOnlyItsRequests) {
  core::PluginSet plugins = core::LoadPluginFiles({PROBE_PLUGIN_PATH});
  ASSERT_TRUE(plugins.RefusalLines().empty()) << plugins.RefusalLines()[0];
  StartPlane(ProxySettings{}, nullptr, &plugins.registry);
  SnapshotBuilder b = Base();
  const std::string header_id = "test.portico.io/ProbeFilter/infra/header";
  const std::string throw_id = "test.portico.io/ProbeFilter/infra/throw";
  const std::string bad_id = "test.portico.io/ProbeFilter/infra/bad";
  b.Put(PORTICO_FORMAT_FILTER_BINDING, header_id, header_id,
        R"({"filterType":"test.portico.io/Header","config":{"header":"x-probe","value":"v"}})");
  b.Put(PORTICO_FORMAT_FILTER_BINDING, throw_id, throw_id,
        R"({"filterType":"test.portico.io/Throw","config":{}})");
  b.Put(PORTICO_FORMAT_FILTER_BINDING, bad_id, bad_id,
        R"({"filterType":"test.portico.io/Header","config":{}})");  // no header: refused
  auto binding = [](const std::string& id) { return R"([{"binding":")" + id + R"("}])"; };
  AddRoute(
      &b, {RuleEntry(0, "Prefix", "/plug", BackendsAction({{"infra/a:80", 1}}, binding(header_id))),
           RuleEntry(1, "Prefix", "/throw", BackendsAction({{"infra/a:80", 1}}, binding(throw_id))),
           RuleEntry(2, "Prefix", "/bad", BackendsAction({{"infra/a:80", 1}}, binding(bad_id)))});
  std::vector<core::SyncNack> nacks = Apply(b);
  ASSERT_EQ(nacks.size(), 1u);  // the refused configuration nacks its owner, with the reason
  EXPECT_EQ(nacks[0].key.ToString(), bad_id);
  EXPECT_THAT(nacks[0].reason, HasSubstr("config: header is required"));

  TestClient client(port_.port());
  Response r = client.Get("/plug");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headers["x-probe-response"], "200");  // its response hook ran
  ASSERT_FALSE(a_.received().empty());
  EXPECT_EQ(a_.received().back().headers.at("x-probe"), "v");  // its request hook ran
  EXPECT_EQ(client.Get("/throw").status, 500);  // the plugin threw: this request only
  EXPECT_EQ(client.Get("/plug").status, 200);   // the gateway keeps serving
  EXPECT_EQ(client.Get("/bad").status, 500);    // a refused binding is missing: 500
  plane_.reset();                               // before the plugins' registry goes away
}

TEST_F(ProxyTest, RefusedConnectIs503) {
  ReservedPort nobody;  // bound, not listening: connects are refused
  SnapshotBuilder b = Base();
  AddService(&b, "down", nobody.port());
  AddRoute(&b, {RuleEntry(0, "Prefix", "/", BackendsAction({{"infra/down:80", 1}}))});
  Apply(b);
  TestClient client(port_.port());
  Response r = client.Get("/x");
  EXPECT_EQ(r.status, 503);
}

// FullBacklog is a listener on 127.0.0.1 that never accepts, with its accept queue filled: the
// kernel drops every further SYN, so a connect to it stays pending (a loopback stand-in for an
// unreachable host).
class FullBacklog {
 public:
  FullBacklog() {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        listen(listen_fd_, 0) != 0 ||
        getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return;
    }
    port_ = ntohs(addr.sin_port);
    // Connect until one stays pending for 300 ms: the queue is full from then on.
    for (int i = 0; i < 16 && !full_; ++i) {
      int fd = socket(AF_INET, SOCK_STREAM, 0);
      fcntl(fd, F_SETFL, O_NONBLOCK);
      fillers_.push_back(fd);
      if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) continue;
      pollfd p{fd, POLLOUT, 0};
      full_ = poll(&p, 1, 300) == 0;
    }
  }
  ~FullBacklog() {
    for (int fd : fillers_) close(fd);
    if (listen_fd_ >= 0) close(listen_fd_);
  }
  bool full() const { return full_; }
  uint16_t port() const { return port_; }

 private:
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  bool full_ = false;
  std::vector<int> fillers_;
};

TEST_F(ProxyTest, ConnectTimeoutIs503) {
  ProxySettings settings;
  settings.connect_timeout_ms = 200;
  StartPlane(settings);
  generation_ = 0;
  FullBacklog unreachable;
  ASSERT_TRUE(unreachable.full()) << "the accept queue never filled";
  SnapshotBuilder b = Base();
  AddService(&b, "hanging", unreachable.port());
  AddRoute(&b, {RuleEntry(0, "Prefix", "/", BackendsAction({{"infra/hanging:80", 1}}))});
  Apply(b);
  TestClient client(port_.port());
  auto start = std::chrono::steady_clock::now();
  Response r = client.Get("/x");
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.status, 503) << r.error;
  EXPECT_GE(elapsed, std::chrono::milliseconds(190));
  EXPECT_LT(elapsed, std::chrono::milliseconds(2500));
  EXPECT_TRUE(WaitFor([&] {
    return ReadLog().find("upstream_connect_timeout") != std::string::npos;
  })) << ReadLog();
}

TEST_F(ProxyTest, TimeoutsAre504) {
  SnapshotBuilder b = Base();
  AddRoute(
      &b,
      {RuleEntry(0, "Prefix", "/slow/backend", BackendsAction({{"infra/a:80", 1}}, "[]", 0, 200)),
       RuleEntry(1, "Prefix", "/slow/request", BackendsAction({{"infra/a:80", 1}}, "[]", 300, 0))});
  Apply(b);
  TestClient client(port_.port());
  auto start = std::chrono::steady_clock::now();
  Response r = client.Get("/slow/backend");
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.status, 504);
  EXPECT_GE(elapsed, std::chrono::milliseconds(190));
  EXPECT_LT(elapsed, std::chrono::milliseconds(2500));
  TestClient second(port_.port());
  r = second.Get("/slow/request");
  EXPECT_EQ(r.status, 504);
}

TEST_F(ProxyTest, ChunkedBodiesStreamBothWays) {
  SnapshotBuilder b = Base();
  AddRoute(&b, {RuleEntry(0, "Prefix", "/", BackendsAction({{"infra/a:80", 1}}))});
  Apply(b);
  TestClient client(port_.port());
  ASSERT_TRUE(client.Send(
      "POST /chunked HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5;name=value\r\nhello\r\n6\r\n world\r\n0\r\nX-Req-Trailer: 1\r\n\r\n"));
  Response r = client.Read();
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.chunked);
  EXPECT_EQ(r.body, "chunk-1chunk-2hello world");
  EXPECT_EQ(r.headers["trailer-x-trailer"], "t");
  ReceivedRequest seen = a_.last();
  EXPECT_TRUE(seen.chunked);
  EXPECT_EQ(seen.body, "hello world");
  EXPECT_EQ(seen.headers.count("content-length"), 0u);

  // An HTTP/1.0 client gets the chunked response decoded, delimited by close.
  TestClient old(port_.port());
  ASSERT_TRUE(old.Send("GET /chunked HTTP/1.0\r\nHost: example.com\r\n\r\n"));
  std::string raw;
  EXPECT_TRUE(old.ReadUntilClose(&raw));
  EXPECT_THAT(raw, HasSubstr("HTTP/1.0 200 OK\r\n"));
  EXPECT_THAT(raw, Not(HasSubstr("Transfer-Encoding")));
  EXPECT_THAT(raw, HasSubstr("\r\n\r\nchunk-1chunk-2"));
}

TEST_F(ProxyTest, LargeBodiesStreamWithBackpressure) {
  SnapshotBuilder b = Base();
  AddRoute(&b, {RuleEntry(0, "Prefix", "/", BackendsAction({{"infra/a:80", 1}}))});
  Apply(b);
  TestClient client(port_.port());
  const std::string body(3 * 1024 * 1024 + 17, 'b');
  ASSERT_TRUE(client.Send("POST /echo HTTP/1.1\r\nHost: example.com\r\nContent-Length: " +
                          std::to_string(body.size()) + "\r\n\r\n" + body));
  Response r = client.Read();
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body.size(), std::string("upstream=a target=/echo\n").size() + body.size());
  EXPECT_EQ(a_.last().body, body);

  r = client.Get("/big/5000000");
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.body.size(), 5000000u);
  EXPECT_EQ(r.body.find_first_not_of('x'), std::string::npos);
}

TEST_F(ProxyTest, KeepAliveReusesUpstreamConnections) {
  SnapshotBuilder b = Base();
  AddRoute(&b, {RuleEntry(0, "Prefix", "/", BackendsAction({{"infra/a:80", 1}}))});
  Apply(b);
  TestClient client(port_.port());
  for (int i = 0; i < 50; ++i) {
    Response r = client.Get("/n/" + std::to_string(i));
    ASSERT_EQ(r.status, 200) << i << " " << r.error;
  }
  EXPECT_EQ(a_.requests(), 50u);
  EXPECT_EQ(a_.connections(), 1u);  // one client connection -> one worker -> one pooled conn
  DataPlaneStats stats = plane_->Stats();
  EXPECT_EQ(stats.upstream_connects, 1u);
  EXPECT_GE(stats.upstream_reuses, 49u);

  // Sequential client connections reuse the pooled upstream connections of their workers.
  for (int i = 0; i < 10; ++i) {
    TestClient other(port_.port());
    ASSERT_EQ(other.Get("/c").status, 200);
  }
  EXPECT_LE(a_.connections(), static_cast<size_t>(plane_->workers()));
}

TEST_F(ProxyTest, PipelinedRequestsAreAnsweredInOrder) {
  SnapshotBuilder b = Base();
  AddRoute(&b, {RuleEntry(0, "Prefix", "/a", BackendsAction({{"infra/a:80", 1}})),
                RuleEntry(1, "Prefix", "/b", BackendsAction({{"infra/b:80", 1}}))});
  Apply(b);
  TestClient client(port_.port());
  ASSERT_TRUE(client.Send(
      "GET /a/1 HTTP/1.1\r\nHost: h\r\n\r\nGET /nothing HTTP/1.1\r\nHost: h\r\n\r\n"
      "POST /b/2 HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nxyzGET /a/3 HTTP/1.1\r\n"
      "Host: h\r\nConnection: close\r\n\r\n"));
  Response r1 = client.Read();
  Response r2 = client.Read();
  Response r3 = client.Read();
  Response r4 = client.Read();
  EXPECT_EQ(r1.body, "upstream=a target=/a/1\n");
  EXPECT_EQ(r2.status, 404);
  EXPECT_EQ(r3.body, "upstream=b target=/b/2\nxyz");
  EXPECT_EQ(r4.body, "upstream=a target=/a/3\n");
  EXPECT_EQ(r4.headers["connection"], "close");
  std::string rest;
  EXPECT_TRUE(client.ReadUntilClose(&rest));
  EXPECT_EQ(rest, "");
}

TEST_F(ProxyTest, MalformedRequestsGet400AndNothingIsForwarded) {
  SnapshotBuilder b = Base();
  AddRoute(&b, {RuleEntry(0, "Prefix", "/", BackendsAction({{"infra/a:80", 1}}))});
  Apply(b);
  const std::vector<std::string> malformed = {
      "GET / HTTP/1.1\r\nHost: h\r\nX-Folded: a\r\n b\r\n\r\n",  // obs-fold
      "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
      "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
      "0\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, identity\r\n\r\nabc",
      "GET / HTTP/1.1\r\nHost : h\r\n\r\n",          // space before :
      "GET / HTTP/1.1\nHost: h\n\n",                 // bare LF
      "GET / HTTP/1.1\r\nHost: h\rX: y\r\n\r\n",     // bare CR
      "GET / HTTP/1.1\r\n\r\n",                      // no Host
      "GET / HTTP/1.1\r\nHost: a.test:80x\r\n\r\n",  // Host not uri-host [":" port]
      "GET /a b HTTP/1.1\r\nHost: h\r\n\r\n",
      "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",  // TLS
  };
  for (const std::string& request : malformed) {
    TestClient client(port_.port());
    ASSERT_TRUE(client.Send(request));
    std::string raw;
    EXPECT_TRUE(client.ReadUntilClose(&raw)) << request;
    EXPECT_EQ(raw.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << request << " -> " << raw;
    EXPECT_THAT(raw, HasSubstr("Connection: close\r\n")) << request;
  }
  EXPECT_EQ(a_.connections(), 0u);
  EXPECT_EQ(a_.bytes_received(), 0u);
  EXPECT_EQ(a_.requests(), 0u);
  // 414, 431, 505, 501 as the codec says.
  auto status_of = [&](const std::string& request) {
    TestClient client(port_.port());
    client.Send(request);
    std::string raw;
    client.ReadUntilClose(&raw);
    return raw.substr(0, 12);
  };
  EXPECT_EQ(status_of("GET /" + std::string(9000, 'a') + " HTTP/1.1\r\nHost: h\r\n\r\n"),
            "HTTP/1.1 414");
  EXPECT_EQ(status_of("GET / HTTP/1.1\r\nHost: h\r\nX: " + std::string(70000, 'a') + "\r\n\r\n"),
            "HTTP/1.1 431");
  EXPECT_EQ(status_of("GET / HTTP/2.0\r\nHost: h\r\n\r\n"), "HTTP/1.1 505");
  EXPECT_EQ(status_of("CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n"), "HTTP/1.1 501");
  EXPECT_EQ(a_.bytes_received(), 0u);
}

TEST_F(ProxyTest, ListenerAddedAndRemovedWithoutRestart) {
  SnapshotBuilder b = Base();
  AddRoute(&b, {RuleEntry(0, "Prefix", "/", BackendsAction({{"infra/a:80", 1}}))});
  Apply(b);
  TestClient kept(port_.port());
  ASSERT_EQ(kept.Get("/1").status, 200);

  // Add a second Gateway on 127.0.0.2 with its own route.
  ReservedPort other_port("127.0.0.2");
  const std::string other_owner = "gateway.networking.k8s.io/Gateway/infra/other";
  SnapshotBuilder added = b;
  added.Put(
      kListeners, "gateway/infra/other/" + std::to_string(other_port.port()) + "/127.0.0.2",
      other_owner,
      ListenerSetEntry("infra", "other", "127.0.0.2", other_port.port(), HttpListener("http")));
  added.Put(kRoutes, "httproute/infra/r2", "gateway.networking.k8s.io/HTTPRoute/infra/r2",
            RouteEntry("infra", "r2", "infra", "other", "http",
                       {RuleEntry(0, "Prefix", "/", BackendsAction({{"infra/b:80", 1}}))}));
  EXPECT_THAT(Apply(added), IsEmpty());
  EXPECT_EQ(plane_->Listeners().size(), 2u);
  TestClient fresh(other_port.port(), "127.0.0.2");
  ASSERT_TRUE(fresh.connected());
  Response r = fresh.Get("/x");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headers["x-upstream"], "b");
  // The first listener's connection was untouched.
  EXPECT_EQ(kept.Get("/2").status, 200);

  // Remove it again: new connections are refused, the kept one still works.
  Apply(b);
  EXPECT_EQ(plane_->Listeners().size(), 1u);
  EXPECT_TRUE(WaitFor([&] { return !TestClient(other_port.port(), "127.0.0.2").connected(); }));
  EXPECT_EQ(kept.Get("/3").status, 200);
  EXPECT_EQ(TestClient(port_.port()).Get("/4").status, 200);
}

TEST_F(ProxyTest, BindFailureNacksTheOwningGateway) {
  // A plain listener (no SO_REUSEPORT) holds the port.
  int blocker = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(blocker, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(blocker, 1), 0);
  socklen_t length = sizeof(addr);
  getsockname(blocker, reinterpret_cast<sockaddr*>(&addr), &length);
  const uint16_t taken = ntohs(addr.sin_port);

  SnapshotBuilder b = Base();
  AddRoute(&b, {RuleEntry(0, "Prefix", "/", BackendsAction({{"infra/a:80", 1}}))});
  b.Put(kListeners, "gateway/infra/blocked/" + std::to_string(taken),
        "gateway.networking.k8s.io/Gateway/infra/blocked",
        ListenerSetEntry("infra", "blocked", "", taken, HttpListener("http")));
  std::vector<core::SyncNack> nacks = Apply(b);
  ASSERT_EQ(nacks.size(), 1u);
  EXPECT_EQ(nacks[0].key.ToString(), "gateway.networking.k8s.io/Gateway/infra/blocked");
  EXPECT_THAT(nacks[0].reason, HasSubstr("cannot listen on 127.0.0.1:" + std::to_string(taken)));
  EXPECT_EQ(TestClient(port_.port()).Get("/").status, 200);  // the other Gateway serves
  close(blocker);
}

TEST_F(ProxyTest, RedirectAnswersWithLocation) {
  SnapshotBuilder b = Base();
  const std::string redirect =
      R"({"backends":[],"redirect":{"scheme":"https","hostname":"example.org","port":443,)"
      R"("statusCode":301},"filters":[],"timeouts":{"requestMs":0,"backendRequestMs":0}})";
  const std::string prefix_redirect =
      R"({"backends":[],"redirect":{"path":{"type":"ReplacePrefixMatch","value":"/new"},)"
      R"("port":8080,"statusCode":302},"filters":[],)"
      R"("timeouts":{"requestMs":0,"backendRequestMs":0}})";
  AddRoute(
      &b, {RuleEntry(0, "Prefix", "/old", prefix_redirect), RuleEntry(1, "Prefix", "/", redirect)});
  Apply(b);
  TestClient client(port_.port());
  Response r = client.Get("/x/y?z=1", "example.com");
  EXPECT_EQ(r.status, 301);
  EXPECT_EQ(r.headers["location"], "https://example.org/x/y?z=1");
  r = client.Get("/old/page", "example.com:9999");
  EXPECT_EQ(r.status, 302);
  EXPECT_EQ(r.headers["location"], "http://example.com:8080/new/page");
  EXPECT_EQ(a_.connections(), 0u);
}

TEST_F(ProxyTest, FiltersModifyHeadersAndRewriteUrls) {
  SnapshotBuilder b = Base();
  const std::string filters =
      R"([{"builtin":"requestHeaders","set":[{"name":"X-Set","value":"new"}],)"
      R"("add":[{"name":"X-Add","value":"added"}],"remove":["X-Remove"]},)"
      R"({"builtin":"responseHeaders","set":[{"name":"X-Upstream","value":"hidden"}],)"
      R"("add":[{"name":"X-Resp","value":"r"}],"remove":["Content-Type"]},)"
      R"({"builtin":"urlRewrite","hostname":"rewritten.example",)"
      R"("path":{"type":"ReplacePrefixMatch","value":"/v2"}}])";
  AddRoute(&b, {RuleEntry(0, "Prefix", "/v1", BackendsAction({{"infra/a:80", 1}}, filters))});
  Apply(b);
  TestClient client(port_.port());
  Response r = client.Get("/v1/items?x=1", "example.com",
                          "X-Set: old\r\nX-Add: first\r\nX-Remove: gone\r\n"
                          "X-Echo: x-set, x-add, x-remove, host\r\n");
  ASSERT_EQ(r.status, 200) << r.error;
  EXPECT_EQ(r.body, "upstream=a target=/v2/items?x=1\n");
  EXPECT_EQ(r.headers["x-seen-x-set"], "new");
  EXPECT_EQ(r.headers["x-seen-x-add"], "first, added");
  EXPECT_EQ(r.headers["x-seen-x-remove"], "<none>");
  EXPECT_EQ(r.headers["x-seen-host"], "rewritten.example");
  EXPECT_EQ(r.headers["x-upstream"], "hidden");
  EXPECT_EQ(r.headers["x-resp"], "r");
  EXPECT_EQ(r.headers.count("content-type"), 0u);
}

TEST_F(ProxyTest, CorsPreflightsAreAnsweredAndAllowedOriginsGetCorsHeaders) {
  SnapshotBuilder b = Base();
  const std::string cors =
      R"([{"builtin":"cors","allowOrigins":["https://*.foo.com"],"allowMethods":["GET","PUT"],)"
      R"("allowHeaders":["x-a"],"exposeHeaders":["x-b"],"allowCredentials":true,"maxAge":60}])";
  AddRoute(&b, {RuleEntry(0, "Prefix", "/", BackendsAction({{"infra/a:80", 1}}, cors))});
  Apply(b);
  TestClient client(port_.port());
  // Preflights are the gateway's: allowed, then denied, on one kept-alive connection.
  ASSERT_TRUE(
      client.Send("OPTIONS /items HTTP/1.1\r\nHost: example.com\r\n"
                  "Origin: https://app.foo.com\r\nAccess-Control-Request-Method: PUT\r\n"
                  "Access-Control-Request-Headers: x-a\r\n\r\n"));
  Response r = client.Read();
  ASSERT_EQ(r.status, 200) << r.error;
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(r.headers["content-length"], "0");
  EXPECT_EQ(r.headers["access-control-allow-origin"], "https://app.foo.com");
  EXPECT_EQ(r.headers["access-control-allow-credentials"], "true");
  EXPECT_EQ(r.headers["access-control-allow-methods"], "GET, PUT");
  EXPECT_EQ(r.headers["access-control-allow-headers"], "x-a");
  EXPECT_EQ(r.headers["access-control-expose-headers"], "x-b");
  EXPECT_EQ(r.headers["access-control-max-age"], "60");
  EXPECT_EQ(r.headers["vary"], "Origin");
  ASSERT_TRUE(
      client.Send("OPTIONS /items HTTP/1.1\r\nHost: example.com\r\n"
                  "Origin: https://foo.com\r\nAccess-Control-Request-Method: PUT\r\n\r\n"));
  r = client.Read();
  ASSERT_EQ(r.status, 403) << r.error;
  EXPECT_EQ(r.headers.count("access-control-allow-origin"), 0u);
  EXPECT_EQ(r.headers.count("access-control-allow-methods"), 0u);
  EXPECT_EQ(a_.connections(), 0u);

  // Actual requests reach the backend with their Origin; the allowed one's answer says so.
  r = client.Get("/items", "example.com", "Origin: https://app.foo.com\r\nX-Echo: origin\r\n");
  ASSERT_EQ(r.status, 200) << r.error;
  EXPECT_EQ(r.body, "upstream=a target=/items\n");
  EXPECT_EQ(r.headers["x-seen-origin"], "https://app.foo.com");
  EXPECT_EQ(r.headers["access-control-allow-origin"], "https://app.foo.com");
  EXPECT_EQ(r.headers["access-control-allow-credentials"], "true");
  EXPECT_EQ(r.headers["access-control-expose-headers"], "x-b");
  EXPECT_EQ(r.headers["vary"], "Origin");
  r = client.Get("/items", "example.com", "Origin: https://evil.example\r\n");
  ASSERT_EQ(r.status, 200) << r.error;
  EXPECT_EQ(r.headers.count("access-control-allow-origin"), 0u);
  EXPECT_EQ(r.headers.count("access-control-allow-credentials"), 0u);
  EXPECT_EQ(r.headers["vary"], "Origin");
}

// ReadAtLeast reads from `fd` until `out` holds `n` bytes (false on EOF, error or the client's
// 5 s receive timeout).
bool ReadAtLeast(int fd, size_t n, std::string* out) {
  char chunk[4096];
  while (out->size() < n) {
    ssize_t got = recv(fd, chunk, sizeof(chunk), 0);
    if (got <= 0) return false;
    out->append(chunk, static_cast<size_t>(got));
  }
  return true;
}

constexpr std::string_view kWebSocketRequest =
    "GET /upgrade/chat HTTP/1.1\r\nHost: example.com\r\nConnection: keep-alive, Upgrade\r\n"
    "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";

TEST_F(ProxyTest, UpgradeTunnelsBytesBothWaysUntilBothSidesEnd) {
  SnapshotBuilder b = Base();
  AddRoute(&b, {RuleEntry(0, "Prefix", "/", BackendsAction({{"infra/a:80", 1}}))});
  Apply(b);
  TestClient client(port_.port());
  ASSERT_TRUE(client.Send(kWebSocketRequest));
  Response r = client.Read();
  ASSERT_EQ(r.status, 101) << r.error;
  EXPECT_EQ(r.headers["upgrade"], "websocket");
  EXPECT_EQ(r.headers["connection"], "upgrade");
  EXPECT_EQ(r.headers["x-upstream"], "a");
  // The upstream was asked to switch, with the client's WebSocket fields.
  ReceivedRequest seen = a_.last();
  EXPECT_EQ(seen.headers["upgrade"], "websocket");
  EXPECT_EQ(seen.headers["connection"], "upgrade");
  EXPECT_EQ(seen.headers["sec-websocket-key"], "dGhlIHNhbXBsZSBub25jZQ==");
  // Bytes go both ways, as often as the two sides like.
  for (const std::string& frame :
       {std::string("ping-1"), std::string(100000, 'w'), std::string("ping-3")}) {
    ASSERT_TRUE(client.Send(frame));
    std::string echoed;
    ASSERT_TRUE(ReadAtLeast(client.fd(), frame.size(), &echoed));
    EXPECT_EQ(echoed, frame);
  }
  // The client ends its side: the upstream sees EOF, says "bye" and closes; the client reads
  // that, then EOF.
  shutdown(client.fd(), SHUT_WR);
  std::string rest;
  EXPECT_TRUE(client.ReadUntilClose(&rest));
  EXPECT_EQ(rest, "bye\n");
  EXPECT_TRUE(WaitFor([&] {
    return ReadLog().find(R"("path":"/upgrade/chat","host":"example.com","status":101)") !=
           std::string::npos;
  }));
}

TEST_F(ProxyTest, UpgradeOnlyWhenAskedForAndIdleTunnelsClose) {
  ProxySettings settings;
  settings.tunnel_idle_timeout_ms = 200;
  StartPlane(settings);
  SnapshotBuilder b = Base();
  AddRoute(&b, {RuleEntry(0, "Prefix", "/", BackendsAction({{"infra/a:80", 1}}))});
  Apply(b);
  {
    // Upgrade without "upgrade" in Connection is no request to switch: the field is dropped
    // (hop-by-hop) and the upstream answers as usual.
    TestClient client(port_.port());
    Response r = client.Get("/upgrade/plain", "example.com", "Upgrade: websocket\r\n");
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(a_.last().headers.count("upgrade"), 0u);
    // A 101 nobody asked for is a bad upstream response.
    r = client.Get("/upgrade-always");
    EXPECT_EQ(r.status, 502);
  }
  // A tunnel without traffic is closed after tunnel_idle_timeout_ms.
  TestClient client(port_.port());
  ASSERT_TRUE(client.Send(kWebSocketRequest));
  ASSERT_EQ(client.Read().status, 101);
  std::string rest;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(client.ReadUntilClose(&rest));  // well before the client's 5 s receive timeout
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(4));
  EXPECT_TRUE(WaitFor(
      [&] { return ReadLog().find(R"("reason":"tunnel_idle_timeout")") != std::string::npos; }));
}

TEST_F(ProxyTest, RequestMirrorSendsACopyAndIgnoresItsAnswer) {
  SnapshotBuilder b = Base();
  // infra/dead:80 has an endpoint nobody listens on.
  ReservedPort dead;
  AddService(&b, "dead", dead.port());
  AddRoute(
      &b,
      {RuleEntry(
           0, "Prefix", "/m",
           BackendsAction({{"infra/a:80", 1}}, R"([{"builtin":"mirror","key":"infra/b:80"}])")),
       RuleEntry(1, "Prefix", "/never",
                 BackendsAction({{"infra/a:80", 1}}, R"([{"builtin":"mirror","key":"infra/b:80",)"
                                                     R"("percent":0}])")),
       RuleEntry(2, "Prefix", "/dead",
                 BackendsAction({{"infra/a:80", 1}},
                                R"([{"builtin":"mirror","key":"infra/dead:80"}])"))});
  Apply(b);
  TestClient client(port_.port());

  // Each copy's answer has been read (its connection parked) once none is in flight.
  auto settled = [&] { return plane_->Stats().mirror_in_flight == 0; };

  // A GET: the client gets a's answer; b gets the same request.
  Response r = client.Get("/m/x?q=1", "example.com", "X-Trace: t1\r\n");
  ASSERT_EQ(r.status, 200) << r.error;
  EXPECT_EQ(r.body, "upstream=a target=/m/x?q=1\n");
  ASSERT_TRUE(WaitFor([&] { return b_.requests() == 1; }));
  ReceivedRequest copy = b_.last();
  EXPECT_EQ(copy.method, "GET");
  EXPECT_EQ(copy.target, "/m/x?q=1");
  EXPECT_EQ(copy.headers["host"], "example.com");
  EXPECT_EQ(copy.headers["x-trace"], "t1");
  EXPECT_EQ(copy.headers.count("connection"), 0u);  // kept alive
  EXPECT_EQ(copy.headers["x-forwarded-for"], "127.0.0.1");
  ASSERT_TRUE(WaitFor(settled));

  // Bodies are copied whole, Content-Length and chunked.
  ASSERT_TRUE(
      client.Send("POST /m/post HTTP/1.1\r\nHost: example.com\r\nContent-Length: 11\r\n"
                  "\r\nhello world"));
  r = client.Read();
  ASSERT_EQ(r.status, 200) << r.error;
  EXPECT_EQ(r.body, "upstream=a target=/m/post\nhello world");
  ASSERT_TRUE(WaitFor([&] { return b_.requests() == 2; }));
  EXPECT_EQ(b_.last().body, "hello world");
  ASSERT_TRUE(WaitFor(settled));
  ASSERT_TRUE(
      client.Send("POST /m/chunks HTTP/1.1\r\nHost: example.com\r\n"
                  "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n there\r\n0\r\n\r\n"));
  r = client.Read();
  ASSERT_EQ(r.status, 200) << r.error;
  ASSERT_TRUE(WaitFor([&] { return b_.requests() == 3; }));
  EXPECT_EQ(b_.last().body, "hello there");
  EXPECT_TRUE(b_.last().chunked);
  ASSERT_TRUE(WaitFor(settled));
  // The three copies went over one kept-alive connection.
  EXPECT_EQ(b_.connections(), 1u);
  EXPECT_EQ(plane_->Stats().mirror_connects, 1u);

  // A parked connection the mirror closed meanwhile is not used: the next copy opens another.
  EXPECT_EQ(client.Get("/m/last", "example.com", "X-Close-After: 1\r\n").status, 200);
  ASSERT_TRUE(WaitFor([&] { return b_.requests() == 4 && settled(); }));
  EXPECT_EQ(client.Get("/m/after-close").status, 200);
  ASSERT_TRUE(WaitFor([&] { return b_.requests() == 5 && settled(); }));
  EXPECT_EQ(b_.last().target, "/m/after-close");
  EXPECT_EQ(b_.connections(), 2u);
  EXPECT_EQ(plane_->Stats().mirror_failures, 0u);

  // percent 0 mirrors nothing; a mirror that refuses costs the client nothing.
  EXPECT_EQ(client.Get("/never").status, 200);
  EXPECT_EQ(client.Get("/dead/x").status, 200);
  ASSERT_TRUE(WaitFor([&] { return plane_->Stats().mirror_failures == 1; }))
      << plane_->Stats().mirror_failures;
  EXPECT_EQ(plane_->Stats().mirror_requests, 5u);
  EXPECT_EQ(b_.requests(), 5u);
  EXPECT_EQ(a_.requests(), 7u);
}

// ExternalNameEntry is the ports entry of ExternalName Service infra/`name` -> `external`
// (port `port` listed unless 0).
std::string ExternalNameEntry(const std::string& name, const std::string& external, int port) {
  std::string ports = port == 0
                          ? "[]"
                          : R"([{"name":"http","port":)" + std::to_string(port) +
                                R"(,"protocol":"TCP","targetPort":)" + std::to_string(port) + "}]";
  return R"({"entry":"ports","namespace":"infra","service":")" + name +
         R"(","serviceType":"ExternalName","externalName":")" + external + R"(","ports":)" + ports +
         "}";
}

TEST_F(ProxyTest, ExternalNameServicesAreResolvedOffTheRequestPath) {
  std::atomic<int> lookups{0};
  StartPlane(ProxySettings{}, [&lookups](const std::string& name) {
    ++lookups;
    upstream::DnsCache::Addresses out;
    if (name != "upstream.test") return out;  // nowhere.test does not resolve
    upstream::DnsCache::ResolvedAddress a;
    auto* in = reinterpret_cast<sockaddr_in*>(&a.address);
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.length = sizeof(sockaddr_in);
    a.text = "127.0.0.1";
    out.push_back(a);
    return out;
  });
  generation_ = 0;
  SnapshotBuilder b = Base();
  const std::string a_port = std::to_string(a_.port());
  const std::string b_port = std::to_string(b_.port());
  b.Put(kBackends, "ports/infra/ext", "/Service/infra/ext",
        ExternalNameEntry("ext", "upstream.test.", a_.port()));
  b.Put(kBackends, "ports/infra/any", "/Service/infra/any",  // no ports: the route's port
        ExternalNameEntry("any", "upstream.test", 0));
  b.Put(kBackends, "ports/infra/gone", "/Service/infra/gone",
        ExternalNameEntry("gone", "nowhere.test", 80));
  AddRoute(&b, {RuleEntry(0, "Prefix", "/ext", BackendsAction({{"infra/ext:" + a_port, 1}})),
                RuleEntry(1, "Prefix", "/any", BackendsAction({{"infra/any:" + b_port, 1}})),
                RuleEntry(2, "Prefix", "/gone", BackendsAction({{"infra/gone:80", 1}}))});
  Apply(b);
  const int prefetched = lookups.load();
  EXPECT_GE(prefetched, 2);  // both names were tried while the configuration was prepared
  TestClient client(port_.port());
  Response r = client.Get("/ext/x", "app.example.com");
  ASSERT_EQ(r.status, 200) << r.error;
  EXPECT_EQ(r.body, "upstream=a target=/ext/x\n");
  r = client.Get("/any", "app.example.com");
  ASSERT_EQ(r.status, 200) << r.error;
  EXPECT_EQ(r.headers["x-upstream"], "b");
  r = client.Get("/gone");
  EXPECT_EQ(r.status, 503);
  EXPECT_TRUE(WaitFor(
      [&] { return ReadLog().find(R"("reason":"endpoint_unresolved")") != std::string::npos; }));
  // Requests to a resolved name do not resolve it again.
  for (int i = 0; i < 5; ++i) EXPECT_EQ(client.Get("/ext/y").status, 200);
  EXPECT_LE(lookups.load(), prefetched + 1);  // at most the one retry of nowhere.test
}

TEST_F(ProxyTest, ExternalNameLocalhostResolvesThroughTheSystemResolver) {
  SnapshotBuilder b = Base();
  b.Put(kBackends, "ports/infra/local", "/Service/infra/local",
        ExternalNameEntry("local", "localhost", a_.port()));
  AddRoute(&b, {RuleEntry(0, "Prefix", "/",
                          BackendsAction({{"infra/local:" + std::to_string(a_.port()), 1}}))});
  Apply(b);
  TestClient client(port_.port());
  Response r = client.Get("/via-dns");
  ASSERT_EQ(r.status, 200) << r.error;
  EXPECT_EQ(r.body, "upstream=a target=/via-dns\n");
}

TEST_F(ProxyTest, WeightedBackendsAreInterleavedSmoothly) {
  SnapshotBuilder b = Base();
  AddRoute(&b, {RuleEntry(0, "Prefix", "/",
                          BackendsAction({{"infra/a:80", 3}, {"infra/b:80", 1}, {"", 0}}))});
  Apply(b);
  TestClient client(port_.port());
  std::string sequence;
  for (int i = 0; i < 8; ++i) sequence += client.Get("/").headers["x-upstream"];
  EXPECT_EQ(sequence, "aabaaaba");  // smooth WRR: 3:1, never four a's in a row
}

TEST_F(ProxyTest, EndpointsAreUsedRoundRobin) {
  SnapshotBuilder b = Base();
  // Service infra/ab: two slices whose named port maps to a_'s and b_'s ports.
  b.Put(kBackends, "ports/infra/ab", "/Service/infra/ab", ServicePortsEntry("infra", "ab", 80, 1));
  b.Put(kBackends, "endpoints/infra/ab-1", "discovery.k8s.io/EndpointSlice/infra/ab-1",
        EndpointsEntry("infra", "ab", "ab-1", a_.port(), {"127.0.0.1"}));
  b.Put(kBackends, "endpoints/infra/ab-2", "discovery.k8s.io/EndpointSlice/infra/ab-2",
        EndpointsEntry("infra", "ab", "ab-2", b_.port(), {"127.0.0.1"}));
  AddRoute(&b, {RuleEntry(0, "Prefix", "/", BackendsAction({{"infra/ab:80", 1}}))});
  Apply(b);
  TestClient client(port_.port());
  std::string sequence;
  for (int i = 0; i < 6; ++i) sequence += client.Get("/").headers["x-upstream"];
  EXPECT_TRUE(sequence == "ababab" || sequence == "bababa") << sequence;
}

TEST_F(ProxyTest, InFlightRequestKeepsItsSnapshot) {
  SnapshotBuilder b = Base();
  AddRoute(&b, {RuleEntry(0, "Prefix", "/", BackendsAction({{"infra/a:80", 1}}))});
  Apply(b);
  TestClient client(port_.port());
  ASSERT_TRUE(client.Send("GET /delay/300 HTTP/1.1\r\nHost: h\r\n\r\n"));
  ASSERT_TRUE(WaitFor([&] { return a_.requests() == 1; }));
  SnapshotBuilder without = Base();  // the route is gone
  Apply(without);
  Response r = client.Read();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "delayed");
  EXPECT_EQ(client.Get("/next").status, 404);  // the next request sees the new snapshot
}

TEST_F(ProxyTest, DrainRefusesNewConnectionsAndLetsRequestsInFlightFinish) {
  SnapshotBuilder b = Base();
  AddRoute(&b, {RuleEntry(0, "Prefix", "/", BackendsAction({{"infra/a:80", 1}}))});
  Apply(b);
  TestClient idle(port_.port());
  ASSERT_EQ(idle.Get("/first").status, 200);  // keep-alive: now between requests
  TestClient busy(port_.port());
  ASSERT_TRUE(busy.Send("GET /delay/400 HTTP/1.1\r\nHost: h\r\n\r\n"));
  ASSERT_TRUE(WaitFor([&] { return a_.requests() == 2; }));

  std::future<bool> drained =
      std::async(std::launch::async, [&] { return plane_->Drain(std::chrono::seconds(10)); });
  std::string rest;
  EXPECT_TRUE(idle.ReadUntilClose(&rest));  // closed after drain_idle_timeout_ms, nothing sent
  EXPECT_EQ(rest, "");
  EXPECT_TRUE(WaitFor([&] { return !TestClient(port_.port()).connected(); }));  // refused
  std::string raw;
  EXPECT_TRUE(busy.ReadUntilClose(&raw));  // the answer, then the close
  EXPECT_EQ(raw.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << raw;
  EXPECT_THAT(raw, HasSubstr("Connection: close\r\n"));
  EXPECT_THAT(raw, HasSubstr("delayed"));
  EXPECT_TRUE(drained.get());
  EXPECT_EQ(plane_->Stats().connections_open, 0u);
}

TEST_F(ProxyTest, DrainClosesIdleConnectionsAndReportsDrainedAtOnce) {
  ProxySettings settings;
  settings.drain_idle_timeout_ms = 0;  // idle connections close inside BeginDrain, outside Poll
  kernel_migrates_ = true;             // no handshake grace: the listeners close at once too
  with_access_log_ = false;            // nor a log flush: nothing wakes the workers after
  StartPlane(settings);
  SnapshotBuilder b = Base();
  AddRoute(&b, {RuleEntry(0, "Prefix", "/", BackendsAction({{"infra/a:80", 1}}))});
  Apply(b);
  std::vector<std::unique_ptr<TestClient>> idle;
  for (int i = 0; i < 4; ++i) {
    idle.push_back(std::make_unique<TestClient>(port_.port()));
    ASSERT_EQ(idle.back()->Get("/first").status, 200);
  }
  // Only idle connections: the drain closes them itself, and no event follows to wake the
  // workers. Each still reports drained in the iteration that freed its last connection (they
  // used to count the closed ones until the drain timed out).
  const auto started = std::chrono::steady_clock::now();
  EXPECT_TRUE(plane_->Drain(std::chrono::seconds(5)));
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_LT(took, std::chrono::milliseconds(1000));  // not the 5 s timeout
  for (auto& client : idle) {
    std::string rest;
    EXPECT_TRUE(client->ReadUntilClose(&rest));  // a clean close, nothing sent
    EXPECT_EQ(rest, "");
  }
  EXPECT_EQ(plane_->Stats().connections_open, 0u);
}

TEST_F(ProxyTest, DrainAnswersARequestOnAnIdleConnectionWithClose) {
  ProxySettings settings;
  settings.drain_idle_timeout_ms = 5'000;
  StartPlane(settings);
  SnapshotBuilder b = Base();
  AddRoute(&b, {RuleEntry(0, "Prefix", "/", BackendsAction({{"infra/a:80", 1}}))});
  Apply(b);
  TestClient idle(port_.port());
  ASSERT_EQ(idle.Get("/first").status, 200);
  std::future<bool> drained =
      std::async(std::launch::async, [&] { return plane_->Drain(std::chrono::seconds(10)); });
  EXPECT_TRUE(WaitFor([&] { return !TestClient(port_.port()).connected(); }));  // draining
  // The client reuses its keep-alive connection during the drain: answered, and told to close.
  ASSERT_TRUE(idle.Send("GET /again HTTP/1.1\r\nHost: h\r\n\r\n"));
  std::string raw;
  EXPECT_TRUE(idle.ReadUntilClose(&raw));
  EXPECT_EQ(raw.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << raw;
  EXPECT_THAT(raw, HasSubstr("Connection: close\r\n"));
  EXPECT_TRUE(drained.get());
  EXPECT_EQ(plane_->Stats().connections_open, 0u);
}

TEST_F(ProxyTest, DrainGivesUpAfterItsTimeout) {
  SnapshotBuilder b = Base();
  AddRoute(&b, {RuleEntry(0, "Prefix", "/", BackendsAction({{"infra/a:80", 1}}))});
  Apply(b);
  TestClient busy(port_.port());
  ASSERT_TRUE(busy.Send("GET /slow HTTP/1.1\r\nHost: h\r\n\r\n"));  // answered after 3 s
  ASSERT_TRUE(WaitFor([&] { return a_.requests() == 1; }));
  EXPECT_FALSE(plane_->Drain(std::chrono::milliseconds(100)));
  plane_->Stop();  // closes what is left
  std::string raw;
  EXPECT_TRUE(busy.ReadUntilClose(&raw));
  EXPECT_EQ(raw, "");
}

TEST_F(ProxyTest, AccessLogHasOneJsonLinePerRequest) {
  SnapshotBuilder b = Base();
  AddRoute(&b, {RuleEntry(0, "Prefix", "/a", BackendsAction({{"infra/a:80", 1}}))});
  Apply(b);
  TestClient client(port_.port());
  client.Get("/a/logged?k=\"v\"", "log.example");
  client.Get("/nowhere", "log.example");
  ASSERT_TRUE(WaitFor([&] {
    std::string log = ReadLog();
    return std::count(log.begin(), log.end(), '\n') >= 2;
  }));
  std::string log = ReadLog();
  EXPECT_THAT(log, HasSubstr(R"("client":"127.0.0.1","method":"GET","path":"/a/logged?k=\"v\"",)"
                             R"("host":"log.example","status":200,)"));
  EXPECT_THAT(log, HasSubstr(R"("upstream":"127.0.0.1:)" + std::to_string(a_.port()) +
                             R"(","route":"infra/r","rule":"0.0"})"));
  EXPECT_THAT(log, HasSubstr(R"("path":"/nowhere","host":"log.example","status":404,)"));
  EXPECT_THAT(log, HasSubstr(R"("reason":"no_route"})"));
}

TEST_F(ProxyTest, SlowHeadsTimeOutWith408) {
  ProxySettings settings;
  settings.header_read_timeout_ms = 200;
  StartPlane(settings);
  generation_ = 0;
  SnapshotBuilder b = Base();
  AddRoute(&b, {RuleEntry(0, "Prefix", "/", BackendsAction({{"infra/a:80", 1}}))});
  Apply(b);
  TestClient client(port_.port());
  ASSERT_TRUE(client.Send("GET / HTTP/1.1\r\nHost: h\r\n"));  // never finished
  std::string raw;
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(client.ReadUntilClose(&raw));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(2000));
  EXPECT_EQ(raw.rfind("HTTP/1.1 408", 0), 0u) << raw;
  EXPECT_EQ(a_.connections(), 0u);
}

TEST_F(ProxyTest, IdleConnectionsCloseAndBodyLimitsApply) {
  ProxySettings settings;
  settings.idle_timeout_ms = 200;
  settings.max_body_bytes = 10;
  StartPlane(settings);
  generation_ = 0;
  SnapshotBuilder b = Base();
  AddRoute(&b, {RuleEntry(0, "Prefix", "/", BackendsAction({{"infra/a:80", 1}}))});
  Apply(b);
  TestClient client(port_.port());
  ASSERT_EQ(client.Get("/").status, 200);
  std::string rest;
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(client.ReadUntilClose(&rest));  // closed by the gateway once idle
  EXPECT_EQ(rest, "");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(2000));

  TestClient big(port_.port());
  ASSERT_TRUE(big.Send("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n0123456789a"));
  EXPECT_EQ(big.Read().status, 413);
  TestClient chunked(port_.port());
  ASSERT_TRUE(
      chunked.Send("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                   "6\r\n012345\r\n6\r\n678901\r\n0\r\n\r\n"));
  EXPECT_EQ(chunked.Read().status, 413);
  TestClient small(port_.port());
  ASSERT_TRUE(small.Send("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n0123456789"));
  EXPECT_EQ(small.Read().status, 200);
}

}  // namespace
}  // namespace portico::gateway::server
