// sync_client_test.cc: SyncClient against an in-test ConfigSync server (gRPC sync API) on
// 127.0.0.1, with the real plugins loaded from the build tree (the service plugin stages
// Service and EndpointSlice): snapshots and batches applied as one transaction each and acked
// with nacks, partial snapshots and batches on a broken stream never applied, resync after the
// server restarts with a new server_id, Rejected, gaps, and resuming from a snapshot file.
#include "gateway/sync/sync_client.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "core/common/sha256.h"
#include "core/plugin/plugin_loader.h"
#include "core/sync/inventory.h"

namespace portico::gateway {
namespace {

namespace v1 = ::portico::sync::v1;
using std::chrono::milliseconds;

// ---- the fake ConfigSync server -------------------------------------------------------------

// FakeConfigSync serves Watch: it records each stream's Hello and acks, and writes what the test
// queues to the latest stream. Break() cancels the latest stream (a broken connection).
class FakeConfigSync final : public v1::ConfigSync::Service {
 public:
  grpc::Status Watch(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::WatchResponse, v1::WatchRequest>* stream) override {
    v1::WatchRequest first;
    if (!stream->Read(&first) || !first.has_hello()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "first message must be a Hello");
    }
    int id;
    {
      std::lock_guard<std::mutex> lock(mu_);
      hellos_.push_back(first.hello());
      id = static_cast<int>(hellos_.size());
      latest_ = id;
    }
    cv_.notify_all();
    bool reader_done = false;
    std::thread reader([&] {
      v1::WatchRequest request;
      while (stream->Read(&request)) {
        std::lock_guard<std::mutex> lock(mu_);
        if (request.has_ack()) acks_.push_back(request.ack());
        cv_.notify_all();
      }
      std::lock_guard<std::mutex> lock(mu_);
      reader_done = true;
      cv_.notify_all();
    });
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      cv_.wait(lock, [&] {
        return !outbox_[id].empty() || broken_.count(id) > 0 || shutting_down_ || reader_done;
      });
      if (broken_.count(id) > 0 || shutting_down_ || reader_done) break;
      v1::WatchResponse message = std::move(outbox_[id].front());
      outbox_[id].pop_front();
      lock.unlock();
      bool written = stream->Write(message);
      lock.lock();
      if (!written) break;
    }
    lock.unlock();
    context->TryCancel();
    reader.join();
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "stream broken by the test");
  }

  void Send(v1::WatchResponse message) {
    std::lock_guard<std::mutex> lock(mu_);
    outbox_[latest_].push_back(std::move(message));
    cv_.notify_all();
  }
  void Break() {
    std::lock_guard<std::mutex> lock(mu_);
    broken_.insert(latest_);
    cv_.notify_all();
  }
  void ShutDown() {
    std::lock_guard<std::mutex> lock(mu_);
    shutting_down_ = true;
    cv_.notify_all();
  }

  bool WaitForHellos(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(20), [&] { return hellos_.size() >= n; });
  }
  // WaitForAck returns the first ack of `version`, or nullopt after the deadline.
  std::optional<v1::Ack> WaitForAck(uint64_t version) {
    std::unique_lock<std::mutex> lock(mu_);
    std::optional<v1::Ack> found;
    cv_.wait_for(lock, std::chrono::seconds(20), [&] {
      for (const v1::Ack& ack : acks_) {
        if (ack.version() == version) found = ack;
      }
      return found.has_value();
    });
    return found;
  }
  v1::Hello hello(size_t i) {
    std::lock_guard<std::mutex> lock(mu_);
    return hellos_.at(i);
  }
  size_t acks() {
    std::lock_guard<std::mutex> lock(mu_);
    return acks_.size();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<v1::Hello> hellos_;
  std::vector<v1::Ack> acks_;
  std::map<int, std::deque<v1::WatchResponse>> outbox_;
  std::set<int> broken_;
  int latest_ = 0;
  bool shutting_down_ = false;
};

// FakeServer runs a FakeConfigSync on 127.0.0.1 (port 0 the first time, then the same port).
class FakeServer {
 public:
  explicit FakeServer(int port = 0) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:" + std::to_string(port), grpc::InsecureServerCredentials(),
                             &port_);
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 1000);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
  }
  ~FakeServer() { Stop(); }
  void Stop() {
    if (server_ == nullptr) return;
    service_.ShutDown();
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
    server_->Wait();
    server_.reset();
  }
  int port() const { return port_; }
  FakeConfigSync& sync() { return service_; }

 private:
  FakeConfigSync service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

