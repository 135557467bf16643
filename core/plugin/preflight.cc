#include "core/plugin/preflight.h"

#include <algorithm>
#include <system_error>
#include <utility>

#include "core/common/sha256.h"
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
  if (!abi.ok()) record.Reject(abi.message());
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
