// portico-controller: reads Gateway API resources, validates and resolves them through per-kind
// plugins, and (Controller/ConfigSync issues) serves them to gateways.
//
// Today: loads the plugin directory through the C ABI, orders kinds by `reads`, and with
// --check validates every object of --config-dir against its kind's schema (like `nginx -t`).
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <string>

#include "controller/center/config_files.h"
#include "controller/reconcile/object_validator.h"
#include "core/plugin/default_plugin_dir.h"
#include "core/plugin/plugin_loader.h"

namespace {

namespace fs = std::filesystem;
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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"portico-controller: Gateway API resources in, processed configuration out"};
  std::string plugin_dir = portico::core::DefaultPluginDir();
  std::string config_dir;
  bool check = false;
  app.add_option("--plugin-dir", plugin_dir, "Directory of plugin .so files")
      ->capture_default_str();
  app.add_option("--config-dir", config_dir, "Directory of YAML/JSON resources");
  app.add_flag("--check", check, "Load plugins, validate --config-dir, print the result and exit");
  CLI11_PARSE(app, argc, argv);

  auto loaded = portico::core::LoadPluginDir(plugin_dir);
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
  if (!check) {
    std::fprintf(stderr,
                 "portico-controller: serving configuration arrives with the Controller issue; "
                 "use --check\n");
    return 2;
  }
  return errors == 0 ? 0 : 1;
}