// ---- messages -------------------------------------------------------------------------------

const core::StoreKey kService{"", "Service", "infra", "web"};
const core::StoreKey kSlice{"discovery.k8s.io", "EndpointSlice", "infra", "web-abc12"};
const core::StoreKey kOther{"", "Service", "infra", "api"};

std::string ServiceView(std::string_view name, int port) {
  return R"({"metadata":{"name":")" + std::string(name) +
         R"(","namespace":"infra","generation":1},"type":"ClusterIP",)"
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

v1::Event Event(const core::StoreKey& key, const std::string& body, uint64_t version,
                bool del = false) {
  v1::Event event;
  event.set_op(del ? v1::Event::OP_DELETE : v1::Event::OP_UPSERT);
  event.mutable_key()->set_group(key.group);
  event.mutable_key()->set_kind(key.kind);
  event.mutable_key()->set_namespace_(key.ns);
  event.mutable_key()->set_name(key.name);
  event.set_hash(core::Sha256Hex(body));
  if (!del) event.set_body(body);
  event.set_version(version);
  return event;
}

v1::WatchResponse Chunk(std::vector<v1::Event> events, bool batch = false) {
  v1::WatchResponse response;
  auto* list = batch ? response.mutable_batch()->mutable_events()
                     : response.mutable_snapshot()->mutable_events();
  for (auto& e : events) *list->Add() = std::move(e);
  return response;
}

v1::WatchResponse SnapshotEnd(uint64_t version, const std::string& server_id) {
  v1::WatchResponse response;
  response.mutable_snapshot_end()->set_version(version);
  response.mutable_snapshot_end()->set_server_id(server_id);
  return response;
}

v1::WatchResponse BatchEnd(uint64_t from, uint64_t to) {
  v1::WatchResponse response;
  response.mutable_batch_end()->set_from_version(from);
  response.mutable_batch_end()->set_to_version(to);
  return response;
}

v1::WatchResponse Heartbeat(const std::string& server_id, uint64_t head) {
  v1::WatchResponse response;
  response.mutable_heartbeat()->set_server_id(server_id);
  response.mutable_heartbeat()->set_head(head);
  return response;
}

// ---- fixture --------------------------------------------------------------------------------

// The in-tree plugins, loaded once per process (a plugin registers once per library instance).
const core::PluginSet& Plugins() {
  static const core::PluginSet* plugins = [] {
    auto loaded = core::LoadPluginDir(PORTICO_PLUGIN_OUTPUT_DIR);
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    return new core::PluginSet(loaded.ok() ? std::move(*loaded) : core::PluginSet{});
  }();
  return *plugins;
}

template <typename F>
bool WaitFor(F condition, milliseconds timeout = milliseconds(20000)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(1));
  }
  return true;
}

class SyncClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(Plugins().registry.Find("", "Service"), nullptr) << "service plugin not loaded";
    runtime_ = std::make_unique<core::GatewayRuntime>(Plugins(), nullptr);
    server_ = std::make_unique<FakeServer>();
    ASSERT_NE(server_->port(), 0);
  }
  void TearDown() override {
    if (client_ != nullptr) client_->Stop();
    client_.reset();
    server_.reset();
  }

  SyncClientOptions Options() {
    SyncClientOptions options;
    options.controllers = {"127.0.0.1:" + std::to_string(server_->port())};
    options.name = "edge-1";
    options.gateways = {GatewayRef{"infra", "web"}};
    options.gateway_class = "portico";
    options.addresses = {"192.0.2.10"};
    options.inventory = core::BuildInventory(Plugins());
    options.backoff_base = milliseconds(10);
    options.backoff_max = milliseconds(200);
    options.on_applied = [this] { ++applied_callbacks_; };
    return options;
  }

  void StartClient(std::optional<SnapshotState> restore = std::nullopt) {
    client_ = std::make_unique<SyncClient>(Options(), runtime_.get());
    if (restore) client_->RestoreSnapshot(*restore);
    ASSERT_TRUE(client_->Start().ok());
  }

  // SyncFirstSnapshot: the standard start: Service + slice in two chunks, SnapshotEnd{5, srv-a}.
  void SyncFirstSnapshot() {
    ASSERT_TRUE(server_->sync().WaitForHellos(1));
    server_->sync().Send(Chunk({Event(kService, ServiceView("web", 80), 3)}));
    server_->sync().Send(Chunk({Event(kSlice, SliceView("10.0.0.7"), 5)}));
    server_->sync().Send(SnapshotEnd(5, "srv-a"));
    auto ack = server_->sync().WaitForAck(5);
    ASSERT_TRUE(ack.has_value());
    EXPECT_EQ(ack->nacks_size(), 0);
  }

  std::map<core::StoreKey, std::string> HeldHashes() const {
    std::map<core::StoreKey, std::string> out;
    for (const auto& o : runtime_->Held()) out[o.key] = o.hash;
    return out;
  }

  std::unique_ptr<core::GatewayRuntime> runtime_;
  std::unique_ptr<FakeServer> server_;
  std::unique_ptr<SyncClient> client_;
  std::atomic<int> applied_callbacks_{0};
};

