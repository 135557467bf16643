#include "controller/ctl/list_plugins.h"

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <iostream>
#include <memory>

#include "controller/ctl/table_printer.h"
#include "core/plugin/manifest.h"
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

template <typename Writer>
void WriteStrings(Writer& w, const char* key, const std::vector<std::string>& items) {
  w.Key(key);
  w.StartArray();
  for (const auto& item : items) w.String(item);
  w.EndArray();
}

void PrintJson(const std::vector<PluginRecord>& records, std::ostream& out) {
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
  w.SetIndent(' ', 2);
  w.StartArray();
  for (const PluginRecord& r : records) {
    w.StartObject();
    w.Key("name");
    w.String(r.DisplayName());
    if (r.manifest) {
      const core::PluginManifest& m = *r.manifest;
      w.Key("version");
      w.String(m.version);
      w.Key("description");
      w.String(m.description);
      w.Key("manifestVersion");
      w.Int64(m.manifest_version);
      w.Key("abi");
      w.StartObject();
      w.Key("major");
      w.Uint(m.abi_major);
      w.Key("minor");
      w.Uint(m.abi_minor);
      w.EndObject();
      w.Key("sdkVersion");
      w.String(m.sdk_version);
    }
    w.Key("abiVerdict");
    w.String(r.AbiVerdict());
    w.Key("kinds");
    w.StartArray();
    if (r.manifest) {
      for (const auto& k : r.manifest->kinds) {
        w.StartObject();
        w.Key("group");
        w.String(k.id.group);
        w.Key("kind");
        w.String(k.id.kind);
        WriteStrings(w, "versions", k.versions);
        w.Key("plural");
        w.String(k.plural);
        WriteStrings(w, "shortNames", k.short_names);
        w.Key("scope");
        w.String(std::string(core::ScopeName(k.scope)));
        std::vector<std::string> reads;
        for (const auto& read : k.reads) reads.push_back(read.ToString());
        WriteStrings(w, "reads", reads);
        WriteStrings(w, "capabilities", core::CapabilityNames(k.capability_bits));
        w.Key("sync");
        w.String(std::string(core::SyncPolicyName(k.sync_policy)));
        w.EndObject();
      }
    }
    w.EndArray();
    WriteStrings(w, "capabilities", core::CapabilityNames(CapabilityBits(r)));
    w.Key("status");
    w.String(r.ok() ? "ok" : "rejected");
    if (!r.ok()) {
      w.Key("reason");
      w.String(r.reason);
    }
    w.Key("sha256");
    w.String(r.sha256);
    w.Key("path");
    w.String(r.path);
    w.EndObject();
  }
  w.EndArray();
  out << std::string_view(buffer.GetString(), buffer.GetSize()) << '\n';
}

}  // namespace

void PrintPlugins(const std::vector<PluginRecord>& records, const std::string& format,
                  std::ostream& out) {
  if (format == "json") {
    PrintJson(records, out);
  } else {
    PrintTable(records, format == "wide", out);
  }
}

int RunListPlugins(const ListPluginsOptions& options, std::ostream& out, std::ostream& err) {
  if (!options.target.empty()) {
    err << "error: list-plugins --target " << options.target
        << ": not implemented until the admin API exists; use --dir DIR\n";
    return 2;
  }
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

void AddListPluginsCommand(CLI::App& app, int* exit_code) {
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
  cmd->add_option("-o,--output", options->output, "Output format: table, json or wide")
      ->check(CLI::IsMember({"table", "json", "wide"}))
      ->capture_default_str();
  cmd->callback(
      [options, exit_code] { *exit_code = RunListPlugins(*options, std::cout, std::cerr); });
}

}  // namespace portico::ctl
