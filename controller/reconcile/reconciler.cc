// reconciler.cc: see reconciler.h. The pieces: ObjectTable (state), DependencyIndex (reads),
// HostContext/ResultCollector (the ABI), object_render (views), this file (the pipeline).
#include "controller/reconcile/reconciler.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <utility>

#include "controller/reconcile/dependency_index.h"
#include "controller/reconcile/host_context.h"
#include "controller/reconcile/isolated_process.h"
#include "controller/reconcile/object_json.h"
#include "controller/reconcile/object_render.h"
#include "controller/reconcile/object_table.h"
#include "core/common/sha256.h"
#include "core/common/time_format.h"
#include "core/workqueue/workqueue.h"

namespace portico::controller {
namespace {

int64_t SystemNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

core::StoreKey StoreKeyOf(const sdk::ObjectRef& ref) {
  return core::StoreKey{ref.group, ref.kind, ref.ns, ref.name};
}

bool Retryable(StatusCode code) {
  return code == StatusCode::kUnavailable || code == StatusCode::kAborted;
}

}  // namespace

struct Reconciler::Impl final : public HostServices {
  Impl(const core::PluginSet& plugins, const ObjectValidator& validator, core::ObjectStore& synced,
       ReconcilerOptions options)
      : registry(plugins.registry),
        validator(validator),
        synced(synced),
        options(std::move(options)),
        queue(core::WorkQueueOptions{.clock = this->options.clock}) {
    wall_ms = this->options.wall_clock_ms ? this->options.wall_clock_ms : &SystemNowMs;
  }

  // ---- HostServices

  std::optional<std::string> Export(const std::string& key) const override {
    return table.Export(key);
  }
  std::string ListExports(std::string_view group, std::string_view kind, std::string_view ns,
                          const sdk::LabelSelector& selector, int64_t* count) const override {
    return table.ListExports(group, kind, ns, selector, count);
  }
  std::optional<std::string> Secret(std::string_view ns, std::string_view name) const override {
    return table.Secret(ns, name);
  }
  const core::KindInfo* FindKind(std::string_view group, std::string_view kind) const override {
    return registry.Find(group, kind);
  }
  const core::ReferencePolicyInfo* ReferencePolicy() const override {
    return registry.ReferencePolicy();
  }
  void AddMetric(std::string_view name, const core::KindId& kind, double delta) override {
    std::lock_guard lock(metrics_mu);
    plugin_metrics[{std::string(name), kind.ToString()}] += delta;
  }
  int64_t NowUnixMs() const override { return wall_ms(); }
  std::optional<std::string> PreviousSynced(const sdk::ObjectRef& object) const override {
    std::optional<core::StoredObject> stored = synced.Get(StoreKeyOf(object));
    if (!stored.has_value() || stored->json == nullptr) return std::nullopt;
    return *stored->json;
  }

  void Log(portico_log_level level, std::string_view text) override { LogToSpdlog(level, text); }

  std::string Now() const { return core::FormatRfc3339(wall_ms()); }

  // ---- queueing

  // Requeue queues `key` for processing because something it read changed.
  void Requeue(const std::string& key) {
    if (!table.MarkNeedsProcess(key)) return;
    requeued_by_dependency.fetch_add(1, std::memory_order_relaxed);
    queue.Add(key);
  }
  void RequeueReaders(const std::vector<std::string>& readers, const std::string& self) {
    for (const std::string& reader : readers) {
      if (reader != self) Requeue(reader);
    }
  }
  void RequeueSecretReaders(const sdk::ObjectRef& ref) {
    RequeueReaders(index.ReadersOfSecret(ref.ns, ref.name), "");
  }

  // ---- the worker

