#include "controller/config/controller_config.h"

#include <toml++/toml.h>
#include <array>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

namespace portico::controller {
namespace {

namespace fs = std::filesystem;

std::string Where(const fs::path& file, const toml::node& node) {
  return file.string() + ":" + std::to_string(node.source().begin.line);
}

// Reader applies one table's keys, refusing unknown ones.
class Reader {
 public:
  Reader(const fs::path& file, const toml::table& table, std::string prefix)
      : file_(file), table_(table), prefix_(std::move(prefix)) {}

  Status String(std::string_view key, std::string* out) {
    const toml::node* node = Take(key);
    if (node == nullptr) return OkStatus();
    if (!node->is_string()) return TypeError(key, *node, "a string");
    *out = node->as_string()->get();
    return OkStatus();
  }

  // Path reads a string and resolves it against the file's directory when relative.
  Status Path(std::string_view key, std::string* out) {
    std::string value;
    const toml::node* node = table_.get(key);
    PORTICO_RETURN_IF_ERROR(String(key, &value));
    if (node == nullptr) return OkStatus();
    fs::path path(value);
    if (!value.empty() && path.is_relative()) path = file_.parent_path() / path;
    *out = value.empty() ? value : path.lexically_normal().string();
    return OkStatus();
  }

  Status Int(std::string_view key, int64_t min, int64_t max, int64_t* out) {
    const toml::node* node = Take(key);
    if (node == nullptr) return OkStatus();
    if (!node->is_integer()) return TypeError(key, *node, "an integer");
    int64_t value = node->as_integer()->get();
    if (value < min || value > max) {
      return InvalidArgumentError(Where(file_, *node) + ": " + prefix_ + std::string(key) + ": " +
                                  std::to_string(value) + " is out of range [" +
                                  std::to_string(min) + ", " + std::to_string(max) + "]");
    }
    *out = value;
    return OkStatus();
  }

  Status Bool(std::string_view key, bool* out) {
    const toml::node* node = Take(key);
    if (node == nullptr) return OkStatus();
    if (!node->is_boolean()) return TypeError(key, *node, "true or false");
    *out = node->as_boolean()->get();
    return OkStatus();
  }

  const toml::table* Table(std::string_view key, Status* status) {
    const toml::node* node = Take(key);
    if (node == nullptr) return nullptr;
    if (!node->is_table()) {
      *status = TypeError(key, *node, "a table");
      return nullptr;
    }
    return node->as_table();
  }

  // Finish reports the first key nobody asked for.
  Status Finish() const {
    for (const auto& [key, node] : table_) {
      if (taken_.count(std::string(key.str())) == 0) {
        return InvalidArgumentError(Where(file_, node) + ": unknown setting \"" + prefix_ +
                                    std::string(key.str()) + "\"");
      }
    }
    return OkStatus();
  }

 private:
  const toml::node* Take(std::string_view key) {
    taken_.insert(std::string(key));
    return table_.get(key);
  }

  Status TypeError(std::string_view key, const toml::node& node, std::string_view want) const {
    return InvalidArgumentError(Where(file_, node) + ": " + prefix_ + std::string(key) +
                                ": expected " + std::string(want));
  }

