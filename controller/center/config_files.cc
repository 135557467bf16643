#include "controller/center/config_files.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <system_error>

namespace portico::controller {

bool IsConfigFile(const std::filesystem::path& path) {
  std::string name = path.filename().string();
  if (name.empty() || name[0] == '.' || name[0] == '#' || name.back() == '~') return false;
  std::string ext = path.extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

StatusOr<std::vector<std::filesystem::path>> ListConfigFiles(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return NotFoundError("config directory " + dir.string() +
                         " does not exist or is not a directory");
  }
  std::vector<std::filesystem::path> files;
  auto it = std::filesystem::recursive_directory_iterator(
      dir, std::filesystem::directory_options::skip_permission_denied, ec);
  if (ec) return UnavailableError("cannot list " + dir.string() + ": " + ec.message());
  for (const auto& entry : it) {
    // Hidden directories (.git, editors' state) are not configuration.
    if (entry.is_directory() && entry.path().filename().string().starts_with(".")) {
      it.disable_recursion_pending();
      continue;
    }
    if (entry.is_regular_file() && IsConfigFile(entry.path())) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

StatusOr<std::vector<YamlDocument>> ReadConfigFile(const std::filesystem::path& path,
                                                   const YamlLimits& limits) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return UnavailableError(path.string() + ": cannot open file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseYamlDocuments(buffer.str(), path.string(), limits);
}

}  // namespace portico::controller
