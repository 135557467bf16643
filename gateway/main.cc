// portico-gateway: serves HTTP for the Gateways it is given, from the controller's processed
// configuration received over ConfigSync (DESIGN.md §5, §7): the data plane (gateway/server) is
// the runtime's consumer, so every committed snapshot reaches the workers.
//
//   portico-gateway [--config portico-gateway.toml] [flags]   sync and serve the admin API
//   portico-gateway --check                                   print the inventory and exit
//
// Start-up: settings (gateway/config/) -> plugins -> data plane workers -> GatewayRuntime -> the
// snapshot file, if any, applied before connecting (ready "from snapshot" when no controller is
// reachable) -> admin API (127.0.0.1:5900) -> the ConfigSync client. SIGINT/SIGTERM: begin the
// data plane's drain at once (stop taking connections without dropping those queued, answer
// what was received, every response "Connection: close"; gateway/net/listener_socket.h has
// the hand-over), stop the client, wait until no connection is left (at most
// --drain-timeout-ms), stop the data plane, write the snapshot file, exit 0. The hot-restart
// path built on it: docs/operations.md.
#include <signal.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "core/admin/admin_server.h"
#include "core/plugin/default_plugin_dir.h"
#include "core/plugin/plugin_loader.h"
#include "core/runtime/gateway_runtime.h"
#include "core/sync/inventory.h"
#include "gateway/admin/gateway_admin.h"
#include "gateway/config/config_flags.h"
#include "gateway/server/access_log.h"
#include "gateway/server/data_plane.h"
#include "gateway/sync/snapshot_file.h"
#include "gateway/sync/sync_client.h"

