// controller.h: Controller, portico-controller's pieces wired together (DESIGN.md §6): the
// plugin set (core::LoadPluginDir), the ObjectValidator, the synced ObjectStore, the Reconciler
// and the config center feeding it (a FileConfigCenter, or an EtcdConfigCenter when
// options.etcd is set; its ObjectIdentifier is the reconciler's), and, when
// options.sync is set, the ConfigSync server streaming the synced store to gateways
// (controller/sync) whose acks come back as feedback into objects' status. It is the admin API's
// backend (admin_backend.h).
//
// Life: Create() loads plugins and builds everything; Start() starts the reconciler, the
// ConfigSync server (gateways may connect at once; nothing is sent before Ready()), then the
// center, which delivers the initial batch; the reconciler processes it in `reads` order and
// Ready() turns true once it drained. Stop() stops ConfigSync, the center, then the reconciler.
// server_id is a new random 16-hex-digit id at every start and reload; a new one makes every
// gateway receive a snapshot.
//
// Several controllers (with options.etcd only): an EtcdLeaderElection on <prefix>/_leader and an
// EtcdStatusWriter that writes every object's status to etcd while this controller leads and
// its initial processing drained; both over an EtcdClient of their own. The leader's epoch is
// sent on every ConfigSync message (SyncHost::Epoch) and Watch is served only once an epoch is
// known. Without etcd none of this exists: one controller, epoch 0.
//
// Between the center and the reconciler the Controller sees every change batch and keeps, per
// object at the source, a fingerprint of its document and the batch that delivered it. That is
// how Apply knows "created / configured / unchanged" and how `wait` knows when a write came
// back through the watcher.
//
// Thread-safety: AdminBackend methods may be called from any thread, concurrently, once
// Create() returned (before Start() the controller simply holds nothing). Start() and Stop()
// are called by the owner, once each. Ownership: the Controller owns every piece; plugin
// libraries stay loaded for the life of the process (the loader never unloads them).
#ifndef PORTICO_CONTROLLER_CONTROLLER_H_
#define PORTICO_CONTROLLER_CONTROLLER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/admin/admin_backend.h"
#include "controller/center/config_center.h"
#include "controller/center/etcd_config_center.h"
#include "controller/center/etcd_leader_election.h"
#include "controller/center/etcd_status_writer.h"
#include "controller/center/file_config_center.h"
#include "controller/reconcile/object_validator.h"
#include "controller/reconcile/reconciler.h"
#include "controller/sync/sync_links.h"
#include "controller/sync/sync_server.h"
#include "core/plugin/plugin_loader.h"
#include "core/store/object_store.h"
#include "core/sync/sync_security.h"
#include "portico/sdk/status.h"

namespace portico::controller {

// ControllerSyncOptions: the ConfigSync server for gateways (controller/sync/sync_server.h).
struct ControllerSyncOptions {
  std::string address;          // "": 0.0.0.0 with mutual TLS, else 127.0.0.1
  uint16_t port = 5810;         // 0: any free port (Controller::SyncPort())
  core::SyncSecurity security;  // conf_sync_security; disabled: plaintext
};

struct ControllerOptions {
  std::filesystem::path config_dir;
  // The etcd center instead of the directory (its identifier is set by Create()).
  std::optional<EtcdConfigCenterOptions> etcd;
  std::filesystem::path plugin_dir;
  core::LoadOptions plugin_load;  // the binary rehearses each load in a child (plugin_image.h)
  std::chrono::milliseconds debounce{50};
  // What the config source accepts (FileConfigCenterOptions).
  ObjectLimits object_limits;
  size_t max_file_bytes = 64u << 20;
  size_t large_file_bytes = 1u << 20;
  int workers = 2;
  // Whose processors run in a forked child (isolated_process.h); a name no loaded plugin has is
  // an error at Create.
  ProcessIsolation isolation;
  bool testing = false;  // serve wipe-all
  std::string version;   // shown by /api/v1/info
  // How long Apply/Delete with `wait` and WipeAll wait for the controller to catch up.
  std::chrono::milliseconds wait_timeout = std::chrono::seconds(30);
  // ConfigSync; nullopt: not served (tests of the pipeline alone).
  std::optional<ControllerSyncOptions> sync;
  // The synced store's change log bounds (byte budget, age); a gateway behind it resyncs.
  core::ObjectStoreOptions store;
  // High availability, with `etcd` only (none without it: one controller, no election): this
  // controller's id ("": host name and random digits) and the leader election's TTL and
  // renewal (prefix and id are filled in by Create()).
  std::string controller_id;
  LeaderElectionOptions election;
};

class Controller final : public admin::AdminBackend, private ConfigListener {
 public:
  // Create loads the plugins and builds the pipeline. Refused plugins are logged and counted,
  // not errors; an unreadable plugin directory or a schema that does not compile is.
  static StatusOr<std::unique_ptr<Controller>> Create(ControllerOptions options);
  ~Controller() override;
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Start: see the file comment. Fails when the config directory cannot be read or watched.
  Status Start();
  // Stop is idempotent; the destructor calls it.
  void Stop();

