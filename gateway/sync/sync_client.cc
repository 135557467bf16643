#include "gateway/sync/sync_client.h"

#include <google/protobuf/arena.h>

#include <grpcpp/grpcpp.h>
#include <malloc.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>

namespace portico::gateway {
namespace {

constexpr char kGatewayGroup[] = "gateway.networking.k8s.io";
constexpr char kGatewayKind[] = "Gateway";

std::string RandomClientId() {
  std::random_device device;
  std::string id;
  static constexpr char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 4; ++i) {
    uint32_t word = device();
    for (int j = 0; j < 8; ++j) id.push_back(kHex[(word >> (4 * j)) & 0xF]);
  }
  return id;
}

sync::v1::ObjectKey ToObjectKey(const core::StoreKey& key) {
  sync::v1::ObjectKey out;
  out.set_group(key.group);
  out.set_kind(key.kind);
  out.set_namespace_(key.ns);
  out.set_name(key.name);
  return out;
}

// TrimHeapAfter hands freed heap back to the kernel after a large apply. A snapshot or a big
// batch frees its protobuf buffers, the transaction's scratch state and the replaced tables at
// once, and glibc keeps such memory in the sync thread's arena otherwise (measured: 76 MB RSS
// with 10,000 routes, 60 MB after the trim). A few milliseconds on the sync thread.
void TrimHeapAfter(size_t changes) {
  constexpr size_t kLargeApply = 512;
  if (changes >= kLargeApply) malloc_trim(0);
}

// Pending collects the events of a snapshot or a batch until its end message arrives.
struct Pending {
  enum class Kind { kNone, kSnapshot, kBatch };
  Kind kind = Kind::kNone;
  std::vector<core::SyncedChange> changes;
  size_t messages = 0;

  void Reset() {
    kind = Kind::kNone;
    changes.clear();
    messages = 0;
  }
};

}  // namespace

std::string SyncStatus::ReadySource() const {
  if (!ready) return "";
  return from_snapshot ? "snapshot file" : "controller";
}

// ToSyncedChange converts `event`, which lives in `arena`: the body is not copied, the change
// points at it and keeps the arena alive.
core::SyncedChange ToSyncedChange(const sync::v1::Event& event,
                                  const std::shared_ptr<google::protobuf::Arena>& arena) {
  core::SyncedChange change;
  const sync::v1::ObjectKey& key = event.key();
  change.key = core::StoreKey{key.group(), key.kind(), key.namespace_(), key.name()};
  change.hash = event.hash();
  if (event.op() == sync::v1::Event::OP_DELETE) {
    change.op = PORTICO_CHANGE_DELETE;
  } else {
    change.op = PORTICO_CHANGE_UPSERT;
    change.json = std::shared_ptr<const std::string>(arena, &event.body());
  }
  return change;
}

// NewMessageArena returns the arena one received message is parsed into. Its blocks are large,
// so a snapshot's bodies sit in a few big blocks rather than small heap chunks between long-lived
// ones, and go back to the system whole once applied (the runtime spools or copies what it
// keeps).
std::shared_ptr<google::protobuf::Arena> NewMessageArena() {
  google::protobuf::ArenaOptions options;
  options.start_block_size = 16 << 10;
  options.max_block_size = 1 << 20;
  return std::make_shared<google::protobuf::Arena>(options);
}

SyncClient::SyncClient(SyncClientOptions options, core::GatewayRuntime* runtime)
    : options_(std::move(options)), runtime_(runtime) {
  if (options_.client_id.empty()) options_.client_id = RandomClientId();
  status_.client_id = options_.client_id;
  if (options_.controllers.empty()) options_.controllers.push_back("127.0.0.1:5810");
  status_.controllers = options_.controllers;
  status_.controller = options_.controllers.front();
}

SyncClient::~SyncClient() { Stop(); }

