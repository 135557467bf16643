// The ConfigSync server end to end: a real gRPC client on 127.0.0.1 against a real ObjectStore
// and SyncLinks, with a fake host (readiness, server id) and a recording feedback sink.
#include "controller/sync/sync_server.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <thread>

#include "controller/sync/sync_test_util.h"
#include "portico/sync/v1/sync.grpc.pb.h"

namespace portico::controller::sync {
namespace {

using namespace testing;  // NOLINT: the test helpers
namespace pb = portico::sync::v1;
using std::chrono::milliseconds;
using std::chrono::seconds;

// TestGateway is a Watch client: a reader thread queues every message.
class TestGateway {
 public:
  explicit TestGateway(uint16_t port)
      : channel_(grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                     grpc::InsecureChannelCredentials())),
        stub_(pb::ConfigSync::NewStub(channel_)) {
    context_.set_deadline(std::chrono::system_clock::now() + seconds(120));
    stream_ = stub_->Watch(&context_);
    reader_ = std::thread([this] {
      pb::WatchResponse m;
      while (stream_->Read(&m)) {
        std::lock_guard lock(mu_);
        messages_.push_back(m);
        cv_.notify_all();
      }
      grpc::Status status = stream_->Finish();
      std::lock_guard lock(mu_);
      status_ = status;
      closed_ = true;
      cv_.notify_all();
    });
  }
  ~TestGateway() {
    context_.TryCancel();
    reader_.join();
  }

  void Hello(const HelloOptions& options) {
    pb::WatchRequest request;
    *request.mutable_hello() = MakeHello(options);
    ASSERT_TRUE(stream_->Write(request));
  }
  void Ack(uint64_t version, std::vector<pb::Nack> nacks = {}) {
    pb::WatchRequest request;
    request.mutable_ack()->set_version(version);
    for (auto& n : nacks) *request.mutable_ack()->add_nacks() = n;
    ASSERT_TRUE(stream_->Write(request));
  }
  void Send(const pb::WatchRequest& request) { ASSERT_TRUE(stream_->Write(request)); }
  void Close() { stream_->WritesDone(); }

  // Next returns the next message that is not a heartbeat (all when `heartbeats`).
  std::optional<pb::WatchResponse> Next(bool heartbeats = false,
                                        milliseconds timeout = seconds(10)) {
    std::unique_lock lock(mu_);
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      while (!messages_.empty()) {
        pb::WatchResponse m = std::move(messages_.front());
        messages_.pop_front();
        if (m.has_heartbeat() && !heartbeats) {
          ++heartbeats_;
          continue;
        }
        return m;
      }
      if (closed_) return std::nullopt;
      if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && messages_.empty()) {
        return std::nullopt;
      }
    }
  }
  // Pending: messages received and not taken yet (heartbeats excluded).
  size_t Pending() {
    std::lock_guard lock(mu_);
    size_t n = 0;
    for (const auto& m : messages_) n += m.has_heartbeat() ? 0 : 1;
    return n;
  }

  struct Round {
    bool snapshot = false;
    std::vector<pb::WatchResponse> messages;
    std::map<std::string, pb::Event> events;
    uint64_t from = 0;  // batch
    uint64_t to = 0;    // batch end, or snapshot version
    std::string server_id;
  };
  // ReadRound reads one snapshot or one batch up to its end message.
  Round ReadRound() {
    Round round;
    while (auto m = Next()) {
      round.messages.push_back(*m);
      if (m->has_snapshot()) {
        round.snapshot = true;
        for (const auto& e : m->snapshot().events()) round.events[KeyString(e.key())] = e;
      } else if (m->has_batch()) {
        for (const auto& e : m->batch().events()) round.events[KeyString(e.key())] = e;
      } else if (m->has_snapshot_end()) {
        round.snapshot = true;
        round.to = m->snapshot_end().version();
        round.server_id = m->snapshot_end().server_id();
        return round;
      } else if (m->has_batch_end()) {
        round.from = m->batch_end().from_version();
        round.to = m->batch_end().to_version();
        return round;
      } else {
        ADD_FAILURE() << "unexpected message " << m->ShortDebugString();
        return round;
      }
    }
    ADD_FAILURE() << "no complete snapshot or batch";
    return round;
  }

  std::optional<grpc::Status> WaitClosed(milliseconds timeout = seconds(10)) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, timeout, [&] { return closed_; })) return std::nullopt;
    return status_;
  }

 private:
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<pb::ConfigSync::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<pb::WatchRequest, pb::WatchResponse>> stream_;
  std::thread reader_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<pb::WatchResponse> messages_;
  int heartbeats_ = 0;
  bool closed_ = false;
  grpc::Status status_;
};