  // IdleNow: nothing queued, nothing in flight and no OnChanges under way. OnChanges queues a
  // file's objects one by one, and a worker may drain the queue between two of them: without
  // the epoch check a change spanning kinds could be synced half done (a route without its new
  // Service). `ingest_epoch` is odd while OnChanges runs; reading it around the counters makes
  // an OnChanges that began and ended between the two reads count as activity.
  bool IdleNow() {
    uint64_t before = ingest_epoch.load(std::memory_order_acquire);
    if (before % 2 != 0) return false;
    core::WorkQueueCounters c = queue.Counters();
    return c.depth == 0 && c.in_flight == 0 &&
           ingest_epoch.load(std::memory_order_acquire) == before;
  }
  std::atomic<uint64_t> ingest_epoch{0};  // +1 when OnChanges starts, +1 when it ends

  void WorkerLoop() {
    while (std::optional<std::string> key = queue.Get()) {
      try {
        Handle(*key);
      } catch (const std::exception& e) {
        // Nothing here should throw (allocation aside); never lose the key's Done.
        spdlog::error("reconciler: {}: {}", *key, e.what());
        queue.Forget(*key);
      }
      queue.Done(*key);
      if (options.on_idle && IdleNow()) options.on_idle();
    }
  }

  void Handle(const std::string& key) {
    ObjectTable::WorkItem item = table.Begin(key);
    switch (item.action) {
      case ObjectTable::WorkItem::Action::kNone:
        queue.Forget(key);
        return;
      case ObjectTable::WorkItem::Action::kDelete:
        HandleDelete(key);
        return;
      case ObjectTable::WorkItem::Action::kRender:
        Render(key, /*aggregation=*/true);
        return;
      case ObjectTable::WorkItem::Action::kProcess:
        Process(key, item);
        return;
    }
  }

  void HandleDelete(const std::string& key) {
    ObjectTable::Removal removed = table.Erase(key);
    queue.Forget(key);
    if (!removed.erased) return;  // it came back: it is queued for processing again
    if (removed.kind != nullptr && removed.kind->sync_policy != PORTICO_SYNC_NEVER) {
      auto result = synced.Delete(StoreKeyOf(removed.ref));
      if (!result.ok())
        spdlog::error("{}: synced store: {}", removed.ref.Display(), result.status().message());
    }
    if (options.links != nullptr) options.links->Remove(StoreKeyOf(removed.ref));
    index.RemoveReader(key);
    const std::optional<std::string> none;
    ObjectChange change{
        key,   removed.ref.group, removed.ref.kind, removed.ref.ns, &removed.export_json,
        &none, &removed.labels,   nullptr};
    RequeueReaders(index.ReadersOf(change), key);
    for (const std::string& target : removed.affected_targets) queue.Add(target);
    spdlog::debug("{}: deleted", removed.ref.Display());
  }

  // Fail records an error on the object; the previous good result stays.
  // Fail records an error on the object and that its generation was refused (shown in its
  // status, refusal.h); the previous good result stays. `violations`: every problem found
  // (empty: the status's message is the one).
  void Fail(const std::string& key, const ObjectTable::WorkItem& item, const Status& status,
            std::vector<FieldViolation> violations = {}) {
    const sdk::ObjectRef& ref = item.ref;
    failed.fetch_add(1, std::memory_order_relaxed);
    std::string message = status.message();
    if (IsSecret(ref)) message = RedactSecretText(std::move(message), *item.raw);
    // Errors usually name the object already ("HTTPRoute default/web: spec...").
    const std::string prefix = ref.Display() + ": ";
    if (message.starts_with(prefix)) {
      spdlog::warn("{}", message);
    } else {
      spdlog::warn("{}: {}", ref.Display(), message);
    }
    if (violations.empty()) {
      violations.push_back(
          {"", message.starts_with(prefix) ? message.substr(prefix.size()) : message});
    } else if (IsSecret(ref)) {
      for (FieldViolation& v : violations) {
        v.message = RedactSecretText(std::move(v.message), *item.raw);
      }
    }
    bool render =
        table.SetError(key, std::move(message), Refusal{item.generation, std::move(violations)});
    if (render) Render(key, /*aggregation=*/false);
  }

