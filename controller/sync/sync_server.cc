#include "controller/sync/sync_server.h"

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

#include "controller/sync/event_chunker.h"
#include "controller/sync/feedback_tracker.h"
#include "controller/sync/sync_session.h"
#include "core/plugin/kind_id.h"
#include "portico/sdk/abi.h"
#include "portico/sync/v1/sync.grpc.pb.h"

namespace portico::controller::sync {
namespace {

namespace pb = portico::sync::v1;
using SteadyClock = std::chrono::steady_clock;

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string JoinHostPort(const std::string& host, uint16_t port) {
  if (host.find(':') != std::string::npos && !host.starts_with('[')) {
    return "[" + host + "]:" + std::to_string(port);
  }
  return host + ":" + std::to_string(port);
}

// ListWriter streams List's answer, one chunk per write.
class ListWriter : public grpc::ServerWriteReactor<pb::ListResponse> {
 public:
  ListWriter(std::vector<OutEvent> events, uint64_t version, std::string server_id,
             size_t max_bytes)
      : chunker_(std::move(events), MessageBudget(max_bytes, 32 + server_id.size())),
        version_(version),
        server_id_(std::move(server_id)) {
    WriteNext();
  }

  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "list: write failed"));
      return;
    }
    WriteNext();
  }
  void OnDone() override { delete this; }

 private:
  void WriteNext() {
    if (sent_any_ && chunker_.Done()) {
      Finish(grpc::Status::OK);
      return;
    }
    out_.Clear();
    chunker_.Fill(out_.mutable_events());
    out_.set_version(version_);
    out_.set_server_id(server_id_);
    sent_any_ = true;
    StartWrite(&out_);
  }

  EventChunker chunker_;
  uint64_t version_;
  std::string server_id_;
  bool sent_any_ = false;
  pb::ListResponse out_;
};

}  // namespace

class WatchStream;

struct SyncServer::Impl final : public pb::ConfigSync::CallbackService {
  Impl(SyncServerOptions options, SyncServerDeps deps) : options(std::move(options)), deps(deps) {}

  grpc::ServerBidiReactor<pb::WatchRequest, pb::WatchResponse>* Watch(
      grpc::CallbackServerContext* context) override;
  grpc::ServerWriteReactor<pb::ListResponse>* List(grpc::CallbackServerContext* context,
                                                   const pb::ListRequest* request) override;
  grpc::ServerUnaryReactor* GetServerInfo(grpc::CallbackServerContext* context,
                                          const pb::GetServerInfoRequest* request,
                                          pb::ServerInfo* response) override;

  void Schedule(const std::shared_ptr<WatchStream>& stream);
  void ScheduleAll(bool heartbeat);

