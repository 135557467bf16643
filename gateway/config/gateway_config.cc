#include "gateway/config/gateway_config.h"

#include <toml++/toml.h>
#include <unistd.h>

#include <array>
#include <charconv>
#include <climits>
#include <fstream>
#include <set>
#include <sstream>

namespace portico::gateway {
namespace {

namespace fs = std::filesystem;

std::string Where(const fs::path& file, const toml::node& node) {
  return file.string() + ":" + std::to_string(node.source().begin.line);
}

bool IsLogLevel(std::string_view level) {
  static constexpr std::array<std::string_view, 7> kLevels = {"trace", "debug",    "info", "warn",
                                                              "error", "critical", "off"};
  for (std::string_view l : kLevels) {
    if (l == level) return true;
  }
  return false;
}

// Reader applies one table's keys, refusing unknown ones (like controller/config's).
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

  Status StringList(std::string_view key, std::vector<std::string>* out) {
    const toml::node* node = Take(key);
    if (node == nullptr) return OkStatus();
    if (!node->is_array()) return TypeError(key, *node, "an array of strings");
    std::vector<std::string> values;
    for (const toml::node& item : *node->as_array()) {
      if (!item.is_string()) return TypeError(key, item, "an array of strings");
      values.push_back(item.as_string()->get());
    }
    *out = std::move(values);
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

  Status ErrorAt(std::string_view key, const std::string& message) const {
    const toml::node* node = table_.get(key);
    std::string where = node != nullptr ? Where(file_, *node) : file_.string();
    return InvalidArgumentError(where + ": " + prefix_ + std::string(key) + ": " + message);
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

// CheckHostPort accepts "host:port" and "[v6]:port" with a port in [1, 65535].
Status CheckHostPort(std::string_view text) {
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) {
    return InvalidArgumentError("controller: \"" + std::string(text) +
                                "\" is not host:port (e.g. 127.0.0.1:5810)");
  }
  std::string_view port = text.substr(colon + 1);
  int value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || end != port.data() + port.size() || value < 1 || value > 65535) {
    return InvalidArgumentError("controller: \"" + std::string(text) + "\": bad port \"" +
                                std::string(port) + "\"");
  }
  return OkStatus();
}

}  // namespace

StatusOr<GatewayRef> ParseGatewayRef(std::string_view text) {
  size_t slash = text.find('/');
  GatewayRef ref;
  if (slash == std::string_view::npos) {
    ref.ns = "default";
    ref.name = std::string(text);
  } else {
    ref.ns = std::string(text.substr(0, slash));
    ref.name = std::string(text.substr(slash + 1));
  }
  if (ref.ns.empty() || ref.name.empty() || ref.name.find('/') != std::string::npos) {
    return InvalidArgumentError("gateway \"" + std::string(text) +
                                "\": expected \"namespace/name\" or \"name\"");
  }
  return ref;
}

std::string DefaultGatewayName() {
  char host[HOST_NAME_MAX + 1] = {};
  if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') return "portico-gateway";
  return host;
}

Status GatewayConfig::Validate() const {
  PORTICO_RETURN_IF_ERROR(CheckHostPort(controller));
  for (const std::string& g : gateways) {
    auto ref = ParseGatewayRef(g);
    if (!ref.ok()) return InvalidArgumentError("serve." + std::string(ref.status().message()));
  }
  for (const std::string& a : addresses) {
    if (a.empty()) return InvalidArgumentError("addresses: empty address");
  }
  if (workers < 0 || workers > 256) {
    return InvalidArgumentError("workers: " + std::to_string(workers) +
                                " is out of range [0, 256]");
  }
  if (!IsLogLevel(log_level)) {
    return InvalidArgumentError("log_level: \"" + log_level +
                                "\" is not one of trace, debug, info, warn, error, critical, off");
  }
  if (admin_address.empty()) return InvalidArgumentError("admin.address: empty");
  return OkStatus();
}

std::vector<GatewayRef> GatewayConfig::ServedGateways() const {
  std::vector<GatewayRef> refs;
  for (const std::string& g : gateways) {
    auto ref = ParseGatewayRef(g);
    if (ref.ok()) refs.push_back(*ref);
  }
  return refs;
}

Status ParseConfigToml(std::string_view text, const fs::path& file, GatewayConfig* config) {
  toml::table root;
  try {
    root = toml::parse(text, file.string());
  } catch (const toml::parse_error& e) {
    return InvalidArgumentError(file.string() + ":" + std::to_string(e.source().begin.line) + ":" +
                                std::to_string(e.source().begin.column) + ": " +
                                std::string(e.description()));
  }
  Reader top(file, root, "");
  PORTICO_RETURN_IF_ERROR(top.String("controller", &config->controller));
  if (Status s = CheckHostPort(config->controller); !s.ok()) {
    return top.ErrorAt("controller", "\"" + config->controller + "\" is not host:port");
  }
  PORTICO_RETURN_IF_ERROR(top.String("name", &config->name));
  PORTICO_RETURN_IF_ERROR(top.StringList("addresses", &config->addresses));
  PORTICO_RETURN_IF_ERROR(top.Path("plugin_dir", &config->plugin_dir));
  PORTICO_RETURN_IF_ERROR(top.Path("snapshot_path", &config->snapshot_path));
  int64_t workers = config->workers;
  PORTICO_RETURN_IF_ERROR(top.Int("workers", 0, 256, &workers));
  config->workers = static_cast<int>(workers);
  PORTICO_RETURN_IF_ERROR(top.String("log_level", &config->log_level));
  if (!IsLogLevel(config->log_level)) {
    return top.ErrorAt("log_level", "\"" + config->log_level +
                                        "\" is not one of trace, debug, info, warn, error, "
                                        "critical, off");
  }

  Status status;
  if (const toml::table* serve = top.Table("serve", &status)) {
    Reader reader(file, *serve, "serve.");
    PORTICO_RETURN_IF_ERROR(reader.StringList("gateways", &config->gateways));
    for (const std::string& g : config->gateways) {
      auto ref = ParseGatewayRef(g);
      if (!ref.ok()) return reader.ErrorAt("gateways", std::string(ref.status().message()));
    }
    PORTICO_RETURN_IF_ERROR(reader.String("gateway_class", &config->gateway_class));
    PORTICO_RETURN_IF_ERROR(reader.Finish());
  }
  PORTICO_RETURN_IF_ERROR(status);
  if (const toml::table* admin = top.Table("admin", &status)) {
    Reader reader(file, *admin, "admin.");
    PORTICO_RETURN_IF_ERROR(reader.String("address", &config->admin_address));
    int64_t port = config->admin_port;
    PORTICO_RETURN_IF_ERROR(reader.Int("port", 0, 65535, &port));
    config->admin_port = static_cast<uint16_t>(port);
    PORTICO_RETURN_IF_ERROR(reader.Path("port_file", &config->admin_port_file));
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

Status LoadConfigFile(const fs::path& file, GatewayConfig* config) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return NotFoundError("cannot read config file " + file.string());
  std::ostringstream text;
  text << in.rdbuf();
  return ParseConfigToml(text.str(), fs::absolute(file), config);
}

}  // namespace portico::gateway
