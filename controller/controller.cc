#include "controller/controller.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <random>
#include <utility>

#include "controller/admin/apply_documents.h"
#include "controller/center/field_lines.h"
#include "controller/reconcile/refusal.h"
#include "core/common/time_format.h"
#include "core/sync/inventory.h"

namespace portico::controller {
namespace {

using Clock = std::chrono::steady_clock;

Status Timeout(std::string what, std::chrono::milliseconds timeout) {
  return Status(StatusCode::kDeadlineExceeded,
                what + " within " + std::to_string(timeout.count()) + " ms");
}

}  // namespace

class Controller::SyncBridge final : public sync::SyncHost, public sync::SyncFeedbackSink {
 public:
  explicit SyncBridge(Controller* controller) : controller_(controller) {}
  // With an election, gateways are served once a leader (its epoch) is known.
  bool Ready() const override {
    return controller_->Ready() && (controller_->election_ == nullptr || controller_->Epoch() > 0);
  }
  uint64_t Epoch() const override { return controller_->Epoch(); }
  bool Settled() const override { return controller_->reconciler_->Idle(); }
  std::string ServerId() const override {
    std::lock_guard lock(controller_->mu_);
    return controller_->server_id_;
  }
  void SetSyncFeedback(const core::StoreKey& key, std::optional<SyncFeedback> feedback) override {
    controller_->SetSyncFeedback(key, std::move(feedback));
  }

