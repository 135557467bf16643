#include "core/plugin/default_plugin_dir.h"

#include <filesystem>
#include <system_error>

namespace portico::core {

std::string DefaultPluginDir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "lib/portico/plugins";
  // bin/portico-x -> lib/portico/plugins; <build>/controller/portico-x -> <build>/plugins-out
  fs::path prefix = exe.parent_path().parent_path();
  fs::path installed = prefix / "lib/portico/plugins";
  if (fs::is_directory(installed, ec)) return installed.string();
  return (prefix / "plugins-out").string();
}

}  // namespace portico::core
