// portico-controller: reads Gateway API resources from a watched directory, validates and
// resolves them through per-kind plugins, serves objects with their status on the admin API and
// streams the processed configuration to gateways over ConfigSync (gRPC, port 5810).
//
//   portico-controller --config-dir DIR               serve (admin API on 127.0.0.1:5800)
//   portico-controller --config portico-controller.toml [flags]
//   portico-controller --config-dir DIR --check       validate and exit (like `nginx -t`)
//
// Settings: controller/config/ (every setting is a flag; flags override the file). Signals:
// SIGINT/SIGTERM stop, SIGHUP reloads the config directory.
#include <signal.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "controller/admin/admin_router.h"
#include "controller/center/config_files.h"
#include "controller/config/config_flags.h"
#include "controller/controller.h"
#include "controller/reconcile/object_validator.h"
#include "core/admin/admin_server.h"
#include "core/plugin/default_plugin_dir.h"
#include "core/plugin/plugin_loader.h"

namespace {

namespace fs = std::filesystem;
using portico::Status;
using portico::controller::ObjectValidator;

// CheckConfigDir validates every document of every config file; returns the number of errors.
int CheckConfigDir(const fs::path& dir, const ObjectValidator& validator) {
  auto files = portico::controller::ListConfigFiles(dir);
  if (!files.ok()) {
    std::fprintf(stderr, "error: %s\n", files.status().message().c_str());
    return 1;
  }
  int errors = 0;
  int objects = 0;
  for (const auto& file : *files) {
    auto docs = portico::controller::ReadConfigFile(file);
    if (!docs.ok()) {
      std::fprintf(stderr, "error: %s\n", docs.status().message().c_str());
      ++errors;
      continue;
    }
    for (auto& doc : *docs) {
      auto validated = validator.Validate(doc.json);
      if (!validated.ok()) {
        std::fprintf(stderr, "error: %s:%d: %s\n", file.string().c_str(), doc.line,
                     validated.status().message().c_str());
        ++errors;
        continue;
      }
      ++objects;
      std::printf("ok   %s (%s:%d)\n", validated->ref.Display().c_str(), file.string().c_str(),
                  doc.line);
    }
  }
  std::printf("%d objects valid, %d errors in %s\n", objects, errors, dir.string().c_str());
  return errors;
}

// Check is --check: load plugins, validate the config directory, exit 0 or 1.
int Check(const std::string& plugin_dir, const std::string& config_dir) {
  auto loaded = portico::core::LoadPluginDir(
      plugin_dir, portico::core::LoadOptions{.trial_load_in_child = true});
  if (!loaded.ok()) {
    std::fprintf(stderr, "error: %s\n", loaded.status().message().c_str());
    return 1;
  }
  auto validator = ObjectValidator::Create(loaded->registry);
  if (!validator.ok()) {
    std::fprintf(stderr, "error: %s\n", validator.status().message().c_str());
    return 1;
  }
  int errors = static_cast<int>(loaded->RefusalLines().size());
  if (!config_dir.empty()) errors += CheckConfigDir(config_dir, *validator);
  return errors == 0 ? 0 : 1;
}

// WritePortFile writes `port` to `path` atomically (temp file + rename), so a reader never sees
// a partial number.
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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"portico-controller: Gateway API resources in, processed configuration out"};
  app.set_version_flag("--version", PORTICO_VERSION);
  portico::controller::ConfigFlags flags;
  portico::controller::AddConfigFlags(app, &flags);
  CLI11_PARSE(app, argc, argv);

  auto config = portico::controller::ResolveConfig(flags);
  if (!config.ok()) {
    std::fprintf(stderr, "error: %s\n", config.status().message().c_str());
    return 2;
  }
  spdlog::set_level(spdlog::level::from_str(config->log_level));
  std::string plugin_dir =
      config->plugin_dir.empty() ? portico::core::DefaultPluginDir() : config->plugin_dir;
  if (flags.check) return Check(plugin_dir, config->config_dir);
  if (config->config_dir.empty() && !config->etcd.enabled()) {
    std::fprintf(
        stderr,
        "error: no config source: pass --config-dir DIR or --etcd-endpoints (or config_dir "
        "or [etcd] in --config FILE)\n");
    return 2;
  }

  // Signals are taken synchronously by this thread; every thread started later inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  portico::controller::ControllerOptions options;
  options.config_dir = config->config_dir;
  options.plugin_dir = plugin_dir;
  options.plugin_load.trial_load_in_child = true;
  options.debounce = std::chrono::milliseconds(config->debounce_ms);
  options.object_limits.max_object_bytes = config->max_object_bytes;
  options.object_limits.max_annotation_bytes = config->max_annotation_bytes;
  options.object_limits.max_objects_per_file = config->max_objects_per_file;
  options.max_file_bytes = config->max_file_bytes;
  options.large_file_bytes = config->large_file_bytes;
  options.workers = config->workers;
  options.isolation.plugins = config->isolate_plugins;
  options.isolation.all = config->isolate_all;
  options.isolation.timeout = std::chrono::milliseconds(config->process_timeout_ms);
  options.testing = config->testing;
  options.version = PORTICO_VERSION;
  if (config->etcd.enabled()) {
    const portico::controller::ControllerEtcdConfig& e = config->etcd;
    portico::controller::EtcdConfigCenterOptions etcd;
    etcd.client.endpoints = e.endpoints;
    etcd.client.ca_file = e.ca_file;
    etcd.client.cert_file = e.cert_file;
    etcd.client.key_file = e.key_file;
    etcd.client.user = e.user;
    auto password = portico::controller::ReadEtcdPassword(e.password, e.password_file);
    if (!password.ok()) {
      std::fprintf(stderr, "error: %s\n", password.status().message().c_str());
      return 2;
    }
    etcd.client.password = *password;
    etcd.prefix = e.prefix;
    etcd.start_timeout = std::chrono::milliseconds(e.start_timeout_ms);
    options.etcd = std::move(etcd);
    options.controller_id = e.controller_id;
    options.election.ttl = std::chrono::seconds(e.leader_ttl_s);
    options.election.renew = std::chrono::milliseconds(e.leader_renew_ms);
  }
  portico::controller::ControllerSyncOptions sync_options;
  sync_options.address = config->sync_address;
  sync_options.port = config->sync_port;
  sync_options.security = config->sync_security;
  options.sync = sync_options;
  options.store.max_log_bytes = config->sync_log_max_bytes;
  options.store.max_log_age = std::chrono::milliseconds(config->sync_log_max_age_ms);
  auto controller = portico::controller::Controller::Create(options);
  if (!controller.ok()) {
    spdlog::critical("{}", controller.status().message());
    return 1;
  }

  portico::controller::admin::AdminRouter router(controller->get());
  portico::StatusOr<portico::core::admin::AdminServerOptions> server_options =
      portico::core::admin::AdminServerOptionsFor(config->admin_address, config->admin_port,
                                                  config->admin_token_file, "portico-controller");
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
  spdlog::info("admin API listening on http://{}{}", server.Endpoint(),
               config->testing ? " (testing mode: wipe-all enabled)" : "");
  if (!config->admin_port_file.empty()) {
    if (Status written = WritePortFile(config->admin_port_file, server.port()); !written.ok()) {
      spdlog::critical("{}", written.message());
      return 1;
    }
  }
  if (Status started = (*controller)->Start(); !started.ok()) {
    spdlog::critical("{}", started.message());
    server.Stop();
    return 1;
  }
  if (!config->sync_port_file.empty()) {
    if (Status written = WritePortFile(config->sync_port_file, (*controller)->SyncPort());
        !written.ok()) {
      spdlog::critical("{}", written.message());
      server.Stop();
      (*controller)->Stop();
      return 1;
    }
  }

  while (true) {
    int signal = 0;
    if (sigwait(&signals, &signal) != 0) continue;
    if (signal == SIGHUP) {
      Status reloaded = (*controller)->Reload();
      if (!reloaded.ok()) spdlog::error("reload: {}", reloaded.message());
      continue;
    }
    spdlog::info("signal {}: shutting down", signal);
    break;
  }
  server.Stop();
  (*controller)->Stop();
  return 0;
}
