// gateway_runtime.h: GatewayRuntime, the gateway side of a ConfigSync batch (DESIGN.md §4, §5):
// each batch or snapshot is applied as ONE transaction. The synced objects are staged, the
// handlers of their kinds (plugins' stage hooks) translate them into contributions in the
// PORTICO_FORMAT_* formats (docs/contributions.md), the consumer (the data plane) prepares, and
// one immutable RuntimeSnapshot is committed. The runtime names no kind.
//
// Transaction rules (the fake host, sdk/testing/.../fake_host.h, emulates the same for plugin
// tests):
//  - Changes are coalesced per key (the last wins). `replace_all` (a full snapshot) deletes every
//    held object absent from `changes`. An upsert whose hash equals the held hash is skipped
//    unless that object's last change was nacked; a delete of an object not held is skipped.
//  - Every remaining change is staged first (get_synced sees the whole batch), then each kind
//    with a stage hook is called once, in the registry's `reads` order, with all its changes
//    (deletes before upserts). Kinds without a handler are only held.
//  - put replaces (format, id) for its owner; a put on an id another owner holds nacks the later
//    owner; an unknown format, a malformed owner, an empty id or JSON that does not parse is an
//    error returned to the handler. Putting identical bytes changes nothing.
//  - A nack (txn.nack, a put conflict, the consumer's Prepare) makes the object keep its last
//    good version: its held synced object and all its contributions go back to what they were
//    before the transaction; an owner that took one of its former ids is rolled back with it.
//    The nack carries the hash of the rejected change. A stage() error undoes everything that
//    call did and nacks every change passed to it with the error; the rest of the batch applies.
//  - A transaction that changes no held object and no entry does not commit.
//
// Threading: Apply from one thread at a time (the sync thread; it also calls the consumer).
// Apply runs admission and the handlers on a thread of its own, started and joined per call
// (their temporaries then live in another heap arena, see Apply). Current, Generation, Held,
// Stats and History are safe from any thread.
// Ownership: borrows `plugins` and `consumer`, which must outlive the runtime.
#ifndef PORTICO_CORE_RUNTIME_GATEWAY_RUNTIME_H_
#define PORTICO_CORE_RUNTIME_GATEWAY_RUNTIME_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/plugin/plugin_loader.h"
#include "core/runtime/contribution_txn.h"
#include "core/runtime/held_spool.h"
#include "core/runtime/runtime_consumer.h"
#include "core/runtime/runtime_types.h"
#include "core/store/store_key.h"

namespace portico::core {

// ApplyResult is the outcome of one Apply.
struct ApplyResult {
  std::vector<SyncNack> nacks;  // objects that keep their last good version, sorted by key
  uint64_t generation = 0;      // RuntimeSnapshot generation after the commit
  bool committed = false;       // false when nothing changed (no new snapshot)
};

class GatewayRuntime {
 public:
  static constexpr size_t kHistorySize = 64;

  // `consumer` may be null: the runtime then only records what it commits. With a `spool`, the
  // bodies of held synced objects are kept in it instead of the heap (held_spool.h); should the
  // spool fail to write, the bodies of that batch stay in memory (logged).
  GatewayRuntime(const PluginSet& plugins, RuntimeConsumer* consumer,
                 std::unique_ptr<HeldSpool> spool = nullptr);
  GatewayRuntime(const GatewayRuntime&) = delete;
  GatewayRuntime& operator=(const GatewayRuntime&) = delete;

  // Apply runs one transaction (see the file comment). Sync thread only.
  ApplyResult Apply(std::vector<SyncedChange> changes, bool replace_all, uint64_t version);

  // Current returns the committed snapshot (generation 0 and empty before the first commit).
  std::shared_ptr<const RuntimeSnapshot> Current() const;
  // Generation is Current()->generation without taking the lock (workers poll it).
  uint64_t Generation() const { return generation_.load(std::memory_order_acquire); }
  // Held lists the synced objects held (last good versions), sorted by key.
  std::vector<HeldObject> Held() const;
  RuntimeStats Stats() const;
  // History returns the last kHistorySize commits, oldest first.
  std::vector<CommitRecord> History() const;

 private:
  // HeldRecord is one held synced object. `nacked` marks an object whose last change was
  // rejected, so the same hash is handed to the handler again.
  struct HeldRecord {
    std::string hash;
    std::shared_ptr<const std::string> json;  // null when the body is in the spool
    SpoolRef ref;                             // json == null: where the spool keeps the body
    bool nacked = false;
    size_t size() const { return json != nullptr ? json->size() : ref.size; }
  };
  class Transaction;

  // Body returns the body of `held`, read back from the spool when it is there (nullptr and
  // logged when the spool cannot read it). Requires mu_ or the sync thread with no writer.
  std::shared_ptr<const std::string> Body(const HeldRecord& held) const;
  // KeepBodies stores the bodies of `records` (just committed, pointing at the changes' bodies):
  // moved into the spool (compacted when due), else copied into blocks of their own. Requires
  // mu_.
  void KeepBodies(const std::vector<HeldRecord*>& records);

  const PluginSet& plugins_;
  RuntimeConsumer* const consumer_;

  // Sync-thread state (read by Apply without the lock; written under it when shared).
  OwnerIndex owner_index_;  // sync thread only
  size_t entry_bytes_ = 0;  // sync thread only

  mutable std::mutex mu_;
  std::shared_ptr<const RuntimeSnapshot> current_;  // written under mu_
  std::unordered_map<StoreKey, HeldRecord> held_;   // written under mu_
  std::unique_ptr<HeldSpool> spool_;                // used under mu_; null: bodies in memory
  size_t held_bytes_ = 0;                           // guarded by mu_
  RuntimeStats stats_;                              // guarded by mu_
  std::deque<CommitRecord> history_;                // guarded by mu_
  std::atomic<uint64_t> generation_{0};
};

}  // namespace portico::core

#endif  // PORTICO_CORE_RUNTIME_GATEWAY_RUNTIME_H_