  void Process(const std::string& key, const ObjectTable::WorkItem& item) {
    // 1. Identify, default and validate a copy of the source document.
    auto doc = std::make_shared<rapidjson::Document>();
    doc->CopyFrom(*item.raw, doc->GetAllocator());
    std::vector<FieldViolation> violations;
    StatusOr<ValidatedObject> validated = validator.Validate(*doc, &violations);
    if (validated.ok() && validated->ref != item.ref) {
      validated = InvalidArgumentError(item.ref.Display() + ": the document names " +
                                       validated->ref.Display());
    }
    if (!validated.ok()) {
      // Kubernetes would refuse it at admission: keep the last good result, show the error.
      Fail(key, item, validated.status(), std::move(violations));
      queue.Forget(key);
      return;
    }
    const core::KindInfo* kind = validated->kind;
    SetMetadataStamps(*doc, doc->GetAllocator(), item.generation, item.creation_timestamp);
    AddNamespaceNameLabel(item.ref, *doc, doc->GetAllocator());
    doc->RemoveMember("status");
    const std::string json = json::Serialize(*doc);

    // 2. Process: this run's reads replace the previous ones.
    ResultCollector out(item.ref.Display());
    Status status;
    bool reprocess = false;  // an isolated run read a table that changed before its reads counted
    if (kind->hooks.process != nullptr && options.isolation.Applies(kind->plugin_name)) {
      portico_object object{sizeof(portico_object), item.ref.ToC(), sdk::Str(validated->version),
                            sdk::Str(json), item.generation};
      std::optional<std::string> previous = PreviousSynced(item.ref);
      std::shared_lock<std::shared_mutex> hold;
      uint64_t epoch = 0;
      IsolatedCall call{kind,
                        &item.ref,
                        &object,
                        std::move(previous),
                        options.isolation.timeout,
                        {[&] {
                           hold = table.HoldForFork();
                           epoch = table.ReadableEpoch();
                         },
                         [&] { hold.unlock(); }}};
      IsolatedOutcome outcome = RunProcessIsolated(call, *this, index, out);
      status = outcome.status;
      if (outcome.contained) {
        isolated_failures.fetch_add(1, std::memory_order_relaxed);
      } else {
        std::vector<std::string> changed;
        reprocess = !table.ChangedSince(epoch, &changed) || ReadAnyOf(outcome, changed);
      }
      isolated_runs.fetch_add(1, std::memory_order_relaxed);
      if (spdlog::should_log(spdlog::level::trace)) {
        for (const std::string& read : outcome.reads) {
          spdlog::trace("{}: read {}", item.ref.Display(), read);
        }
      }
    } else if (kind->hooks.process != nullptr) {
      index.BeginReads(key);
      HostContext ctx(*this, index, item.ref, kind->id);
      portico_object object{sizeof(portico_object), item.ref.ToC(), sdk::Str(validated->version),
                            sdk::Str(json), item.generation};
      sdk::StringSink error;
      portico_code code =
          kind->hooks.process(kind->hooks.user, &object, ctx.raw(), out.raw(), error.sink());
      if (code != PORTICO_OK) {
        std::string message = error.take();
        if (message.empty()) {
          message = item.ref.Display() + ": processor failed with " +
                    std::string(StatusCodeName(static_cast<StatusCode>(code)));
        }
        status = Status(static_cast<StatusCode>(code), std::move(message));
      }
      if (spdlog::should_log(spdlog::level::trace)) {
        for (const std::string& read : ctx.reads()) {
          spdlog::trace("{}: read {}", item.ref.Display(), read);
        }
      }
    } else if (kind->sync_policy != PORTICO_SYNC_NEVER) {
      index.BeginReads(key);
      // No processor: the object is stored as given; gateways get its spec.
      const rapidjson::Value* spec = json::Find(*doc, "spec");
      out.SetSynced(spec != nullptr ? json::Serialize(*spec) : "{}");
    }
    processed.fetch_add(1, std::memory_order_relaxed);
    {
      std::lock_guard lock(metrics_mu);
      ++processed_by_kind[kind->id.ToString()];
    }
    if (status.ok()) status = out.Check();
    if (!status.ok()) {
      Fail(key, item, status);
      if (Retryable(status.code()) && table.MarkNeedsProcess(key)) {
        queue.AddRateLimited(key);
      } else {
        queue.Forget(key);
        if (reprocess) Requeue(key);
      }
      return;
    }
    for (const std::string& dropped : out.dropped()) {
      spdlog::warn("{}: contribution to {} dropped", item.ref.Display(), dropped);
    }

    // 3. Commit: synced store, then the table, then whoever depends on what changed.
    GoodResult good;
    good.generation = item.generation;
    good.export_json = out.export_json();
    good.status_json = out.status();
    good.labels = LabelsOf(*doc);
    if (options.links != nullptr) {
      options.links->Set(StoreKeyOf(item.ref), out.parent_links(), out.reference_links());
    }
    if (kind->sync_policy != PORTICO_SYNC_NEVER) {
      std::optional<std::string> view = out.synced();
      if (view.has_value()) good.synced_hash = core::Sha256Hex(*view);
      auto written = view.has_value() ? synced.Put(StoreKeyOf(item.ref), std::move(view))
                                      : synced.Delete(StoreKeyOf(item.ref));
      if (!written.ok()) {
        Fail(key, item, written.status());
        queue.Forget(key);
        return;
      }
    }
    good.doc = std::move(doc);
    const std::optional<std::string> new_export = good.export_json;
    const std::map<std::string, std::string> new_labels = good.labels;
    ObjectTable::Committed committed =
        table.CommitResult(key, std::move(good), out.TakeContributions(key));
    queue.Forget(key);
    if (!committed.found) return;
    ObjectChange change{
        key,         item.ref.group,        item.ref.kind, item.ref.ns, &committed.old_export,
        &new_export, &committed.old_labels, &new_labels};
    RequeueReaders(index.ReadersOf(change), key);
    for (const std::string& target : committed.affected_targets) {
      if (target != key) queue.Add(target);
    }
    Render(key, /*aggregation=*/false);
    if (reprocess) Requeue(key);
  }