  // MayCutBatch: the host is ready and settled, or has been unsettled for settle_timeout.
  bool MayCutBatch() {
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
  std::atomic<int64_t> unsettled_since{0};  // steady-clock ticks; 0 while settled
  void WorkerLoop();
  void TickerLoop();

  // Streams and sessions.
  void AddSession(uint64_t id, std::shared_ptr<SyncSession> session);
  void OnStreamDone(uint64_t id, std::shared_ptr<SyncSession> session);
  std::optional<ResumeState> TakeResume(const std::string& client_id);
  std::vector<std::shared_ptr<SyncSession>> Sessions() const;
  SessionSources Sources();

  SyncServerOptions options;
  SyncServerDeps deps;
  SyncCounters counters;
  std::unique_ptr<FeedbackTracker> tracker;
  std::unique_ptr<grpc::Server> server;
  std::string address;
  int port = 0;
  std::atomic<bool> serving{false};

  mutable std::mutex mu;
  std::map<uint64_t, std::shared_ptr<WatchStream>> streams;   // guarded by mu
  std::map<uint64_t, std::shared_ptr<SyncSession>> sessions;  // guarded by mu
  struct Resumable {
    ResumeState state;
    SteadyClock::time_point expires;
  };
  std::map<std::string, Resumable> resumable;  // by client id; guarded by mu
  uint64_t next_id = 1;                        // guarded by mu

  std::mutex queue_mu;
  std::condition_variable queue_cv;
  std::deque<std::shared_ptr<WatchStream>> queue;  // guarded by queue_mu
  bool workers_stop = false;                       // guarded by queue_mu
  std::vector<std::thread> workers;

  std::mutex ticker_mu;
  std::condition_variable ticker_cv;
  bool ticker_stop = false;  // guarded by ticker_mu
  bool poked = false;        // guarded by ticker_mu
  std::thread ticker;

  core::ChangeSubscription subscription;
};

// WatchStream is one Watch call: gRPC reactions record and schedule; Pump (on a sync worker,
// one at a time per stream) handles what was read and writes the next message.
class WatchStream final : public grpc::ServerBidiReactor<pb::WatchRequest, pb::WatchResponse>,
                          public std::enable_shared_from_this<WatchStream> {
 public:
  WatchStream(SyncServer::Impl* server, uint64_t id, std::string peer)
      : server_(server), id_(id), peer_(std::move(peer)) {}

  void Begin() { StartRead(&request_); }

  // Scheduling: true when the caller must queue the stream (it was not queued already).
  bool MarkScheduled() {
    std::lock_guard lock(mu_);
    if (scheduled_) return false;
    scheduled_ = true;
    return true;
  }
  void MarkHeartbeat() {
    std::lock_guard lock(mu_);
    heartbeat_due_ = true;
  }

  void OnReadDone(bool ok) override {
    {
      std::lock_guard lock(mu_);
      if (ok) {
        read_ready_ = true;
      } else {
        RequestFinishLocked(grpc::Status::OK);  // the gateway closed its side
      }
    }
    server_->Schedule(shared_from_this());
  }

  void OnWriteDone(bool ok) override {
    {
      std::lock_guard lock(mu_);
      write_in_flight_ = false;
      if (!ok) RequestFinishLocked(grpc::Status(grpc::StatusCode::UNAVAILABLE, "write failed"));
      if (finish_after_write_) {
        RequestFinishLocked(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, rejection_reason_));
      }
    }
    server_->Schedule(shared_from_this());
  }

  void OnCancel() override {
    {
      std::lock_guard lock(mu_);
      RequestFinishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled"));
    }
    server_->Schedule(shared_from_this());
  }

  void OnDone() override {
    std::shared_ptr<WatchStream> keep = shared_from_this();  // `this` may die with it, at return
    server_->OnStreamDone(id_, session_);
  }

  void Pump() {
    {
      std::lock_guard lock(mu_);
      scheduled_ = false;
      if (pumping_) {
        repump_ = true;
        return;
      }
      pumping_ = true;
    }
    while (true) {
      std::optional<pb::WatchRequest> request;
      {
        std::lock_guard lock(mu_);
        repump_ = false;
        if (finish_called_) {
          pumping_ = false;
          return;
        }
        if (read_ready_) {
          request = std::move(request_);
          request_.Clear();
          read_ready_ = false;
        }
      }
      if (request) {
        Status handled = Handle(*request);
        if (!handled.ok()) {
          Reject(handled.message());
        } else {
          StartRead(&request_);
        }
      }

      std::optional<grpc::Status> finish;
      bool can_write = false;
      bool heartbeat = false;
      {
        std::lock_guard lock(mu_);
        if (finish_requested_ && !write_in_flight_) {
          finish_called_ = true;
          finish = finish_status_;
        } else {
          can_write = !write_in_flight_ && !finish_requested_;
          heartbeat = heartbeat_due_;
        }
      }
      if (finish) {
        Finish(*finish);
        std::lock_guard lock(mu_);
        pumping_ = false;
        return;
      }
      if (can_write) {
        std::optional<pb::WatchResponse> message;
        bool finish_after = false;
        if (!rejection_reason_.empty() && !rejection_sent_) {
          message.emplace();
          message->mutable_rejected()->set_reason(rejection_reason_);
          rejection_sent_ = true;
          finish_after = true;
        } else if (session_ && rejection_reason_.empty()) {
          bool due = heartbeat;
          message = session_->Next(server_->deps.host->ServerId(), server_->MayCutBatch(), &due);
          if (heartbeat && !due) {
            std::lock_guard lock(mu_);
            heartbeat_due_ = false;
          }
        }
        if (message) {
          message->set_epoch(server_->deps.host->Epoch());
          {
            std::lock_guard lock(mu_);
            out_ = std::move(*message);
            write_in_flight_ = true;
            finish_after_write_ = finish_after;
          }
          StartWrite(&out_);
        }
      }
      std::lock_guard lock(mu_);
      if (!repump_) {
        pumping_ = false;
        return;
      }
    }
  }