TEST_F(SyncClientTest, HelloCarriesIdentityInventoryAndServedGateways) {
  StartClient();
  ASSERT_TRUE(server_->sync().WaitForHellos(1));
  v1::Hello hello = server_->sync().hello(0);
  EXPECT_EQ(hello.client_id(), client_->client_id());
  EXPECT_EQ(hello.client_id().size(), 32u);
  EXPECT_EQ(hello.name(), "edge-1");
  ASSERT_EQ(hello.gateways_size(), 1);
  EXPECT_EQ(hello.gateways(0).group(), "gateway.networking.k8s.io");
  EXPECT_EQ(hello.gateways(0).kind(), "Gateway");
  EXPECT_EQ(hello.gateways(0).namespace_(), "infra");
  EXPECT_EQ(hello.gateways(0).name(), "web");
  EXPECT_EQ(hello.gateway_class(), "portico");
  ASSERT_EQ(hello.addresses_size(), 1);
  EXPECT_EQ(hello.addresses(0), "192.0.2.10");
  EXPECT_EQ(hello.from_version(), 0u);
  EXPECT_EQ(hello.expected_server_id(), "");
  bool service_handler = false;
  for (const auto& plugin : hello.plugins()) {
    for (const auto& kind : plugin.kinds()) {
      service_handler |= kind.kind() == "Service" && (kind.capabilities() & PORTICO_CAP_HANDLER);
    }
  }
  EXPECT_TRUE(service_handler);
  EXPECT_FALSE(client_->GetStatus().ready);
  // Another client gets another id.
  SyncClient other(Options(), runtime_.get());
  EXPECT_NE(other.client_id(), client_->client_id());
}

TEST_F(SyncClientTest, SnapshotIsAppliedOnceAndAcked) {
  StartClient();
  SyncFirstSnapshot();
  ASSERT_TRUE(WaitFor([&] { return client_->GetStatus().ready; }));
  std::vector<core::CommitRecord> history = runtime_->History();
  ASSERT_EQ(history.size(), 1u);  // two chunks, one transaction
  EXPECT_TRUE(history[0].replace_all);
  EXPECT_EQ(history[0].version, 5u);
  EXPECT_EQ(history[0].changes, 2u);
  EXPECT_EQ(runtime_->Stats().synced_objects, 2u);
  EXPECT_NE(runtime_->Current()->Find(PORTICO_FORMAT_BACKEND, "ports/infra/web"), nullptr);
  SyncStatus status = client_->GetStatus();
  EXPECT_TRUE(status.connected);
  EXPECT_EQ(status.ReadySource(), "controller");
  EXPECT_FALSE(status.from_snapshot);
  EXPECT_EQ(status.applied_version, 5u);
  EXPECT_EQ(status.server_id, "srv-a");
  EXPECT_EQ(status.snapshots_applied, 1u);
  EXPECT_EQ(status.connects, 1u);
  EXPECT_EQ(status.reconnects, 0u);
  EXPECT_EQ(applied_callbacks_.load(), 1);
  SnapshotState captured = client_->Capture();
  EXPECT_EQ(captured.version, 5u);
  EXPECT_EQ(captured.server_id, "srv-a");
  EXPECT_EQ(captured.objects.size(), 2u);
}

