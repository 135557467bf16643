// object_store.h: ObjectStore, the controller's processed-object store: the synced view of
// every object, one global monotonic version sequence, and a bounded change log from which
// ConfigSync streams (DESIGN.md §5) serve snapshots and coalesced batches.
//
// Versions: the head starts at 0; every Put or Delete that changes something takes the next
// version (head + 1) and appends one event to the log. A Put whose content hash equals the
// stored one, and a Delete of an absent key, change nothing and take no version.
//
// Log bounds: see event_log.h. Entries are trimmed, oldest first, while the log is over
// max_log_bytes or older than max_log_age; trimming happens on writes and on TrimExpired().
// A watcher whose version falls below the trimmed range must relist (take a Snapshot).
//
// Thread-safety: all methods may be called concurrently. Reads (Get, Snapshot, Changes, Stats,
// Head) share a reader lock; writes take it exclusively, so a Snapshot or a Changes answer is a
// consistent cut at one head. Watchers are notified after the writer released the lock (see
// change_notifier.h). Ownership: the store owns its objects and log; JSON bodies are immutable
// and shared with the results it hands out. options.clock is not owned and must outlive it.
#ifndef PORTICO_CORE_STORE_OBJECT_STORE_H_
#define PORTICO_CORE_STORE_OBJECT_STORE_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "core/common/clock.h"
#include "core/store/change_notifier.h"
#include "core/store/event_log.h"
#include "core/store/store_key.h"
#include "core/store/store_records.h"
#include "portico/sdk/status.h"

namespace portico::core {

struct ObjectStoreOptions {
  // Log budget in (estimated) bytes.
  size_t max_log_bytes = size_t{64} << 20;
  // Longest log retention. DESIGN.md §5 wants at least 120 s; the default leaves room for
  // gateways reconnecting with backoff.
  Clock::Duration max_log_age = std::chrono::seconds(300);
  // Time source for log ages; nullptr means Clock::Real(). Not owned.
  Clock* clock = nullptr;

  // Validate requires a positive byte budget and age.
  Status Validate() const;
};

// WriteResult says what a Put or Delete did. `version` is the version at which the key's
// current state was committed: the new head when `changed`, else the unchanged object's version
// (or, for a Delete of an absent key, the current head).
struct WriteResult {
  uint64_t version = 0;
  bool changed = false;
};

// ChangeSet answers Changes(from). When `relist` is set the log no longer covers (from, head]
// and `events` is empty: the caller must take a Snapshot. Otherwise `events` holds, for each key
// changed in (from, head], its last event, in version order.
struct ChangeSet {
  bool relist = false;
  uint64_t head = 0;
  std::vector<StoreEvent> events;
};

// StoreSnapshot is every current object, sorted by key, at head `version`.
struct StoreSnapshot {
  uint64_t version = 0;
  std::vector<StoredObject> objects;
};

struct StoreStats {
  size_t objects = 0;
  size_t log_entries = 0;
  size_t log_bytes = 0;
  uint64_t oldest_version = 0;    // of the oldest retained log entry; 0 when the log is empty
  uint64_t min_from_version = 0;  // smallest Changes(from) answered without relist
  uint64_t head = 0;
};

// ObjectStore: see the file comment.
class ObjectStore {
 public:
  // `options` should pass Validate(); a zero budget or age keeps no log.
  explicit ObjectStore(ObjectStoreOptions options = {});
  ObjectStore(const ObjectStore&) = delete;
  ObjectStore& operator=(const ObjectStore&) = delete;

  // Put stores `json` (nullopt: the object exists without a synced view) under `key`.
  // InvalidArgument when the key fails StoreKey::Validate.
  StatusOr<WriteResult> Put(const StoreKey& key, std::optional<std::string> json);
  // Delete removes `key`; deleting an absent key is a no-op. InvalidArgument for a bad key.
  StatusOr<WriteResult> Delete(const StoreKey& key);

  // Get returns the object stored under `key`, if any.
  std::optional<StoredObject> Get(const StoreKey& key) const;
  // Snapshot returns all objects and the head they are current at, read atomically.
  StoreSnapshot Snapshot() const;
  // Changes returns what changed after `from_version` (see ChangeSet). OutOfRange when
  // from_version is above the head (the caller follows another store, e.g. before a restart).
  StatusOr<ChangeSet> Changes(uint64_t from_version) const;
  // Head returns the version of the newest committed change.
  uint64_t Head() const;

  // WaitForChange blocks until the head exceeds `version` or `deadline` (real time) passes, and
  // returns the head then (<= version on timeout). The head it returns is visible to Changes.
  uint64_t WaitForChange(uint64_t version, std::chrono::steady_clock::time_point deadline) const;
  // Subscribe calls `callback(head)` after changes; see change_notifier.h for the rules.
  [[nodiscard]] ChangeSubscription Subscribe(ChangeNotifier::Callback callback);

  // TrimExpired drops log entries older than max_log_age without waiting for a write.
  void TrimExpired();
  StoreStats Stats() const;

 private:
  struct Entry {
    std::shared_ptr<const std::string> json;
    std::string hash;
    uint64_t version = 0;
  };

  // Commit appends the event for a change at version head_ (already incremented).
  void CommitLocked(StoreOp op, const StoreKey& key, const std::string& hash,
                    std::shared_ptr<const std::string> json);

  Clock* const clock_;
  mutable std::shared_mutex mu_;
  std::map<StoreKey, Entry> objects_;  // guarded by mu_; ordered: snapshots come out sorted
  uint64_t head_ = 0;                  // guarded by mu_
  EventLog log_;                       // guarded by mu_
  ChangeNotifier notifier_;            // own locking; published after mu_ is released
};

}  // namespace portico::core

#endif  // PORTICO_CORE_STORE_OBJECT_STORE_H_