std::vector<core::SyncNack> SyncClient::RestoreSnapshot(const SnapshotState& state) {
  std::vector<core::SyncedChange> changes;
  changes.reserve(state.objects.size());
  for (const core::HeldObject& object : state.objects) {
    changes.push_back(
        core::SyncedChange{PORTICO_CHANGE_UPSERT, object.key, object.hash, object.json});
  }
  std::lock_guard<std::mutex> apply_lock(apply_mu_);
  core::ApplyResult result = runtime_->Apply(std::move(changes), true, state.version);
  TrimHeapAfter(state.objects.size());
  std::lock_guard<std::mutex> lock(mu_);
  status_.applied_version = state.version;
  status_.server_id = state.server_id;
  status_.ready = true;
  status_.from_snapshot = true;
  return result.nacks;
}

Status SyncClient::Start() {
  if (thread_.joinable() || !stubs_.empty()) return FailedPreconditionError("already started");
  PORTICO_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ChannelCredentials> credentials,
                           core::MakeChannelCredentials(options_.security));
  grpc::ChannelArguments args = core::ChannelArgsFor(options_.security);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, static_cast<int>(options_.keepalive_time.count()));
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, static_cast<int>(options_.keepalive_timeout.count()));
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);  // keep pinging an idle stream
  // The channel's own reconnection follows our backoff range, not gRPC's 1 s .. 120 s.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS,
              static_cast<int>(options_.backoff_base.count()));
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, static_cast<int>(options_.backoff_base.count()));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, static_cast<int>(options_.backoff_max.count()));
  args.SetMaxReceiveMessageSize(64 << 20);  // chunks are <= 1 MiB; one large object may exceed it
  for (const std::string& controller : options_.controllers) {
    channels_.push_back(grpc::CreateCustomChannel(controller, credentials, args));
    stubs_.push_back(sync::v1::ConfigSync::NewStub(channels_.back()));
  }
  thread_ = std::thread([this] { Run(); });
  return OkStatus();
}

void SyncClient::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    if (context_ != nullptr) context_->TryCancel();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

SyncStatus SyncClient::GetStatus() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

SnapshotState SyncClient::Capture() const {
  std::lock_guard<std::mutex> apply_lock(apply_mu_);
  SnapshotState state;
  {
    std::lock_guard<std::mutex> lock(mu_);
    state.version = status_.applied_version;
    state.server_id = status_.server_id;
  }
  state.objects = runtime_->Held();
  return state;
}

void SyncClient::Run() {
  std::string all;
  for (const std::string& controller : options_.controllers) {
    all += (all.empty() ? "" : ",") + controller;
  }
  spdlog::info("ConfigSync: gateway \"{}\" (client {}) syncing from {}", options_.name,
               options_.client_id, all);
  while (true) {
    bool rejected = RunStream();
    bool stale = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) break;
      stale = stale_stream_;
      stale_stream_ = false;
    }
    // A controller that is gone (its channel no longer connected) or fenced: try the next one.
    // A rejection (an incompatible inventory) would be the same elsewhere: wait the longest.
    std::chrono::milliseconds delay = NextDelay(rejected && !stale);
    if (channels_.size() > 1 &&
        (stale || rejected || channels_[current_]->GetState(false) != GRPC_CHANNEL_READY)) {
      Advance();
    }
    spdlog::debug("ConfigSync: reconnecting to {} in {} ms", options_.controllers[current_],
                  delay.count());
    if (!WaitBeforeRetry(delay)) break;
  }
}

void SyncClient::Advance() {
  std::string from = options_.controllers[current_];
  current_ = (current_ + 1) % channels_.size();
  std::lock_guard<std::mutex> lock(mu_);
  status_.controller = options_.controllers[current_];
  ++status_.failovers;
  spdlog::info("ConfigSync: failing over from {} to {}", from, status_.controller);
}

