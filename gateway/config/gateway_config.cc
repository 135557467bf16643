#include "gateway/config/gateway_config.h"

#include "core/admin/admin_auth.h"
#include "core/common/toml_reader.h"
#include "gateway/http/path_normalize.h"

#include <sys/resource.h>
#include <toml++/toml.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <climits>
#include <fstream>
#include <set>
#include <sstream>

namespace portico::gateway {
namespace {

namespace fs = std::filesystem;

using Reader = core::TomlReader;
using core::IsLogLevel;

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

// Range is one numeric data-plane setting with its bounds (TOML key as in the file).
struct Range {
  const char* name;
  int64_t value;
  int64_t min;
  int64_t max;
};

constexpr int64_t kDay = 24 * 3600 * 1000;
// The controller answers pings more frequent than one a second on a stream without data with
// GOAWAY (controller/sync/sync_server.cc: GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS).
constexpr int64_t kMinSyncKeepaliveMs = 1'000;

std::string EscapedSlashesError(const std::string& value) {
  return "\"" + value +
         "\" is not one of KeepUnchanged, RejectRequest, UnescapeAndForward, UnescapeAndRedirect";
}

std::vector<Range> RangedSettings(const GatewayConfig& c) {
  return {
      {"busy_poll_us", c.busy_poll_us, 0, 10'000},
      {"timeouts.header_read_ms", c.header_read_timeout_ms, 1, kDay},
      {"timeouts.idle_ms", c.idle_timeout_ms, 1, kDay},
      {"timeouts.body_read_ms", c.body_read_timeout_ms, 1, kDay},
      {"timeouts.connect_ms", c.connect_timeout_ms, 1, kDay},
      {"timeouts.upstream_ms", c.upstream_timeout_ms, 1, kDay},
      {"timeouts.upstream_idle_ms", c.upstream_idle_timeout_ms, 1, kDay},
      {"timeouts.tunnel_idle_ms", c.tunnel_idle_timeout_ms, 1, kDay},
      {"timeouts.drain_ms", c.drain_timeout_ms, 0, kDay},
      {"timeouts.drain_idle_ms", c.drain_idle_timeout_ms, 0, kDay},
      {"limits.max_request_line", c.max_request_line, 64, 1 << 20},
      {"limits.max_header_line", c.max_header_line, 64, 16 << 20},
      {"limits.max_header_bytes", c.max_header_bytes, 256, 16 << 20},
      {"limits.max_headers", c.max_headers, 1, 10'000},
      {"limits.max_body_bytes", c.max_body_bytes, 0, INT64_MAX},
      {"limits.upstream_keepalive", c.upstream_keepalive, 0, 100'000},
      {"limits.max_connections", c.max_connections, 0, 10'000'000},
      {"limits.max_requests_per_connection", c.max_requests_per_connection, 0, INT64_MAX},
      {"sync.keepalive_ms", c.sync_keepalive_ms, kMinSyncKeepaliveMs, kDay},
      {"sync.keepalive_timeout_ms", c.sync_keepalive_timeout_ms, 100, kDay},
  };
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

int64_t DefaultMaxConnections() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 1 << 20;
  const int64_t files = static_cast<int64_t>(std::min<rlim_t>(limit.rlim_cur, 1 << 22));
  return std::max<int64_t>(16, (files - 64) / 2);
}

std::string DefaultGatewayName() {
  char host[HOST_NAME_MAX + 1] = {};
  if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') return "portico-gateway";
  return host;
}

Status GatewayConfig::Validate() const {
  std::vector<std::string> controllers = Controllers();
  if (controllers.empty()) return InvalidArgumentError("controller: no address given");
  for (const std::string& c : controllers) PORTICO_RETURN_IF_ERROR(CheckHostPort(c));
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
  PORTICO_RETURN_IF_ERROR(core::admin::CheckAdminExposure(admin_address, !admin_token_file.empty(),
                                                          "admin.address", "admin.token_file"));
  if (!http::ParseEscapedSlashes(escaped_slashes).has_value()) {
    return InvalidArgumentError("escaped_slashes: " + EscapedSlashesError(escaped_slashes));
  }
  if (access_log.empty()) {
    return InvalidArgumentError(
        "access_log: empty (use \"off\", \"stderr\", \"stdout\" or a path)");
  }
  for (const auto& [name, value, min, max] : RangedSettings(*this)) {
    if (value < min || value > max) {
      return InvalidArgumentError(std::string(name) + ": " + std::to_string(value) +
                                  " is out of range [" + std::to_string(min) + ", " +
                                  std::to_string(max) + "]");
    }
  }
  return OkStatus();
}

std::vector<std::string> GatewayConfig::Controllers() const {
  std::vector<std::string> out;
  std::string_view rest = controller;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view part = rest.substr(0, comma);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    if (!part.empty()) out.emplace_back(part);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return out;
}

std::string GatewayConfig::ListenAddress() const {
  if (!listen_address.empty()) return listen_address;
  return addresses.empty() ? "0.0.0.0" : addresses.front();
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
  if (const toml::node* c = root.get("controller"); c != nullptr && c->is_array()) {
    std::vector<std::string> list;  // the TOML list form of several controllers
    PORTICO_RETURN_IF_ERROR(top.StringList("controller", &list));
    if (list.empty()) return top.ErrorAt("controller", "the list of controllers is empty");
    config->controller.clear();
    for (const std::string& c : list)
      config->controller += (config->controller.empty() ? "" : ",") + c;
  } else {
    PORTICO_RETURN_IF_ERROR(top.String("controller", &config->controller));
  }
  for (const std::string& c : config->Controllers()) {
    if (Status s = CheckHostPort(c); !s.ok()) {
      return top.ErrorAt("controller", "\"" + c + "\" is not host:port");
    }
  }
  PORTICO_RETURN_IF_ERROR(top.String("name", &config->name));
  PORTICO_RETURN_IF_ERROR(top.StringList("addresses", &config->addresses));
  PORTICO_RETURN_IF_ERROR(top.Path("plugin_dir", &config->plugin_dir));
  PORTICO_RETURN_IF_ERROR(top.Path("snapshot_path", &config->snapshot_path));
  PORTICO_RETURN_IF_ERROR(top.Path("spool_dir", &config->spool_dir));
  int64_t workers = config->workers;
  PORTICO_RETURN_IF_ERROR(top.Int("workers", 0, 256, &workers));
  config->workers = static_cast<int>(workers);
  PORTICO_RETURN_IF_ERROR(top.String("log_level", &config->log_level));
  if (!IsLogLevel(config->log_level)) {
    return top.ErrorAt("log_level", "\"" + config->log_level +
                                        "\" is not one of trace, debug, info, warn, error, "
                                        "critical, off");
  }
  {
    const toml::node* node = root.get("access_log");
    PORTICO_RETURN_IF_ERROR(top.String("access_log", &config->access_log));
    if (node != nullptr && config->access_log.empty()) {
      return top.ErrorAt("access_log", "empty (use \"off\", \"stderr\", \"stdout\" or a path)");
    }
    if (node != nullptr && config->access_log != "off" && config->access_log != "stderr" &&
        config->access_log != "stdout") {
      PORTICO_RETURN_IF_ERROR(top.Path("access_log", &config->access_log));
    }
  }
  PORTICO_RETURN_IF_ERROR(top.String("listen_address", &config->listen_address));
  PORTICO_RETURN_IF_ERROR(top.Int("busy_poll_us", 0, 10'000, &config->busy_poll_us));
  PORTICO_RETURN_IF_ERROR(top.String("escaped_slashes", &config->escaped_slashes));
  if (!http::ParseEscapedSlashes(config->escaped_slashes).has_value()) {
    return top.ErrorAt("escaped_slashes", EscapedSlashesError(config->escaped_slashes));
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
    PORTICO_RETURN_IF_ERROR(reader.Path("token_file", &config->admin_token_file));
    PORTICO_RETURN_IF_ERROR(reader.Finish());
  }
  PORTICO_RETURN_IF_ERROR(status);
  if (const toml::table* timeouts = top.Table("timeouts", &status)) {
    Reader reader(file, *timeouts, "timeouts.");
    PORTICO_RETURN_IF_ERROR(reader.Int("header_read_ms", 1, kDay, &config->header_read_timeout_ms));
    PORTICO_RETURN_IF_ERROR(reader.Int("idle_ms", 1, kDay, &config->idle_timeout_ms));
    PORTICO_RETURN_IF_ERROR(reader.Int("body_read_ms", 1, kDay, &config->body_read_timeout_ms));
    PORTICO_RETURN_IF_ERROR(reader.Int("connect_ms", 1, kDay, &config->connect_timeout_ms));
    PORTICO_RETURN_IF_ERROR(reader.Int("upstream_ms", 1, kDay, &config->upstream_timeout_ms));
    PORTICO_RETURN_IF_ERROR(
        reader.Int("upstream_idle_ms", 1, kDay, &config->upstream_idle_timeout_ms));
    PORTICO_RETURN_IF_ERROR(reader.Int("tunnel_idle_ms", 1, kDay, &config->tunnel_idle_timeout_ms));
    PORTICO_RETURN_IF_ERROR(reader.Int("drain_ms", 0, kDay, &config->drain_timeout_ms));
    PORTICO_RETURN_IF_ERROR(reader.Int("drain_idle_ms", 0, kDay, &config->drain_idle_timeout_ms));
    PORTICO_RETURN_IF_ERROR(reader.Finish());
  }
  PORTICO_RETURN_IF_ERROR(status);
  if (const toml::table* limits = top.Table("limits", &status)) {
    Reader reader(file, *limits, "limits.");
    PORTICO_RETURN_IF_ERROR(reader.Int("max_request_line", 64, 1 << 20, &config->max_request_line));
    PORTICO_RETURN_IF_ERROR(reader.Int("max_header_line", 64, 16 << 20, &config->max_header_line));
    PORTICO_RETURN_IF_ERROR(
        reader.Int("max_header_bytes", 256, 16 << 20, &config->max_header_bytes));
    PORTICO_RETURN_IF_ERROR(reader.Int("max_headers", 1, 10'000, &config->max_headers));
    PORTICO_RETURN_IF_ERROR(reader.Int("max_body_bytes", 0, INT64_MAX, &config->max_body_bytes));
    PORTICO_RETURN_IF_ERROR(
        reader.Int("upstream_keepalive", 0, 100'000, &config->upstream_keepalive));
    PORTICO_RETURN_IF_ERROR(reader.Int("max_connections", 0, 10'000'000, &config->max_connections));
    PORTICO_RETURN_IF_ERROR(reader.Int("max_requests_per_connection", 0, INT64_MAX,
                                       &config->max_requests_per_connection));
    PORTICO_RETURN_IF_ERROR(reader.Finish());
  }
  PORTICO_RETURN_IF_ERROR(status);
  if (const toml::table* sync = top.Table("sync", &status)) {
    Reader reader(file, *sync, "sync.");
    PORTICO_RETURN_IF_ERROR(
        reader.Int("keepalive_ms", kMinSyncKeepaliveMs, kDay, &config->sync_keepalive_ms));
    PORTICO_RETURN_IF_ERROR(
        reader.Int("keepalive_timeout_ms", 100, kDay, &config->sync_keepalive_timeout_ms));
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
