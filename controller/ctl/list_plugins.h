// list_plugins.h: `portico-ctl list-plugins`: what plugins a directory holds, from their
// embedded manifests only (pre-flight: nothing is dlopen'ed, no plugin code runs).
//
//   portico-ctl list-plugins --dir DIR [-o table|json|wide]
//   portico-ctl list-plugins --target controller [--server URL] [-o table|json|wide]
//       what a running controller loaded (GET /api/v1/plugins), printed the same way
//   portico-ctl list-plugins --target gateway [--address HOST:PORT] [-o table|json|wide]
//       what the connected gateways run (list_gateway_plugins.h)
//
// Exit status: 0 when every plugin passes the pre-flight (or was accepted by the controller),
// 1 when one is rejected, DIR cannot be read or the controller cannot be asked.
// Thread-safety: runs on the main thread.
#ifndef PORTICO_CONTROLLER_CTL_LIST_PLUGINS_H_
#define PORTICO_CONTROLLER_CTL_LIST_PLUGINS_H_

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "controller/ctl/server_call.h"
#include "core/plugin/preflight.h"

namespace portico::ctl {

// ListPluginsOptions are the flags of list-plugins.
struct ListPluginsOptions {
  std::string dir;
  std::string target;
  std::string output = "table";
  ServerOptions server;                          // for --target controller|gateway
  std::string address;                           // --target gateway: its admin HOST:PORT
};

// AddListPluginsCommand registers the subcommand on `app`; when it runs, its exit status is
// stored in `*exit_code`. `server` holds the global --server flag. Both must outlive
// app.parse().
void AddListPluginsCommand(CLI::App& app, int* exit_code, const ServerOptions* server);

// RunListPlugins executes list-plugins with `options`, printing to `out` and `err`.
int RunListPlugins(const ListPluginsOptions& options, std::ostream& out, std::ostream& err);

// PrintPlugins renders pre-flight records as "table", "wide" or "json".
void PrintPlugins(const std::vector<core::PluginRecord>& records, const std::string& format,
                  std::ostream& out);

}  // namespace portico::ctl

#endif  // PORTICO_CONTROLLER_CTL_LIST_PLUGINS_H_
