#include "gateway/config/config_flags.h"

namespace portico::gateway {
namespace {

// Setting registers one option bound to `field` of flags->values.
template <typename T>
CLI::Option* Setting(CLI::App& app, ConfigFlags* flags, const std::string& name,
                     T GatewayConfig::*field, const std::string& help) {
  CLI::Option* option = app.add_option(name, flags->values.*field, help)->capture_default_str();
  flags->settings.emplace_back(
      option, [field](const GatewayConfig& from, GatewayConfig* to) { to->*field = from.*field; });
  return option;
}

}  // namespace

void AddConfigFlags(CLI::App& app, ConfigFlags* flags) {
  app.add_option("-c,--config", flags->config_file, "portico-gateway.toml to read settings from")
      ->check(CLI::ExistingFile);
  Setting(app, flags, "--controller", &GatewayConfig::controller,
          "ConfigSync address of portico-controller (host:port); several, comma-separated, "
          "fail over");
  Setting(app, flags, "--name", &GatewayConfig::name, "Name of this gateway (default: host name)");
  Setting(app, flags, "--gateway", &GatewayConfig::gateways,
          "A Gateway to serve, namespace/name (repeatable)")
      ->take_all();
  Setting(app, flags, "--gateway-class", &GatewayConfig::gateway_class,
          "Serve every Gateway of this GatewayClass");
  Setting(app, flags, "--advertise-address", &GatewayConfig::addresses,
          "An address this gateway serves traffic on, reported to the controller (repeatable)")
      ->take_all();
  Setting(app, flags, "--plugin-dir", &GatewayConfig::plugin_dir,
          "Directory of plugin .so files (default: the installed plugins)");
  Setting(app, flags, "--snapshot-path", &GatewayConfig::snapshot_path,
          "File holding the last synced configuration (written behind; read at start-up)");
  Setting(app, flags, "--spool-dir", &GatewayConfig::spool_dir,
          "Directory of the (unlinked) scratch file holding synced object bodies off the heap "
          "(default: $TMPDIR, else /tmp)");
  Setting(app, flags, "--admin-address", &GatewayConfig::admin_address, "Address of the admin API");
  Setting(app, flags, "--admin-port", &GatewayConfig::admin_port,
          "Port of the admin API (0: any free port)");
  Setting(app, flags, "--admin-port-file", &GatewayConfig::admin_port_file,
          "Write the admin API's bound port to this file once it listens");
  Setting(app, flags, "--admin-token-file", &GatewayConfig::admin_token_file,
          "File holding the admin API's bearer token (mode 0600; required off loopback)");
  Setting(app, flags, "--workers", &GatewayConfig::workers,
          "Data-plane worker threads (0: one per CPU core)");
  Setting(app, flags, "--log-level", &GatewayConfig::log_level,
          "trace, debug, info, warn, error, critical or off");
  Setting(app, flags, "--access-log", &GatewayConfig::access_log,
          "Access log: stderr, stdout, a file path (appended) or off");
  Setting(app, flags, "--listen-address", &GatewayConfig::listen_address,
          "Address bound for Gateways without spec.addresses (default: the first advertised)");
  Setting(app, flags, "--busy-poll-us", &GatewayConfig::busy_poll_us,
          "After traffic, a worker polls this long (microseconds) before it sleeps (0: never)");
  Setting(app, flags, "--escaped-slashes", &GatewayConfig::escaped_slashes,
          "A path holding %2F or %5C: KeepUnchanged, RejectRequest (400), UnescapeAndForward or "
          "UnescapeAndRedirect (307 to the decoded path; the default)");
  Setting(app, flags, "--header-read-timeout-ms", &GatewayConfig::header_read_timeout_ms,
          "A request head must arrive within this (then 408)");
  Setting(app, flags, "--idle-timeout-ms", &GatewayConfig::idle_timeout_ms,
          "Close client connections idle between requests for this long");
  Setting(app, flags, "--body-read-timeout-ms", &GatewayConfig::body_read_timeout_ms,
          "No byte of a request body the gateway waits for, this long: 408");
  Setting(app, flags, "--connect-timeout-ms", &GatewayConfig::connect_timeout_ms,
          "Upstream connect timeout (then 503)");
  Setting(app, flags, "--upstream-timeout-ms", &GatewayConfig::upstream_timeout_ms,
          "No byte moved on a proxied exchange for this long: 504");
  Setting(app, flags, "--upstream-idle-timeout-ms", &GatewayConfig::upstream_idle_timeout_ms,
          "Close pooled idle upstream connections after this long");
  Setting(app, flags, "--tunnel-idle-timeout-ms", &GatewayConfig::tunnel_idle_timeout_ms,
          "Close an upgraded (WebSocket) connection after this long without traffic");
  Setting(app, flags, "--drain-timeout-ms", &GatewayConfig::drain_timeout_ms,
          "On SIGINT/SIGTERM: stop listening and let requests in flight finish this long "
          "(0: close at once)");
  Setting(app, flags, "--drain-idle-timeout-ms", &GatewayConfig::drain_idle_timeout_ms,
          "While draining, close a client connection idle this long (a request arriving "
          "before that is answered with Connection: close)");
  Setting(app, flags, "--max-request-line", &GatewayConfig::max_request_line,
          "Longest request line (then 414)");
  Setting(app, flags, "--max-header-line", &GatewayConfig::max_header_line,
          "Longest request header field line (then 431)");
  Setting(app, flags, "--max-header-bytes", &GatewayConfig::max_header_bytes,
          "Largest request head (then 431)");
  Setting(app, flags, "--max-headers", &GatewayConfig::max_headers,
          "Most header fields in a request (then 431)");
  Setting(app, flags, "--max-body-bytes", &GatewayConfig::max_body_bytes,
          "Largest request body (then 413; 0: unlimited)");
  Setting(app, flags, "--upstream-keepalive", &GatewayConfig::upstream_keepalive,
          "Idle upstream connections kept per endpoint and worker");
  Setting(app, flags, "--max-connections", &GatewayConfig::max_connections,
          "Client connections (shared out over the workers; at the cap the longest-idle one is "
          "closed for a new one, else the new one is refused); 0: half the open-file limit "
          "less 64");
  Setting(app, flags, "--max-requests-per-connection", &GatewayConfig::max_requests_per_connection,
          "Requests served on one client connection, the last with Connection: close "
          "(0: unlimited)");
  Setting(app, flags, "--sync-keepalive-ms", &GatewayConfig::sync_keepalive_ms,
          "ConfigSync: gRPC keepalive ping after this long without a frame (>= 1000)");
  Setting(app, flags, "--sync-keepalive-timeout-ms", &GatewayConfig::sync_keepalive_timeout_ms,
          "ConfigSync: no ping ack within this and the link is taken for dead (reconnect)");
  app.add_option("--sync-ca-file", flags->sync_ca_file,
                 "ConfigSync mutual TLS: CA certificate (PEM) the controller's certificate "
                 "chains to (with --sync-cert-file and --sync-key-file)");
  app.add_option("--sync-cert-file", flags->sync_cert_file,
                 "ConfigSync mutual TLS: this gateway's client certificate (PEM)");
  app.add_option("--sync-key-file", flags->sync_key_file,
                 "ConfigSync mutual TLS: the client certificate's private key (PEM)");
  app.add_option("--sync-server-name", flags->sync_server_name,
                 "ConfigSync mutual TLS: the name expected in the controller's certificate");
  app.add_flag("--check", flags->check, "Load plugins, print the inventory and exit");
}

StatusOr<GatewayConfig> ResolveConfig(const ConfigFlags& flags) {
  GatewayConfig config;
  if (!flags.config_file.empty()) {
    PORTICO_RETURN_IF_ERROR(LoadConfigFile(flags.config_file, &config));
  }
  for (const auto& [option, copy] : flags.settings) {
    if (option->count() > 0) copy(flags.values, &config);
  }
  if (config.name.empty()) config.name = DefaultGatewayName();
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
  if (!flags.sync_server_name.empty()) {
    if (!config.sync_security.enabled) {
      return InvalidArgumentError(
          "--sync-server-name needs mutual TLS (--sync-*-file or [conf_sync_security])");
    }
    config.sync_security.active.server_name = flags.sync_server_name;
  }
  PORTICO_RETURN_IF_ERROR(config.Validate());
  return config;
}

}  // namespace portico::gateway