  // Render recomputes the object's shown status (contributions, condition stamps) and view.
  void Render(const std::string& key, bool aggregation) {
    std::optional<RenderInput> input = table.RenderSnapshot(key);
    if (!input.has_value()) return;
    table.SetRendered(key, RenderObject(*input, Now()));
    if (aggregation) status_aggregations.fetch_add(1, std::memory_order_relaxed);
  }

  // ---- start-up

  // StartupLoop enqueues each initial batch kind by kind, draining the queue in between.
  void StartupLoop() {
    while (true) {
      std::vector<std::vector<std::string>> stages;
      {
        std::unique_lock lock(startup_mu);
        startup_cv.wait(lock, [&] { return stopping || !startup_batches.empty(); });
        if (stopping) return;
        stages = std::move(startup_batches.front());
        startup_batches.pop_front();
      }
      auto started = std::chrono::steady_clock::now();
      size_t objects = 0;
      for (const auto& stage : stages) {
        for (const std::string& key : stage) queue.Add(key);
        objects += stage.size();
        if (!queue.WaitUntilIdle(core::Clock::Duration::max())) return;  // stopped
      }
      auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - started);
      std::lock_guard lock(startup_mu);
      if (startup_batches.empty()) {
        startup_pending = false;
        if (!ready.exchange(true)) {
          spdlog::info("reconciler: initial batch of {} objects processed in {} ms; ready", objects,
                       elapsed.count());
        }
      }
      startup_cv.notify_all();
    }
  }

  const core::KindRegistry& registry;
  const ObjectValidator& validator;
  core::ObjectStore& synced;
  ReconcilerOptions options;
  std::function<int64_t()> wall_ms;
  core::WorkQueue queue;
  ObjectTable table;
  DependencyIndex index;

  std::mutex startup_mu;
  std::condition_variable startup_cv;
  std::deque<std::vector<std::vector<std::string>>> startup_batches;  // guarded by startup_mu
  bool startup_pending = false;  // an initial batch is not processed yet; guarded by startup_mu
  bool started = false;          // guarded by startup_mu
  bool stopping = false;         // guarded by startup_mu
  std::atomic<bool> ready{false};
  std::vector<std::thread> workers;
  std::thread startup_thread;