 private:
  void RequestFinishLocked(grpc::Status status) {
    if (finish_requested_) return;
    finish_requested_ = true;
    finish_status_ = std::move(status);
  }

  Status Handle(const pb::WatchRequest& request) {
    if (request.has_hello()) {
      if (session_) return InvalidArgumentError("a second Hello on the same stream");
      return OnHello(request.hello());
    }
    if (!session_) return InvalidArgumentError("the first message must be a Hello");
    if (request.has_ack()) return session_->OnAck(request.ack());
    return InvalidArgumentError("a message that is neither a Hello nor an Ack");
  }

  Status OnHello(const pb::Hello& hello) {
    if (hello.client_id().empty()) return InvalidArgumentError("hello: client_id is required");
    PORTICO_ASSIGN_OR_RETURN(GatewayScope scope, GatewayScope::FromHello(hello));
    if (scope.roots.empty()) {
      spdlog::warn(
          "sync: gateway {} ({}) names no Gateway and no GatewayClass: it receives only kinds "
          "synced to every gateway",
          hello.name().empty() ? hello.client_id() : hello.name(), peer_);
    }
    SessionIdentity identity;
    identity.name = hello.name().empty() ? hello.client_id() : hello.name();
    identity.client_id = hello.client_id();
    identity.peer = peer_;
    identity.addresses.assign(hello.addresses().begin(), hello.addresses().end());
    for (const pb::PluginInfo& plugin : hello.plugins()) {
      GatewayPlugin& p = identity.plugins.emplace_back();
      p.name = plugin.name();
      p.version = plugin.version();
      p.sha256 = plugin.sha256();
      for (const pb::KindHandler& kind : plugin.kinds()) {
        if ((kind.capabilities() & PORTICO_CAP_HANDLER) == 0) continue;
        p.handlers.push_back(core::KindId{kind.group(), kind.kind()}.ToString());
      }
      for (const pb::FilterType& type : plugin.filter_types()) {
        p.filter_types.push_back(type.name() + " (" + type.phase() + ")");
      }
    }
    identity.connected_unix_ms = NowUnixMs();
    spdlog::info("sync: gateway {} connected from {} (client {}, {} Gateways{}, from version {})",
                 identity.name, peer_, identity.client_id, scope.gateways.size(),
                 scope.gateway_class.empty() ? "" : ", class " + scope.gateway_class,
                 hello.from_version());
    std::optional<ResumeState> resume = server_->TakeResume(hello.client_id());
    auto session = std::make_shared<SyncSession>(server_->Sources(), std::move(scope),
                                                 std::move(identity), hello.from_version(),
                                                 hello.expected_server_id(), std::move(resume));
    session_ = session;
    server_->AddSession(id_, std::move(session));
    return OkStatus();
  }

  void Reject(const std::string& reason) {
    server_->counters.rejected.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("sync: refused the Watch stream from {}: {}", peer_, reason);
    rejection_reason_ = reason.empty() ? "protocol error" : reason;
  }

  SyncServer::Impl* const server_;
  const uint64_t id_;
  const std::string peer_;

  // Pump-only (and OnDone, after the last pump).
  std::shared_ptr<SyncSession> session_;
  std::string rejection_reason_;
  bool rejection_sent_ = false;

