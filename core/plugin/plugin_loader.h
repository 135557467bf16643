// plugin_loader.h: loads a directory of plugins into a KindRegistry (DESIGN.md §3).
//
// For each *.so (sorted by path): pre-flight (manifest + ABI, no plugin code runs), dlopen with
// Boost.DLL (rtld_now | rtld_local), resolve `portico_plugin_v1`, check the descriptor, run
// register_plugin() against a staging registrar, cross-check the registered kinds with the
// manifest and commit. Once every file is done, `reads` are resolved: plugins reading a kind no
// accepted plugin provides, or sitting on a reads cycle, are refused too (to a fixpoint), and
// the start-up order is computed. Every refusal is one line (PluginRecord::RefusalLine) naming
// the file, what was found and the fix; it is logged with spdlog and loading goes on.
//
// Thread-safety and ownership: loads are serialized process-wide (plugin registration is not
// reentrant). Libraries are never unloaded, even refused ones once dlopen'ed, so every hook in
// the returned registry stays valid for the life of the process. The returned PluginSet is a
// value owned by the caller; after loading it is read-only.
#ifndef PORTICO_CORE_PLUGIN_PLUGIN_LOADER_H_
#define PORTICO_CORE_PLUGIN_PLUGIN_LOADER_H_

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/plugin/kind_registry.h"
#include "core/plugin/preflight.h"
#include "portico/sdk/status.h"

namespace portico::core {

// PluginSet is the outcome of loading plugins.
struct PluginSet {
  std::vector<PluginRecord> plugins;  // one per file, sorted by path; ok() == accepted
  KindRegistry registry;              // what the accepted plugins registered; Order() is set

  // RefusalLines lists RefusalLine() of every refused plugin, in file order.
  std::vector<std::string> RefusalLines() const;
  // FindPlugin returns the record of the file at `path`, or nullptr.
  const PluginRecord* FindPlugin(std::string_view path) const;
};

// LoadOptions tune LoadPluginFiles.
struct LoadOptions {
  // resolve_reads refuses plugins whose `reads` no loaded plugin provides (the hosts' rule).
  // Off, such kinds stay registered and Order() stays empty: `portico-ctl plugin verify` loads
  // one plugin alone, whose providers are other plugins.
  bool resolve_reads = true;
  // trial_load_in_child rehearses each dlopen in a forked child first (plugin_image.h), so a
  // plugin whose static constructors crash is refused instead of killing the host. The binaries
  // set it; in-process tests that load many plugins leave it off.
  bool trial_load_in_child = false;
};

// LoadPluginDir loads every *.so in `dir`. Errors only when `dir` cannot be listed; a bad plugin
// is a refusal inside the result, never an error.
StatusOr<PluginSet> LoadPluginDir(const std::filesystem::path& dir,
                                  const LoadOptions& options = {});

// LoadPluginFiles loads the given files in the given order (LoadPluginDir sorts them).
PluginSet LoadPluginFiles(const std::vector<std::filesystem::path>& files,
                          const LoadOptions& options = {});

}  // namespace portico::core

#endif  // PORTICO_CORE_PLUGIN_PLUGIN_LOADER_H_