 private:
  Controller* controller_;
};

std::string DefaultControllerId() {
  char host[256] = {};
  std::string name = gethostname(host, sizeof(host) - 1) == 0 && host[0] != '\0'
                         ? std::string(host)
                         : std::string("controller");
  return name + "-" + NewServerId().substr(0, 8);
}

std::string NewServerId() {
  std::random_device device;
  std::mt19937_64 engine((static_cast<uint64_t>(device()) << 32) ^ device() ^
                         static_cast<uint64_t>(Clock::now().time_since_epoch().count()));
  uint64_t value = engine();
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(16, '0');
  for (int i = 15; i >= 0; --i) {
    id[i] = kHex[value & 15];
    value >>= 4;
  }
  return id;
}

Controller::Controller(ControllerOptions options) : options_(std::move(options)) {}

Controller::~Controller() { Stop(); }

StatusOr<std::unique_ptr<Controller>> Controller::Create(ControllerOptions options) {
  std::unique_ptr<Controller> c(new Controller(std::move(options)));
  PORTICO_ASSIGN_OR_RETURN(core::PluginSet plugins,
                           core::LoadPluginDir(c->options_.plugin_dir, c->options_.plugin_load));
  c->plugins_ = std::make_unique<core::PluginSet>(std::move(plugins));
  // An isolation entry naming no plugin in the directory would isolate nothing: refuse it.
  for (const std::string& name : c->options_.isolation.plugins) {
    bool found = false;
    std::string known;
    for (const core::PluginRecord& record : c->plugins_->plugins) {
      if (!record.manifest.has_value()) continue;
      found = found || record.manifest->name == name;
      known += (known.empty() ? "" : ", ") + record.manifest->name;
    }
    if (!found) {
      return InvalidArgumentError("plugins.isolate: no plugin in " +
                                  c->options_.plugin_dir.string() + " is named \"" + name +
                                  "\" (found: " + (known.empty() ? "none" : known) + ")");
    }
  }
  PORTICO_ASSIGN_OR_RETURN(ObjectValidator validator,
                           ObjectValidator::Create(c->plugins_->registry));
  c->validator_ = std::make_unique<ObjectValidator>(std::move(validator));
  PORTICO_RETURN_IF_ERROR(c->options_.store.Validate());
  c->synced_ = std::make_unique<core::ObjectStore>(c->options_.store);
  c->links_ = std::make_unique<sync::SyncLinks>();
  ReconcilerOptions reconciler_options;
  reconciler_options.links = c->links_.get();
  // A settled store is a consistent world: let ConfigSync streams cut their batch right away.
  Controller* self = c.get();
  reconciler_options.on_idle = [self] {
    if (self->sync_server_) self->sync_server_->Poke();
    if (self->status_writer_) self->UpdateStatusWriter();
  };
  reconciler_options.workers = c->options_.workers;
  reconciler_options.isolation = c->options_.isolation;
  c->reconciler_ =
      std::make_unique<Reconciler>(*c->plugins_, *c->validator_, *c->synced_, reconciler_options);
  if (c->options_.etcd) {
    EtcdConfigCenterOptions etcd_options = *c->options_.etcd;
    etcd_options.identifier = c->reconciler_->Identifier();
    PORTICO_ASSIGN_OR_RETURN(std::unique_ptr<EtcdConfigCenter> etcd,
                             EtcdConfigCenter::Create(etcd_options));
    c->etcd_center_ = etcd.get();
    c->center_ = std::move(etcd);
    c->controller_id_ =
        c->options_.controller_id.empty() ? DefaultControllerId() : c->options_.controller_id;
    LeaderElectionOptions election = c->options_.election;
    election.prefix = etcd_options.prefix;
    election.id = c->controller_id_;
    EtcdClientOptions ha_client = etcd_options.client;
    std::chrono::milliseconds renew = LeaderRenewInterval(election);
    ha_client.call_timeout =
        std::min(ha_client.call_timeout, std::max(renew, std::chrono::milliseconds(200)));
    PORTICO_ASSIGN_OR_RETURN(c->ha_client_, EtcdClient::Create(std::move(ha_client)));
    c->election_ = std::make_unique<EtcdLeaderElection>(
        c->ha_client_.get(), election, [self](const LeaderState& state) {
          self->epoch_ = static_cast<uint64_t>(state.epoch);
          self->UpdateStatusWriter();
          if (self->sync_server_) self->sync_server_->Poke();
        });
    StatusWriterOptions status;
    status.prefix = etcd_options.prefix;
    status.id = c->controller_id_;
    status.collect = [self] { return self->CollectStatus(); };
    c->status_writer_ = std::make_unique<EtcdStatusWriter>(c->ha_client_.get(), std::move(status),
                                                           [self] { self->election_->Recheck(); });
  } else {
    FileConfigCenterOptions center_options;
    center_options.dir = c->options_.config_dir;
    center_options.debounce = c->options_.debounce;
    center_options.object_limits = c->options_.object_limits;
    center_options.max_file_bytes = c->options_.max_file_bytes;
    center_options.large_file_bytes = c->options_.large_file_bytes;
    center_options.identifier = c->reconciler_->Identifier();
    c->center_ = std::make_unique<FileConfigCenter>(std::move(center_options));
  }
  c->server_id_ = NewServerId();
  if (c->options_.sync) {
    const ControllerSyncOptions& s = *c->options_.sync;
    sync::SyncServerOptions sync_options;
    sync_options.address = s.address;
    sync_options.port = s.port;
    PORTICO_ASSIGN_OR_RETURN(sync_options.credentials, core::MakeServerCredentials(s.security));
    sync_options.secure = s.security.enabled;
    sync_options.version = c->options_.version;
    sync_options.inventory = core::BuildInventory(*c->plugins_);
    sync_options.policies = sync::SyncPolicies::FromRegistry(c->plugins_->registry);
    c->sync_bridge_ = std::make_unique<SyncBridge>(c.get());
    c->sync_server_ = std::make_unique<sync::SyncServer>(
        std::move(sync_options),
        sync::SyncServerDeps{c->synced_.get(), c->links_.get(), c->sync_bridge_.get(),
                             c->sync_bridge_.get()});
  }
  size_t accepted = 0;
  for (const core::PluginRecord& r : c->plugins_->plugins) accepted += r.ok() ? 1 : 0;
  spdlog::info("controller: {} plugins loaded, {} refused, {} kinds from {}", accepted,
               c->plugins_->plugins.size() - accepted, c->plugins_->registry.size(),
               c->options_.plugin_dir.string());
  return c;
}

Status Controller::Start() {
  {
    std::lock_guard lock(mu_);
    if (started_) return FailedPreconditionError("controller: already started");
    started_ = true;
    started_unix_ms_ = core::NowUnixMs();
    server_id_ = NewServerId();
  }
  PORTICO_RETURN_IF_ERROR(reconciler_->Start());
  if (sync_server_) {
    if (Status serving = sync_server_->Start(); !serving.ok()) {
      reconciler_->Stop();
      return serving;
    }
  }
  if (election_) {
    status_writer_->Start();
    election_->Start();
  }
  Status started = center_->Start(this);
  if (!started.ok()) {
    if (election_) {
      election_->Stop();
      status_writer_->Stop();
    }
    if (sync_server_) sync_server_->Stop();
    reconciler_->Stop();
    return started;
  }
  spdlog::info("controller: serving {} (server id {})", center_->Describe(), Info().server_id);
  return OkStatus();
}

void Controller::Stop() {
  {
    std::lock_guard lock(mu_);
    if (!started_ || stopped_) return;
    stopped_ = true;
  }
  if (election_) {
    status_writer_->Stop();
    election_->Stop();  // resigns: another controller leads without waiting for the TTL
  }
  if (sync_server_) sync_server_->Stop();  // it reads the store and writes feedback
  center_->Stop();
  reconciler_->Stop();
  delivered_cv_.notify_all();
}

void Controller::OnChanges(std::vector<ConfigChange> changes, bool initial) {
  std::vector<std::pair<sdk::ObjectRef, std::optional<uint64_t>>> updates;  // nullopt: deleted
  updates.reserve(changes.size());
  for (const ConfigChange& change : changes) {
    if (change.op == ConfigChange::Op::kDelete) {
      updates.emplace_back(change.ref, std::nullopt);
    } else if (change.doc != nullptr) {
      updates.emplace_back(change.ref, admin::ContentHash(*change.doc));
    }
  }
  // Waiters check delivered_ and then the reconciler's queue, so the batch is queued first.
  reconciler_->OnChanges(std::move(changes), initial);
  {
    std::lock_guard lock(delivered_mu_);
    ++batches_;
    for (auto& [ref, hash] : updates) {
      if (hash) {
        delivered_[std::move(ref)] = Delivered{*hash, batches_};
      } else {
        delivered_.erase(ref);
      }
    }
  }
  delivered_cv_.notify_all();
}

template <typename Predicate>
bool Controller::WaitDelivered(Clock::time_point deadline, Predicate done) const {
  std::unique_lock lock(delivered_mu_);
  return delivered_cv_.wait_until(lock, deadline, [&] { return done(); });
}

bool Controller::WaitProcessed(Clock::time_point deadline) const {
  auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return reconciler_->WaitIdle(std::max(remaining, std::chrono::milliseconds(0)));
}

bool Controller::Ready() const { return reconciler_->Ready(); }

admin::ServerInfo Controller::Info() const {
  admin::ServerInfo info;
  std::lock_guard lock(mu_);
  info.server_id = server_id_;
  info.version = options_.version;
  info.started_unix_ms = started_unix_ms_;
  info.config_source = center_->Describe();
  info.testing = options_.testing;
  if (election_) {
    admin::HaInfo& ha = info.ha;
    LeaderState leader = election_->State();
    ha.enabled = true;
    ha.controller_id = controller_id_;
    ha.leader = leader.leader;
    ha.leader_id = leader.leader_id;
    ha.lease_id = leader.lease_id;
    ha.lease_ttl_seconds = leader.ttl_seconds;
    ha.epoch = leader.epoch;
    ha.leader_since_unix_ms = leader.since_unix_ms;
    ha.transitions = leader.transitions;
    ha.election_error = leader.error;
    ha.etcd_revision = etcd_center_->Revision();
    ha.etcd_connected = etcd_center_->Connected();
    ha.etcd_endpoint = etcd_center_->Client().Endpoint();
    StatusWriterStats written = status_writer_->Stats();
    ha.status_puts = written.puts;
    ha.status_deletes = written.deletes;
    ha.status_fenced = written.fenced;
    ha.status_last_write_unix_ms = written.last_write_unix_ms;
    ha.status_error = written.error;
  }
  return info;
}

std::optional<LeaderState> Controller::Leader() const {
  if (!election_) return std::nullopt;
  return election_->State();
}

void Controller::UpdateStatusWriter() {
  LeaderState state = election_->State();
  status_writer_->SetEpoch(state.leader && Ready() ? state.epoch : 0);
  status_writer_->Poke();
}

std::map<sdk::ObjectRef, std::string> Controller::CollectStatus() const {
  std::map<sdk::ObjectRef, std::string> out;
  for (const ObjectView& view : reconciler_->List(nullptr, "")) {
    rapidjson::Document doc;
    doc.Parse(view.json.data(), view.json.size());
    if (doc.HasParseError() || !doc.IsObject()) continue;
    const rapidjson::Value* status = json::Find(doc, "status");
    if (status == nullptr || !status->IsObject() || status->ObjectEmpty()) continue;
    out.emplace(view.ref, json::Serialize(*status));
  }
  return out;
}

admin::ControllerStats Controller::Stats() const {
  admin::ControllerStats stats;
  stats.ready = Ready();
  stats.head = synced_->Head();
  stats.reconciler = reconciler_->Metrics();
  {
    std::lock_guard lock(delivered_mu_);
    for (const auto& [ref, delivered] : delivered_) {
      ++stats.objects_by_kind[core::KindId{ref.group, ref.kind}.ToString()];
    }
  }
  for (const core::PluginRecord& r : plugins_->plugins) {
    ++(r.ok() ? stats.plugins_loaded : stats.plugins_refused);
  }
  stats.config_errors = center_->Errors().size() + reconciler_->Refused().size();
  if (sync_server_) stats.sync = sync_server_->Stats();
  std::lock_guard lock(mu_);
  stats.reloads = reloads_;
  return stats;
}

void Controller::AddFieldLines(ObjectView& view) const {
  if (!view.refusal.has_value() || view.source.file.empty()) return;
  std::vector<std::string> fields;
  for (const FieldViolation& v : view.refusal->violations) fields.push_back(v.field);
  // Parsed again on request: only files no larger than what is parsed inline anyway.
  std::vector<int> lines = FieldLines(options_.config_dir / view.source.file, view.source.line,
                                      fields, std::max<size_t>(options_.large_file_bytes, 1 << 20));
  for (size_t i = 0; i < lines.size(); ++i) view.refusal->violations[i].line = lines[i];
}

std::vector<ObjectView> Controller::List(const core::KindInfo* kind, std::string_view ns) const {
  std::vector<ObjectView> views = reconciler_->List(kind, ns);
  for (ObjectView& view : views) AddFieldLines(view);
  return views;
}

std::optional<ObjectView> Controller::Get(const sdk::ObjectRef& ref) const {
  std::optional<ObjectView> view = reconciler_->Get(ref);
  if (view.has_value()) AddFieldLines(*view);
  return view;
}

std::vector<ConfigError> Controller::Errors() const {
  std::vector<ConfigError> errors = center_->Errors();
  // Objects the pipeline refused, with the line of every violation in their file.
  for (ObjectView& view : reconciler_->Refused()) {
    if (!view.refusal.has_value()) continue;
    AddFieldLines(view);
    ConfigError error;
    error.source = view.source;
    error.object = view.ref.Display();
    error.refused_generation = view.refusal->generation;
    error.serving_generation = view.serving_generation;
    error.violations = std::move(view.refusal->violations);
    error.message = (view.source.file.empty()
                         ? ""
                         : view.source.file + ":" + std::to_string(view.source.line) + ": ") +
                    error.object + ": " +
                    RefusalMessage(Refusal{error.refused_generation, error.violations},
                                   error.serving_generation);
    errors.push_back(std::move(error));
  }
  return errors;
}

StatusOr<std::vector<admin::AppliedObject>> Controller::Apply(std::string_view documents,
                                                              bool wait) {
  PORTICO_ASSIGN_OR_RETURN(std::vector<admin::PreparedObject> prepared,
                           admin::PrepareApply(documents, *validator_, {}, options_.object_limits));
  std::vector<admin::AppliedObject> applied;
  uint64_t before = 0;
  {
    std::lock_guard lock(delivered_mu_);
    before = batches_;
    for (const admin::PreparedObject& p : prepared) {
      admin::AppliedObject a;
      a.ref = p.validated.ref;
      a.api_version = p.api_version;
      a.plural = p.validated.kind->plural;
      auto it = delivered_.find(a.ref);
      a.result = it == delivered_.end()              ? "created"
                 : it->second.hash == p.content_hash ? "unchanged"
                                                     : "configured";
      applied.push_back(std::move(a));
    }
  }
  PORTICO_RETURN_IF_ERROR(center_->Apply(documents));
  for (const admin::AppliedObject& a : applied) {
    spdlog::info("admin: apply {}: {}", a.ref.Display(), a.result);
  }
  if (!wait) return applied;

  auto deadline = Clock::now() + options_.wait_timeout;
  bool delivered = WaitDelivered(deadline, [&] {
    for (size_t i = 0; i < applied.size(); ++i) {
      if (applied[i].result == "unchanged") continue;
      auto it = delivered_.find(applied[i].ref);
      if (it == delivered_.end()) return false;
      if (it->second.batch <= before && it->second.hash != prepared[i].content_hash) return false;
    }
    return true;
  });
  if (!delivered) {
    return Timeout("applied, but the config source did not deliver the change",
                   options_.wait_timeout);
  }
  if (!WaitProcessed(deadline)) {
    return Timeout("applied, but the controller did not finish processing", options_.wait_timeout);
  }
  return applied;
}

Status Controller::Delete(const sdk::ObjectRef& ref, bool wait) {
  {
    std::lock_guard lock(delivered_mu_);
    if (!delivered_.contains(ref)) return NotFoundError(ref.Display() + " not found");
  }
  PORTICO_RETURN_IF_ERROR(center_->Delete(ref));
  spdlog::info("admin: delete {}", ref.Display());
  if (!wait) return OkStatus();
  auto deadline = Clock::now() + options_.wait_timeout;
  if (!WaitDelivered(deadline, [&] { return !delivered_.contains(ref); })) {
    return Timeout("deleted, but the config source did not deliver the change",
                   options_.wait_timeout);
  }
  if (!WaitProcessed(deadline)) {
    return Timeout("deleted, but the controller did not finish processing", options_.wait_timeout);
  }
  return OkStatus();
}

Status Controller::Reload() {
  PORTICO_RETURN_IF_ERROR(center_->Resync());
  {
    std::lock_guard lock(mu_);
    server_id_ = NewServerId();
    ++reloads_;
    spdlog::info("controller: reloaded {} (server id {})", center_->Describe(), server_id_);
  }
  if (sync_server_) sync_server_->Poke();  // every gateway gets a snapshot of the new world
  return OkStatus();
}

std::vector<sync::ConnectedGateway> Controller::Gateways() const {
  return sync_server_ ? sync_server_->Gateways() : std::vector<sync::ConnectedGateway>{};
}

std::optional<std::map<std::string, std::string>> Controller::GatewaySynced(
    std::string_view name) const {
  return sync_server_ ? sync_server_->GatewaySynced(name) : std::nullopt;
}

uint16_t Controller::SyncPort() const { return sync_server_ ? sync_server_->port() : 0; }

StatusOr<size_t> Controller::WipeAll() {
  if (!options_.testing) return NotFoundError("wipe-all is served only with --testing");
  std::vector<sdk::ObjectRef> refs;
  {
    std::lock_guard lock(delivered_mu_);
    for (const auto& [ref, delivered] : delivered_) refs.push_back(ref);
  }
  // Reverse `reads` order: readers go before what they read. Kinds no plugin provides first.
  std::map<core::KindId, size_t> rank;
  const std::vector<core::KindId>& order = plugins_->registry.Order();
  for (size_t i = 0; i < order.size(); ++i) rank[order[i]] = i + 1;
  auto rank_of = [&rank](const sdk::ObjectRef& ref) {
    auto it = rank.find(core::KindId{ref.group, ref.kind});
    return it == rank.end() ? std::numeric_limits<size_t>::max() : it->second;
  };
  std::stable_sort(refs.begin(), refs.end(), [&](const sdk::ObjectRef& a, const sdk::ObjectRef& b) {
    return rank_of(a) > rank_of(b);
  });
  size_t deleted = 0;
  for (const sdk::ObjectRef& ref : refs) {
    Status status = center_->Delete(ref);
    if (status.ok()) {
      ++deleted;
    } else if (status.code() != StatusCode::kNotFound) {
      return status.WithPrefix("wipe-all: " + ref.Display());
    }
  }
  spdlog::info("admin: wipe-all deleted {} objects", deleted);
  auto deadline = Clock::now() + options_.wait_timeout;
  if (!WaitDelivered(deadline, [&] {
        for (const sdk::ObjectRef& ref : refs) {
          if (delivered_.contains(ref)) return false;
        }
        return true;
      })) {
    return Timeout("wipe-all: the config source did not deliver every delete",
                   options_.wait_timeout);
  }
  if (!WaitProcessed(deadline)) {
    return Timeout("wipe-all: the controller did not finish processing", options_.wait_timeout);
  }
  return deleted;
}

}  // namespace portico::controller
