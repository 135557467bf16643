// reconciler.h: Reconciler, the controller's pipeline (DESIGN.md §1, §3, §6): config changes ->
// work queue -> identify, default and validate (ObjectValidator) -> the kind's processor through
// the host context -> object table (status, export) and the synced store (core/store).
//
// What it guarantees:
//  - Per-object keys, de-duplicated; an object is never processed concurrently with itself; a
//    failing processor (UNAVAILABLE/ABORTED) is retried with per-key backoff.
//  - Every read a processor makes through the context (get/list exports, reference policy,
//    extension refs, secrets), hits and misses, label-selector lists included, is recorded;
//    when what was read changes (export added, changed or removed), exactly the readers are
//    requeued.
//  - Contributions (abi.h, portico_process_result.contribute) are aggregated into their target's
//    status without reprocessing the target.
//  - generation starts at 1 and grows on each spec change (metadata and status changes do not
//    count); creationTimestamp is kept when given, else set when first seen; conditions get
//    observedGeneration and a lastTransitionTime that only moves when the status changes.
//  - Start-up: the initial batch is processed kind by kind in the registry's `reads` order, each
//    kind drained before the next; Ready() turns true once everything queued has drained.
//
// Threading: OnChanges() may be called from any one thread at a time; List/Get/Metrics from any
// thread concurrently with processing. Ownership: the PluginSet, the ObjectValidator and the
// ObjectStore must outlive the Reconciler.
#ifndef PORTICO_CONTROLLER_RECONCILE_RECONCILER_H_
#define PORTICO_CONTROLLER_RECONCILE_RECONCILER_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/center/config_center.h"
#include "controller/reconcile/object_validator.h"
#include "controller/reconcile/process_isolation.h"
#include "controller/reconcile/refusal.h"
#include "controller/reconcile/sync_feedback.h"
#include "controller/sync/sync_links.h"
#include "core/common/clock.h"
#include "core/plugin/plugin_loader.h"
#include "core/store/object_store.h"
#include "portico/sdk/status.h"
#include "portico/sdk/types.h"

namespace portico::controller {

struct ReconcilerOptions {
  int workers = 2;
  core::Clock* clock = nullptr;  // nullptr: the real clock
  // Wall clock for creationTimestamp / lastTransitionTime, in Unix ms (tests inject a fake one).
  std::function<int64_t()> wall_clock_ms;
  // Where processors' sync-scope links go (set before the synced store is written); not owned,
  // may be null (links dropped).
  sync::SyncLinks* links = nullptr;
  // Called on a worker thread each time the queue becomes idle (nothing queued or in flight)
  // after processing; must be quick and must not call back into the Reconciler's writers.
  std::function<void()> on_idle;
  // Whose processors run in a forked child, and under what deadline (isolated_process.h).
  ProcessIsolation isolation;
};

// ObjectView is an object as the admin API shows it.
struct ObjectView {
  sdk::ObjectRef ref;
  // The object: apiVersion, kind, metadata (with generation, creationTimestamp), spec and
  // status (conditions stamped, contributions aggregated). Secret data and keys redacted.
  std::string json;
  SourceLocation source;
  int64_t generation = 0;
  std::string synced_hash;  // "" when the kind syncs nothing for this object
  std::string error;        // the last validation/processing error ("" when none)
  // The newest generation, refused (every violation), and the generation that keeps serving
  // (0: none); refusal.h says how the status shows it.
  std::optional<Refusal> refusal;
  int64_t serving_generation = 0;
};

// ReconcilerMetrics are cumulative counters (exported on /metrics).
struct ReconcilerMetrics {
  uint64_t processed = 0;  // processor runs
  uint64_t failed = 0;     // processor runs that returned an error
  uint64_t requeued_by_dependency = 0;
  uint64_t status_aggregations = 0;  // target statuses recomputed from contributions
  uint64_t isolated_runs = 0;        // processor runs in a forked child (process_isolation.h)
  uint64_t isolated_failures = 0;    // of which crashed, hung or could not be started
  std::map<std::string, uint64_t> processed_by_kind;  // "HTTPRoute.gateway.networking.k8s.io"
  size_t objects = 0;
  size_t queue_depth = 0;
};

class Reconciler : public ConfigListener {
 public:
  Reconciler(const core::PluginSet& plugins, const ObjectValidator& validator,
             core::ObjectStore& synced, ReconcilerOptions options = {});
  ~Reconciler() override;

  // Start spawns the workers. Stop drains nothing: it stops after the objects in flight.
  Status Start();
  void Stop();

  // ConfigListener.
  void OnChanges(std::vector<ConfigChange> changes, bool initial) override;

  // Identifier is the ObjectIdentifier a ConfigCenter uses (kind lookup, default namespace).
  ObjectIdentifier Identifier() const;

  // Ready: the initial batch was processed and the queue drained once.
  bool Ready() const;
  // Idle: nothing is queued or in flight right now (delayed retries do not count).
  bool Idle() const;
  // WaitIdle waits until nothing is queued or in flight (tests, the admin API's apply?wait).
  bool WaitIdle(std::chrono::milliseconds timeout) const;

  // SetSyncFeedback records what connected gateways reported about `key` (nullopt clears) and
  // re-renders its status when that changed. Never touches the synced store. Any thread.
  void SetSyncFeedback(const core::StoreKey& key, std::optional<SyncFeedback> feedback);

  // List: every object of `kind` (nullptr: all kinds) in `ns` ("" : all namespaces), sorted.
  std::vector<ObjectView> List(const core::KindInfo* kind, std::string_view ns) const;
  std::optional<ObjectView> Get(const sdk::ObjectRef& ref) const;
  // Refused: the objects whose newest generation was refused, sorted by key.
  std::vector<ObjectView> Refused() const;
  ReconcilerMetrics Metrics() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_RECONCILE_RECONCILER_H_
