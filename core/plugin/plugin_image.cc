#include "core/plugin/plugin_image.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/common/child_run.h"
#include "core/common/sha256.h"
#include "core/plugin/elf_manifest.h"

namespace portico::core {

StatusOr<PluginImage> CopyPluginImage(const std::filesystem::path& path,
                                      std::string_view expected_sha256) {
  StatusOr<std::string> read = ReadFileBytes(path);
  if (!read.ok()) return UnavailableError("cannot read " + path.string() + " to load it");
  const std::string& bytes = *read;
  if (Sha256Hex(bytes) != expected_sha256) {
    return FailedPreconditionError(
        "the file changed on disk while it was being loaded; load it again once it is complete");
  }
  std::string name = "portico-plugin:" + path.filename().string();
  int fd = ::memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0) return UnavailableError(std::string("memfd_create: ") + std::strerror(errno));
  size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int saved = errno;
      ::close(fd);
      return UnavailableError(std::string("writing the plugin's memory copy: ") +
                              std::strerror(saved));
    }
    written += static_cast<size_t>(n);
  }
  return PluginImage{fd, "/proc/self/fd/" + std::to_string(fd)};
}

Status TrialLoadInChild(const std::string& load_path, const char* entry_symbol) {
  ChildLimits limits;
  limits.deadline = std::chrono::seconds(10);
  limits.cpu_seconds = 10;
  ChildOutcome outcome = RunInChild(
      [&](int fd, std::span<char>) {
        void* handle = ::dlopen(load_path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle == nullptr) {
          const char* why = ::dlerror();
          WriteAll(fd, why ? why : "dlopen failed");
          return 2;
        }
        void* entry = ::dlsym(handle, entry_symbol);
        if (entry != nullptr) {
          using Entry = const void* (*)();
          (void)reinterpret_cast<Entry>(entry)();
        }
        return 0;
      },
      limits);
  if (outcome.ok()) return OkStatus();
  if (outcome.exited && outcome.exit_code == 2) {
    return InternalError("dlopen failed in the trial load: " + outcome.output);
  }
  return InternalError("loading it in a child process first: the child " + outcome.Describe() +
                       " (a static constructor or the entry point crashed, aborted or hung); "
                       "fix the plugin");
}

}  // namespace portico::core
