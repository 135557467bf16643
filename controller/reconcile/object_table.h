// object_table.h: ObjectTable, the reconciler's state of every object: its source document and
// identity stamps (generation, creationTimestamp), its last good processing result (accepted
// document, export, labels, status, synced hash), its rendering, its error; plus the Secret
// payloads get_secret serves and the contributions between objects (contributor -> target).
//
// Work protocol (reconciler.cc): OnChanges writes source state and marks the object
// `needs_process`; a worker holding the object's key (the WorkQueue never hands one key to two
// workers) calls Begin() to learn what to do, then CommitResult / SetError / Erase and
// SetRendered. Everything about one object except its source state is written only by the run
// holding its key, so a run may compute outside the lock between two calls.
//
// Thread-safety: every method may be called from any thread; one shared_mutex guards the table
// (readers: views, exports, secrets; writers: source changes and commits). Ownership: the table
// owns its entries; documents are immutable and shared (shared_ptr<const Document>) with callers.
#ifndef PORTICO_CONTROLLER_RECONCILE_OBJECT_TABLE_H_
#define PORTICO_CONTROLLER_RECONCILE_OBJECT_TABLE_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "controller/reconcile/object_render.h"
#include "controller/reconcile/reconciler.h"
#include "controller/reconcile/status_aggregation.h"
#include "core/plugin/kind_registry.h"
#include "portico/sdk/label_selector.h"
#include "portico/sdk/types.h"

namespace portico::controller {

// ContributionsByTarget: one object's contributions grouped by target key, each list in the
// order (topic, emission) the host aggregates them.
using ContributionsByTarget = std::map<std::string, std::vector<StatusContribution>>;

// GoodResult is a successful processing run's outcome, as the table keeps it.
struct GoodResult {
  std::shared_ptr<const rapidjson::Document> doc;  // accepted document (see RenderInput::doc)
  int64_t generation = 0;
  std::optional<std::string> export_json;
  std::map<std::string, std::string> labels;
  std::optional<std::string> status_json;
  std::string synced_hash;
};

class ObjectTable {
 public:
  // WorkItem tells a worker what its key needs.
  struct WorkItem {
    enum class Action {
      kNone,     // no such object
      kDelete,   // removed at the source: clean up
      kProcess,  // validate and run the processor
      kRender,   // only re-aggregate contributions into the status
    };
    Action action = Action::kNone;
    sdk::ObjectRef ref;
    const core::KindInfo* kind = nullptr;
    std::shared_ptr<const rapidjson::Document> raw;
    int64_t generation = 0;
    std::string creation_timestamp;
    bool ever_good = false;
  };

  // Removal is what Erase took away.
  struct Removal {
    bool erased = false;  // false: the object came back meanwhile (it is queued again)
    sdk::ObjectRef ref;
    const core::KindInfo* kind = nullptr;
    std::optional<std::string> export_json;
    std::map<std::string, std::string> labels;
    std::vector<std::string> affected_targets;  // existing objects whose contributions changed
  };

  // Committed is what CommitResult replaced.
  struct Committed {
    bool found = false;
    std::optional<std::string> old_export;
    std::map<std::string, std::string> old_labels;
    std::vector<std::string> affected_targets;
  };

  ObjectTable() = default;
  ObjectTable(const ObjectTable&) = delete;
  ObjectTable& operator=(const ObjectTable&) = delete;

  // ---- source side

  // Upsert records a document from the source and marks the object needs_process. Generation:
  // 1 when new (or coming back after a delete), +1 when the spec differs from the last document
  // seen. creationTimestamp: the document's when given, else kept, else `now`. Returns whether
  // the object is a Secret whose get_secret payload changed.
  bool Upsert(const sdk::ObjectRef& ref, const core::KindInfo* kind,
              std::shared_ptr<const rapidjson::Document> doc, SourceLocation source,
              std::string_view now);
  // MarkDeleted flags the object removed at the source (a worker cleans up) and drops its
  // get_secret payload when it is a Secret. Returns false when there is no such object.
  bool MarkDeleted(const std::string& key);
  // MarkNeedsProcess flags an existing, not deleted object for processing; false otherwise.
  bool MarkNeedsProcess(const std::string& key);

  // ---- worker side (the caller holds `key` in the work queue)

