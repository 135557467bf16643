#include "controller/ctl/list_plugins.h"

#include <iostream>
#include <memory>

#include "controller/ctl/list_gateway_plugins.h"
#include "controller/ctl/table_printer.h"
#include "core/plugin/manifest.h"
#include "core/plugin/plugin_json.h"
#include "portico/sdk/json.h"

namespace portico::ctl {
namespace {

using core::PluginRecord;

constexpr char kNone[] = "<none>";
constexpr size_t kShortHash = 12;

std::string Join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += sep;
    out += item;
  }
  return out;
}

// KindsCell renders "gateway.networking.k8s.io/Gateway(v1,v1beta1)", "Secret(v1)", ...
std::string KindsCell(const PluginRecord& record) {
  if (!record.manifest || record.manifest->kinds.empty()) return kNone;
  std::vector<std::string> kinds;
  for (const auto& k : record.manifest->kinds) {
    std::string id = k.id.group.empty() ? k.id.kind : k.id.group + "/" + k.id.kind;
    kinds.push_back(id + "(" + Join(k.versions, ",") + ")");
  }
  return Join(kinds, ",");
}

uint32_t CapabilityBits(const PluginRecord& record) {
  uint32_t bits = 0;
  if (record.manifest) {
    for (const auto& k : record.manifest->kinds) bits |= k.capability_bits;
  }
  return bits;
}

std::string StatusCell(const PluginRecord& record) {
  return record.ok() ? "ok" : "rejected: " + record.reason;
}

void PrintTable(const std::vector<PluginRecord>& records, bool wide, std::ostream& out) {
  std::vector<std::string> headers = {"NAME", "VERSION", "ABI", "SDK", "KINDS", "STATUS"};
  if (wide) headers.insert(headers.end(), {"CAPABILITIES", "SHA256", "PATH"});
  TablePrinter table(headers);
  for (const PluginRecord& r : records) {
    std::vector<std::string> row = {r.DisplayName(), r.manifest ? r.manifest->version : kNone,
                                    r.AbiVerdict(),  r.manifest ? r.manifest->sdk_version : kNone,
                                    KindsCell(r),    StatusCell(r)};
    if (wide) {
      std::vector<std::string> caps = core::CapabilityNames(CapabilityBits(r));
      row.push_back(caps.empty() ? kNone : Join(caps, ","));
      row.push_back(r.sha256.empty() ? kNone : r.sha256.substr(0, kShortHash));
      row.push_back(r.path);
    }
    table.AddRow(std::move(row));
  }
  table.Print(out);
}

// ListControllerPlugins asks a running controller which plugins it loaded.
int ListControllerPlugins(const ListPluginsOptions& options, std::ostream& out, std::ostream& err) {
  StatusOr<rapidjson::Document> answer = CallServer(options.server, "GET", "/api/v1/plugins");
  if (!answer.ok()) {
    err << answer.status().message() << '\n';
    return 1;
  }
  const rapidjson::Value* items = json::Find(*answer, "items");
  StatusOr<std::vector<PluginRecord>> records =
      items == nullptr
          ? StatusOr<std::vector<PluginRecord>>(InvalidArgumentError("the answer has no \"items\""))
          : core::ParsePluginsJson(*items);
  if (!records.ok()) {
    err << "error: unexpected answer from " << options.server.server << ": "
        << records.status().message() << '\n';
    return 1;
  }
  if (records->empty() && options.output != "json") {
    err << "The controller at " << options.server.server << " loaded no plugins.\n";
    return 0;
  }
  PrintPlugins(*records, options.output, out);
  for (const PluginRecord& r : *records) {
    if (!r.ok()) return 1;
  }
  return 0;
}

}  // namespace

void PrintPlugins(const std::vector<PluginRecord>& records, const std::string& format,
                  std::ostream& out) {
  if (format == "json") {
    out << core::RenderPluginsJson(records, /*pretty=*/true) << '\n';
  } else {
    PrintTable(records, format == "wide", out);
  }
}

int RunListPlugins(const ListPluginsOptions& options, std::ostream& out, std::ostream& err) {
  if (options.target == "gateway") {
    return ListGatewayPlugins(options.server, options.address, options.output, out, err);
  }
  if (!options.address.empty()) {
    err << "error: list-plugins --address needs --target gateway\n";
    return 1;
  }
  if (options.target == "controller") return ListControllerPlugins(options, out, err);
  if (options.dir.empty()) {
    err << "error: list-plugins needs --dir DIR (or --target controller|gateway)\n";
    return 1;
  }
  auto records = core::ScanPluginDir(options.dir);
  if (!records.ok()) {
    err << "error: " << records.status().message() << '\n';
    return 1;
  }
  if (records->empty() && options.output != "json") {
    err << "No plugins found in " << options.dir << ".\n";
    return 0;
  }
  PrintPlugins(*records, options.output, out);
  for (const PluginRecord& r : *records) {
    if (!r.ok()) return 1;
  }
  return 0;
}

void AddListPluginsCommand(CLI::App& app, int* exit_code, const ServerOptions* server) {
  auto options = std::make_shared<ListPluginsOptions>();
  CLI::App* cmd = app.add_subcommand(
      "list-plugins",
      "List plugins with their manifests and ABI verdicts (reads manifests only; loads nothing)");
  CLI::Option* dir =
      cmd->add_option("--dir", options->dir, "Plugin directory to inspect (*.so files)");
  CLI::Option* target =
      cmd->add_option("--target", options->target, "Ask a running controller or gateway")
          ->check(CLI::IsMember({"controller", "gateway"}));
  dir->excludes(target);
  cmd->add_option("--address", options->address,
                  "With --target gateway: ask this gateway's admin API (HOST:PORT) directly "
                  "instead of the controller");
  cmd->add_option("-o,--output", options->output, "Output format: table, json or wide")
      ->check(CLI::IsMember({"table", "json", "wide"}))
      ->capture_default_str();
  cmd->callback([options, exit_code, server] {
    options->server = *server;
    *exit_code = RunListPlugins(*options, std::cout, std::cerr);
  });
}

}  // namespace portico::ctl