  const fs::path& file_;
  const toml::table& table_;
  std::string prefix_;
  std::set<std::string> taken_;
};

Status ReadPort(Reader& reader, std::string_view key, uint16_t* port) {
  int64_t value = *port;
  PORTICO_RETURN_IF_ERROR(reader.Int(key, 0, 65535, &value));
  *port = static_cast<uint16_t>(value);
  return OkStatus();
}

}  // namespace

bool IsLogLevel(std::string_view level) {
  static constexpr std::array<std::string_view, 7> kLevels = {"trace", "debug",    "info", "warn",
                                                              "error", "critical", "off"};
  for (std::string_view l : kLevels) {
    if (l == level) return true;
  }
  return false;
}

Status ControllerConfig::Validate() const {
  if (workers < 1 || workers > 256) {
    return InvalidArgumentError("workers: " + std::to_string(workers) +
                                " is out of range [1, 256]");
  }
  if (debounce_ms < 0) {
    return InvalidArgumentError("debounce_ms: " + std::to_string(debounce_ms) +
                                " must not be negative");
  }
  if (!IsLogLevel(log_level)) {
    return InvalidArgumentError("log_level: \"" + log_level +
                                "\" is not one of trace, debug, info, warn, error, critical, off");
  }
  if (admin_address.empty()) return InvalidArgumentError("admin.address: empty");
  return OkStatus();
}

Status ParseConfigToml(std::string_view text, const fs::path& file, ControllerConfig* config) {
  toml::table root;
  try {
    root = toml::parse(text, file.string());
  } catch (const toml::parse_error& e) {
    return InvalidArgumentError(file.string() + ":" + std::to_string(e.source().begin.line) + ":" +
                                std::to_string(e.source().begin.column) + ": " +
                                std::string(e.description()));
  }
  Reader top(file, root, "");
  PORTICO_RETURN_IF_ERROR(top.Path("config_dir", &config->config_dir));
  PORTICO_RETURN_IF_ERROR(top.Path("plugin_dir", &config->plugin_dir));
  int64_t debounce = config->debounce_ms;
  PORTICO_RETURN_IF_ERROR(top.Int("debounce_ms", 0, 3'600'000, &debounce));
  config->debounce_ms = static_cast<int>(debounce);
  int64_t workers = config->workers;
  PORTICO_RETURN_IF_ERROR(top.Int("workers", 1, 256, &workers));
  config->workers = static_cast<int>(workers);
  PORTICO_RETURN_IF_ERROR(top.String("log_level", &config->log_level));
  if (!IsLogLevel(config->log_level)) {
    return InvalidArgumentError(file.string() + ": log_level: \"" + config->log_level +
                                "\" is not one of trace, debug, info, warn, error, critical, off");
  }
  PORTICO_RETURN_IF_ERROR(top.Bool("testing", &config->testing));

  Status status;
  if (const toml::table* admin = top.Table("admin", &status)) {
    Reader reader(file, *admin, "admin.");
    PORTICO_RETURN_IF_ERROR(reader.String("address", &config->admin_address));
    PORTICO_RETURN_IF_ERROR(ReadPort(reader, "port", &config->admin_port));
    PORTICO_RETURN_IF_ERROR(reader.Path("port_file", &config->admin_port_file));
    PORTICO_RETURN_IF_ERROR(reader.Finish());
  }
  PORTICO_RETURN_IF_ERROR(status);
  if (const toml::table* sync = top.Table("sync", &status)) {
    Reader reader(file, *sync, "sync.");
    PORTICO_RETURN_IF_ERROR(reader.String("address", &config->sync_address));
    PORTICO_RETURN_IF_ERROR(ReadPort(reader, "port", &config->sync_port));
    PORTICO_RETURN_IF_ERROR(reader.Path("port_file", &config->sync_port_file));
    PORTICO_RETURN_IF_ERROR(reader.Finish());
  }
  PORTICO_RETURN_IF_ERROR(status);
  const toml::table* security = top.Table("conf_sync_security", &status);
  PORTICO_RETURN_IF_ERROR(status);
  if (security != nullptr) {
    PORTICO_ASSIGN_OR_RETURN(config->sync_security,
                             core::ParseSyncSecurity(security, file.parent_path(), file.string()));
  }
  PORTICO_RETURN_IF_ERROR(top.Finish());
  config->config_file = file.string();
  return OkStatus();
}

Status LoadConfigFile(const fs::path& file, ControllerConfig* config) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return NotFoundError("cannot read config file " + file.string());
  std::ostringstream text;
  text << in.rdbuf();
  return ParseConfigToml(text.str(), fs::absolute(file), config);
}

}  // namespace portico::controller
