// sync_session.h: SyncSession, the controller's side of one gateway's Watch stream without the
// transport (DESIGN.md §5): what to send next (snapshot chunks, batches, heartbeats), what the
// gateway is believed to hold, and how acks and nacks change that. sync_server.cc drives it from
// a gRPC reactor; tests drive it directly.
//
// The stream:
//  - Start (first Next once the controller is ready): a snapshot (chunks, then SnapshotEnd{V})
//    unless the gateway resumes the stream it just had (same client_id, server_id and scope, and
//    from_version equal to the last version sent to it, all acked: ResumeState). Resuming needs
//    to know what the gateway holds; without known_hashes (reserved in the proto) only a
//    remembered session tells, so a gateway the server does not remember gets a snapshot even
//    when its from_version is still in the log.
//  - Batches: once the last one is acked, everything in (computed_through, head] is diffed
//    against what the gateway holds (scope per sync_scope.h), chunked, and closed by
//    BatchEnd{V1, V2}, V1 being the end of the previous batch sent. Changes made while a batch
//    is unacked coalesce into the next one: nothing is copied per stream while it waits; the
//    next batch reads the store's log. A batch whose diff is empty sends nothing; the gateway's
//    version is moved forward by an empty BatchEnd at the next heartbeat instead.
//  - When SyncLinks::Generation() moved since the last batch, the batch diffs every object (link
//    changes move objects in and out of scope); when the log no longer covers the gateway
//    (ChangeSet.relist) or the server_id changed, a snapshot is sent again.
//  - A hash the gateway nacked is never sent again to this stream (the gateway keeps its last
//    good version); a new hash for the key clears the nack.
//
// Thread-safety: Next, OnAck and TakeResumeState are called by one thread at a time (the
// stream's pump). The GatewayStateSource methods, View and Synced may be called from any thread:
// the state they read is written under mu_ by the pump, which reads it without locking.
// Ownership: the store, links, policies and counters must outlive the session.
#ifndef PORTICO_CONTROLLER_SYNC_SYNC_SESSION_H_
#define PORTICO_CONTROLLER_SYNC_SYNC_SESSION_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "controller/sync/connected_gateway.h"
#include "controller/sync/event_chunker.h"
#include "controller/sync/feedback_tracker.h"
#include "controller/sync/sync_links.h"
#include "controller/sync/sync_scope.h"
#include "core/store/object_store.h"
#include "portico/sdk/status.h"
#include "portico/sync/v1/sync.pb.h"

namespace portico::controller::sync {

// SyncCounters are shared by every session of a server (SyncStats' cumulative counters).
struct SyncCounters {
  std::atomic<uint64_t> snapshots{0};
  std::atomic<uint64_t> batches{0};
  std::atomic<uint64_t> events{0};
  std::atomic<uint64_t> acks{0};
  std::atomic<uint64_t> nacks{0};
  std::atomic<uint64_t> rejected{0};
};

// Digest is a content hash (hex sha256) in its 32 bytes: what a session keeps per held object.
using Digest = std::array<uint8_t, 32>;
// ToDigest parses 64 hex digits; anything else maps to a digest of the text's bytes folded in
// (never equal to a real sha256 in practice, and stable).
Digest ToDigest(std::string_view hex);
std::string ToHex(const Digest& digest);

// SessionIdentity is what the Hello and the transport say about the gateway.
struct SessionIdentity {
  std::string name;  // Hello.name, or the client id when empty
  std::string client_id;
  std::string peer;
  std::vector<std::string> addresses;
  std::vector<GatewayPlugin> plugins;  // the Hello's inventory
  int64_t connected_unix_ms = 0;
};

// ResumeState is what a finished stream leaves so its gateway can resume without a snapshot.
struct ResumeState {
  struct Held {
    Digest hash{};
    uint64_t sent_version = 0;
  };
  struct Nacked {
    std::string hash;
    std::string reason;
  };
  std::string client_id;
  GatewayScope scope;
  std::string server_id;
  uint64_t client_version = 0;
  uint64_t computed_through = 0;
  uint64_t links_generation = 0;
  std::unordered_map<core::StoreKey, Held> held;
  std::unordered_map<core::StoreKey, Nacked> nacked;
  std::unordered_set<core::StoreKey> no_handler;
};

struct SessionSources {
  core::ObjectStore* store = nullptr;
  const SyncLinks* links = nullptr;
  const SyncPolicies* policies = nullptr;
  SyncCounters* counters = nullptr;
  // Receives keys whose feedback inputs changed (FeedbackTracker::MarkDirty); may be empty.
  std::function<void(std::vector<core::StoreKey>)> on_dirty;
  size_t max_message_bytes = kMaxMessageBytes;
};

class SyncSession : public GatewayStateSource {
 public:
  SyncSession(SessionSources sources, GatewayScope scope, SessionIdentity identity,
              uint64_t from_version, std::string expected_server_id,
              std::optional<ResumeState> resume = std::nullopt);
  ~SyncSession() override;

