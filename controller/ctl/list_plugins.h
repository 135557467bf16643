// list_plugins.h: `portico-ctl list-plugins`: what plugins a directory holds, from their
// embedded manifests only (pre-flight: nothing is dlopen'ed, no plugin code runs).
//
//   portico-ctl list-plugins --dir DIR [-o table|json|wide]
//   portico-ctl list-plugins --target controller|gateway   (needs the admin API; exit 2 for now)
//
// Exit status: 0 when every plugin passes the pre-flight, 1 when one is rejected or DIR cannot
// be read, 2 for --target.
// Thread-safety: runs on the main thread.
#ifndef PORTICO_CONTROLLER_CTL_LIST_PLUGINS_H_
#define PORTICO_CONTROLLER_CTL_LIST_PLUGINS_H_

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "core/plugin/preflight.h"

namespace portico::ctl {

// ListPluginsOptions are the flags of list-plugins.
struct ListPluginsOptions {
  std::string dir;
  std::string target;
  std::string output = "table";
};

// AddListPluginsCommand registers the subcommand on `app`; when it runs, its exit status is
// stored in `*exit_code` (which must outlive app.parse()).
void AddListPluginsCommand(CLI::App& app, int* exit_code);

// RunListPlugins executes list-plugins with `options`, printing to `out` and `err`.
int RunListPlugins(const ListPluginsOptions& options, std::ostream& out, std::ostream& err);

// PrintPlugins renders pre-flight records as "table", "wide" or "json".
void PrintPlugins(const std::vector<core::PluginRecord>& records, const std::string& format,
                  std::ostream& out);

}  // namespace portico::ctl

#endif  // PORTICO_CONTROLLER_CTL_LIST_PLUGINS_H_
