#include "controller/sync/sync_server.h"

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>

#include "controller/sync/feedback_tracker.h"
#include "controller/sync/list_call.h"
#include "controller/sync/pump_pool.h"
#include "controller/sync/resume_store.h"
#include "controller/sync/sync_session.h"
#include "controller/sync/watch_stream.h"
#include "portico/sync/v1/sync.grpc.pb.h"

namespace portico::controller::sync {
namespace {

namespace pb = portico::sync::v1;
using SteadyClock = std::chrono::steady_clock;

std::string JoinHostPort(const std::string& host, uint16_t port) {
  if (host.find(':') != std::string::npos && !host.starts_with('[')) {
    return "[" + host + "]:" + std::to_string(port);
  }
  return host + ":" + std::to_string(port);
}

}  // namespace

// SyncServer::Impl is the gRPC service (Watch, List, GetServerInfo), the host of every Watch
// stream, the ticker and the registry of streams and sessions.
struct SyncServer::Impl final : public pb::ConfigSync::CallbackService, public WatchStreamHost {
  Impl(SyncServerOptions options, SyncServerDeps deps)
      : options(std::move(options)),
        deps(deps),
        resumable(this->options.max_resumable, this->options.resume_retention) {}

  grpc::ServerBidiReactor<pb::WatchRequest, pb::WatchResponse>* Watch(
      grpc::CallbackServerContext* context) override;
  grpc::ServerWriteReactor<pb::ListResponse>* List(grpc::CallbackServerContext* context,
                                                   const pb::ListRequest* request) override;
  grpc::ServerUnaryReactor* GetServerInfo(grpc::CallbackServerContext* context,
                                          const pb::GetServerInfoRequest* request,
                                          pb::ServerInfo* response) override;

  // WatchStreamHost.
  void Schedule(const std::shared_ptr<WatchStream>& stream) override { pumps.Schedule(stream); }
  std::shared_ptr<SyncSession> OpenSession(uint64_t stream_id, const pb::Hello& hello,
                                           GatewayScope scope, SessionIdentity identity) override;
  void OnStreamDone(uint64_t stream_id, std::shared_ptr<SyncSession> session) override;
  std::string ServerId() const override { return deps.host->ServerId(); }
  uint64_t Epoch() const override { return deps.host->Epoch(); }
  // MayCutBatch: the host is ready and settled, or has been unsettled for settle_timeout.
  bool MayCutBatch() override;
  void CountRejected() override { counters.rejected.fetch_add(1, std::memory_order_relaxed); }

  void ScheduleAll(bool heartbeat);
  void TickerLoop();
  std::vector<std::shared_ptr<SyncSession>> Sessions() const;
  SessionSources Sources();

  SyncServerOptions options;
  SyncServerDeps deps;
  SyncCounters counters;
  ResumeStore resumable;
  PumpPool pumps;
  std::unique_ptr<FeedbackTracker> tracker;
  std::unique_ptr<grpc::Server> server;
  std::string address;
  int port = 0;
  std::atomic<bool> serving{false};
  std::atomic<int64_t> unsettled_since{0};  // steady-clock ticks; 0 while settled

  mutable std::mutex mu;
  std::map<uint64_t, std::shared_ptr<WatchStream>> streams;   // guarded by mu
  std::map<uint64_t, std::shared_ptr<SyncSession>> sessions;  // guarded by mu
  uint64_t next_id = 1;                                       // guarded by mu

  std::mutex ticker_mu;
  std::condition_variable ticker_cv;
  bool ticker_stop = false;  // guarded by ticker_mu
  bool poked = false;        // guarded by ticker_mu
  std::thread ticker;