TEST_F(SyncClientTest, BatchIsAppliedAndAckedWithNacks) {
  StartClient();
  SyncFirstSnapshot();
  std::string good_hash = HeldHashes().at(kService);
  // One batch in two messages: a Service view the handler refuses, a new Service, a new slice.
  v1::Event bad = Event(kService, "[]", 6);
  server_->sync().Send(Chunk({bad, Event(kOther, ServiceView("api", 81), 6)}, /*batch=*/true));
  server_->sync().Send(Chunk({Event(kSlice, SliceView("10.0.0.8"), 7)}, /*batch=*/true));
  server_->sync().Send(BatchEnd(5, 7));
  auto ack = server_->sync().WaitForAck(7);
  ASSERT_TRUE(ack.has_value());
  ASSERT_EQ(ack->nacks_size(), 1);
  EXPECT_EQ(ack->nacks(0).key().kind(), "Service");
  EXPECT_EQ(ack->nacks(0).key().namespace_(), "infra");
  EXPECT_EQ(ack->nacks(0).key().name(), "web");
  EXPECT_EQ(ack->nacks(0).hash(), bad.hash());
  EXPECT_EQ(ack->nacks(0).reason(), "synced view is not a JSON object");

  std::vector<core::CommitRecord> history = runtime_->History();
  ASSERT_EQ(history.size(), 2u);
  EXPECT_FALSE(history[1].replace_all);
  EXPECT_EQ(history[1].version, 7u);
  auto held = HeldHashes();
  EXPECT_EQ(held.at(kService), good_hash);  // keeps its last good version
  EXPECT_EQ(held.count(kOther), 1u);
  EXPECT_EQ(held.at(kSlice), core::Sha256Hex(SliceView("10.0.0.8")));

  // Deletes and heartbeats: lag is the server's head minus what was applied.
  server_->sync().Send(Chunk({Event(kOther, ServiceView("api", 81), 8, /*del=*/true)}, true));
  server_->sync().Send(BatchEnd(7, 8));
  ASSERT_TRUE(server_->sync().WaitForAck(8).has_value());
  EXPECT_EQ(HeldHashes().count(kOther), 0u);
  server_->sync().Send(Heartbeat("srv-a", 11));
  ASSERT_TRUE(WaitFor([&] { return client_->GetStatus().server_head == 11; }));
  SyncStatus status = client_->GetStatus();
  EXPECT_EQ(status.applied_version, 8u);
  EXPECT_EQ(status.lag(), 3u);
  EXPECT_EQ(status.batches_applied, 2u);
  EXPECT_EQ(status.nacks_sent, 1u);
  EXPECT_EQ(applied_callbacks_.load(), 3);
}

TEST_F(SyncClientTest, PartialSnapshotOnABrokenStreamIsNeverApplied) {
  StartClient();
  ASSERT_TRUE(server_->sync().WaitForHellos(1));
  server_->sync().Send(Chunk({Event(kService, ServiceView("web", 80), 3)}));
  // The heartbeat after the chunk proves the chunk was received before the break.
  server_->sync().Send(Heartbeat("srv-a", 5));
  ASSERT_TRUE(WaitFor([&] { return client_->GetStatus().server_head == 5; }));
  server_->sync().Break();
  ASSERT_TRUE(server_->sync().WaitForHellos(2));  // reconnected
  EXPECT_EQ(server_->sync().hello(1).from_version(), 0u);
  EXPECT_TRUE(runtime_->History().empty());
  EXPECT_EQ(runtime_->Stats().synced_objects, 0u);
  SyncStatus status = client_->GetStatus();
  EXPECT_FALSE(status.ready);
  EXPECT_EQ(status.dropped_partials, 1u);
  EXPECT_EQ(server_->sync().acks(), 0u);

  // The complete snapshot on the new stream is applied.
  server_->sync().Send(Chunk({Event(kService, ServiceView("web", 80), 3)}));
  server_->sync().Send(SnapshotEnd(5, "srv-a"));
  ASSERT_TRUE(server_->sync().WaitForAck(5).has_value());
  EXPECT_EQ(runtime_->History().size(), 1u);
  EXPECT_TRUE(client_->GetStatus().ready);
}

