// sync_client.h: SyncClient, the gateway's end of ConfigSync (DESIGN.md §5): one Watch stream to
// a controller, kept open for the life of the process.
//
// Several controllers (issue 16): `controllers` lists their addresses, one gRPC channel each.
// The stream goes to one at a time; when it ends and that controller's channel is no longer
// connected (the controller died or is unreachable), or the controller was rejected or fenced,
// the next one is tried after the jittered backoff below. The Hello carries the applied version
// and server_id, so going back to the same controller resumes from its log; another controller
// (another server_id, its own sequence) answers with a snapshot, applied as one transaction
// while the old configuration keeps serving.
//
// Epoch fencing: every message of a controller of an etcd cluster carries the epoch of the
// leader it knows (the leader's lease revision). The client keeps the highest epoch seen and
// ends a stream whose epoch is lower (a controller cut off from etcd, still serving an older
// leader's world), drops what it had received on it, and fails over.
//
// Per stream: Hello {client_id, name, gateways, gateway_class, plugins (inventory),
// from_version + expected_server_id (what the runtime holds), addresses}; then
//  - SnapshotChunk* SnapshotEnd{V, server_id}: ONE GatewayRuntime::Apply(all, replace_all, V);
//  - Batch* BatchEnd{V1, V2}: ONE Apply(changes, false, V2);
//  each followed by Ack{V, nacks}. A batch ending at or before the applied version, or a snapshot
//  of the same server older than it, is a replay: acked, never applied (it would roll objects
//  back). A snapshot or batch cut by a broken stream (or by a protocol
//  error) is dropped, never applied. A batch whose V1 is past the applied version (a gap) ends
//  the stream so the next Hello resynchronizes.
//  - Heartbeat{server_id, head}: records the server's head (lag = head - applied).
//  - Rejected{reason}: logged; the next attempt waits the maximum backoff.
// A broken stream is retried with jittered exponential backoff (full jitter, backoff_base ..
// backoff_max), reset once a snapshot or batch is applied; while the controller is unreachable
// the channel keeps trying to connect during that delay and the retry starts as soon as it does.
// gRPC keepalive (options: 5 s ping, 5 s timeout by default, also without calls; the gateway's
// [sync] keepalive_ms / keepalive_timeout_ms) finds a dead or black-holed link in about their sum.
//
// Threading: one thread of its own (Start..Stop) runs the stream with gRPC's synchronous API and
// calls GatewayRuntime::Apply and `on_applied` on it; it is the runtime's only Apply caller once
// started (RestoreSnapshot runs before Start). GetStatus(), Capture() and Stop() are safe from any
// thread. Ownership: borrows the runtime, which must outlive the client.
#ifndef PORTICO_GATEWAY_SYNC_SYNC_CLIENT_H_
#define PORTICO_GATEWAY_SYNC_SYNC_CLIENT_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/runtime/gateway_runtime.h"
#include "core/sync/sync_security.h"
#include "gateway/config/gateway_config.h"
#include "gateway/sync/snapshot_file.h"
#include "portico/sync/v1/sync.grpc.pb.h"
#include "portico/sync/v1/sync.pb.h"