  core::ChangeSubscription subscription;
};

grpc::ServerBidiReactor<pb::WatchRequest, pb::WatchResponse>* SyncServer::Impl::Watch(
    grpc::CallbackServerContext* context) {
  std::shared_ptr<WatchStream> stream;
  {
    std::lock_guard lock(mu);
    uint64_t id = next_id++;
    stream = std::make_shared<WatchStream>(this, id, context->peer());
    streams.emplace(id, stream);
  }
  stream->Begin();
  return stream.get();
}

grpc::ServerWriteReactor<pb::ListResponse>* SyncServer::Impl::List(
    grpc::CallbackServerContext* context, const pb::ListRequest* request) {
  core::StoreSnapshot snapshot = deps.store->Snapshot();
  std::vector<OutEvent> events = ListEvents(snapshot, options.policies, *request);
  return new ListWriter(std::move(events), snapshot.version, deps.host->ServerId(),
                        options.max_message_bytes);
}

grpc::ServerUnaryReactor* SyncServer::Impl::GetServerInfo(grpc::CallbackServerContext* context,
                                                          const pb::GetServerInfoRequest* request,
                                                          pb::ServerInfo* response) {
  core::StoreStats stats = deps.store->Stats();
  response->set_server_id(deps.host->ServerId());
  response->set_head(stats.head);
  response->set_ready(deps.host->Ready());
  response->set_version(options.version);
  for (const pb::PluginInfo& plugin : options.inventory) *response->add_plugins() = plugin;
  response->set_oldest_log_version(stats.oldest_version);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

bool SyncServer::Impl::MayCutBatch() {
  if (!deps.host->Ready()) return false;
  int64_t now = SteadyClock::now().time_since_epoch().count();
  if (deps.host->Settled()) {
    unsettled_since.store(0, std::memory_order_relaxed);
    return true;
  }
  int64_t since = unsettled_since.load(std::memory_order_relaxed);
  if (since == 0) {
    unsettled_since.compare_exchange_strong(since, now, std::memory_order_relaxed);
    return false;
  }
  return std::chrono::nanoseconds(now - since) >= options.settle_timeout;
}

void SyncServer::Impl::ScheduleAll(bool heartbeat) {
  std::vector<std::shared_ptr<WatchStream>> all;
  {
    std::lock_guard lock(mu);
    all.reserve(streams.size());
    for (const auto& [id, stream] : streams) all.push_back(stream);
  }
  for (const auto& stream : all) {
    if (heartbeat) stream->MarkHeartbeat();
    Schedule(stream);
  }
}

void SyncServer::Impl::TickerLoop() {
  bool last_ready = deps.host->Ready();
  std::string last_server_id = deps.host->ServerId();
  uint64_t last_generation = deps.links->Generation();
  auto next_heartbeat = SteadyClock::now() + options.heartbeat_interval;
  std::unique_lock lock(ticker_mu);
  while (!ticker_stop) {
    auto wake = std::min(next_heartbeat, SteadyClock::now() + options.poll_interval);
    ticker_cv.wait_until(lock, wake, [&] { return ticker_stop || poked; });
    if (ticker_stop) return;
    bool poke = poked;
    poked = false;
    lock.unlock();
    bool ready = deps.host->Ready();
    std::string server_id = deps.host->ServerId();
    uint64_t generation = deps.links->Generation();
    // While the host is unsettled, streams re-check every poll so settle_timeout can pass.
    bool changed = poke || ready != last_ready || server_id != last_server_id ||
                   generation != last_generation || !deps.host->Settled();
    last_ready = ready;
    last_server_id = std::move(server_id);
    last_generation = generation;
    auto now = SteadyClock::now();
    bool heartbeat = now >= next_heartbeat;
    if (heartbeat) next_heartbeat = now + options.heartbeat_interval;
    if (heartbeat || changed) ScheduleAll(heartbeat);
    resumable.Expire(now);
    lock.lock();
  }
}

SessionSources SyncServer::Impl::Sources() {
  SessionSources sources;
  sources.store = deps.store;
  sources.links = deps.links;
  sources.policies = &options.policies;
  sources.counters = &counters;
  if (tracker) {
    FeedbackTracker* t = tracker.get();
    sources.on_dirty = [t](std::vector<core::StoreKey> keys) { t->MarkDirty(std::move(keys)); };
  }
  sources.max_message_bytes = options.max_message_bytes;
  return sources;
}

std::shared_ptr<SyncSession> SyncServer::Impl::OpenSession(uint64_t stream_id,
                                                           const pb::Hello& hello,
                                                           GatewayScope scope,
                                                           SessionIdentity identity) {
  std::optional<ResumeState> resume = resumable.Take(hello.client_id());
  auto session = std::make_shared<SyncSession>(Sources(), std::move(scope), std::move(identity),
                                               hello.from_version(), hello.expected_server_id(),
                                               std::move(resume));
  std::vector<core::StoreKey> roots(session->scope().roots.begin(), session->scope().roots.end());
  {
    std::lock_guard lock(mu);
    sessions.emplace(stream_id, session);
  }
  if (tracker) tracker->MarkDirty(std::move(roots));
  return session;
}

void SyncServer::Impl::OnStreamDone(uint64_t stream_id, std::shared_ptr<SyncSession> session) {
  {
    std::lock_guard lock(mu);
    streams.erase(stream_id);
    sessions.erase(stream_id);
  }
  if (!session) return;
  spdlog::info("sync: gateway {} ({}) disconnected at acked version {}", session->identity().name,
               session->identity().peer, session->acked_version());
  if (tracker) tracker->MarkDirty(session->AllKeys());
  std::optional<ResumeState> state = session->TakeResumeState();
  if (state) resumable.Put(std::move(*state));
}

std::vector<std::shared_ptr<SyncSession>> SyncServer::Impl::Sessions() const {
  std::lock_guard lock(mu);
  std::vector<std::shared_ptr<SyncSession>> out;
  out.reserve(sessions.size());
  for (const auto& [id, session] : sessions) out.push_back(session);
  return out;
}

SyncServer::SyncServer(SyncServerOptions options, SyncServerDeps deps)
    : impl_(std::make_unique<Impl>(std::move(options), deps)) {}

SyncServer::~SyncServer() { Stop(); }

Status SyncServer::Start() {
  Impl& impl = *impl_;
  if (impl.server) return FailedPreconditionError("sync: already started");
  impl.address = impl.options.address;
  if (impl.address.empty()) {
    impl.address = impl.options.secure ? "0.0.0.0" : "127.0.0.1";
    if (!impl.options.secure) {
      spdlog::info(
          "sync: ConfigSync is plaintext (no conf_sync_security): listening on 127.0.0.1 only; "
          "set conf_sync_security (or --sync-address) to serve gateways on other hosts");
    }
  }
  if (impl.deps.feedback != nullptr) {
    impl.tracker = std::make_unique<FeedbackTracker>(
        *impl.deps.store, impl.options.policies,
        [&impl] {
          std::vector<std::shared_ptr<const GatewayStateSource>> out;
          for (auto& s : impl.Sessions()) out.push_back(std::move(s));
          return out;
        },
        impl.deps.feedback);
  }

  grpc::ServerBuilder builder;
  std::shared_ptr<grpc::ServerCredentials> credentials =
      impl.options.credentials ? impl.options.credentials : grpc::InsecureServerCredentials();
  std::string endpoint = JoinHostPort(impl.address, impl.options.port);
  builder.AddListeningPort(endpoint, credentials, &impl.port);
  builder.RegisterService(&impl);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS,
                             static_cast<int>(impl.options.keepalive_time.count()));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
                             static_cast<int>(impl.options.keepalive_timeout.count()));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  // Gateways ping every 5 s, idle or not: accept pings down to 1 s apart and never strike.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 1000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  builder.SetMaxReceiveMessageSize(64 << 20);  // acks with many nacks
  impl.server = builder.BuildAndStart();
  if (!impl.server || impl.port == 0) {
    impl.server.reset();
    impl.tracker.reset();
    return UnavailableError("sync: cannot listen on " + endpoint +
                            " (address in use or not available)");
  }
  impl.pumps.Start(impl.options.workers);
  if (impl.tracker) impl.tracker->Start(*impl.deps.store);
  impl.subscription = impl.deps.store->Subscribe([&impl](uint64_t) { impl.ScheduleAll(false); });
  impl.ticker = std::thread([&impl] { impl.TickerLoop(); });
  impl.serving = true;
  spdlog::info("sync: ConfigSync listening on {}{}", Endpoint(),
               impl.options.credentials && impl.options.secure ? " (mutual TLS)" : "");
  return OkStatus();
}