  // ---- AdminBackend
  bool Ready() const override;
  admin::ServerInfo Info() const override;
  admin::ControllerStats Stats() const override;
  const core::PluginSet& Plugins() const override { return *plugins_; }
  std::vector<ObjectView> List(const core::KindInfo* kind, std::string_view ns) const override;
  std::optional<ObjectView> Get(const sdk::ObjectRef& ref) const override;
  StatusOr<std::vector<admin::AppliedObject>> Apply(std::string_view documents, bool wait) override;
  Status Delete(const sdk::ObjectRef& ref, bool wait) override;
  std::vector<ConfigError> Errors() const override;
  Status Reload() override;
  StatusOr<size_t> WipeAll() override;
  std::vector<sync::ConnectedGateway> Gateways() const override;
  std::optional<std::map<std::string, std::string>> GatewaySynced(
      std::string_view name) const override;

  // SyncPort is the ConfigSync port once started (0 when ConfigSync is not served).
  uint16_t SyncPort() const;
  // Epoch is the leader epoch this controller knows (0: no election, or no leader seen yet).
  uint64_t Epoch() const { return epoch_.load(); }
  // Leader is the election's state (nullopt without etcd).
  std::optional<LeaderState> Leader() const;

  // ---- ConfigSync (controller/sync)
  const core::ObjectStore& Synced() const { return *synced_; }
  const sync::SyncLinks& Links() const { return *links_; }
  // SetSyncFeedback forwards gateways' acks and nacks to the object's status (sync_feedback.h).
  void SetSyncFeedback(const core::StoreKey& key, std::optional<SyncFeedback> feedback) {
    reconciler_->SetSyncFeedback(key, std::move(feedback));
    if (status_writer_) status_writer_->Poke();  // Programmed may have changed
  }

 private:
  // Delivered is what the source last delivered for one object.
  struct Delivered {
    uint64_t hash = 0;   // admin::ContentHash of the document
    uint64_t batch = 0;  // the delivery counter when it arrived
  };

  // SyncBridge is the ConfigSync server's view of the controller (SyncHost, SyncFeedbackSink).
  class SyncBridge;

  explicit Controller(ControllerOptions options);

  // ConfigListener: records the batch, then hands it to the reconciler.
  void OnChanges(std::vector<ConfigChange> changes, bool initial) override;

  // WaitDelivered waits until `done()` holds (checked under delivered_mu_) or the deadline.
  template <typename Predicate>
  bool WaitDelivered(std::chrono::steady_clock::time_point deadline, Predicate done) const;
  // AddFieldLines sets the line of every violation of a refused object (center/field_lines.h).
  void AddFieldLines(ObjectView& view) const;
  // WaitProcessed waits until the reconciler is idle, up to the deadline.
  bool WaitProcessed(std::chrono::steady_clock::time_point deadline) const;
  // UpdateStatusWriter lets the status writer write under the epoch while this controller leads
  // and its initial processing drained (else nothing), and tells it status may have changed.
  void UpdateStatusWriter();
  // CollectStatus is every object's status as compact JSON (the status writer's source).
  std::map<sdk::ObjectRef, std::string> CollectStatus() const;

  ControllerOptions options_;
  std::unique_ptr<core::PluginSet> plugins_;  // stable address: the validator points into it
  std::unique_ptr<ObjectValidator> validator_;
  std::unique_ptr<core::ObjectStore> synced_;
  std::unique_ptr<sync::SyncLinks> links_;  // sync scope, set by processors (sync_links.h)
  std::unique_ptr<Reconciler> reconciler_;
  std::unique_ptr<ConfigCenter> center_;
  std::unique_ptr<SyncBridge> sync_bridge_;
  std::unique_ptr<sync::SyncServer> sync_server_;  // null when ConfigSync is not served
  // With etcd: the election and the leader's status writes, over a client of their own whose
  // calls time out within a renewal interval (so a dead etcd member is left in time).
  EtcdConfigCenter* etcd_center_ = nullptr;  // center_, when it is the etcd center
  std::string controller_id_;
  std::unique_ptr<EtcdClient> ha_client_;
  std::unique_ptr<EtcdLeaderElection> election_;
  std::unique_ptr<EtcdStatusWriter> status_writer_;
  std::atomic<uint64_t> epoch_{0};
  int64_t started_unix_ms_ = 0;

  mutable std::mutex mu_;  // guards server_id_, started_, stopped_, reloads_
  std::string server_id_;
  bool started_ = false;
  bool stopped_ = false;
  uint64_t reloads_ = 0;

  mutable std::mutex delivered_mu_;
  mutable std::condition_variable delivered_cv_;
  std::map<sdk::ObjectRef, Delivered> delivered_;  // objects at the source; guarded
  uint64_t batches_ = 0;                           // delivery counter; guarded
};

// NewServerId returns 16 random hex digits.
std::string NewServerId();
// DefaultControllerId: "<host name>-<8 random hex digits>".
std::string DefaultControllerId();

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_CONTROLLER_H_