  std::atomic<uint64_t> processed{0};
  std::atomic<uint64_t> failed{0};
  std::atomic<uint64_t> requeued_by_dependency{0};
  std::atomic<uint64_t> status_aggregations{0};
  std::atomic<uint64_t> isolated_runs{0};
  std::atomic<uint64_t> isolated_failures{0};
  mutable std::mutex metrics_mu;
  std::map<std::string, uint64_t> processed_by_kind;                     // guarded by metrics_mu
  std::map<std::pair<std::string, std::string>, double> plugin_metrics;  // (name, kind)
};

Reconciler::Reconciler(const core::PluginSet& plugins, const ObjectValidator& validator,
                       core::ObjectStore& synced, ReconcilerOptions options)
    : impl_(std::make_unique<Impl>(plugins, validator, synced, std::move(options))) {}

Reconciler::~Reconciler() { Stop(); }

Status Reconciler::Start() {
  std::lock_guard lock(impl_->startup_mu);
  if (impl_->started) return FailedPreconditionError("reconciler: already started");
  if (impl_->stopping) return FailedPreconditionError("reconciler: stopped; create a new one");
  impl_->started = true;
  int workers = std::max(1, impl_->options.workers);
  for (int i = 0; i < workers; ++i) impl_->workers.emplace_back([this] { impl_->WorkerLoop(); });
  impl_->startup_thread = std::thread([this] { impl_->StartupLoop(); });
  return OkStatus();
}

void Reconciler::Stop() {
  {
    std::lock_guard lock(impl_->startup_mu);
    if (impl_->stopping) return;
    impl_->stopping = true;
    impl_->startup_cv.notify_all();
  }
  impl_->queue.ShutDown();
  for (std::thread& t : impl_->workers) t.join();
  impl_->workers.clear();
  if (impl_->startup_thread.joinable()) impl_->startup_thread.join();
}

void Reconciler::OnChanges(std::vector<ConfigChange> changes, bool initial) {
  Impl& im = *impl_;
  im.ingest_epoch.fetch_add(1, std::memory_order_acq_rel);
  struct EndIngest {  // at every return: even epoch, then the idle poke a worker may have missed
    Impl& im;
    ~EndIngest() {
      im.ingest_epoch.fetch_add(1, std::memory_order_acq_rel);
      if (im.options.on_idle && im.IdleNow()) im.options.on_idle();
    }
  } end_ingest{im};
  const std::string now = im.Now();
  std::map<core::KindId, std::vector<std::string>> by_kind;  // initial batch
  for (ConfigChange& change : changes) {
    std::string key = change.ref.Key();
    if (change.op == ConfigChange::Op::kDelete) {
      if (!im.table.MarkDeleted(key)) continue;  // unknown or already deleted
      if (IsSecret(change.ref)) im.RequeueSecretReaders(change.ref);
      im.queue.Add(key);
      continue;
    }
    if (change.doc == nullptr || !change.doc->IsObject()) {
      spdlog::warn("reconciler: {}: upsert without a document ignored", change.ref.Display());
      continue;
    }
    const core::KindInfo* kind = im.registry.Find(change.ref.group, change.ref.kind);
    bool secret_changed =
        im.table.Upsert(change.ref, kind, change.doc, std::move(change.source), now);
    if (secret_changed) im.RequeueSecretReaders(change.ref);
    if (initial) {
      by_kind[core::KindId{change.ref.group, change.ref.kind}].push_back(std::move(key));
    } else {
      im.queue.Add(key);
    }
  }
  if (!initial) return;

  // Initial batch: kinds in `reads` order, then kinds no plugin provides (they fail validation).
  std::vector<std::vector<std::string>> stages;
  for (const core::KindId& id : im.registry.Order()) {
    auto it = by_kind.find(id);
    if (it == by_kind.end()) continue;
    stages.push_back(std::move(it->second));
    by_kind.erase(it);
  }
  std::vector<std::string> rest;
  for (auto& [id, keys] : by_kind) rest.insert(rest.end(), keys.begin(), keys.end());
  if (!rest.empty()) stages.push_back(std::move(rest));
  spdlog::info("reconciler: initial batch of {} changes in {} stages", changes.size(),
               stages.size());
  std::lock_guard lock(im.startup_mu);
  im.startup_pending = true;
  im.startup_batches.push_back(std::move(stages));
  im.startup_cv.notify_all();
}