pb::Nack NackOf(const pb::Event& event, std::string reason) {
  pb::Nack n;
  *n.mutable_key() = event.key();
  n.set_hash(event.hash());
  n.set_reason(std::move(reason));
  return n;
}

class SyncServerTest : public ::testing::Test {
 protected:
  void StartServer(core::ObjectStoreOptions store_options = {}) {
    store_ = std::make_unique<core::ObjectStore>(store_options);
    SyncServerOptions options;
    options.port = 0;
    options.policies = TestPolicies();
    options.version = "1.2.3";
    options.poll_interval = milliseconds(20);
    pb::PluginInfo plugin;
    plugin.set_name("test-plugins");
    options.inventory.push_back(plugin);
    options_tweak_(options);
    server_ = std::make_unique<SyncServer>(std::move(options),
                                           SyncServerDeps{store_.get(), &links_, &host_, &sink_});
    Status started = server_->Start();
    ASSERT_TRUE(started.ok()) << started.message();
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }
  std::unique_ptr<TestGateway> Connect(const HelloOptions& hello) {
    auto gw = std::make_unique<TestGateway>(server_->port());
    gw->Hello(hello);
    return gw;
  }

  std::function<void(SyncServerOptions&)> options_tweak_ = [](SyncServerOptions&) {};
  std::unique_ptr<core::ObjectStore> store_;
  SyncLinks links_;
  FakeHost host_;
  FakeSink sink_;
  std::unique_ptr<SyncServer> server_;
};

HelloOptions ServingA() {
  HelloOptions o;
  o.gateways = {GatewayKey("a")};
  o.addresses = {"10.0.0.7"};
  return o;
}

