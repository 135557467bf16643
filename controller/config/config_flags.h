// config_flags.h: the command line of portico-controller: every ControllerConfig setting as a
// flag, plus --config FILE (portico-controller.toml) and --check. ResolveConfig merges them:
// defaults, then the file, then the flags actually given (a flag's default never overrides the
// file).
//
//   --config FILE  --config-dir DIR  --plugin-dir DIR  --admin-address ADDR  --admin-port N
//   --admin-port-file PATH  --sync-address ADDR  --sync-port N  --sync-port-file PATH
//   --sync-log-max-bytes N  --sync-log-max-age-ms N
//   --debounce-ms N  --max-object-bytes N  --max-annotation-bytes N  --max-file-bytes N
//   --max-objects-per-file N  --large-file-bytes N  --workers N  --log-level LEVEL  --testing
//   --check
//   --sync-ca-file F --sync-cert-file F --sync-key-file F: ConfigSync mutual TLS with these files
//     (all three together), replacing the file's [conf_sync_security].
//
// Thread-safety: used on the main thread during start-up.
#ifndef PORTICO_CONTROLLER_CONFIG_CONFIG_FLAGS_H_
#define PORTICO_CONTROLLER_CONFIG_CONFIG_FLAGS_H_

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "controller/config/controller_config.h"
#include "portico/sdk/status.h"

namespace portico::controller {

// ConfigFlags holds what the flags parsed into. Register with AddConfigFlags; read after parse.
struct ConfigFlags {
  ControllerConfig values;  // the flags' values (defaults where not given)
  std::string config_file;  // --config
  bool check = false;       // --check: validate and exit
  std::string sync_ca_file, sync_cert_file, sync_key_file;  // --sync-*-file

  // Each setting's option and how to copy it from `values` into a config.
  std::vector<
      std::pair<CLI::Option*, std::function<void(const ControllerConfig&, ControllerConfig*)>>>
      settings;
};

// AddConfigFlags registers the flags on `app`; `flags` must outlive app.parse().
void AddConfigFlags(CLI::App& app, ConfigFlags* flags);

// ResolveConfig: see the file comment. Errors name the file and line, or the flag.
StatusOr<ControllerConfig> ResolveConfig(const ConfigFlags& flags);

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_CONFIG_CONFIG_FLAGS_H_