ObjectIdentifier Reconciler::Identifier() const {
  const core::KindRegistry* registry = &impl_->registry;
  return [registry](const rapidjson::Value& doc) -> StatusOr<sdk::ObjectRef> {
    std::string api_version = json::GetString(doc, "apiVersion");
    std::string kind_name = json::GetString(doc, "kind");
    if (api_version.empty()) return InvalidArgumentError("apiVersion: missing required field");
    if (kind_name.empty()) return InvalidArgumentError("kind: missing required field");
    size_t slash = api_version.rfind('/');
    sdk::ObjectRef ref;
    ref.group = slash == std::string::npos ? "" : api_version.substr(0, slash);
    ref.kind = kind_name;
    ref.name = json::GetString(doc, "metadata.name");
    ref.ns = json::GetString(doc, "metadata.namespace");
    const core::KindInfo* kind = registry->Find(ref.group, ref.kind);
    if (kind == nullptr) {
      return NotFoundError("unknown kind " + kind_name + " in apiVersion " + api_version +
                           ": no loaded plugin provides it (see portico-ctl list-plugins)");
    }
    if (ref.name.empty()) {
      return InvalidArgumentError(kind_name + ": metadata.name: missing required field");
    }
    if (kind->scope == PORTICO_SCOPE_NAMESPACED && ref.ns.empty()) {
      ref.ns = "default";
    } else if (kind->scope == PORTICO_SCOPE_CLUSTER && !ref.ns.empty()) {
      return InvalidArgumentError(ref.Display() + ": metadata.namespace: " + kind_name +
                                  " is cluster-scoped and takes no namespace");
    }
    return ref;
  };
}

bool Reconciler::Ready() const { return impl_->ready.load(); }

bool Reconciler::Idle() const { return impl_->IdleNow(); }

void Reconciler::SetSyncFeedback(const core::StoreKey& key, std::optional<SyncFeedback> feedback) {
  std::string table_key = key.ToString();
  if (impl_->table.SetFeedback(table_key, std::move(feedback))) impl_->queue.Add(table_key);
}

bool Reconciler::WaitIdle(std::chrono::milliseconds timeout) const {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  {
    std::unique_lock lock(impl_->startup_mu);
    if (!impl_->startup_cv.wait_until(lock, deadline,
                                      [&] { return !impl_->startup_pending || impl_->stopping; })) {
      return false;
    }
    if (impl_->stopping) return false;
  }
  auto remaining = std::max(deadline - std::chrono::steady_clock::now(),
                            std::chrono::steady_clock::duration::zero());
  return impl_->queue.WaitUntilIdle(remaining);
}

std::vector<ObjectView> Reconciler::List(const core::KindInfo* kind, std::string_view ns) const {
  return impl_->table.List(kind, ns);
}

std::vector<ObjectView> Reconciler::Refused() const { return impl_->table.Refused(); }

std::optional<ObjectView> Reconciler::Get(const sdk::ObjectRef& ref) const {
  return impl_->table.View(ref.Key());
}

ReconcilerMetrics Reconciler::Metrics() const {
  ReconcilerMetrics m;
  m.processed = impl_->processed.load();
  m.failed = impl_->failed.load();
  m.requeued_by_dependency = impl_->requeued_by_dependency.load();
  m.status_aggregations = impl_->status_aggregations.load();
  m.isolated_runs = impl_->isolated_runs.load();
  m.isolated_failures = impl_->isolated_failures.load();
  {
    std::lock_guard lock(impl_->metrics_mu);
    m.processed_by_kind = impl_->processed_by_kind;
  }
  m.objects = impl_->table.Size();
  m.queue_depth = impl_->queue.Len();
  return m;
}

}  // namespace portico::controller