TEST_F(SyncServerTest, SnapshotThenBatches) {
  StartServer();
  Put(*store_, links_, GatewayKey("a"), Body("a"));
  uint64_t v_r1 = Put(*store_, links_, RouteKey("r1"), Body("r1"), {GatewayKey("a")});
  uint64_t head = Put(*store_, links_, ServiceKey("s1"), Body("s1"));
  auto gw = Connect(ServingA());

  TestGateway::Round snapshot = gw->ReadRound();
  EXPECT_TRUE(snapshot.snapshot);
  EXPECT_EQ(snapshot.to, head);
  EXPECT_EQ(snapshot.server_id, "server-a");
  ASSERT_EQ(snapshot.events.size(), 3u);
  const pb::Event& r1 = snapshot.events.at(RouteKey("r1").ToString());
  EXPECT_EQ(r1.op(), pb::Event::OP_UPSERT);
  EXPECT_EQ(r1.body(), Body("r1"));
  EXPECT_EQ(r1.version(), v_r1);
  EXPECT_EQ(r1.hash(), store_->Get(RouteKey("r1"))->hash);
  gw->Ack(snapshot.to);
  ASSERT_TRUE(
      sink_.WaitFor(RouteKey("r1"), [](const auto& f) { return f && f->status == "True"; }));
  EXPECT_EQ(sink_.Get(RouteKey("r1"))->message, "applied by gateway gw1");
  // Each object's feedback is delivered on its own: wait for the Gateway's too.
  EXPECT_TRUE(sink_.WaitFor(GatewayKey("a"), [](const auto& f) {
    return f && f->addresses == std::vector<std::string>{"10.0.0.7"};
  }));

  uint64_t v_r2 = Put(*store_, links_, RouteKey("r2"), Body("r2"), {GatewayKey("a")});
  TestGateway::Round batch = gw->ReadRound();
  EXPECT_FALSE(batch.snapshot);
  EXPECT_EQ(batch.from, snapshot.to);
  EXPECT_EQ(batch.to, v_r2);
  ASSERT_EQ(batch.events.size(), 1u);
  EXPECT_EQ(batch.events.begin()->second.version(), v_r2);
  ASSERT_TRUE(sink_.WaitFor(RouteKey("r2"), [](const auto& f) {
    return f && f->status == "Unknown" && f->message == "waiting for gateway gw1";
  }));
  gw->Ack(batch.to);

  uint64_t v_del = Remove(*store_, links_, RouteKey("r1"));
  TestGateway::Round deleted = gw->ReadRound();
  EXPECT_EQ(deleted.from, v_r2);
  EXPECT_EQ(deleted.to, v_del);
  ASSERT_EQ(deleted.events.size(), 1u);
  const pb::Event& del = deleted.events.at(RouteKey("r1").ToString());
  EXPECT_EQ(del.op(), pb::Event::OP_DELETE);
  EXPECT_EQ(del.hash(), r1.hash());
  EXPECT_TRUE(del.body().empty());
  gw->Ack(deleted.to);
  ASSERT_TRUE(WaitUntil([&] {
    return server_->Gateways().size() == 1 && server_->Gateways()[0].acked_version == v_del;
  }));

  ConnectedGateway view = server_->Gateways()[0];
  EXPECT_EQ(view.name, "gw1");
  EXPECT_EQ(view.client_id, "client-1");
  EXPECT_EQ(view.gateways, std::vector<std::string>{"default/a"});
  EXPECT_EQ(view.state, "live");
  EXPECT_EQ(view.lag, 0u);
  EXPECT_EQ(view.synced_objects, 3u);
  ASSERT_EQ(view.plugins.size(), 1u);
  EXPECT_EQ(view.plugins[0].name, "test-plugins");
  // The inventory as the admin API shows it: kinds with a handler (not GatewayClass, announced
  // without the handler bit) and filter types.
  EXPECT_EQ(view.plugins[0].handlers,
            (std::vector<std::string>{
                "Gateway.gateway.networking.k8s.io", "HTTPRoute.gateway.networking.k8s.io",
                "TLSPolicy.portico.dev", "Service", "Secret", "Webhook.portico.dev"}));
  EXPECT_EQ(view.plugins[0].filter_types, std::vector<std::string>{"webhook (authz)"});
  auto synced = server_->GatewaySynced("gw1");
  ASSERT_TRUE(synced);
  EXPECT_EQ(synced->at(RouteKey("r2").ToString()), store_->Get(RouteKey("r2"))->hash);
  EXPECT_FALSE(server_->GatewaySynced("nobody"));
  SyncStats stats = server_->Stats();
  EXPECT_EQ(stats.connected, 1u);
  EXPECT_EQ(stats.snapshots, 1u);
  EXPECT_EQ(stats.batches, 2u);
  EXPECT_EQ(stats.events, 5u);
  EXPECT_EQ(stats.acks, 3u);
}

TEST_F(SyncServerTest, SnapshotChunksStayWithinOneMiB) {
  StartServer();
  std::string big(100 * 1024, 'x');
  for (int i = 0; i < 30; ++i) {
    Put(*store_, links_, ServiceKey("s" + std::to_string(i)), Body(big + std::to_string(i)));
  }
  auto gw = Connect(ServingA());
  TestGateway::Round snapshot = gw->ReadRound();
  EXPECT_EQ(snapshot.events.size(), 30u);
  size_t chunks = 0;
  for (const pb::WatchResponse& m : snapshot.messages) {
    EXPECT_LE(m.ByteSizeLong(), size_t{1} << 20);
    chunks += m.has_snapshot() ? 1 : 0;
  }
  EXPECT_GE(chunks, 3u);
  EXPECT_LE(chunks, 4u);
}

