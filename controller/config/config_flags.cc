#include "controller/config/config_flags.h"

#include <filesystem>

namespace portico::controller {
namespace {

// Setting registers one option bound to `field` of flags->values.
template <typename T>
void Setting(CLI::App& app, ConfigFlags* flags, const std::string& name, T ControllerConfig::*field,
             const std::string& help) {
  CLI::Option* option = app.add_option(name, flags->values.*field, help)->capture_default_str();
  flags->settings.emplace_back(option, [field](const ControllerConfig& from, ControllerConfig* to) {
    to->*field = from.*field;
  });
}

}  // namespace

void AddConfigFlags(CLI::App& app, ConfigFlags* flags) {
  app.add_option("-c,--config", flags->config_file, "portico-controller.toml to read settings from")
      ->check(CLI::ExistingFile);
  Setting(app, flags, "--config-dir", &ControllerConfig::config_dir,
          "Directory of YAML/JSON resources (watched)");
  Setting(app, flags, "--plugin-dir", &ControllerConfig::plugin_dir,
          "Directory of plugin .so files (default: the installed plugins)");
  Setting(app, flags, "--isolate-plugin", &ControllerConfig::isolate_plugins,
          "Run this plugin's processors in a forked child (repeatable; [plugins] isolate)");
  Setting(app, flags, "--isolate-all-plugins", &ControllerConfig::isolate_all,
          "Run every plugin's processors in a forked child ([plugins] isolate_all)");
  Setting(app, flags, "--process-timeout-ms", &ControllerConfig::process_timeout_ms,
          "Deadline of an isolated processor call; the child is killed past it");
  Setting(app, flags, "--admin-address", &ControllerConfig::admin_address,
          "Address of the admin API");
  Setting(app, flags, "--admin-port", &ControllerConfig::admin_port,
          "Port of the admin API (0: any free port)");
  Setting(app, flags, "--admin-port-file", &ControllerConfig::admin_port_file,
          "Write the admin API's bound port to this file once it listens");
  Setting(app, flags, "--admin-token-file", &ControllerConfig::admin_token_file,
          "File holding the admin API's bearer token (mode 0600; required off loopback)");
  Setting(app, flags, "--sync-address", &ControllerConfig::sync_address,
          "Address of ConfigSync (gRPC) for gateways");
  Setting(app, flags, "--sync-port", &ControllerConfig::sync_port,
          "Port of ConfigSync (0: any free port)");
  Setting(app, flags, "--sync-port-file", &ControllerConfig::sync_port_file,
          "Write ConfigSync's bound port to this file once it listens");
  Setting(app, flags, "--sync-log-max-bytes", &ControllerConfig::sync_log_max_bytes,
          "Budget of the change log in bytes; a gateway further behind resyncs from a snapshot");
  Setting(app, flags, "--sync-log-max-age-ms", &ControllerConfig::sync_log_max_age_ms,
          "Retention of the change log in ms (DESIGN.md wants >= 120000)");
  app.add_option("--sync-ca-file", flags->sync_ca_file,
                 "ConfigSync mutual TLS: CA that signs gateway certificates");
  app.add_option("--sync-cert-file", flags->sync_cert_file,
                 "ConfigSync mutual TLS: the controller's certificate");
  app.add_option("--sync-key-file", flags->sync_key_file,
                 "ConfigSync mutual TLS: the controller's private key");
  // [etcd]: nested fields, bound one by one.
  auto etcd = [&](const std::string& name, auto field, const std::string& help) {
    CLI::Option* option = app.add_option(name, flags->values.etcd.*field, help);
    flags->settings.emplace_back(option,
                                 [field](const ControllerConfig& from, ControllerConfig* to) {
                                   to->etcd.*field = from.etcd.*field;
                                 });
    return option;
  };
  etcd("--etcd-endpoints", &ControllerEtcdConfig::endpoints,
       "Keep the resources in etcd: endpoints host:port (http:// or https://), comma-separated")
      ->delimiter(',');
  etcd("--etcd-prefix", &ControllerEtcdConfig::prefix, "etcd key prefix (default /portico)");
  etcd("--etcd-ca-file", &ControllerEtcdConfig::ca_file, "etcd TLS: CA of the etcd servers");
  etcd("--etcd-cert-file", &ControllerEtcdConfig::cert_file, "etcd TLS: client certificate");
  etcd("--etcd-key-file", &ControllerEtcdConfig::key_file, "etcd TLS: client private key");
  etcd("--etcd-user", &ControllerEtcdConfig::user, "etcd authentication: user name");
  etcd("--etcd-password-file", &ControllerEtcdConfig::password_file,
       "etcd authentication: file holding the password");
  etcd("--controller-id", &ControllerEtcdConfig::controller_id,
       "This controller's id in the leader election (default: host name and random digits)");
  etcd("--leader-ttl-s", &ControllerEtcdConfig::leader_ttl_s,
       "Leader election: the leader's etcd lease TTL in seconds (default 5)");
  etcd("--leader-renew-ms", &ControllerEtcdConfig::leader_renew_ms,
       "Leader election: lease renewal interval in ms (default: TTL / 3)");
  Setting(app, flags, "--debounce-ms", &ControllerConfig::debounce_ms,
          "Quiet time in ms before a burst of file edits is read");
  Setting(app, flags, "--max-object-bytes", &ControllerConfig::max_object_bytes,
          "Largest object accepted, in bytes of JSON (limits.max_object_bytes)");
  Setting(app, flags, "--max-annotation-bytes", &ControllerConfig::max_annotation_bytes,
          "Largest metadata.annotations accepted, keys and values (limits.max_annotation_bytes)");
  Setting(app, flags, "--max-file-bytes", &ControllerConfig::max_file_bytes,
          "Largest config file read (limits.max_file_bytes)");
  Setting(app, flags, "--max-objects-per-file", &ControllerConfig::max_objects_per_file,
          "Most documents accepted in one config file (limits.max_objects_per_file)");
  Setting(app, flags, "--large-file-bytes", &ControllerConfig::large_file_bytes,
          "Files this large are parsed apart from other edits (limits.large_file_bytes)");
  Setting(app, flags, "--workers", &ControllerConfig::workers, "Reconcile worker threads");
  Setting(app, flags, "--log-level", &ControllerConfig::log_level,
          "trace, debug, info, warn, error, critical or off");
  CLI::Option* testing = app.add_flag("--testing", flags->values.testing,
                                      "Testing mode: serve POST /api/v1/admin/wipe-all");
  flags->settings.emplace_back(testing, [](const ControllerConfig& from, ControllerConfig* to) {
    to->testing = from.testing;
  });
  app.add_flag("--check", flags->check,
               "Load plugins, validate --config-dir, print the result and exit");
}

StatusOr<ControllerConfig> ResolveConfig(const ConfigFlags& flags) {
  ControllerConfig config;
  if (!flags.config_file.empty()) {
    PORTICO_RETURN_IF_ERROR(LoadConfigFile(flags.config_file, &config));
  }
  for (const auto& [option, copy] : flags.settings) {
    if (option->count() > 0) copy(flags.values, &config);
  }
  bool any_file =
      !flags.sync_ca_file.empty() || !flags.sync_cert_file.empty() || !flags.sync_key_file.empty();
  if (any_file) {
    if (flags.sync_ca_file.empty() || flags.sync_cert_file.empty() || flags.sync_key_file.empty()) {
      return InvalidArgumentError(
          "--sync-ca-file, --sync-cert-file and --sync-key-file go together");
    }
    core::SyncSecurity security;
    security.enabled = true;
    security.active.name = "command line";
    security.active.ca_file = std::filesystem::absolute(flags.sync_ca_file);
    security.active.cert_file = std::filesystem::absolute(flags.sync_cert_file);
    security.active.key_file = std::filesystem::absolute(flags.sync_key_file);
    for (const auto& file :
         {security.active.ca_file, security.active.cert_file, security.active.key_file}) {
      std::error_code ec;
      if (!std::filesystem::is_regular_file(file, ec)) {
        return InvalidArgumentError("ConfigSync TLS file " + file.string() + " does not exist");
      }
    }
    config.sync_security = std::move(security);
  }
  PORTICO_RETURN_IF_ERROR(config.Validate());
  return config;
}

}  // namespace portico::controller