  // ---- the pump (one thread at a time)

  // Next returns the next message to write, or nullopt when there is nothing to send now (not
  // ready, waiting for an ack, nothing changed). `heartbeat_due` is cleared when a heartbeat is
  // returned. Nothing at all is sent while `ready` is false.
  std::optional<portico::sync::v1::WatchResponse> Next(const std::string& server_id, bool ready,
                                                       bool* heartbeat_due);
  // OnAck applies an ack and its nacks; INVALID_ARGUMENT for an ack beyond what was sent or a
  // nack without a valid key.
  Status OnAck(const portico::sync::v1::Ack& ack);
  // TakeResumeState moves the state out for a reconnect when everything sent was acked.
  std::optional<ResumeState> TakeResumeState();
  // AllKeys: every key this session has feedback state for (held, nacked, no handler) and its
  // roots: what changes when the gateway goes away.
  std::vector<core::StoreKey> AllKeys() const;

  // ---- any thread

  std::string DisplayName() const override { return identity_.name; }
  GatewayKeyState StateOf(const core::StoreKey& key, std::string_view hash) const override;
  bool Serves(const core::StoreKey& key) const override;
  std::vector<std::string> Addresses() const override { return identity_.addresses; }

  const SessionIdentity& identity() const { return identity_; }
  const GatewayScope& scope() const { return scope_; }
  ConnectedGateway View() const;
  // Synced: key ("group/kind/namespace/name") -> hash the gateway is believed to hold.
  std::map<std::string, std::string> Synced() const;
  uint64_t acked_version() const;

 private:
  using Held = ResumeState::Held;
  using Nacked = ResumeState::Nacked;

  struct Unacked {
    uint64_t end = 0;
    bool all = false;                  // a snapshot: every held key was (re)sent
    std::vector<core::StoreKey> keys;  // keys of a batch
    // What the gateway held before, per key sent (nullopt: nothing), to restore on a nack.
    std::unordered_map<core::StoreKey, std::optional<Digest>> previous;
  };

  struct Cursor {
    bool snapshot = false;
    EventChunker events;
    portico::sync::v1::WatchResponse end;
  };

  // Diff collects one batch.
  struct Diff {
    uint64_t to_version = 0;
    std::vector<OutEvent> events;
    std::vector<core::StoreKey> sent_keys;
    std::unordered_map<core::StoreKey, std::optional<Digest>> previous;
    std::vector<core::StoreKey> dirty;
  };

  void Start(const std::string& server_id);
  void StartSnapshot(const std::string& server_id);
  // BuildBatch computes the next batch (or starts a snapshot on relist).
  void BuildBatch(const std::string& server_id);
  void FullDiff(uint64_t generation, Diff* diff);
  // DiffKey updates what the gateway holds for `key` given its current object (null: absent or
  // without a synced view) and the decision for it; `version` labels a delete.
  void DiffKey(const core::StoreKey& key, const core::StoredObject* object, Delivery delivery,
               uint64_t version, Diff* diff);
  void FinishBatch(Diff diff);
  portico::sync::v1::WatchResponse NextFromCursor();
  void MarkDirty(std::vector<core::StoreKey> keys);

  const SessionSources sources_;
  const GatewayScope scope_;
  const SessionIdentity identity_;
  const uint64_t from_version_;
  const std::string expected_server_id_;
  std::optional<ResumeState> resume_;

  // Pump-only state.
  bool started_ = false;
  std::optional<Cursor> cursor_;
  std::deque<Unacked> unacked_;
  uint64_t computed_through_ = 0;  // the store version `held_` reflects
  uint64_t links_generation_ = 0;  // SyncLinks::Generation() `held_` reflects

  // Written by the pump under mu_; read by the pump without it and by others with it.
  mutable std::mutex mu_;
  std::string server_id_;  // the server_id of the last snapshot ("" before)
  std::string phase_ = "waiting for ready";
  uint64_t client_version_ = 0;  // end of the last batch/snapshot sent
  uint64_t acked_ = 0;
  uint64_t heartbeat_head_ = 0;
  std::unordered_map<core::StoreKey, Held> held_;
  std::unordered_map<core::StoreKey, Nacked> nacked_;
  std::unordered_set<core::StoreKey> no_handler_;
};

}  // namespace portico::controller::sync

#endif  // PORTICO_CONTROLLER_SYNC_SYNC_SESSION_H_