TEST_F(SyncServerTest, ChangesCoalesceWhileABatchIsUnacked) {
  StartServer();
  auto gw = Connect(ServingA());
  TestGateway::Round snapshot = gw->ReadRound();
  gw->Ack(snapshot.to);
  uint64_t v1 = Put(*store_, links_, ServiceKey("s"), Body("1"));
  TestGateway::Round first = gw->ReadRound();
  EXPECT_EQ(first.to, v1);
  // Not acked: these wait and coalesce (s twice, t once).
  Put(*store_, links_, ServiceKey("s"), Body("2"));
  Put(*store_, links_, ServiceKey("t"), Body("t"));
  uint64_t v4 = Put(*store_, links_, ServiceKey("s"), Body("3"));
  gw->Ack(first.to);
  TestGateway::Round second = gw->ReadRound();
  EXPECT_EQ(second.from, v1);  // nothing was sent in between
  EXPECT_EQ(second.to, v4);
  ASSERT_EQ(second.events.size(), 2u);
  EXPECT_EQ(second.events.at(ServiceKey("s").ToString()).body(), Body("3"));
}

TEST_F(SyncServerTest, RelistAfterTheLogWindow) {
  core::ObjectStoreOptions small;
  small.max_log_bytes = 600;
  StartServer(small);
  auto gw = Connect(ServingA());
  TestGateway::Round snapshot = gw->ReadRound();
  gw->Ack(snapshot.to);
  uint64_t v1 = Put(*store_, links_, ServiceKey("s0"), Body("0"));
  TestGateway::Round first = gw->ReadRound();  // unacked from here
  uint64_t last = 0;
  for (int i = 1; i <= 30; ++i) {
    last = Put(*store_, links_, ServiceKey("s" + std::to_string(i)), Body(std::to_string(i)));
  }
  ASSERT_GT(store_->Stats().min_from_version, v1);
  gw->Ack(first.to);
  TestGateway::Round again = gw->ReadRound();
  EXPECT_TRUE(again.snapshot);
  EXPECT_EQ(again.to, last);
  EXPECT_EQ(again.events.size(), 31u);
}

TEST_F(SyncServerTest, NeverResendsANackedHash) {
  StartServer();
  Put(*store_, links_, ServiceKey("bad"), Body("bad"));
  auto gw = Connect(ServingA());
  TestGateway::Round snapshot = gw->ReadRound();
  const pb::Event bad = snapshot.events.at(ServiceKey("bad").ToString());
  gw->Ack(snapshot.to, {NackOf(bad, "port 0 is not allowed")});
  ASSERT_TRUE(sink_.WaitFor(ServiceKey("bad"), [](const auto& f) {
    return f && f->status == "False" && f->reason == "Invalid" &&
           f->message == "rejected by gateway gw1: port 0 is not allowed";
  }));
  // An unrelated change, then a link change that recomputes everything: no resend.
  Put(*store_, links_, ServiceKey("ok"), Body("ok"));
  TestGateway::Round one = gw->ReadRound();
  EXPECT_EQ(one.events.count(ServiceKey("bad").ToString()), 0u);
  gw->Ack(one.to);
  links_.Set(RouteKey("x"), {GatewayKey("a")}, {});
  uint64_t v = Put(*store_, links_, ServiceKey("ok2"), Body("ok2"));
  TestGateway::Round two = gw->ReadRound();
  EXPECT_EQ(two.to, v);
  EXPECT_EQ(two.events.count(ServiceKey("bad").ToString()), 0u);
  EXPECT_EQ(two.events.count(ServiceKey("ok2").ToString()), 1u);
  gw->Ack(two.to);
  EXPECT_EQ(server_->GatewaySynced("gw1")->count(ServiceKey("bad").ToString()), 0u);
  ASSERT_EQ(server_->Gateways()[0].nacks.size(), 1u);
  EXPECT_EQ(server_->Stats().nacks, 1u);
  // A fixed object goes out again.
  Put(*store_, links_, ServiceKey("bad"), Body("fixed"));
  TestGateway::Round three = gw->ReadRound();
  ASSERT_EQ(three.events.count(ServiceKey("bad").ToString()), 1u);
  EXPECT_EQ(three.events.at(ServiceKey("bad").ToString()).body(), Body("fixed"));
}