  std::mutex mu_;
  bool scheduled_ = false;
  bool pumping_ = false;
  bool repump_ = false;
  bool read_ready_ = false;
  bool write_in_flight_ = false;
  bool finish_after_write_ = false;
  bool finish_requested_ = false;
  bool finish_called_ = false;
  bool heartbeat_due_ = false;
  grpc::Status finish_status_;
  pb::WatchRequest request_;  // gRPC reads into it while a read is outstanding
  pb::WatchResponse out_;     // gRPC writes from it while a write is in flight
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
  std::vector<OutEvent> events;
  for (core::StoredObject& object : snapshot.objects) {
    if (object.json == nullptr || !options.policies.Syncs(object.key)) continue;
    if (!request->namespace_().empty() && !object.key.ns.empty() &&
        object.key.ns != request->namespace_()) {
      continue;
    }
    if (request->kinds_size() > 0) {
      bool wanted = false;
      for (const pb::KindRef& kind : request->kinds()) {
        wanted = wanted || (kind.kind() == object.key.kind && kind.group() == object.key.group);
      }
      if (!wanted) continue;
    }
    OutEvent& e = events.emplace_back();
    e.key = std::move(object.key);
    e.hash = std::move(object.hash);
    e.json = std::move(object.json);
    e.version = object.version;
  }
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

void SyncServer::Impl::Schedule(const std::shared_ptr<WatchStream>& stream) {
  if (!stream->MarkScheduled()) return;
  {
    std::lock_guard lock(queue_mu);
    queue.push_back(stream);
  }
  queue_cv.notify_one();
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

void SyncServer::Impl::WorkerLoop() {
  while (true) {
    std::shared_ptr<WatchStream> stream;
    {
      std::unique_lock lock(queue_mu);
      queue_cv.wait(lock, [&] { return workers_stop || !queue.empty(); });
      if (queue.empty()) return;  // stopping, and drained
      stream = std::move(queue.front());
      queue.pop_front();
    }
    stream->Pump();
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
    {
      std::lock_guard guard(mu);
      for (auto it = resumable.begin(); it != resumable.end();) {
        it = it->second.expires <= now ? resumable.erase(it) : std::next(it);
      }
    }
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

void SyncServer::Impl::AddSession(uint64_t id, std::shared_ptr<SyncSession> session) {
  std::vector<core::StoreKey> roots(session->scope().roots.begin(), session->scope().roots.end());
  {
    std::lock_guard lock(mu);
    sessions.emplace(id, std::move(session));
  }
  if (tracker) tracker->MarkDirty(std::move(roots));
}

void SyncServer::Impl::OnStreamDone(uint64_t id, std::shared_ptr<SyncSession> session) {
  {
    std::lock_guard lock(mu);
    streams.erase(id);
    sessions.erase(id);
  }
  if (!session) return;
  spdlog::info("sync: gateway {} ({}) disconnected at acked version {}", session->identity().name,
               session->identity().peer, session->acked_version());
  if (tracker) tracker->MarkDirty(session->AllKeys());
  std::optional<ResumeState> state = session->TakeResumeState();
  if (!state || options.max_resumable == 0) return;
  std::lock_guard lock(mu);
  while (resumable.size() >= options.max_resumable) {
    auto oldest = std::min_element(resumable.begin(), resumable.end(), [](auto& a, auto& b) {
      return a.second.expires < b.second.expires;
    });
    resumable.erase(oldest);
  }
  std::string client_id = state->client_id;
  resumable[client_id] =
      Resumable{std::move(*state), SteadyClock::now() + options.resume_retention};
}

std::optional<ResumeState> SyncServer::Impl::TakeResume(const std::string& client_id) {
  std::lock_guard lock(mu);
  auto it = resumable.find(client_id);
  if (it == resumable.end()) return std::nullopt;
  ResumeState state = std::move(it->second.state);
  resumable.erase(it);
  return state;
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
  {
    std::lock_guard lock(impl.queue_mu);
    impl.workers_stop = false;
  }
  for (int i = 0; i < std::max(1, impl.options.workers); ++i) {
    impl.workers.emplace_back([&impl] { impl.WorkerLoop(); });
  }
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
  {
    std::lock_guard lock(impl.queue_mu);
    impl.workers_stop = true;
  }
  impl.queue_cv.notify_all();
  for (std::thread& t : impl.workers) t.join();
  impl.workers.clear();
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