TEST_F(SyncClientTest, PartialBatchOnABrokenStreamIsNeverApplied) {
  StartClient();
  SyncFirstSnapshot();
  server_->sync().Send(Chunk({Event(kOther, ServiceView("api", 81), 6)}, /*batch=*/true));
  server_->sync().Send(Heartbeat("srv-a", 6));
  ASSERT_TRUE(WaitFor([&] { return client_->GetStatus().server_head == 6; }));
  server_->sync().Break();
  ASSERT_TRUE(server_->sync().WaitForHellos(2));
  v1::Hello resume = server_->sync().hello(1);
  EXPECT_EQ(resume.from_version(), 5u);  // resumes after the snapshot, not the partial batch
  EXPECT_EQ(resume.expected_server_id(), "srv-a");
  EXPECT_EQ(runtime_->History().size(), 1u);
  EXPECT_EQ(HeldHashes().count(kOther), 0u);
  EXPECT_EQ(client_->GetStatus().dropped_partials, 1u);
  EXPECT_TRUE(client_->GetStatus().ready);  // still serving the last configuration
}

TEST_F(SyncClientTest, ResyncsAfterTheServerRestartsWithANewServerId) {
  StartClient();
  SyncFirstSnapshot();
  int port = server_->port();
  server_->Stop();
  ASSERT_TRUE(WaitFor([&] { return !client_->GetStatus().connected; }));
  EXPECT_TRUE(client_->GetStatus().ready);  // keeps serving while the controller is away
  server_ = std::make_unique<FakeServer>(port);
  ASSERT_EQ(server_->port(), port);
  ASSERT_TRUE(server_->sync().WaitForHellos(1));
  v1::Hello hello = server_->sync().hello(0);
  EXPECT_EQ(hello.from_version(), 5u);
  EXPECT_EQ(hello.expected_server_id(), "srv-a");
  // The new server's world: the slice is gone, another Service exists (versions restart).
  server_->sync().Send(Heartbeat("srv-b", 2));
  server_->sync().Send(Chunk(
      {Event(kService, ServiceView("web", 80), 1), Event(kOther, ServiceView("api", 81), 2)}));
  server_->sync().Send(SnapshotEnd(2, "srv-b"));
  ASSERT_TRUE(server_->sync().WaitForAck(2).has_value());
  auto held = HeldHashes();
  EXPECT_EQ(held.size(), 2u);
  EXPECT_EQ(held.count(kSlice), 0u);
  EXPECT_EQ(held.count(kOther), 1u);
  SyncStatus status = client_->GetStatus();
  EXPECT_EQ(status.server_id, "srv-b");
  EXPECT_EQ(status.applied_version, 2u);
  EXPECT_EQ(status.server_head, 2u);
  EXPECT_EQ(status.lag(), 0u);
  // At least one reconnect: a retry may also reach the old server while it shuts down.
  EXPECT_GE(status.reconnects, 1u);
  EXPECT_EQ(status.snapshots_applied, 2u);
  std::vector<core::CommitRecord> history = runtime_->History();
  ASSERT_EQ(history.size(), 2u);
  EXPECT_TRUE(history[1].replace_all);
}

TEST_F(SyncClientTest, RejectedIsLoggedAndRetriedLater) {
  StartClient();
  ASSERT_TRUE(server_->sync().WaitForHellos(1));
  v1::WatchResponse rejected;
  rejected.mutable_rejected()->set_reason("no compatible handler for HTTPRoute");
  server_->sync().Send(rejected);
  ASSERT_TRUE(WaitFor([&] { return client_->GetStatus().rejections == 1; }));
  ASSERT_TRUE(WaitFor([&] { return !client_->GetStatus().last_error.empty(); }));
  EXPECT_NE(client_->GetStatus().last_error.find("no compatible handler for HTTPRoute"),
            std::string::npos)
      << client_->GetStatus().last_error;
  ASSERT_TRUE(server_->sync().WaitForHellos(2));  // retried after the (maximum) backoff
  EXPECT_TRUE(runtime_->History().empty());
}

TEST_F(SyncClientTest, AGapInVersionsDropsTheBatchAndResyncs) {
  StartClient();
  SyncFirstSnapshot();
  server_->sync().Send(Chunk({Event(kOther, ServiceView("api", 81), 9)}, /*batch=*/true));
  server_->sync().Send(BatchEnd(8, 9));  // (8, 9] after 5: 6..8 were never seen
  ASSERT_TRUE(server_->sync().WaitForHellos(2));
  EXPECT_EQ(server_->sync().hello(1).from_version(), 5u);
  EXPECT_EQ(HeldHashes().count(kOther), 0u);
  EXPECT_EQ(runtime_->History().size(), 1u);
  EXPECT_NE(client_->GetStatus().last_error.find("gap"), std::string::npos);
}