TEST_F(SyncServerTest, ScopeRules) {
  options_tweak_ = [](SyncServerOptions& o) { o.settle_timeout = std::chrono::minutes(1); };
  StartServer();
  Put(*store_, links_, GatewayKey("a"), Body("a"), {ClassKey("other")}, {SecretKey("cert-a")});
  Put(*store_, links_, GatewayKey("b"), Body("b"), {}, {SecretKey("cert-b")});
  Put(*store_, links_, GatewayKey("c"), Body("c"), {ClassKey("portico")});
  Put(*store_, links_, ClassKey("portico"), Body("class"));
  Put(*store_, links_, RouteKey("r1"), Body("r1"), {GatewayKey("a")});
  Put(*store_, links_, RouteKey("r2"), Body("r2"), {GatewayKey("b")});
  Put(*store_, links_, RouteKey("r3"), Body("r3"), {GatewayKey("c")});
  Put(*store_, links_, ServiceKey("svc"), Body("svc"));
  Put(*store_, links_, SecretKey("cert-a"), Body("cert-a"));
  Put(*store_, links_, SecretKey("cert-b"), Body("cert-b"));
  Put(*store_, links_, GrantKey("grant"), Body("grant"));
  Put(*store_, links_, PolicyKey("tls"), Body("tls"), {GatewayKey("a")});
  HelloOptions hello = ServingA();
  hello.gateway_class = "portico";
  hello.without = {PolicyKey("x")};  // no TLSPolicy handler
  auto gw = Connect(hello);
  TestGateway::Round snapshot = gw->ReadRound();
  std::set<std::string> got;
  for (const auto& [key, e] : snapshot.events) got.insert(key);
  std::set<std::string> want = {GatewayKey("a").ToString(),   GatewayKey("c").ToString(),
                                RouteKey("r1").ToString(),    RouteKey("r3").ToString(),
                                ServiceKey("svc").ToString(), SecretKey("cert-a").ToString()};
  EXPECT_EQ(got, want);
  gw->Ack(snapshot.to);
  ASSERT_TRUE(sink_.WaitFor(PolicyKey("tls"), [](const auto& f) {
    return f && f->status == "False" && f->reason == "NoHandler" &&
           f->message == "gateway gw1 serves it but has no handler for TLSPolicy.portico.dev";
  }));
  ASSERT_TRUE(sink_.WaitFor(RouteKey("r2"), [](const auto& f) {
    return f && f->message == "no connected gateway serves it";
  }));
  EXPECT_FALSE(sink_.Get(GrantKey("grant")));  // never-synced kinds get no feedback
  ASSERT_TRUE(sink_.WaitFor(GatewayKey("c"), [](const auto& f) {  // served through its class
    return f && f->addresses == std::vector<std::string>{"10.0.0.7"};
  }));

  // Links move r2 in (with a store change) and r1 out (links only): upsert and delete. The
  // Gateway b's certificate follows b once b is attached to the class. Unsettled meanwhile, as
  // the reconciler is while it processes: no batch is cut between the steps of one change.
  host_.SetSettled(false);
  links_.Set(RouteKey("r1"), {GatewayKey("b")}, {});
  Put(*store_, links_, RouteKey("r2"), Body("r2 moved"), {GatewayKey("a")});
  host_.SetSettled(true);
  server_->Poke();
  TestGateway::Round moved = gw->ReadRound();
  ASSERT_EQ(moved.events.size(), 2u);
  EXPECT_EQ(moved.events.at(RouteKey("r1").ToString()).op(), pb::Event::OP_DELETE);
  EXPECT_EQ(moved.events.at(RouteKey("r2").ToString()).body(), Body("r2 moved"));
  gw->Ack(moved.to);

  links_.Set(GatewayKey("b"), {ClassKey("portico")}, {SecretKey("cert-b")});  // links only
  TestGateway::Round joined = gw->ReadRound();
  std::set<std::string> upserts;
  for (const auto& [key, e] : joined.events) {
    if (e.op() == pb::Event::OP_UPSERT) upserts.insert(key);
  }
  EXPECT_EQ(upserts, (std::set<std::string>{GatewayKey("b").ToString(), RouteKey("r1").ToString(),
                                            SecretKey("cert-b").ToString()}));
}

