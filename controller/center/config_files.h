// config_files.h: which files of a config directory hold resources, and reading them into
// documents. The inotify-watching ConfigCenter (Controller issue) builds on these.
//
// Thread-safety: pure functions over the file system.
#ifndef PORTICO_CONTROLLER_CENTER_CONFIG_FILES_H_
#define PORTICO_CONTROLLER_CENTER_CONFIG_FILES_H_

#include <filesystem>
#include <string>
#include <vector>

#include "controller/center/yaml_to_json.h"
#include "portico/sdk/status.h"

namespace portico::controller {

// IsConfigFile: .yaml, .yml or .json, and not an editor's temporary or hidden file.
bool IsConfigFile(const std::filesystem::path& path);

// ListConfigFiles returns the config files under `dir` (recursively), sorted by path.
StatusOr<std::vector<std::filesystem::path>> ListConfigFiles(const std::filesystem::path& dir);

// ReadConfigFile reads and parses every document of one file; errors carry "file:line:col".
StatusOr<std::vector<YamlDocument>> ReadConfigFile(const std::filesystem::path& path,
                                                   const YamlLimits& limits = {});

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_CENTER_CONFIG_FILES_H_
