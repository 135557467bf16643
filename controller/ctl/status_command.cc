#include "controller/ctl/status_command.h"

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "controller/ctl/object_table.h"
#include "controller/ctl/table_printer.h"

namespace portico::ctl {
namespace {

using Value = rapidjson::Value;

constexpr char kNone[] = "<none>";

// Number renders the unsigned integer member `key` of `v`, "-" when absent.
std::string Number(const Value& v, std::string_view key) {
  const Value* found = json::Find(v, key);
  if (found == nullptr) return "-";
  if (found->IsUint64()) return std::to_string(found->GetUint64());
  if (found->IsInt64()) return std::to_string(found->GetInt64());
  return "-";
}

std::vector<std::string> Strings(const Value& v, std::string_view key) {
  std::vector<std::string> out;
  const Value* found = json::Find(v, key);
  if (found == nullptr || !found->IsArray()) return out;
  for (const Value& s : found->GetArray()) {
    if (s.IsString()) out.emplace_back(s.GetString(), s.GetStringLength());
  }
  return out;
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += ",";
    out += item;
  }
  return out.empty() ? kNone : out;
}

std::string ServesCell(const Value& gateway) {
  std::vector<std::string> serves = Strings(gateway, "gateways");
  std::string klass = json::GetString(gateway, "gatewayClass");
  if (!klass.empty()) serves.push_back("class=" + klass);
  return Join(serves);
}

std::string NacksCell(const Value& gateway) {
  const Value* nacks = json::Find(gateway, "nacks");
  return std::to_string(nacks != nullptr && nacks->IsArray() ? nacks->Size() : 0);
}

// ConnectedCell: "2024-05-01T12:00:00Z (3m12s)".
std::string ConnectedCell(const Value& gateway, int64_t now_unix_s) {
  std::string since = json::GetString(gateway, "connected");
  if (since.empty()) return "-";
  std::optional<int64_t> at = ParseRfc3339(since);
  if (!at) return since;
  return since + " (" + HumanAge(now_unix_s - *at) + ")";
}

}  // namespace

void RenderStatusTable(const std::string& server, const Value& info, const Value& gateways,
                       int64_t now_unix_s, std::ostream& out) {
  const Value* ready = json::Find(info, "ready");
  std::optional<int64_t> uptime = json::GetInt(info, "uptimeSeconds");
  size_t connected = gateways.IsArray() ? gateways.Size() : 0;
  std::vector<std::pair<std::string, std::string>> summary = {
      {"Controller", server},
      {"Server ID", json::GetString(info, "serverId", "-")},
      {"Version", json::GetString(info, "version", "-")},
      {"Config", json::GetString(info, "configSource", "-")},
      {"Ready", ready != nullptr && ready->IsBool() ? (ready->GetBool() ? "true" : "false") : "-"},
      {"Head", Number(info, "head")},
      {"Objects", Number(info, "objectsTotal")},
      {"Errors", Number(info, "configErrors")},
      {"Uptime", uptime ? HumanAge(*uptime) : "-"},
      {"Gateways", std::to_string(connected) + " connected"},
  };
  // Several controllers on etcd (issue 16): this one's role, the leader and its lease, the
  // etcd revision this controller has read up to.
  const Value* ha = json::Find(info, "ha");
  const Value* enabled = ha != nullptr ? json::Find(*ha, "enabled") : nullptr;
  if (enabled != nullptr && enabled->IsBool() && enabled->GetBool()) {
    const Value* leader = json::Find(*ha, "leader");
    static const Value kEmpty(rapidjson::kObjectType);
    const Value& l = leader != nullptr && leader->IsObject() ? *leader : kEmpty;
    std::string leader_id = json::GetString(l, "id");
    std::string error = json::GetString(*ha, "electionError");
    summary.emplace_back("HA", json::GetString(*ha, "controllerId", "-") + " (" +
                                   json::GetString(*ha, "role", "-") + ")");
    summary.emplace_back(
        "Leader", leader_id.empty()
                      ? std::string("none known") + (error.empty() ? "" : ": " + error)
                      : leader_id + " (lease " + json::GetString(l, "leaseId", "-") + ", TTL " +
                            Number(l, "leaseTtlSeconds") + " s, epoch " + Number(l, "epoch") + ")");
    const Value* etcd = json::Find(*ha, "etcd");
    if (etcd != nullptr && etcd->IsObject()) {
      const Value* watching = json::Find(*etcd, "connected");
      bool connected = watching != nullptr && watching->IsBool() && watching->GetBool();
      summary.emplace_back("Revision", Number(*etcd, "revision") + " (etcd, " +
                                           (connected ? "watching " : "not connected to ") +
                                           json::GetString(*etcd, "endpoint", "-") + ")");
    }
  }
  for (const auto& [label, value] : summary) {
    std::string key = label + ":";
    key.resize(12, ' ');
    out << key << value << '\n';
  }
  if (connected == 0) return;
  out << '\n';
  TablePrinter table(
      {"NAME", "SERVES", "ADDRESSES", "ACKED", "HEAD", "LAG", "NACKS", "CONNECTED-SINCE"});
  for (const Value& g : gateways.GetArray()) {
    std::string name = json::GetString(g, "name");
    if (name.empty()) name = json::GetString(g, "clientId", kNone);
    table.AddRow({name, ServesCell(g), Join(Strings(g, "addresses")), Number(g, "ackedVersion"),
                  Number(g, "head"), Number(g, "lag"), NacksCell(g), ConnectedCell(g, now_unix_s)});
  }
  table.Print(out);
}