// An "attached" object goes with its parents and where its referrers go: a Webhook attached to a
// Gateway, or named by an HTTPRoute that sorts before it (the snapshot is built in key order:
// deciding it must not find its referrer already sent, and so moved from).
TEST_F(SyncServerTest, SnapshotsCarryWhatEarlierObjectsReference) {
  StartServer();
  Put(*store_, links_, GatewayKey("a"), Body("a"));
  Put(*store_, links_, RouteKey("r1"), Body("r1"), {GatewayKey("a")}, {WebhookKey("auth")});
  Put(*store_, links_, RouteKey("r2"), Body("r2"), {GatewayKey("b")}, {WebhookKey("other")});
  Put(*store_, links_, WebhookKey("auth"), Body("auth"));
  Put(*store_, links_, WebhookKey("other"), Body("other"));
  Put(*store_, links_, WebhookKey("policy"), Body("policy"), {GatewayKey("a")});
  auto gw = Connect(ServingA());
  TestGateway::Round snapshot = gw->ReadRound();
  std::set<std::string> got;
  for (const auto& [key, e] : snapshot.events) got.insert(key);
  EXPECT_EQ(
      got, (std::set<std::string>{GatewayKey("a").ToString(), RouteKey("r1").ToString(),
                                  WebhookKey("auth").ToString(), WebhookKey("policy").ToString()}));
}

TEST_F(SyncServerTest, ServerIdChangeSendsASnapshot) {
  StartServer();
  Put(*store_, links_, ServiceKey("s"), Body("s"));
  auto gw = Connect(ServingA());
  TestGateway::Round first = gw->ReadRound();
  gw->Ack(first.to);
  host_.SetServerId("server-b");
  server_->Poke();
  TestGateway::Round second = gw->ReadRound();
  EXPECT_TRUE(second.snapshot);
  EXPECT_EQ(second.server_id, "server-b");
  EXPECT_EQ(second.events.size(), 1u);
}

TEST_F(SyncServerTest, NothingIsSentBeforeReady) {
  host_.SetReady(false);
  StartServer();
  Put(*store_, links_, ServiceKey("s"), Body("s"));
  auto gw = Connect(ServingA());
  ASSERT_TRUE(WaitUntil([&] { return server_->Gateways().size() == 1; }));
  EXPECT_EQ(server_->Gateways()[0].state, "waiting for ready");
  Put(*store_, links_, ServiceKey("t"), Body("t"));  // wakes the stream: still nothing
  ASSERT_TRUE(WaitUntil([&] { return store_->Head() == 2; }));
  EXPECT_EQ(gw->Pending(), 0u);
  EXPECT_EQ(server_->Stats().snapshots, 0u);
  host_.SetReady(true);
  server_->Poke();
  auto m = gw->Next();
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->has_snapshot()) << m->ShortDebugString();  // the first thing ever sent
}

