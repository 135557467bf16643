// default_plugin_dir.h: DefaultPluginDir, where a host binary looks for plugins when no
// --plugin-dir is given: <prefix>/lib/portico/plugins beside an installed binary, otherwise the
// build tree's plugins-out/ (so binaries run from a build directory find the in-tree plugins).
//
// Thread-safety: reads /proc/self/exe; safe anywhere.
#ifndef PORTICO_CORE_PLUGIN_DEFAULT_PLUGIN_DIR_H_
#define PORTICO_CORE_PLUGIN_DEFAULT_PLUGIN_DIR_H_

#include <string>

namespace portico::core {

std::string DefaultPluginDir();

}  // namespace portico::core

#endif  // PORTICO_CORE_PLUGIN_DEFAULT_PLUGIN_DIR_H_