// A replayed batch or an older snapshot of the same server (a stale or misbehaving peer) is acked
// and never applied: applying it would roll objects back under an older version.
TEST_F(SyncClientTest, ReplayedOldVersionsAreIgnored) {
  StartClient();
  SyncFirstSnapshot();  // version 5: Service web on port 80
  server_->sync().Send(Chunk({Event(kService, ServiceView("web", 81), 7)}, /*batch=*/true));
  server_->sync().Send(BatchEnd(5, 7));
  ASSERT_TRUE(server_->sync().WaitForAck(7).has_value());
  const std::string current = core::Sha256Hex(ServiceView("web", 81));
  ASSERT_EQ(HeldHashes().at(kService), current);

  // The batch (5, 7] again (its body now an older one), then an older batch (3, 5], then an
  // older snapshot of the same server.
  server_->sync().Send(Chunk({Event(kService, ServiceView("web", 80), 7)}, /*batch=*/true));
  server_->sync().Send(BatchEnd(5, 7));
  server_->sync().Send(Chunk({Event(kService, ServiceView("web", 79), 4)}, /*batch=*/true));
  server_->sync().Send(BatchEnd(3, 5));
  server_->sync().Send(Chunk({Event(kService, ServiceView("web", 78), 3)}));
  server_->sync().Send(SnapshotEnd(6, "srv-a"));
  ASSERT_TRUE(server_->sync().WaitForAck(6).has_value());  // acked, as the replays before it
  ASSERT_TRUE(WaitFor([&] { return client_->GetStatus().replays_ignored == 3; }));
  SyncStatus status = client_->GetStatus();
  EXPECT_EQ(status.applied_version, 7u);
  EXPECT_EQ(status.batches_applied, 1u);
  EXPECT_EQ(status.snapshots_applied, 1u);
  EXPECT_EQ(HeldHashes().at(kService), current);
  EXPECT_EQ(runtime_->History().size(), 2u);  // the snapshot and (5, 7], nothing since

  // The stream is still in step: the next batch applies.
  server_->sync().Send(Chunk({Event(kService, ServiceView("web", 82), 8)}, /*batch=*/true));
  server_->sync().Send(BatchEnd(7, 8));
  ASSERT_TRUE(server_->sync().WaitForAck(8).has_value());
  EXPECT_EQ(HeldHashes().at(kService), core::Sha256Hex(ServiceView("web", 82)));
  EXPECT_EQ(client_->GetStatus().applied_version, 8u);
  EXPECT_EQ(client_->GetStatus().connects, 1u);

  // Another server's snapshot is never a replay, whatever its version.
  server_->sync().Send(Chunk({Event(kService, ServiceView("web", 90), 2)}));
  server_->sync().Send(SnapshotEnd(2, "srv-b"));
  ASSERT_TRUE(server_->sync().WaitForAck(2).has_value());
  EXPECT_EQ(HeldHashes().at(kService), core::Sha256Hex(ServiceView("web", 90)));
  EXPECT_EQ(client_->GetStatus().replays_ignored, 3u);
}

TEST_F(SyncClientTest, StartsFromASnapshotFileAndResumes) {
  SnapshotState state;
  state.version = 40;
  state.server_id = "srv-a";
  std::string view = ServiceView("web", 80);
  state.objects.push_back(
      core::HeldObject{kService, core::Sha256Hex(view), std::make_shared<const std::string>(view)});
  StartClient(state);
  SyncStatus status = client_->GetStatus();
  EXPECT_TRUE(status.ready);
  EXPECT_TRUE(status.from_snapshot);
  EXPECT_EQ(status.ReadySource(), "snapshot file");
  EXPECT_EQ(runtime_->Stats().synced_objects, 1u);
  ASSERT_TRUE(server_->sync().WaitForHellos(1));
  v1::Hello hello = server_->sync().hello(0);
  EXPECT_EQ(hello.from_version(), 40u);
  EXPECT_EQ(hello.expected_server_id(), "srv-a");
  // The same server resumes with a batch: now in sync with the controller.
  server_->sync().Send(Chunk({Event(kOther, ServiceView("api", 81), 41)}, /*batch=*/true));
  server_->sync().Send(BatchEnd(40, 41));
  ASSERT_TRUE(server_->sync().WaitForAck(41).has_value());
  status = client_->GetStatus();
  EXPECT_FALSE(status.from_snapshot);
  EXPECT_EQ(status.applied_version, 41u);
  EXPECT_EQ(runtime_->Stats().synced_objects, 2u);
}

