// admin_backend.h: AdminBackend, what the admin API (DESIGN.md §6) asks of the controller. The
// HTTP side (admin_router.h) only renders and routes; everything it shows or changes goes
// through this interface, implemented by the Controller (controller.h) and by test fakes.
//
// Thread-safety: every method may be called from several admin handler threads at once; an
// implementation synchronises itself. Apply, Delete (with wait), Reload and WipeAll may block
// for seconds. Ownership: Plugins() returns a reference that stays valid, unchanged, for the
// backend's life (plugins are loaded once).
#ifndef PORTICO_CONTROLLER_ADMIN_ADMIN_BACKEND_H_
#define PORTICO_CONTROLLER_ADMIN_ADMIN_BACKEND_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/center/config_center.h"
#include "controller/reconcile/reconciler.h"
#include "controller/sync/connected_gateway.h"
#include "core/plugin/plugin_loader.h"
#include "portico/sdk/status.h"
#include "portico/sdk/types.h"

namespace portico::controller::admin {

// HaInfo: several controllers on one etcd (issue 16), GET /api/v1/info's "ha" object. Only
// with the etcd center (enabled = false otherwise: one controller, no election).
struct HaInfo {
  bool enabled = false;
  std::string controller_id;  // this controller
  bool leader = false;        // this controller leads
  std::string leader_id;      // the leading controller ("" when none is known)
  int64_t lease_id = 0;       // the leader's etcd lease
  int64_t lease_ttl_seconds = 0;
  int64_t epoch = 0;  // the leader key's create revision (sent to gateways as the sync epoch)
  int64_t leader_since_unix_ms = 0;  // when this controller first saw the current leader
  uint64_t transitions = 0;          // times this controller became leader
  std::string election_error;        // the election's last etcd error
  int64_t etcd_revision = 0;         // the etcd revision this controller's center delivered
  bool etcd_connected = false;       // the center's watch is established
  std::string etcd_endpoint;         // the etcd member the center talks to now
  // The leader's status writes (status_writer.h): counts and the last error.
  uint64_t status_puts = 0;
  uint64_t status_deletes = 0;
  uint64_t status_fenced = 0;
  int64_t status_last_write_unix_ms = 0;
  std::string status_error;
};

// ServerInfo is GET /api/v1/info without the counters (see ControllerStats).
struct ServerInfo {
  std::string server_id;        // 16 hex digits, new at every start and reload
  std::string version;          // the controller's version
  int64_t started_unix_ms = 0;  // wall-clock start time
  std::string config_source;    // ConfigCenter::Describe(): "file:/etc/portico/conf.d"
  bool testing = false;         // --testing: wipe-all is served
  HaInfo ha;
};

// ControllerStats are the numbers behind /api/v1/info and /metrics.
struct ControllerStats {
  bool ready = false;
  uint64_t head = 0;  // the synced store's head version
  ReconcilerMetrics reconciler;
  // Objects per kind, keyed by KindId::ToString() ("HTTPRoute.gateway.networking.k8s.io").
  std::map<std::string, size_t> objects_by_kind;
  size_t plugins_loaded = 0;
  size_t plugins_refused = 0;
  size_t config_errors = 0;  // ConfigCenter::Errors().size()
  uint64_t reloads = 0;
  sync::SyncStats sync;  // ConfigSync (all zero when it is not served)
};

// AppliedObject is one object of an apply request, as the response reports it (identity only:
// an apply response never echoes content, so no secret travels back).
struct AppliedObject {
  sdk::ObjectRef ref;
  std::string api_version;
  std::string plural;  // the kind's plural ("httproutes")
  // "created" (new), "configured" (changed) or "unchanged" (spec, labels and annotations equal
  // to what the controller holds).
  std::string result;
};

// AdminBackend: see the file comment.
class AdminBackend {
 public:
  virtual ~AdminBackend() = default;

  virtual bool Ready() const = 0;
  virtual ServerInfo Info() const = 0;
  virtual ControllerStats Stats() const = 0;
  // Plugins is the loaded plugin set: records (accepted and refused) and the kind registry.
  virtual const core::PluginSet& Plugins() const = 0;

  // List / Get: objects with status (Reconciler::List / Get). `kind` is never null for List.
  virtual std::vector<ObjectView> List(const core::KindInfo* kind, std::string_view ns) const = 0;
  virtual std::optional<ObjectView> Get(const sdk::ObjectRef& ref) const = 0;

  // Apply validates every document of `documents` (YAML or JSON, one or more) before writing
  // any: INVALID_ARGUMENT naming each document at fault, NOT_FOUND for an unknown kind. Then it
  // writes them to the config source; with `wait`, it returns once the objects were processed
  // (DEADLINE_EXCEEDED when that takes too long; the write stands).
  virtual StatusOr<std::vector<AppliedObject>> Apply(std::string_view documents, bool wait) = 0;
  // Delete removes the object's document from the source; NOT_FOUND when it has none. With
  // `wait`, returns once the controller dropped the object.
  virtual Status Delete(const sdk::ObjectRef& ref, bool wait) = 0;

  // Errors are the config source's current problems (file, line, object, message).
  virtual std::vector<ConfigError> Errors() const = 0;
  // Reload re-reads the config source (and starts a new server_id).
  virtual Status Reload() = 0;
  // WipeAll deletes every object through the source, in reverse `reads` order, and waits until
  // the controller holds none; returns how many were deleted. Only served with --testing.
  virtual StatusOr<size_t> WipeAll() = 0;

  // Gateways: the gateways connected over ConfigSync (none when it is not served).
  virtual std::vector<sync::ConnectedGateway> Gateways() const { return {}; }
  // GatewaySynced: key ("group/kind/namespace/name") -> hash the controller believes gateway
  // `name` (or client id) holds; nullopt when no such gateway is connected.
  virtual std::optional<std::map<std::string, std::string>> GatewaySynced(
      std::string_view name) const {
    return std::nullopt;
  }
};

}  // namespace portico::controller::admin

#endif  // PORTICO_CONTROLLER_ADMIN_ADMIN_BACKEND_H_