void RenderErrorTable(const Value& errors, std::ostream& out) {
  if (!errors.IsArray() || errors.Empty()) return;
  auto cut = [](std::string s) {
    if (s.size() > 100) s = s.substr(0, 97) + "...";
    return s;
  };
  auto where = [](const std::string& file, std::optional<int64_t> line) {
    if (file.empty()) return std::string("-");
    return line.value_or(0) > 0 ? file + ":" + std::to_string(*line) : file;
  };
  TablePrinter table({"WHERE", "OBJECT", "PROBLEM"});
  for (const Value& e : errors.GetArray()) {
    std::string file = json::GetString(e, "file");
    std::string object = json::GetString(e, "object");
    if (object.empty()) object = "-";
    const Value* violations = json::Find(e, "violations");
    if (violations == nullptr || !violations->IsArray() || violations->Empty()) {
      table.AddRow(
          {where(file, json::GetInt(e, "line")), object, cut(json::GetString(e, "message"))});
      continue;
    }
    std::string refused = "generation " + Number(e, "refusedGeneration") + " refused; ";
    std::string serving = Number(e, "servingGeneration");
    refused += serving == "0" ? "no generation serves" : "generation " + serving + " serves";
    table.AddRow({where(file, json::GetInt(e, "line")), object, refused});
    for (const Value& v : violations->GetArray()) {
      std::string field = json::GetString(v, "field");
      std::string message = json::GetString(v, "message");
      std::optional<int64_t> line = json::GetInt(v, "line");
      table.AddRow({where(file, line ? line : json::GetInt(e, "line")), object,
                    cut(field.empty() ? message : field + ": " + message)});
    }
  }
  out << '\n';
  table.Print(out);
}

void RenderStatusJson(const Value& info, const Value& gateways, std::ostream& out,
                      const Value* errors) {
  rapidjson::Document doc(rapidjson::kObjectType);
  auto& alloc = doc.GetAllocator();
  doc.AddMember("controller", Value(info, alloc), alloc);
  doc.AddMember("gateways",
                gateways.IsArray() ? Value(gateways, alloc) : Value(rapidjson::kArrayType), alloc);
  if (errors != nullptr) doc.AddMember("errors", Value(*errors, alloc), alloc);
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
  w.SetIndent(' ', 4);
  doc.Accept(w);
  out << std::string_view(buffer.GetString(), buffer.GetSize()) << '\n';
}

int RunStatus(const StatusOptions& options, const ServerOptions& server, std::ostream& out,
              std::ostream& err) {
  StatusOr<rapidjson::Document> info = CallServer(server, "GET", "/api/v1/info");
  if (!info.ok()) {
    err << info.status().message() << '\n';
    return 1;
  }
  StatusOr<rapidjson::Document> gateways = CallServer(server, "GET", "/api/v1/gateways");
  if (!gateways.ok()) {
    err << gateways.status().message() << '\n';
    return 1;
  }
  const Value* items = json::Find(*gateways, "items");
  if (!info->IsObject() || items == nullptr || !items->IsArray()) {
    err << "error: unexpected answer from " << server.server
        << " (is it a portico-controller admin API?)\n";
    return 1;
  }
  StatusOr<rapidjson::Document> errors = CallServer(server, "GET", "/api/v1/errors");
  if (!errors.ok()) {
    err << errors.status().message() << '\n';
    return 1;
  }
  const Value* error_items = json::Find(*errors, "items");
  if (options.output == "json") {
    RenderStatusJson(*info, *items, out, error_items);
    return 0;
  }
  int64_t now = options.now_unix_s != 0 ? options.now_unix_s
                                        : std::chrono::duration_cast<std::chrono::seconds>(
                                              std::chrono::system_clock::now().time_since_epoch())
                                              .count();
  RenderStatusTable(server.server, *info, *items, now, out);
  if (error_items != nullptr) RenderErrorTable(*error_items, out);
  return 0;
}

void AddStatusCommand(CLI::App& app, int* exit_code, const ServerOptions* server) {
  auto options = std::make_shared<StatusOptions>();
  CLI::App* cmd = app.add_subcommand(
      "status", "Show the controller's state and the gateways connected to it over ConfigSync");
  cmd->add_option("-o,--output", options->output, "Output format: table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  cmd->callback([options, exit_code, server] {
    *exit_code = RunStatus(*options, *server, std::cout, std::cerr);
  });
}

}  // namespace portico::ctl