namespace portico::gateway {

struct SyncClientOptions {
  std::vector<std::string> controllers = {"127.0.0.1:5810"};  // host:port each; at least one
  std::string name;
  std::vector<GatewayRef> gateways;
  std::string gateway_class;
  std::vector<std::string> addresses;
  std::vector<sync::v1::PluginInfo> inventory;  // core::BuildInventory
  core::SyncSecurity security;                  // disabled: plaintext
  std::string client_id;                        // empty: random per process
  std::chrono::milliseconds backoff_base{100};
  std::chrono::milliseconds backoff_max{5000};
  std::chrono::milliseconds keepalive_time{5000};
  std::chrono::milliseconds keepalive_timeout{5000};
  // Called on the sync thread after each applied snapshot or batch (the snapshot writer's
  // MarkDirty). Must not call back into the client's Stop().
  std::function<void()> on_applied;
};

// SyncStatus is what admin and metrics show.
struct SyncStatus {
  std::string client_id;
  std::string controller;                // the controller streamed from (or tried) now
  std::vector<std::string> controllers;  // every configured controller
  bool connected = false;      // a Watch stream is open (Hello sent on a ready channel, or
                               // the server has spoken)
  bool ready = false;          // a snapshot (controller or file) was applied
  bool from_snapshot = false;  // what is held came from the snapshot file, not yet the controller
  std::string server_id;       // server_id of the applied state ("" before any)
  std::string server_id_seen;  // the last server_id the server reported (heartbeat/snapshot)
  uint64_t applied_version = 0;
  uint64_t server_head = 0;  // from heartbeats and ends; 0 before
  uint64_t connects = 0;     // streams on which the server spoke
  uint64_t reconnects = 0;   // connects after the first
  uint64_t disconnects = 0;  // streams that ended (or failed to open)
  uint64_t snapshots_applied = 0;
  uint64_t batches_applied = 0;
  uint64_t nacks_sent = 0;
  uint64_t replays_ignored = 0;  // batches/snapshots older than the applied version, not applied
  uint64_t rejections = 0;
  uint64_t dropped_partials = 0;  // snapshots/batches cut short and dropped
  uint64_t failovers = 0;         // moves to another controller
  uint64_t epoch = 0;             // the highest leader epoch seen (0: none, or no etcd)
  uint64_t stale_epochs = 0;      // streams ended for carrying an older epoch
  std::string last_error;         // why the last stream ended ("" while none did)

  uint64_t lag() const { return server_head > applied_version ? server_head - applied_version : 0; }
  // ReadySource: "controller", "snapshot file" or "" when not ready.
  std::string ReadySource() const;
};

// ToSyncedChange converts a wire event (UPSERT or DELETE) to the runtime's change.
core::SyncedChange ToSyncedChange(sync::v1::Event&& event);

class SyncClient {
 public:
  SyncClient(SyncClientOptions options, core::GatewayRuntime* runtime);
  ~SyncClient();  // Stop()
  SyncClient(const SyncClient&) = delete;
  SyncClient& operator=(const SyncClient&) = delete;

  // RestoreSnapshot applies a snapshot file's state (replace_all) before Start: the gateway is
  // then ready "from snapshot" and its Hello resumes from state.version/server_id. Returns the
  // nacks (objects whose handler refused them).
  std::vector<core::SyncNack> RestoreSnapshot(const SnapshotState& state);

  // Start creates the channel (credentials from options.security) and launches the sync thread.
  // An error (unreadable certificate files) starts nothing. Once only.
  Status Start();
  // Stop cancels the stream and joins the thread. Idempotent.
  void Stop();

  SyncStatus GetStatus() const;
  // Capture returns the held objects with the version and server_id they reflect (consistent:
  // taken between two Applies), for the snapshot file.
  SnapshotState Capture() const;

  const std::string& client_id() const { return options_.client_id; }

 private:
  void Run();
  // RunStream runs one Watch stream until it ends; returns true when it was rejected (or
  // fenced: an older epoch).
  bool RunStream();
  // Advance moves to the next controller (when there are several).
  void Advance();
  std::chrono::milliseconds NextDelay(bool rejected);
  // WaitBeforeRetry waits `delay` (less when the channel connects meanwhile); false on Stop().
  bool WaitBeforeRetry(std::chrono::milliseconds delay);

  SyncClientOptions options_;
  core::GatewayRuntime* const runtime_;
  // One channel and stub per controller (Start); sync thread reads, Start writes before it.
  std::vector<std::shared_ptr<grpc::Channel>> channels_;
  std::vector<std::unique_ptr<sync::v1::ConfigSync::Stub>> stubs_;
  size_t current_ = 0;  // sync thread only: the controller streamed from

  // apply_mu_ serializes an Apply with the update of the state it produced, so Capture() sees
  // a consistent (objects, version, server_id).
  mutable std::mutex apply_mu_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  grpc::ClientContext* context_ = nullptr;  // of the open stream, for Stop's TryCancel
  SyncStatus status_;
  bool stale_stream_ = false;  // the last stream carried an older epoch
  int failures_ = 0;  // consecutive streams without an applied snapshot/batch (backoff)
  // Sync thread only: when "cannot reach" was last logged at warn (reset once connected).
  std::optional<std::chrono::steady_clock::time_point> unreachable_since_logged_;

  std::thread thread_;
};

}  // namespace portico::gateway

#endif  // PORTICO_GATEWAY_SYNC_SYNC_CLIENT_H_