bool SyncClient::WaitBeforeRetry(std::chrono::milliseconds delay) {
  auto end = std::chrono::system_clock::now() + delay;
  grpc::Channel* channel = channels_[current_].get();
  grpc_connectivity_state state = channel->GetState(/*try_to_connect=*/false);
  if (state == GRPC_CHANNEL_READY) {
    // Connected, yet the stream ended (closed, rejected, a protocol error): the whole delay.
    std::unique_lock<std::mutex> lock(mu_);
    return !cv_.wait_until(lock, end, [this] { return stopping_; });
  }
  // Unreachable: the channel keeps its own reconnection backoff (up to backoff_max); restart it
  // so it tries now and again during our delay, and retry as soon as it connects.
  grpc::experimental::ChannelResetConnectionBackoff(channel);
  state = channel->GetState(/*try_to_connect=*/true);
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return false;
    }
    auto now = std::chrono::system_clock::now();
    if (state == GRPC_CHANNEL_READY || now >= end) return true;
    // Slices of 50 ms bound how long Stop() waits for this thread.
    channel->WaitForStateChange(state, std::min(end, now + std::chrono::milliseconds(50)));
    state = channel->GetState(/*try_to_connect=*/true);
  }
}

std::chrono::milliseconds SyncClient::NextDelay(bool rejected) {
  thread_local std::mt19937_64 random(std::random_device{}());
  int64_t max = options_.backoff_max.count();
  if (rejected) {  // the controller will not change its mind soon: wait the longest
    return std::chrono::milliseconds(
        std::uniform_int_distribution<int64_t>(max / 2, std::max<int64_t>(max, 1))(random));
  }
  int64_t cap = options_.backoff_base.count();
  for (int i = 0; i < failures_ && cap < max; ++i) cap *= 2;
  cap = std::min(cap, max);
  ++failures_;
  return std::chrono::milliseconds(std::uniform_int_distribution<int64_t>(0, cap)(random));
}