void SyncServer::Stop() {
  Impl& impl = *impl_;
  if (!impl.server) return;
  impl.serving = false;
  impl.subscription.Cancel();
  {
    std::lock_guard lock(impl.ticker_mu);
    impl.ticker_stop = true;
  }
  impl.ticker_cv.notify_all();
  if (impl.ticker.joinable()) impl.ticker.join();
  // Cancels every call; the streams' pumps (workers still running) finish them.
  impl.server->Shutdown(std::chrono::system_clock::now());
  impl.server->Wait();
  impl.pumps.Stop();
  if (impl.tracker) impl.tracker->Stop();
  impl.server.reset();
  std::lock_guard lock(impl.mu);
  impl.streams.clear();
  impl.sessions.clear();
}

void SyncServer::Poke() {
  {
    std::lock_guard lock(impl_->ticker_mu);
    impl_->poked = true;
  }
  impl_->ticker_cv.notify_all();
}

uint16_t SyncServer::port() const { return static_cast<uint16_t>(impl_->port); }

std::string SyncServer::Endpoint() const { return JoinHostPort(impl_->address, port()); }

std::vector<ConnectedGateway> SyncServer::Gateways() const {
  std::vector<ConnectedGateway> out;
  for (const auto& session : impl_->Sessions()) out.push_back(session->View());
  std::sort(out.begin(), out.end(), [](const ConnectedGateway& a, const ConnectedGateway& b) {
    return std::tie(a.name, a.connected_unix_ms, a.client_id) <
           std::tie(b.name, b.connected_unix_ms, b.client_id);
  });
  return out;
}

std::optional<std::map<std::string, std::string>> SyncServer::GatewaySynced(
    std::string_view name) const {
  std::shared_ptr<SyncSession> by_client;
  for (const auto& session : impl_->Sessions()) {
    if (session->identity().name == name) return session->Synced();
    if (session->identity().client_id == name) by_client = session;
  }
  if (by_client) return by_client->Synced();
  return std::nullopt;
}

SyncStats SyncServer::Stats() const {
  SyncStats stats;
  stats.serving = impl_->serving.load();
  {
    std::lock_guard lock(impl_->mu);
    stats.connected = impl_->sessions.size();
  }
  stats.snapshots = impl_->counters.snapshots.load(std::memory_order_relaxed);
  stats.batches = impl_->counters.batches.load(std::memory_order_relaxed);
  stats.events = impl_->counters.events.load(std::memory_order_relaxed);
  stats.acks = impl_->counters.acks.load(std::memory_order_relaxed);
  stats.nacks = impl_->counters.nacks.load(std::memory_order_relaxed);
  stats.rejected = impl_->counters.rejected.load(std::memory_order_relaxed);
  return stats;
}

}  // namespace portico::controller::sync