TEST_F(SyncServerTest, RejectsAFirstMessageThatIsNotAHello) {
  StartServer();
  TestGateway gw(server_->port());
  gw.Ack(3);
  auto m = gw.Next();
  ASSERT_TRUE(m);
  ASSERT_TRUE(m->has_rejected());
  EXPECT_EQ(m->rejected().reason(), "the first message must be a Hello");
  auto status = gw.WaitClosed();
  ASSERT_TRUE(status);
  EXPECT_EQ(status->error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(server_->Stats().rejected, 1u);
  EXPECT_TRUE(server_->Gateways().empty());
}

TEST_F(SyncServerTest, HeartbeatsCarryServerIdAndHead) {
  options_tweak_ = [](SyncServerOptions& o) { o.heartbeat_interval = milliseconds(50); };
  StartServer();
  uint64_t head = Put(*store_, links_, ServiceKey("s"), Body("s"));
  auto gw = Connect(ServingA());
  TestGateway::Round snapshot = gw->ReadRound();
  gw->Ack(snapshot.to);
  auto m = gw->Next(/*heartbeats=*/true);
  ASSERT_TRUE(m);
  ASSERT_TRUE(m->has_heartbeat()) << m->ShortDebugString();
  EXPECT_EQ(m->heartbeat().server_id(), "server-a");
  EXPECT_EQ(m->heartbeat().head(), head);
}

TEST_F(SyncServerTest, ReconnectResumesWithoutSnapshot) {
  StartServer();
  Put(*store_, links_, ServiceKey("s"), Body("s"));
  uint64_t v1 = 0;
  {
    auto gw = Connect(ServingA());
    TestGateway::Round snapshot = gw->ReadRound();
    v1 = snapshot.to;
    gw->Ack(v1);
    ASSERT_TRUE(WaitUntil([&] {
      return server_->Gateways().size() == 1 && server_->Gateways()[0].acked_version == v1;
    }));
    gw->Close();
    ASSERT_TRUE(gw->WaitClosed());
  }
  ASSERT_TRUE(WaitUntil([&] { return server_->Gateways().empty(); }));
  uint64_t v2 = Put(*store_, links_, ServiceKey("t"), Body("t"));
  HelloOptions hello = ServingA();
  hello.from_version = v1;
  hello.expected_server_id = "server-a";
  auto gw = Connect(hello);
  TestGateway::Round batch = gw->ReadRound();
  EXPECT_FALSE(batch.snapshot);
  EXPECT_EQ(batch.from, v1);
  EXPECT_EQ(batch.to, v2);
  EXPECT_EQ(batch.events.size(), 1u);

  // Another process (client id) with the same version is not remembered: snapshot.
  hello.client_id = "client-2";
  hello.name = "gw2";
  auto other = Connect(hello);
  EXPECT_TRUE(other->ReadRound().snapshot);
}

TEST_F(SyncServerTest, DisconnectUpdatesFeedback) {
  StartServer();
  Put(*store_, links_, ServiceKey("s"), Body("s"));
  {
    auto gw = Connect(ServingA());
    gw->Ack(gw->ReadRound().to);
    ASSERT_TRUE(
        sink_.WaitFor(ServiceKey("s"), [](const auto& f) { return f && f->status == "True"; }));
  }
  ASSERT_TRUE(sink_.WaitFor(ServiceKey("s"), [](const auto& f) {
    return f && f->message == "no connected gateway serves it";
  }));
}

TEST_F(SyncServerTest, ListAndServerInfo) {
  StartServer();
  Put(*store_, links_, ServiceKey("s", "ns1"), Body("s"));
  Put(*store_, links_, ServiceKey("t", "ns2"), Body("t"));
  Put(*store_, links_, RouteKey("r", "ns1"), Body("r"));
  Put(*store_, links_, GrantKey("g", "ns1"), Body("g"));  // never synced: not listed
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                                     grpc::InsecureChannelCredentials());
  auto stub = pb::ConfigSync::NewStub(channel);
  auto list = [&](pb::ListRequest request) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(10));
    auto reader = stub->List(&context, request);
    std::set<std::string> keys;
    pb::ListResponse response;
    while (reader->Read(&response)) {
      EXPECT_EQ(response.server_id(), "server-a");
      EXPECT_EQ(response.version(), store_->Head());
      for (const auto& e : response.events()) keys.insert(KeyString(e.key()));
    }
    EXPECT_TRUE(reader->Finish().ok());
    return keys;
  };
  EXPECT_EQ(list({}).size(), 3u);
  pb::ListRequest ns1;
  ns1.set_namespace_("ns1");
  EXPECT_EQ(list(ns1), (std::set<std::string>{ServiceKey("s", "ns1").ToString(),
                                              RouteKey("r", "ns1").ToString()}));
  pb::ListRequest services;
  services.add_kinds()->set_kind("Service");
  EXPECT_EQ(list(services).size(), 2u);

  grpc::ClientContext context;
  pb::ServerInfo info;
  ASSERT_TRUE(stub->GetServerInfo(&context, {}, &info).ok());
  EXPECT_EQ(info.server_id(), "server-a");
  EXPECT_EQ(info.head(), store_->Head());
  EXPECT_TRUE(info.ready());
  EXPECT_EQ(info.version(), "1.2.3");
  ASSERT_EQ(info.plugins_size(), 1);
  EXPECT_EQ(info.oldest_log_version(), 1u);
}

}  // namespace
}  // namespace portico::controller::sync
