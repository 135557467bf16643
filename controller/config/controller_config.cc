#include "controller/config/controller_config.h"

#include "core/admin/admin_auth.h"
#include "core/common/toml_reader.h"

#include <toml++/toml.h>
#include <array>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <utility>

namespace portico::controller {
namespace {

namespace fs = std::filesystem;

using Reader = core::TomlReader;

Status ReadPort(Reader& reader, std::string_view key, uint16_t* port) {
  return reader.Port(key, port);
}

}  // namespace

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
  PORTICO_RETURN_IF_ERROR(core::admin::CheckAdminExposure(admin_address, !admin_token_file.empty(),
                                                          "admin.address", "admin.token_file"));
  if (etcd.enabled()) {
    if (!config_dir.empty()) {
      return InvalidArgumentError(
          "config_dir and etcd.endpoints are both set: the resources come from one source, "
          "choose the directory or etcd");
    }
    if (etcd.prefix.empty() || etcd.prefix.front() != '/') {
      return InvalidArgumentError("etcd.prefix: \"" + etcd.prefix + "\" must start with '/'");
    }
    if (etcd.cert_file.empty() != etcd.key_file.empty()) {
      return InvalidArgumentError("etcd.cert_file and etcd.key_file go together");
    }
    if (!etcd.password.empty() && !etcd.password_file.empty()) {
      return InvalidArgumentError("etcd.password and etcd.password_file: give one");
    }
    if (etcd.leader_ttl_s < 1) {
      return InvalidArgumentError("etcd.leader_ttl_s: " + std::to_string(etcd.leader_ttl_s) +
                                  " must be at least 1 (etcd counts lease TTLs in seconds)");
    }
    if (etcd.leader_renew_ms < 0 || etcd.leader_renew_ms >= etcd.leader_ttl_s * 1000) {
      return InvalidArgumentError("etcd.leader_renew_ms: " + std::to_string(etcd.leader_renew_ms) +
                                  " must be 0 (TTL / 3) or shorter than the lease TTL of " +
                                  std::to_string(etcd.leader_ttl_s) + " s");
    }
    if (etcd.user.empty() && (!etcd.password.empty() || !etcd.password_file.empty())) {
      return InvalidArgumentError("etcd: a password without etcd.user");
    }
  }
  if (sync_log_max_bytes == 0) {
    return InvalidArgumentError("sync.log_max_bytes: must be positive");
  }
  for (const auto& [name, value] :
       {std::pair<const char*, uint64_t>{"limits.max_object_bytes", max_object_bytes},
        {"limits.max_annotation_bytes", max_annotation_bytes},
        {"limits.max_file_bytes", max_file_bytes},
        {"limits.max_objects_per_file", max_objects_per_file}}) {
    if (value == 0) return InvalidArgumentError(std::string(name) + ": must be positive");
  }
  if (process_timeout_ms <= 0) {
    return InvalidArgumentError(
        "plugins.process_timeout_ms: " + std::to_string(process_timeout_ms) + " must be positive");
  }
  if (sync_log_max_age_ms <= 0) {
    return InvalidArgumentError("sync.log_max_age_ms: " + std::to_string(sync_log_max_age_ms) +
                                " must be positive");
  }
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
    PORTICO_RETURN_IF_ERROR(reader.Path("token_file", &config->admin_token_file));
    PORTICO_RETURN_IF_ERROR(reader.Finish());
  }
  PORTICO_RETURN_IF_ERROR(status);
  if (const toml::table* sync = top.Table("sync", &status)) {
    Reader reader(file, *sync, "sync.");
    PORTICO_RETURN_IF_ERROR(reader.String("address", &config->sync_address));
    PORTICO_RETURN_IF_ERROR(ReadPort(reader, "port", &config->sync_port));
    PORTICO_RETURN_IF_ERROR(reader.Path("port_file", &config->sync_port_file));
    int64_t log_bytes = static_cast<int64_t>(config->sync_log_max_bytes);
    PORTICO_RETURN_IF_ERROR(
        reader.Int("log_max_bytes", 1, std::numeric_limits<int64_t>::max(), &log_bytes));
    config->sync_log_max_bytes = static_cast<uint64_t>(log_bytes);
    PORTICO_RETURN_IF_ERROR(reader.Int("log_max_age_ms", 1, std::numeric_limits<int64_t>::max(),
                                       &config->sync_log_max_age_ms));
    PORTICO_RETURN_IF_ERROR(reader.Finish());
  }
  PORTICO_RETURN_IF_ERROR(status);
  if (const toml::table* limits = top.Table("limits", &status)) {
    Reader reader(file, *limits, "limits.");
    for (const auto& [key, field] :
         {std::pair<const char*, uint64_t*>{"max_object_bytes", &config->max_object_bytes},
          {"max_annotation_bytes", &config->max_annotation_bytes},
          {"max_file_bytes", &config->max_file_bytes},
          {"max_objects_per_file", &config->max_objects_per_file},
          {"large_file_bytes", &config->large_file_bytes}}) {
      int64_t value = static_cast<int64_t>(*field);
      PORTICO_RETURN_IF_ERROR(reader.Int(key, key == std::string_view("large_file_bytes") ? 0 : 1,
                                         std::numeric_limits<int64_t>::max(), &value));
      *field = static_cast<uint64_t>(value);
    }
    PORTICO_RETURN_IF_ERROR(reader.Finish());
  }
  PORTICO_RETURN_IF_ERROR(status);
  if (const toml::table* plugins = top.Table("plugins", &status)) {
    Reader reader(file, *plugins, "plugins.");
    PORTICO_RETURN_IF_ERROR(reader.StringList("isolate", &config->isolate_plugins));
    PORTICO_RETURN_IF_ERROR(reader.Bool("isolate_all", &config->isolate_all));
    PORTICO_RETURN_IF_ERROR(
        reader.Int("process_timeout_ms", 1, 3'600'000, &config->process_timeout_ms));
    PORTICO_RETURN_IF_ERROR(reader.Finish());
  }
  PORTICO_RETURN_IF_ERROR(status);
  if (const toml::table* etcd = top.Table("etcd", &status)) {
    Reader reader(file, *etcd, "etcd.");
    PORTICO_RETURN_IF_ERROR(reader.StringList("endpoints", &config->etcd.endpoints));
    PORTICO_RETURN_IF_ERROR(reader.String("prefix", &config->etcd.prefix));
    PORTICO_RETURN_IF_ERROR(reader.Path("ca_file", &config->etcd.ca_file));
    PORTICO_RETURN_IF_ERROR(reader.Path("cert_file", &config->etcd.cert_file));
    PORTICO_RETURN_IF_ERROR(reader.Path("key_file", &config->etcd.key_file));
    PORTICO_RETURN_IF_ERROR(reader.String("user", &config->etcd.user));
    PORTICO_RETURN_IF_ERROR(reader.String("password", &config->etcd.password));
    PORTICO_RETURN_IF_ERROR(reader.Path("password_file", &config->etcd.password_file));
    PORTICO_RETURN_IF_ERROR(
        reader.Int("start_timeout_ms", 0, 3'600'000, &config->etcd.start_timeout_ms));
    PORTICO_RETURN_IF_ERROR(reader.String("controller_id", &config->etcd.controller_id));
    PORTICO_RETURN_IF_ERROR(reader.Int("leader_ttl_s", 1, 3600, &config->etcd.leader_ttl_s));
    PORTICO_RETURN_IF_ERROR(
        reader.Int("leader_renew_ms", 0, 3'600'000, &config->etcd.leader_renew_ms));
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
