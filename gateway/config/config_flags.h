// config_flags.h: the command line of portico-gateway: every GatewayConfig setting as a flag,
// plus --config FILE (portico-gateway.toml) and --check. ResolveConfig merges them: defaults,
// then the file, then the flags actually given (a flag's default never overrides the file), then
// fills in the default name (the host name).
//
//   --config FILE  --controller HOST:PORT  --name NAME  --gateway NS/NAME (repeatable)
//   --gateway-class CLASS  --advertise-address ADDR (repeatable)  --plugin-dir DIR
//   --snapshot-path FILE  --spool-dir DIR
//   --admin-address ADDR  --admin-port N  --admin-port-file PATH
//   --workers N  --log-level LEVEL  --access-log DEST  --listen-address ADDR  --busy-poll-us N
//   --escaped-slashes ACTION
//   --header-read-timeout-ms --idle-timeout-ms --connect-timeout-ms --upstream-timeout-ms
//   --upstream-idle-timeout-ms --drain-timeout-ms --drain-idle-timeout-ms --max-request-line
//   --max-header-bytes
//   --max-headers --max-body-bytes --upstream-keepalive N  --check
//   --sync-keepalive-ms N --sync-keepalive-timeout-ms N
//   --sync-ca-file F --sync-cert-file F --sync-key-file F [--sync-server-name NAME]: mutual TLS
//     with these files (all three together), replacing the file's [conf_sync_security];
//     --sync-server-name alone overrides the active set's server_name.
//
// Thread-safety: used on the main thread during start-up.
#ifndef PORTICO_GATEWAY_CONFIG_CONFIG_FLAGS_H_
#define PORTICO_GATEWAY_CONFIG_CONFIG_FLAGS_H_

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gateway/config/gateway_config.h"
#include "portico/sdk/status.h"

namespace portico::gateway {

// ConfigFlags holds what the flags parsed into. Register with AddConfigFlags; read after parse.
struct ConfigFlags {
  GatewayConfig values;     // the flags' values (defaults where not given)
  std::string config_file;  // --config
  bool check = false;       // --check: load plugins, print the inventory and exit
  std::string sync_ca_file, sync_cert_file, sync_key_file, sync_server_name;  // --sync-*

  // Each setting's option and how to copy it from `values` into a config.
  std::vector<std::pair<CLI::Option*, std::function<void(const GatewayConfig&, GatewayConfig*)>>>
      settings;
};

// AddConfigFlags registers the flags on `app`; `flags` must outlive app.parse().
void AddConfigFlags(CLI::App& app, ConfigFlags* flags);

// ResolveConfig: see the file comment. Errors name the file and line, or the setting.
StatusOr<GatewayConfig> ResolveConfig(const ConfigFlags& flags);

}  // namespace portico::gateway

#endif  // PORTICO_GATEWAY_CONFIG_CONFIG_FLAGS_H_
