#include "core/plugin/preflight.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <system_error>
#include <utility>

#include "core/common/sha256.h"
#include "core/plugin/elf_dynamic.h"
#include "core/plugin/elf_manifest.h"
#include "portico/sdk/abi.h"

namespace portico::core {
using sdk::ManifestRefusal;
using sdk::manifest_detail::AbiString;

void PluginRecord::Reject(std::string why) {
  if (verdict == PluginVerdict::kRejected) return;
  verdict = PluginVerdict::kRejected;
  reason = std::move(why);
}

std::string PluginRecord::RefusalLine() const { return path + ": plugin refused: " + reason; }

std::string PluginRecord::DisplayName() const {
  if (manifest) return manifest->name;
  return std::filesystem::path(path).filename().string();
}

std::string PluginRecord::AbiVerdict() const {
  if (!manifest) return "<none>";
  return AbiString(manifest->abi_major, manifest->abi_minor) +
         (CheckAbi(manifest->abi_major, manifest->abi_minor).ok() ? " ok" : " incompatible");
}

namespace {

// HostExports are the symbols the running binary exports (its .dynsym), read once from
// /proc/self/exe, mapped rather than copied (a debug build is tens of MB).
const std::set<std::string>& HostExports() {
  static const std::set<std::string>* exports = [] {
    auto* out = new std::set<std::string>();
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0) {
      if (fd >= 0) close(fd);
      return out;
    }
    void* map = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return out;
    auto dynamic = ReadElfDynamic(
        std::string_view(static_cast<const char*>(map), static_cast<size_t>(st.st_size)));
    if (dynamic.ok()) {
      for (std::string& name : dynamic->Exported()) out->insert(std::move(name));
    }
    munmap(map, static_cast<size_t>(st.st_size));
    return out;
  }();
  return *exports;
}

// CollidingExports lists the plugin's strong (non-weak) definitions, besides its entry, of
// names the host exports too. The plugin is loaded RTLD_LOCAL, so the host and the other plugins
// keep binding to their own copies; but the plugin's own calls to such a symbol go through the
// global scope, where the host comes first: the plugin would silently run the host's code. Weak
// definitions are left alone: they are C++ vague linkage (inline functions, template
// instantiations such as std::operator+), which the language requires to be the same code
// everywhere, and which a plugin built without a version script exports by the hundred
// (`portico-ctl plugin verify` still flags every extra export).
std::vector<std::string> CollidingExports(std::string_view image) {
  std::vector<std::string> out;
  auto dynamic = ReadElfDynamic(image);
  if (!dynamic.ok()) return out;  // the loader reports an unreadable image itself
  const std::set<std::string>& host = HostExports();
  for (const DynamicSymbol& symbol : dynamic->symbols) {
    if (!symbol.defined || symbol.weak || symbol.name == PORTICO_ENTRY_V1) continue;
    if (host.count(symbol.name) > 0) out.push_back(symbol.name);
  }
  return out;
}

}  // namespace

PluginRecord PreflightPlugin(const std::filesystem::path& path) {
  PluginRecord record;
  record.path = path.string();
  auto bytes = ReadFileBytes(path);
  if (!bytes.ok()) {
    record.Reject(ManifestRefusal(bytes.status()));
    return record;
  }
  record.sha256 = Sha256Hex(*bytes);
  // Whoever may write the file or its directory may run code in the host: refuse that.
  std::error_code ec;
  for (const std::filesystem::path& p :
       {path, path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path()}) {
    auto perms = std::filesystem::status(p, ec).permissions();
    if (!ec && (perms & std::filesystem::perms::others_write) != std::filesystem::perms::none) {
      record.Reject((p == path ? "the file" : "its directory " + p.string()) +
                    std::string(" is world-writable: anyone could replace the code the host "
                                "runs; chmod o-w it"));
      return record;
    }
  }
  auto text = ExtractElfManifest(*bytes);
  if (!text.ok()) {
    record.Reject(ManifestRefusal(text.status()));
    return record;
  }
  auto manifest = ParseManifest(*text);
  if (!manifest.ok()) {
    record.Reject(ManifestRefusal(manifest.status()));
    return record;
  }
  record.manifest = std::move(manifest).value();
  Status abi = CheckAbi(record.manifest->abi_major, record.manifest->abi_minor);
  if (!abi.ok()) {
    record.Reject(abi.message());
    return record;
  }
  std::vector<std::string> colliding = CollidingExports(*bytes);
  if (!colliding.empty()) {
    std::string names;
    for (size_t i = 0; i < colliding.size() && i < 3; ++i) {
      names += (i == 0 ? "" : ", ") + colliding[i];
    }
    if (colliding.size() > 3) names += ", ... (" + std::to_string(colliding.size()) + " in all)";
    record.Reject("exports " + names +
                  ", which the host binary exports too: the plugin's own calls would run the "
                  "host's copy; build it with -fvisibility=hidden (portico_add_plugin() does) "
                  "and export only " PORTICO_ENTRY_V1);
  }
  return record;
}

StatusOr<std::vector<std::filesystem::path>> ListPluginFiles(const std::filesystem::path& dir) {
  std::error_code ec;
  auto status = std::filesystem::status(dir, ec);
  if (ec || !std::filesystem::exists(status)) {
    return NotFoundError("plugin directory " + dir.string() + " does not exist");
  }
  if (!std::filesystem::is_directory(status)) {
    return FailedPreconditionError("plugin directory " + dir.string() + " is not a directory");
  }
  std::vector<std::filesystem::path> files;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) {
    return UnavailableError("cannot list plugin directory " + dir.string() + ": " + ec.message());
  }
  for (const auto& entry : it) {
    if (entry.path().extension() != ".so") continue;
    std::error_code file_ec;
    if (!entry.is_regular_file(file_ec)) continue;  // follows symlinks
    files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

StatusOr<std::vector<PluginRecord>> ScanPluginDir(const std::filesystem::path& dir) {
  PORTICO_ASSIGN_OR_RETURN(std::vector<std::filesystem::path> files, ListPluginFiles(dir));
  std::vector<PluginRecord> records;
  records.reserve(files.size());
  for (const auto& file : files) records.push_back(PreflightPlugin(file));
  return records;
}

}  // namespace portico::core