namespace {

namespace fs = std::filesystem;
using portico::Status;

// PrintInventory is --check: the kinds this gateway announces, and which it cannot stage.
int PrintInventory(const portico::core::PluginSet& plugins) {
  std::printf("inventory:\n");
  for (const auto& plugin : portico::core::BuildInventory(plugins)) {
    for (const auto& kind : plugin.kinds()) {
      bool handler = (kind.capabilities() & PORTICO_CAP_HANDLER) != 0;
      std::string id = kind.kind() + (kind.group().empty() ? "" : "." + kind.group());
      std::printf("  %s %s\n", id.c_str(), handler ? "handler" : "(no handler: not synced here)");
    }
  }
  return plugins.RefusalLines().empty() ? 0 : 1;
}

// WritePortFile writes `port` to `path` atomically (temp file + rename).
Status WritePortFile(const std::string& path, uint16_t port) {
  std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::trunc);
    out << port << '\n';
    if (!out) return portico::UnavailableError("cannot write " + temp);
  }
  std::error_code ec;
  fs::rename(temp, path, ec);
  if (ec) return portico::UnavailableError("cannot rename " + temp + ": " + ec.message());
  return portico::OkStatus();
}

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"portico-gateway: serves HTTP(S) from the controller's configuration"};
  app.set_version_flag("--version", PORTICO_VERSION);
  portico::gateway::ConfigFlags flags;
  portico::gateway::AddConfigFlags(app, &flags);
  CLI11_PARSE(app, argc, argv);

  auto config = portico::gateway::ResolveConfig(flags);
  if (!config.ok()) {
    std::fprintf(stderr, "error: %s\n", config.status().message().c_str());
    return 2;
  }
  spdlog::set_level(spdlog::level::from_str(config->log_level));
  int64_t started_unix_ms = NowUnixMs();
  std::string plugin_dir =
      config->plugin_dir.empty() ? portico::core::DefaultPluginDir() : config->plugin_dir;
  auto plugins = portico::core::LoadPluginDir(
      plugin_dir, portico::core::LoadOptions{.trial_load_in_child = true});
  if (!plugins.ok()) {
    std::fprintf(stderr, "error: %s\n", plugins.status().message().c_str());
    return 1;
  }
  if (flags.check) return PrintInventory(*plugins);

  // Signals are taken synchronously by this thread; every thread started later inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto access_log = portico::gateway::server::AccessLogSink::Open(config->access_log);
  if (!access_log.ok()) {
    std::fprintf(stderr, "error: %s\n", access_log.status().message().c_str());
    return 2;
  }
  portico::gateway::server::DataPlaneOptions plane_options;
  plane_options.workers = config->workers;
  plane_options.default_address = config->ListenAddress();
  plane_options.access_log = *access_log;
  plane_options.registry = &plugins->registry;  // plugin filter types (filter_binding.v1)
  portico::gateway::server::ProxySettings& settings = plane_options.settings;
  settings.header_read_timeout_ms = static_cast<uint64_t>(config->header_read_timeout_ms);
  settings.idle_timeout_ms = static_cast<uint64_t>(config->idle_timeout_ms);
  settings.body_read_timeout_ms = static_cast<uint64_t>(config->body_read_timeout_ms);
  settings.busy_poll_us = static_cast<uint64_t>(config->busy_poll_us);
  settings.escaped_slashes = *portico::gateway::http::ParseEscapedSlashes(config->escaped_slashes);
  settings.connect_timeout_ms = static_cast<uint64_t>(config->connect_timeout_ms);
  settings.upstream_timeout_ms = static_cast<uint64_t>(config->upstream_timeout_ms);
  settings.upstream_idle_timeout_ms = static_cast<uint64_t>(config->upstream_idle_timeout_ms);
  settings.tunnel_idle_timeout_ms = static_cast<uint64_t>(config->tunnel_idle_timeout_ms);
  settings.drain_idle_timeout_ms = static_cast<uint64_t>(config->drain_idle_timeout_ms);
  settings.request_limits.max_request_line = static_cast<size_t>(config->max_request_line);
  settings.request_limits.max_field_line = static_cast<size_t>(config->max_header_line);
  settings.request_limits.max_head_bytes = static_cast<size_t>(config->max_header_bytes);
  settings.request_limits.max_headers = static_cast<size_t>(config->max_headers);
  settings.max_body_bytes = static_cast<uint64_t>(config->max_body_bytes);
  settings.max_idle_upstream_per_endpoint = static_cast<size_t>(config->upstream_keepalive);
  settings.max_connections =
      static_cast<size_t>(config->max_connections > 0 ? config->max_connections
                                                      : portico::gateway::DefaultMaxConnections());
  settings.max_requests_per_connection = static_cast<uint64_t>(config->max_requests_per_connection);
  // Declared before the runtime: the consumer outlives it.
  portico::gateway::server::DataPlane data_plane(plane_options);
  if (Status started = data_plane.Start(); !started.ok()) {
    spdlog::critical("data plane: {}", started.message());
    return 1;
  }
  spdlog::info("data plane: {} workers; Gateways without addresses listen on {}",
               data_plane.workers(), plane_options.default_address);
  // Held object bodies go to an unlinked scratch file, off the heap (core/runtime/held_spool.h).
  std::string spool_dir = config->spool_dir.empty()
                              ? std::filesystem::temp_directory_path().string()
                              : config->spool_dir;
  auto spool = portico::core::HeldSpool::Create(spool_dir);
  if (!spool.ok()) {
    spdlog::warn("{}; held object bodies stay in memory", spool.status().message());
  }
  portico::core::GatewayRuntime runtime(*plugins, &data_plane,
                                        spool.ok() ? std::move(*spool) : nullptr);

  // The sync thread marks the snapshot file dirty through this pointer (set before it starts).
  std::atomic<portico::gateway::SnapshotWriter*> snapshot_writer{nullptr};
  portico::gateway::SyncClientOptions sync_options;
  sync_options.controllers = config->Controllers();
  sync_options.name = config->name;
  sync_options.gateways = config->ServedGateways();
  sync_options.gateway_class = config->gateway_class;
  sync_options.addresses = config->addresses;
  sync_options.inventory = portico::core::BuildInventory(*plugins);
  sync_options.security = config->sync_security;
  sync_options.keepalive_time = std::chrono::milliseconds(config->sync_keepalive_ms);
  sync_options.keepalive_timeout = std::chrono::milliseconds(config->sync_keepalive_timeout_ms);
  sync_options.on_applied = [&snapshot_writer] {
    if (auto* writer = snapshot_writer.load()) writer->MarkDirty();
  };
  if (sync_options.gateways.empty() && sync_options.gateway_class.empty()) {
    spdlog::warn(
        "no Gateways to serve: set serve.gateways or serve.gateway_class "
        "(--gateway NS/NAME, --gateway-class CLASS)");
  }
  portico::gateway::SyncClient client(sync_options, &runtime);

  // Declared after the client, so destroyed (and finally written) while the client still lives.
  std::unique_ptr<portico::gateway::SnapshotWriter> writer;
  if (!config->snapshot_path.empty()) {
    auto state = portico::gateway::ReadSnapshotFile(config->snapshot_path);
    if (state.ok()) {
      auto nacks = client.RestoreSnapshot(*state);
      spdlog::info(
          "serving {} objects from snapshot file {} (version {} of server {}; {} refused) until "
          "the controller answers",
          state->objects.size(), config->snapshot_path, state->version, state->server_id,
          nacks.size());
    } else if (state.status().code() == portico::StatusCode::kNotFound) {
      spdlog::info("no snapshot file at {} yet: waiting for the controller", config->snapshot_path);
    } else {
      spdlog::error("ignoring the snapshot file: {}", state.status().message());
    }
    writer = std::make_unique<portico::gateway::SnapshotWriter>(
        config->snapshot_path, [&client] { return client.Capture(); });
    snapshot_writer = writer.get();
  }

  portico::gateway::GatewayAdminInfo info;
  info.name = config->name;
  info.version = PORTICO_VERSION;
  for (const auto& ref : sync_options.gateways) info.gateways.push_back(ref.ToString());
  info.gateway_class = config->gateway_class;
  info.addresses = config->addresses;
  info.snapshot_path = config->snapshot_path;
  info.started_unix_ms = started_unix_ms;
  portico::gateway::GatewayAdminRouter router(
      info, &*plugins, &runtime, [&client] { return client.GetStatus(); }, {},
      [&data_plane] { return data_plane.Stats(); });
  portico::StatusOr<portico::core::admin::AdminServerOptions> server_options =
      portico::core::admin::AdminServerOptionsFor(config->admin_address, config->admin_port,
                                                  config->admin_token_file, "portico-gateway");
  if (!server_options.ok()) {
    spdlog::critical("{}", server_options.status().message());
    return 1;
  }
  portico::core::admin::AdminServer server(
      *server_options, [&router](const portico::core::admin::AdminRequest& request) {
        return router.Handle(request);
      });
  if (Status listening = server.Start(); !listening.ok()) {
    spdlog::critical("{}", listening.message());
    return 1;
  }
  spdlog::info("gateway \"{}\": admin API listening on http://{}", config->name, server.Endpoint());
  if (!config->admin_port_file.empty()) {
    if (Status written = WritePortFile(config->admin_port_file, server.port()); !written.ok()) {
      spdlog::critical("{}", written.message());
      return 1;
    }
  }
  if (Status started = client.Start(); !started.ok()) {
    spdlog::critical("ConfigSync: {}", started.message());
    server.Stop();
    return 1;
  }

  while (true) {
    int signal = 0;
    if (sigwait(&signals, &signal) != 0) continue;
    if (signal == SIGHUP) {
      spdlog::info("SIGHUP: nothing to reload (restart to change settings)");
      continue;
    }
    spdlog::info("signal {}: shutting down", signal);
    break;
  }
  // The drain starts before anything else: a response finishing while the sync client stops
  // must already say "Connection: close", and the listening sockets must stop taking
  // connections while the next process (a hand-over) takes them.
  const auto drain_started = std::chrono::steady_clock::now();
  const portico::gateway::server::DataPlaneStats before = data_plane.Stats();
  if (config->drain_timeout_ms > 0) data_plane.BeginDrain();
  client.Stop();  // no configuration change from here on (Prepare binds nothing new meanwhile)
  if (config->drain_timeout_ms > 0) {
    const auto deadline = drain_started + std::chrono::milliseconds(config->drain_timeout_ms);
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    bool drained = data_plane.WaitDrained(std::max(left, std::chrono::milliseconds(0)));
    spdlog::info("data plane: {} in {} ms ({} connection(s) were open)",
                 drained ? "drained" : "drain timed out, closing what is left",
                 std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - drain_started)
                     .count(),
                 before.connections_open);
  }
  data_plane.Stop();
  if (writer != nullptr) {
    writer->Stop();
    if (writer->Writes() > 0 && !writer->LastStatus().ok()) {
      spdlog::error("last snapshot write failed: {}", writer->LastStatus().message());
    }
  }
  server.Stop();
  return 0;
}
