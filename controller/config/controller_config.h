// controller_config.h: ControllerConfig, every setting of portico-controller (DESIGN.md §6),
// read from portico-controller.toml and from flags; a flag given on the command line overrides
// the file, the file overrides the defaults, and the defaults work:
// `portico-controller --config-dir DIR` needs nothing else.
//
// portico-controller.toml (every key optional; unknown keys are errors naming file and line):
//   config_dir  = "/etc/portico/conf.d"   # the YAML/JSON resources (relative: to this file)
//   plugin_dir  = "/usr/lib/portico/plugins"
//   debounce_ms = 50                      # quiet time before a burst of edits is read
//   workers     = 2                       # reconcile worker threads
//   log_level   = "info"                  # trace, debug, info, warn, error, critical, off
//   testing     = false                   # serve POST /api/v1/admin/wipe-all
//   [admin]
//   address   = "127.0.0.1"
//   port      = 5800                      # 0: any free port
//   port_file = ""                        # write the bound port here (tests)
//   token_file = ""                       # bearer token (file mode 0600); required when the
//                                         #   address is not loopback (core/admin/admin_auth.h)
//   [sync]                                # ConfigSync (gRPC) for gateways
//   address   = ""                        # "": 0.0.0.0 with conf_sync_security, else 127.0.0.1
//   port      = 5810                      # 0: any free port
//   port_file = ""                        # write the bound port here (tests)
//   log_max_bytes  = 67108864             # change log budget; older gateways resync (snapshot)
//   log_max_age_ms = 300000               # change log retention (DESIGN.md §5 wants >= 120 s)
//   [limits]                              # what the config source accepts (issue 15)
//   max_object_bytes     = 1572864        # one object as JSON (the API server's 1.5 MiB)
//   max_annotation_bytes = 262144         # metadata.annotations keys and values (256 KiB)
//   max_file_bytes       = 67108864       # one file; larger ones are refused unread
//   max_objects_per_file = 10000          # documents in one file
//   large_file_bytes     = 1048576        # files this large are parsed apart from the others
//   [plugins]                             # containment of processors (isolated_process.h)
//   isolate     = ["name", ...]           # these plugins' processors run in a forked child:
//   isolate_all = false                   #   a crash or hang fails the object, not the controller
//   process_timeout_ms = 5000             # an isolated call running longer is killed
//   [etcd]                                # keep the resources in etcd instead of config_dir
//   endpoints = ["127.0.0.1:2379"]        # host:port, http:// or https://; several: failover
//   prefix    = "/portico"                # keys: <prefix>/<group>/<kind>/<namespace>/<name>
//   ca_file   = ""  cert_file = ""  key_file = ""   # TLS to etcd (relative: to this file)
//   user      = ""  password = ""  password_file = ""   # etcd authentication
//   start_timeout_ms = 10000              # how long start-up waits for etcd
//   controller_id    = ""                 # this controller in the leader election; "": host-random
//   leader_ttl_s     = 5                  # the leader's lease TTL (a dead leader is replaced
//                                         #   within it)
//   leader_renew_ms  = 0                  # lease renewal interval; 0: TTL / 3
//   [conf_sync_security]                  # mutual TLS for ConfigSync (core/sync/sync_security.h)
//   active = "prod"
//   [[conf_sync_security.certs]]
//   name = "prod"  ca_file = ...  cert_file = ...  key_file = ...
//
// Thread-safety: value types and pure functions.
#ifndef PORTICO_CONTROLLER_CONFIG_CONTROLLER_CONFIG_H_
#define PORTICO_CONTROLLER_CONFIG_CONTROLLER_CONFIG_H_

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/toml_reader.h"
#include "core/sync/sync_security.h"
#include "portico/sdk/status.h"

namespace portico::controller {

// ControllerEtcdConfig: the [etcd] table (controller/center/etcd_config_center.h). With
// endpoints, the resources come from etcd and config_dir is not used.
struct ControllerEtcdConfig {
  std::vector<std::string> endpoints;
  std::string prefix = "/portico";
  std::string ca_file, cert_file, key_file;
  std::string user, password, password_file;
  int64_t start_timeout_ms = 10'000;
  std::string controller_id;  // "": <host name>-<8 random hex digits>
  int64_t leader_ttl_s = 5;
  int64_t leader_renew_ms = 0;  // 0: leader_ttl_s / 3
  bool enabled() const { return !endpoints.empty(); }
};

struct ControllerConfig {
  std::string config_dir;  // required to serve (or to --check a directory)
  std::string plugin_dir;  // empty: core::DefaultPluginDir()
  std::string admin_address = "127.0.0.1";
  uint16_t admin_port = 5800;
  std::string admin_port_file;
  std::string admin_token_file;  // empty: no token (then the address must be loopback)
  std::string sync_address;  // "": 0.0.0.0 when sync_security is enabled, else 127.0.0.1
  uint16_t sync_port = 5810;
  std::string sync_port_file;
  // The synced store's change log (core::ObjectStoreOptions): a gateway behind it resyncs from a
  // snapshot. Small values are for tests of that path.
  uint64_t sync_log_max_bytes = uint64_t{64} << 20;
  int64_t sync_log_max_age_ms = 300'000;
  core::SyncSecurity sync_security;  // [conf_sync_security]; disabled (plaintext) when absent
  ControllerEtcdConfig etcd;         // [etcd]; disabled (the file center) when no endpoints
  int debounce_ms = 50;
  // [limits]: refused objects and files keep their last good version (file_config_center.h).
  uint64_t max_object_bytes = uint64_t{1536} * 1024;
  uint64_t max_annotation_bytes = uint64_t{256} * 1024;
  uint64_t max_file_bytes = uint64_t{64} << 20;
  uint64_t max_objects_per_file = 10'000;
  uint64_t large_file_bytes = uint64_t{1} << 20;
  // [plugins]: manifest names whose processors run in a forked child; `isolate_all` for every
  // plugin; the per-call deadline of an isolated call.
  std::vector<std::string> isolate_plugins;
  bool isolate_all = false;
  int64_t process_timeout_ms = 5000;
  int workers = 2;
  std::string log_level = "info";
  bool testing = false;
  // The TOML file the settings came from ("" when none); informational.
  std::string config_file;

  // Validate checks ranges and names (workers >= 1, debounce_ms >= 0, a known log level,
  // positive sync log bounds and limits).
  Status Validate() const;
};

// ParseConfigToml applies the settings of TOML `text` on top of `config`. `file` names the file
// in errors ("portico-controller.toml:3: workers: expected an integer, got a string") and is
// the base of relative paths. INVALID_ARGUMENT on a syntax error, a wrong type, an out-of-range
// value or an unknown key.
Status ParseConfigToml(std::string_view text, const std::filesystem::path& file,
                       ControllerConfig* config);

// LoadConfigFile reads `file` and applies it (ParseConfigToml). NOT_FOUND when it cannot be read.
Status LoadConfigFile(const std::filesystem::path& file, ControllerConfig* config);

// IsLogLevel: one of spdlog's level names (core/common/toml_reader.h).
using core::IsLogLevel;

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_CONFIG_CONTROLLER_CONFIG_H_
