// sync_server.h: SyncServer, the controller's ConfigSync gRPC server (DESIGN.md §5;
// proto/portico/sync/v1/sync.proto): Watch (one bidirectional stream per gateway, driven by a
// SyncSession), List (the processed objects, streamed in chunks of at most 1 MiB) and
// GetServerInfo.
//
// Built on gRPC's callback API: no thread per stream. gRPC's callbacks only record what
// happened (a message read, a write done, a cancel) and schedule the stream; a small pool of
// sync workers (`workers`) runs each stream's pump, one pump per stream at a time, which reads the
// store and writes at most one message at a time. A stalled gateway is a stream with one
// outstanding write and one unacked batch: nothing else is held for it. A ticker thread sends
// heartbeats ({server_id, head} every `heartbeat_interval`) and polls readiness, server_id and
// SyncLinks::Generation() (every `poll_interval`); store changes wake the streams directly.
// gRPC keepalive (ping every 5 s, 5 s to answer) finds a dead gateway in <= 15 s and accepts the
// gateways' own 5 s pings.
//
// Watch protocol: the first message must be a Hello (else Rejected{reason}, then the stream ends
// with INVALID_ARGUMENT); then nothing is sent until the host is Ready; then a snapshot or a
// resume and batches (sync_session.h). Acks beyond what was sent and a second Hello are
// rejected the same way. Feedback (acks and nacks -> `Programmed`) goes to the sink through a
// FeedbackTracker (feedback_tracker.h); it never causes sync traffic.
//
// Files: the List call in list_call.h, one Watch stream in watch_stream.h, the sync workers in
// pump_pool.h, what finished streams leave for a resume in resume_store.h; this file wires them
// to gRPC, runs the ticker and keeps the registry of streams and sessions.
//
// Address: options.address, or by default 0.0.0.0 when the channel is secured
// (options.secure), else 127.0.0.1 (a plaintext ConfigSync is not offered to the network
// unless asked for).
//
// Thread-safety: Start and Stop are called by the owner (once each; Stop is idempotent and the
// destructor calls it). Poke, Gateways, GatewaySynced, Stats, port and Endpoint may be called
// from any thread. Ownership: the store, links, host and sink must outlive the server (Stop
// returns only once no stream, worker or feedback thread touches them).
#ifndef PORTICO_CONTROLLER_SYNC_SYNC_SERVER_H_
#define PORTICO_CONTROLLER_SYNC_SYNC_SERVER_H_

#include <grpcpp/security/server_credentials.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/sync/connected_gateway.h"
#include "controller/sync/event_chunker.h"
#include "controller/sync/object_feedback.h"
#include "controller/sync/sync_links.h"
#include "controller/sync/sync_scope.h"
#include "core/store/object_store.h"
#include "portico/sdk/status.h"
#include "portico/sync/v1/sync.pb.h"

namespace portico::controller::sync {

// SyncHost is what the server asks of the controller.
class SyncHost {
 public:
  virtual ~SyncHost() = default;
  // Ready: the initial processing drained; Watch streams send nothing before.
  virtual bool Ready() const = 0;
  // ServerId: new at every start and reload; a change makes every stream resend a snapshot.
  virtual std::string ServerId() const = 0;
  // Settled: the controller has no processing in flight, so the store holds a consistent world
  // (a change spanning kinds is complete). Streams cut batches only when settled, or once the
  // host stayed unsettled for SyncServerOptions::settle_timeout; Poke() when it settles.
  virtual bool Settled() const { return true; }
  // Epoch: the leader epoch this controller knows (controllers on etcd: the leader's lease
  // revision; 0 without an election). Every Watch message carries it; gateways ignore streams
  // with an older epoch than one they saw.
  virtual uint64_t Epoch() const { return 0; }
};

struct SyncServerOptions {
  std::string address;   // "": 0.0.0.0 when `secure`, else 127.0.0.1
  uint16_t port = 5810;  // 0: any free port (see port())
  // Longest a batch waits for the host to settle (continuous churn must not starve gateways).
  std::chrono::milliseconds settle_timeout{250};
  // nullptr: insecure. core::MakeServerCredentials(conf_sync_security) in the controller.
  std::shared_ptr<grpc::ServerCredentials> credentials;
  bool secure = false;  // the credentials are mutual TLS (decides the default address)
  std::string version;  // ServerInfo.version
  std::vector<portico::sync::v1::PluginInfo> inventory;  // ServerInfo.plugins
  SyncPolicies policies;                                 // per kind (SyncPolicies::FromRegistry)
  std::chrono::milliseconds heartbeat_interval{5000};
  std::chrono::milliseconds poll_interval{100};
  std::chrono::milliseconds keepalive_time{5000};
  std::chrono::milliseconds keepalive_timeout{5000};
  size_t max_message_bytes = kMaxMessageBytes;  // per Watch/List message
  int workers = 2;
  // How long a finished stream's state is kept for its gateway to resume (same client_id).
  std::chrono::seconds resume_retention{300};
  size_t max_resumable = 64;
};

struct SyncServerDeps {
  core::ObjectStore* store = nullptr;
  const SyncLinks* links = nullptr;
  SyncHost* host = nullptr;
  SyncFeedbackSink* feedback = nullptr;  // may be null: no feedback
};

class SyncServer {
 public:
  SyncServer(SyncServerOptions options, SyncServerDeps deps);
  ~SyncServer();
  SyncServer(const SyncServer&) = delete;
  SyncServer& operator=(const SyncServer&) = delete;

  // Start binds and serves; UNAVAILABLE naming the address when it cannot bind.
  Status Start();
  // Stop ends every stream (gateways reconnect elsewhere or later) and joins the threads.
  void Stop();

  // Poke: readiness or the server_id may have changed; streams look now instead of at the
  // next poll.
  void Poke();

  uint16_t port() const;
  std::string Endpoint() const;  // "127.0.0.1:5810"

  std::vector<ConnectedGateway> Gateways() const;
  // GatewaySynced: key -> hash the server believes gateway `name` (or client id) holds; nullopt
  // when no such gateway is connected.
  std::optional<std::map<std::string, std::string>> GatewaySynced(std::string_view name) const;
  SyncStats Stats() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace portico::controller::sync

#endif  // PORTICO_CONTROLLER_SYNC_SYNC_SERVER_H_