bool SyncClient::RunStream() {
  const std::string& controller = options_.controllers[current_];
  grpc::Channel* channel = channels_[current_].get();
  grpc::ClientContext context;
  sync::v1::WatchRequest hello_request;
  sync::v1::Hello* hello = hello_request.mutable_hello();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return false;
    context_ = &context;
    hello->set_from_version(status_.applied_version);
    hello->set_expected_server_id(status_.server_id);
    hello->set_epoch(status_.epoch);
  }
  hello->set_client_id(options_.client_id);
  hello->set_name(options_.name);
  for (const GatewayRef& ref : options_.gateways) {
    sync::v1::ObjectKey* key = hello->add_gateways();
    key->set_group(kGatewayGroup);
    key->set_kind(kGatewayKind);
    key->set_namespace_(ref.ns);
    key->set_name(ref.name);
  }
  hello->set_gateway_class(options_.gateway_class);
  for (const auto& plugin : options_.inventory) *hello->add_plugins() = plugin;
  for (const std::string& address : options_.addresses) hello->add_addresses(address);
  uint64_t from_version = hello->from_version();

  bool connected = false;
  auto mark_connected = [&] {
    if (connected) return;
    connected = true;
    std::lock_guard<std::mutex> lock(mu_);
    status_.connected = true;
    ++status_.connects;
    if (status_.connects > 1) ++status_.reconnects;
    spdlog::info("ConfigSync: connected to {} (from version {}{}{})", controller, from_version,
                 status_.server_id.empty() ? "" : " of server ", status_.server_id);
  };

  std::unique_ptr<grpc::ClientReaderWriter<sync::v1::WatchRequest, sync::v1::WatchResponse>>
      stream = stubs_[current_]->Watch(&context);
  bool rejected = false;
  std::string error;  // why this side ended the stream
  Pending pending;
  if (stream->Write(hello_request)) {
    if (channel->GetState(false) == GRPC_CHANNEL_READY) mark_connected();
    while (error.empty()) {
      std::shared_ptr<google::protobuf::Arena> arena = NewMessageArena();
      auto& response =
          *google::protobuf::Arena::CreateMessage<sync::v1::WatchResponse>(arena.get());
      if (!stream->Read(&response)) break;
      mark_connected();
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (response.epoch() < status_.epoch) {
          error = "stale epoch: " + controller + " follows leader epoch " +
                  std::to_string(response.epoch()) + ", older than epoch " +
                  std::to_string(status_.epoch) + " already seen; ignoring its stream";
          stale_stream_ = true;
          ++status_.stale_epochs;
          break;
        }
        if (response.epoch() > status_.epoch) {
          if (status_.epoch != 0) {
            spdlog::info("ConfigSync: leader epoch {} (was {})", response.epoch(), status_.epoch);
          }
          status_.epoch = response.epoch();
        }
      }
      switch (response.msg_case()) {
        case sync::v1::WatchResponse::kSnapshot:
        case sync::v1::WatchResponse::kBatch: {
          bool snapshot = response.msg_case() == sync::v1::WatchResponse::kSnapshot;
          Pending::Kind kind = snapshot ? Pending::Kind::kSnapshot : Pending::Kind::kBatch;
          if (pending.kind != Pending::Kind::kNone && pending.kind != kind) {
            error = snapshot ? "protocol error: snapshot chunk inside a batch"
                             : "protocol error: batch inside a snapshot";
            break;
          }
          pending.kind = kind;
          ++pending.messages;
          const auto& events = snapshot ? response.snapshot().events() : response.batch().events();
          for (const sync::v1::Event& event : events) {
            if (snapshot && event.op() == sync::v1::Event::OP_DELETE) continue;  // nothing to hold
            pending.changes.push_back(ToSyncedChange(event, arena));
          }
          break;
        }
        case sync::v1::WatchResponse::kSnapshotEnd:
        case sync::v1::WatchResponse::kBatchEnd: {
          bool snapshot = response.msg_case() == sync::v1::WatchResponse::kSnapshotEnd;
          if (pending.kind != Pending::Kind::kNone &&
              (pending.kind == Pending::Kind::kSnapshot) != snapshot) {
            error = snapshot ? "protocol error: SnapshotEnd closing a batch"
                             : "protocol error: BatchEnd closing a snapshot";
            break;
          }
          uint64_t version =
              snapshot ? response.snapshot_end().version() : response.batch_end().to_version();
          std::string server_id;
          bool replayed = false;
          uint64_t applied_before = 0;
          {
            std::lock_guard<std::mutex> lock(mu_);
            if (!snapshot && response.batch_end().from_version() > status_.applied_version) {
              error = "gap: batch (" + std::to_string(response.batch_end().from_version()) + ", " +
                      std::to_string(version) + "] after applied version " +
                      std::to_string(status_.applied_version) + "; resynchronizing";
              break;
            }
            server_id = snapshot ? response.snapshot_end().server_id() : status_.server_id;
            if (snapshot && server_id.empty()) server_id = status_.server_id_seen;
            // One server's sequence only grows: a batch ending at or before what is applied, or
            // a snapshot of that server older than it, is a replay (a stale or misbehaving
            // peer). Applying it would roll objects back under a newer version number.
            replayed =
                status_.ready && server_id == status_.server_id &&
                (version < status_.applied_version ||
                 (!snapshot && version == status_.applied_version && !pending.changes.empty()));
            applied_before = status_.applied_version;
          }
          if (replayed) {
            spdlog::warn(
                "ConfigSync: ignored a replayed {} ending at version {} of server {} ({} "
                "changes): this gateway already holds version {}",
                snapshot ? "snapshot" : "batch", version, server_id, pending.changes.size(),
                applied_before);
            pending.Reset();
            {
              std::lock_guard<std::mutex> lock(mu_);
              ++status_.replays_ignored;
            }
            // Every event <= version is applied (a newer version of it is): a truthful ack,
            // never beyond what the server sent.
            sync::v1::WatchRequest ack_request;
            ack_request.mutable_ack()->set_version(version);
            if (!stream->Write(ack_request)) error = "the stream broke while acking";
            break;
          }
          size_t changes = pending.changes.size();
          core::ApplyResult result;
          {
            std::lock_guard<std::mutex> apply_lock(apply_mu_);
            result = runtime_->Apply(std::move(pending.changes), snapshot, version);
            std::lock_guard<std::mutex> lock(mu_);
            bool new_server = server_id != status_.server_id;
            status_.applied_version = version;
            status_.server_id = server_id;
            status_.from_snapshot = false;  // in step with the controller now
            if (snapshot) {
              status_.server_id_seen = server_id;
              status_.server_head = new_server ? version : std::max(status_.server_head, version);
              status_.ready = true;
              ++status_.snapshots_applied;
            } else {
              status_.server_head = std::max(status_.server_head, version);
              ++status_.batches_applied;
            }
            status_.nacks_sent += result.nacks.size();
          }
          pending.Reset();
          TrimHeapAfter(changes);
          failures_ = 0;
          if (snapshot) {
            spdlog::info(
                "ConfigSync: applied snapshot at version {} of server {}: {} objects, {} nacked, "
                "generation {}{}",
                version, server_id, changes, result.nacks.size(), result.generation,
                result.committed ? "" : " (unchanged)");
          } else {
            spdlog::debug("ConfigSync: applied batch ({}, {}]: {} changes, {} nacked",
                          response.batch_end().from_version(), version, changes,
                          result.nacks.size());
          }
          for (const core::SyncNack& nack : result.nacks) {
            spdlog::warn("ConfigSync: nacked {} (hash {}): {}", nack.key.ToString(), nack.hash,
                         nack.reason);
          }
          if (options_.on_applied) options_.on_applied();
          sync::v1::WatchRequest ack_request;
          sync::v1::Ack* ack = ack_request.mutable_ack();
          ack->set_version(version);
          for (core::SyncNack& nack : result.nacks) {
            sync::v1::Nack* out = ack->add_nacks();
            *out->mutable_key() = ToObjectKey(nack.key);
            out->set_hash(std::move(nack.hash));
            out->set_reason(std::move(nack.reason));
          }
          if (!stream->Write(ack_request)) error = "the stream broke while acking";
          break;
        }
        case sync::v1::WatchResponse::kHeartbeat: {
          std::lock_guard<std::mutex> lock(mu_);
          const auto& beat = response.heartbeat();
          if (beat.server_id() != status_.server_id_seen) {
            spdlog::info("ConfigSync: server {} (head {}); this gateway holds version {}{}{}",
                         beat.server_id(), beat.head(), status_.applied_version,
                         status_.server_id.empty() ? "" : " of server ", status_.server_id);
          }
          status_.server_id_seen = beat.server_id();
          status_.server_head = beat.head();
          break;
        }
        case sync::v1::WatchResponse::kRejected: {
          rejected = true;
          error = "rejected by the controller: " + response.rejected().reason();
          std::lock_guard<std::mutex> lock(mu_);
          ++status_.rejections;
          break;
        }
        default:
          spdlog::debug("ConfigSync: ignoring an empty or unknown message");
          break;
      }
    }
  }
  if (!error.empty()) context.TryCancel();
  grpc::Status finish = stream->Finish();
  bool stopping;
  {
    std::lock_guard<std::mutex> lock(mu_);
    context_ = nullptr;
    stopping = stopping_;
    status_.connected = false;
    ++status_.disconnects;
    if (pending.kind != Pending::Kind::kNone) ++status_.dropped_partials;
    if (error.empty()) {
      error = finish.ok() ? "the controller closed the stream"
                          : core::DescribeSyncFailure(finish, options_.security, controller);
    }
    if (!stopping) status_.last_error = error;
  }
  if (stopping) {
    spdlog::info("ConfigSync: stream to {} closed (stopping)", controller);
  } else {
    if (pending.kind != Pending::Kind::kNone) {
      spdlog::warn("ConfigSync: dropped a partial {} ({} messages, {} events) cut short",
                   pending.kind == Pending::Kind::kSnapshot ? "snapshot" : "batch",
                   pending.messages, pending.changes.size());
    }
    if (rejected) {
      spdlog::error("ConfigSync: {}", error);
    } else {
      if (connected) {
        spdlog::warn("ConfigSync: stream to {} ended: {}; reconnecting", controller, error);
        unreachable_since_logged_.reset();
      } else if (!unreachable_since_logged_ ||
                 std::chrono::steady_clock::now() - *unreachable_since_logged_ >
                     std::chrono::minutes(1)) {  // then once a minute; each attempt at debug
        spdlog::warn("ConfigSync: cannot reach {}: {}; retrying (backoff up to {} ms)", controller,
                     error, options_.backoff_max.count());
        unreachable_since_logged_ = std::chrono::steady_clock::now();
      } else {
        spdlog::debug("ConfigSync: still cannot reach {}: {}", controller, error);
      }
    }
  }
  return rejected;
}

}  // namespace portico::gateway
