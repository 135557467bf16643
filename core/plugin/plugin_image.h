// plugin_image.h: PluginImage, the private copy of a plugin file the hosts dlopen instead of the
// file itself (issue 15, item 7), and TrialLoadInChild, the load rehearsed in a child process.
//
// A shared object is mapped from its file: overwriting a loaded plugin in place (cp onto it,
// an unpacked package) changes the code under the running host, which then crashes (SIGBUS,
// SIGSEGV). The loader therefore copies the bytes the pre-flight hashed into an anonymous
// memory file (memfd) and loads "/proc/self/fd/N": what runs is exactly what was checked, and
// whatever happens to the file on disk afterwards touches only the next start. Static
// constructors run inside dlopen, before any entry point the host could guard: the trial load
// runs dlopen and the entry point in a forked child first, so a plugin that aborts or crashes
// there is refused with the signal named instead of taking the host down.
//
// Thread-safety: CopyPluginImage is reentrant. TrialLoadInChild forks (core/common/child_run.h):
// call it while the process has no other thread holding the loader or allocator locks (the
// hosts load plugins at start-up). Ownership: an image's descriptor stays open for the life of
// the process, like the library mapped from it (plugins are never unloaded).
#ifndef PORTICO_CORE_PLUGIN_PLUGIN_IMAGE_H_
#define PORTICO_CORE_PLUGIN_PLUGIN_IMAGE_H_

#include <filesystem>
#include <string>
#include <string_view>

#include "portico/sdk/status.h"

namespace portico::core {

// PluginImage is where a plugin's checked bytes can be dlopen'ed from.
struct PluginImage {
  int fd = -1;            // the memory file (kept open)
  std::string load_path;  // "/proc/self/fd/<fd>"
};

// CopyPluginImage copies `path` into a memory file. FAILED_PRECONDITION when its SHA-256 is no
// longer `expected_sha256` (the file changed since the pre-flight read it), UNAVAILABLE when it
// cannot be read or the memory file cannot be made.
StatusOr<PluginImage> CopyPluginImage(const std::filesystem::path& path,
                                      std::string_view expected_sha256);

// TrialLoadInChild dlopens `load_path` and calls `entry_symbol` in a child process, within
// 10 s. OK when the child exits cleanly; INTERNAL naming how it ended otherwise.
Status TrialLoadInChild(const std::string& load_path, const char* entry_symbol);

}  // namespace portico::core

#endif  // PORTICO_CORE_PLUGIN_PLUGIN_IMAGE_H_
