// portico-gateway: receives processed configuration from portico-controller over ConfigSync and
// serves HTTP(S) (ConfigSync and data-plane issues).
//
// Today: loads the plugin directory through the C ABI and prints the inventory it will announce
// to the controller (kinds with a gateway handler); --check exits after that.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "core/plugin/default_plugin_dir.h"
#include "core/plugin/plugin_loader.h"
#include "core/sync/inventory.h"

int main(int argc, char** argv) {
  CLI::App app{"portico-gateway: serves HTTP(S) from the controller's configuration"};
  std::string plugin_dir = portico::core::DefaultPluginDir();
  bool check = false;
  app.add_option("--plugin-dir", plugin_dir, "Directory of plugin .so files")
      ->capture_default_str();
  app.add_flag("--check", check, "Load plugins, print the inventory and exit");
  CLI11_PARSE(app, argc, argv);

  auto loaded = portico::core::LoadPluginDir(plugin_dir);
  if (!loaded.ok()) {
    std::fprintf(stderr, "error: %s\n", loaded.status().message().c_str());
    return 1;
  }
  std::printf("inventory:\n");
  for (const auto& plugin : portico::core::BuildInventory(*loaded)) {
    for (const auto& kind : plugin.kinds()) {
      bool handler = (kind.capabilities() & PORTICO_CAP_HANDLER) != 0;
      std::string id = kind.kind() + (kind.group().empty() ? "" : "." + kind.group());
      std::printf("  %s %s\n", id.c_str(), handler ? "handler" : "(no handler: not synced here)");
    }
  }
  if (!check) {
    std::fprintf(stderr,
                 "portico-gateway: serving arrives with the ConfigSync and data-plane "
                 "issues; use --check\n");
    return 2;
  }
  return loaded->RefusalLines().empty() ? 0 : 1;
}