  // Begin says what the key needs and clears its needs_process flag.
  WorkItem Begin(const std::string& key);
  // Erase drops a deleted object (unless it came back), its export and its contributions.
  Removal Erase(const std::string& key);
  // CommitResult stores a good result, clears the error and replaces the object's
  // contributions with `contributions`.
  Committed CommitResult(const std::string& key, GoodResult result,
                         ContributionsByTarget contributions);
  // SetError records the object's last error (the good result stays) and, with `refusal`, that
  // this generation was refused (shown in its status; cleared by CommitResult). Returns whether
  // the object has a good result to re-render.
  bool SetError(const std::string& key, std::string error,
                std::optional<Refusal> refusal = std::nullopt);
  // RenderSnapshot copies what rendering needs; nullopt when the object is gone or never good.
  std::optional<RenderInput> RenderSnapshot(const std::string& key) const;
  void SetRendered(const std::string& key, RenderedObject rendered);
  // SetFeedback stores what gateways reported; true when it changed for an existing object (the
  // caller then queues the key for a render).
  bool SetFeedback(const std::string& key, std::optional<SyncFeedback> feedback);

  // ---- host reads

  std::optional<std::string> Export(const std::string& key) const;
  // ListExports writes the JSON array [{"namespace","name","labels","export"}] of the exports of
  // (group, kind) in `ns` ("" all) whose labels match `selector`; *count gets the length.
  std::string ListExports(std::string_view group, std::string_view kind, std::string_view ns,
                          const sdk::LabelSelector& selector, int64_t* count) const;
  std::optional<std::string> Secret(std::string_view ns, std::string_view name) const;

  // ---- views

  std::optional<ObjectView> View(const std::string& key) const;
  // List returns the objects of `kind` (nullptr: all) in `ns` ("": all), sorted by key.
  std::vector<ObjectView> List(const core::KindInfo* kind, std::string_view ns) const;
  // Refused lists the objects whose newest generation was refused, sorted by key.
  std::vector<ObjectView> Refused() const;
  size_t Size() const;

  // ---- isolated processing (isolated_process.h)

  // HoldForFork takes the table's lock shared: while it is held no writer is inside, so a child
  // forked meanwhile gets a consistent copy whose lock is held only shared (its reads work).
  std::shared_lock<std::shared_mutex> HoldForFork() const { return std::shared_lock(mu_); }
  // ReadableEpoch grows whenever what a processor can read changes: an export or labels on
  // commit, an object erased, a Secret's payload. An isolated run registers its reads only after
  // the child read the table, so the reconciler reprocesses it when this moved meanwhile.
  uint64_t ReadableEpoch() const { return readable_epoch_.load(std::memory_order_acquire); }
  // ChangedSince appends the keys whose readable state changed after `epoch` (Secrets by their
  // object key); false when the changes kept no longer reach back that far (assume anything).
  bool ChangedSince(uint64_t epoch, std::vector<std::string>* keys) const;

 private:
  struct Entry {
    sdk::ObjectRef ref;
    const core::KindInfo* kind = nullptr;
    // Source state.
    std::shared_ptr<const rapidjson::Document> raw;
    SourceLocation source;
    int64_t generation = 0;
    std::string creation_timestamp;
    bool deleted = false;
    bool needs_process = false;
    // Last good result (good.doc null: never good).
    GoodResult good;
    // Rendering and error.
    std::shared_ptr<const rapidjson::Document> rendered_status;
    std::string view_json;
    std::string error;
    std::optional<Refusal> refusal;        // the newest generation was refused
    std::optional<SyncFeedback> feedback;  // from gateways (sync_feedback.h)
  };
  static std::string SecretKey(std::string_view ns, std::string_view name);
  ObjectView ViewLocked(const Entry& entry) const;
  // ReplaceContributionsLocked replaces `contributor`'s contributions; returns the existing
  // objects whose contributions changed.
  std::vector<std::string> ReplaceContributionsLocked(const std::string& contributor,
                                                      ContributionsByTarget next);

  mutable std::shared_mutex mu_;
  std::map<std::string, Entry> entries_;        // by key; ordered for List and ListExports
  std::map<std::string, std::string> secrets_;  // "ns/name" -> get_secret payload
  // target key -> contributor key -> its contributions to the target
  std::map<std::string, std::map<std::string, std::vector<StatusContribution>>> by_target_;
  std::map<std::string, std::set<std::string>> targets_of_;  // contributor -> targets
  void NoteReadableChangeLocked(const std::string& key);
  static constexpr size_t kReadableChangesKept = 16384;
  std::atomic<uint64_t> readable_epoch_{0};  // written under mu_ held exclusively
  std::deque<std::pair<uint64_t, std::string>> readable_changes_;  // (epoch, key), oldest first
};

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_RECONCILE_OBJECT_TABLE_H_