TEST_F(SyncClientTest, StopWhileUnreachableReturns) {
  server_->Stop();
  StartClient();
  ASSERT_TRUE(WaitFor([&] { return client_->GetStatus().disconnects >= 2; }));
  EXPECT_FALSE(client_->GetStatus().connected);
  EXPECT_FALSE(client_->GetStatus().last_error.empty());
  client_->Stop();
  client_->Stop();
}

// Several controllers (issue 16): the first dies; the client moves to the second and resyncs.
TEST_F(SyncClientTest, FailsOverToTheNextControllerWhenOneDies) {
  auto second = std::make_unique<FakeServer>();
  SyncClientOptions options = Options();
  std::string second_address = "127.0.0.1:" + std::to_string(second->port());
  options.controllers.push_back(second_address);
  client_ = std::make_unique<SyncClient>(options, runtime_.get());
  ASSERT_TRUE(client_->Start().ok());
  SyncFirstSnapshot();
  server_->Stop();
  ASSERT_TRUE(second->sync().WaitForHellos(1));
  v1::Hello hello = second->sync().hello(0);
  EXPECT_EQ(hello.from_version(), 5u);  // what it holds, from the other controller
  EXPECT_EQ(hello.expected_server_id(), "srv-a");
  EXPECT_TRUE(client_->GetStatus().ready);  // still serving the old configuration meanwhile
  second->sync().Send(Chunk({Event(kService, ServiceView("web", 80), 1)}));
  second->sync().Send(SnapshotEnd(1, "srv-b"));
  ASSERT_TRUE(second->sync().WaitForAck(1).has_value());
  SyncStatus status = client_->GetStatus();
  EXPECT_EQ(status.controller, second_address);
  EXPECT_GE(status.failovers, 1u);
  EXPECT_EQ(status.server_id, "srv-b");
  EXPECT_EQ(status.controllers.size(), 2u);
  EXPECT_EQ(HeldHashes().size(), 1u);
  client_->Stop();
}

// Epoch fencing: a controller that follows an older leader than one already seen is ignored.
TEST_F(SyncClientTest, IgnoresAStreamWithAnOlderEpochAndFailsOver) {
  auto second = std::make_unique<FakeServer>();
  SyncClientOptions options = Options();
  options.controllers.push_back("127.0.0.1:" + std::to_string(second->port()));
  client_ = std::make_unique<SyncClient>(options, runtime_.get());
  ASSERT_TRUE(client_->Start().ok());
  ASSERT_TRUE(server_->sync().WaitForHellos(1));
  auto with_epoch = [](v1::WatchResponse m, uint64_t epoch) {
    m.set_epoch(epoch);
    return m;
  };
  server_->sync().Send(with_epoch(Chunk({Event(kService, ServiceView("web", 80), 3)}), 7));
  server_->sync().Send(with_epoch(SnapshotEnd(3, "srv-a"), 7));
  ASSERT_TRUE(server_->sync().WaitForAck(3).has_value());
  EXPECT_EQ(client_->GetStatus().epoch, 7u);
  // The same controller now speaks for epoch 3 (it lost touch with etcd): its batch is dropped.
  server_->sync().Send(with_epoch(Chunk({Event(kOther, ServiceView("api", 81), 4)}, true), 3));
  server_->sync().Send(with_epoch(BatchEnd(3, 4), 3));
  ASSERT_TRUE(second->sync().WaitForHellos(1));
  EXPECT_EQ(second->sync().hello(0).epoch(), 7u);
  SyncStatus status = client_->GetStatus();
  EXPECT_EQ(status.stale_epochs, 1u);
  EXPECT_EQ(status.applied_version, 3u);
  EXPECT_EQ(HeldHashes().count(kOther), 0u);
  EXPECT_NE(status.last_error.find("stale epoch"), std::string::npos) << status.last_error;
  // The second controller knows a newer leader: accepted.
  second->sync().Send(with_epoch(Chunk({Event(kOther, ServiceView("api", 81), 1)}), 9));
  second->sync().Send(with_epoch(SnapshotEnd(1, "srv-b"), 9));
  ASSERT_TRUE(second->sync().WaitForAck(1).has_value());
  EXPECT_EQ(client_->GetStatus().epoch, 9u);
  EXPECT_EQ(HeldHashes().count(kOther), 1u);
  client_->Stop();
}

}  // namespace
}  // namespace portico::gateway
