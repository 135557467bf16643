// preflight.h: PluginRecord and the pre-flight of plugin files: read the embedded manifest and
// judge its ABI without loading the shared object, so no plugin code runs. Used by the loader
// before dlopen and by `portico-ctl list-plugins --dir`.
//
// Thread-safety: pure functions over the file system; PluginRecord is a value type.
#ifndef PORTICO_CORE_PLUGIN_PREFLIGHT_H_
#define PORTICO_CORE_PLUGIN_PREFLIGHT_H_

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/plugin/manifest.h"
#include "portico/sdk/status.h"

namespace portico::core {

// PluginVerdict is the outcome for one plugin file.
enum class PluginVerdict { kOk, kRejected };

// PluginRecord describes one plugin file: what the pre-flight found and, after loading, whether
// the host accepted it. `reason` is set when rejected: "what was found; the fix", one line.
struct PluginRecord {
  std::string path;    // as found in the directory (absolute when the directory was)
  std::string sha256;  // hex SHA-256 of the file ("" when unreadable)
  std::optional<PluginManifest> manifest;  // when the manifest was readable and valid
  PluginVerdict verdict = PluginVerdict::kOk;
  std::string reason;
  bool loaded = false;  // dlopen'ed and registered by the loader (never set by the pre-flight)
  // load_path is where the loader dlopen'ed the plugin's private image from
  // ("/proc/self/fd/N", plugin_image.h); "" until it did.
  std::string load_path;

  bool ok() const { return verdict == PluginVerdict::kOk; }
  // Reject marks the record rejected with `reason` (keeps the first reason).
  void Reject(std::string why);
  // RefusalLine is the one line a host logs: "<path>: plugin refused: <reason>".
  std::string RefusalLine() const;
  // DisplayName is the manifest's name, or the file name when there is no manifest.
  std::string DisplayName() const;
  // AbiVerdict renders "1.0 ok", "2.0 incompatible", or "<none>" without a manifest.
  std::string AbiVerdict() const;
};

// CheckAbi judges a plugin's ABI against this host (portico/sdk/manifest.h).
using sdk::CheckAbi;

// PreflightPlugin hashes the file, extracts and validates its manifest and checks the ABI.
PluginRecord PreflightPlugin(const std::filesystem::path& path);

// ListPluginFiles returns the regular files (or links to them) named *.so in `dir`, sorted by
// path. NOT_FOUND / FAILED_PRECONDITION when `dir` is missing or not a directory.
StatusOr<std::vector<std::filesystem::path>> ListPluginFiles(const std::filesystem::path& dir);

// ScanPluginDir pre-flights every *.so in `dir` (sorted), loading none of them.
StatusOr<std::vector<PluginRecord>> ScanPluginDir(const std::filesystem::path& dir);

}  // namespace portico::core

#endif  // PORTICO_CORE_PLUGIN_PREFLIGHT_H_
