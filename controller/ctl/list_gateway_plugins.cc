#include "controller/ctl/list_gateway_plugins.h"

#include <rapidjson/prettywriter.h>

#include <vector>

#include "controller/ctl/list_plugins.h"
#include "controller/ctl/server_call.h"
#include "controller/ctl/table_printer.h"
#include "core/plugin/plugin_json.h"

namespace portico::ctl {
namespace {

constexpr char kNone[] = "<none>";
constexpr size_t kShortHash = 12;

std::string Pretty(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> writer(buffer);
  writer.SetIndent(' ', 2);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

// StringList joins a JSON array of strings ("a, b"), or <none>.
std::string StringList(const rapidjson::Value& object, const char* member) {
  const rapidjson::Value* list = json::Find(object, member);
  std::string out;
  if (list != nullptr && list->IsArray()) {
    for (const rapidjson::Value& v : list->GetArray()) {
      if (!v.IsString()) continue;
      out += (out.empty() ? "" : ", ") + std::string(v.GetString());
    }
  }
  return out.empty() ? kNone : out;
}

// FromController prints each connected gateway's inventory.
int FromController(const ServerOptions& server, const std::string& format, std::ostream& out,
                   std::ostream& err) {
  StatusOr<rapidjson::Document> answer = CallServer(server, "GET", "/api/v1/gateways");
  if (!answer.ok()) {
    err << answer.status().message() << '\n';
    return 1;
  }
  const rapidjson::Value* items = json::Find(*answer, "items");
  if (items == nullptr || !items->IsArray()) {
    err << "error: unexpected answer from " << server.server << ": no \"items\" array\n";
    return 1;
  }
  if (format == "json") {
    rapidjson::Document list(rapidjson::kArrayType);
    auto& a = list.GetAllocator();
    for (const rapidjson::Value& g : items->GetArray()) {
      rapidjson::Value entry(rapidjson::kObjectType);
      for (const char* member : {"name", "clientId", "peer", "state", "inventory"}) {
        if (const rapidjson::Value* v = json::Find(g, member); v != nullptr) {
          entry.AddMember(rapidjson::StringRef(member), rapidjson::Value(*v, a), a);
        }
      }
      list.PushBack(entry, a);
    }
    out << Pretty(list) << '\n';
    return 0;
  }
  if (items->Empty()) {
    err << "No gateway is connected to the controller at " << server.server << ".\n";
    return 0;
  }
  bool first = true;
  for (const rapidjson::Value& g : items->GetArray()) {
    if (!first) out << '\n';
    first = false;
    out << "GATEWAY " << json::GetString(g, "name") << " (" << json::GetString(g, "peer") << ", "
        << json::GetString(g, "state") << ", serves " << StringList(g, "gateways") << ")\n";
    std::vector<std::string> headers = {"NAME", "VERSION", "HANDLERS", "FILTER TYPES"};
    if (format == "wide") headers.push_back("SHA256");
    TablePrinter table(headers);
    const rapidjson::Value* inventory = json::Find(g, "inventory");
    if (inventory != nullptr && inventory->IsArray()) {
      for (const rapidjson::Value& p : inventory->GetArray()) {
        std::vector<std::string> row = {json::GetString(p, "name"), json::GetString(p, "version"),
                                        StringList(p, "handlers"), StringList(p, "filterTypes")};
        if (format == "wide") row.push_back(json::GetString(p, "sha256").substr(0, kShortHash));
        table.AddRow(std::move(row));
      }
    }
    table.Print(out);
  }
  return 0;
}

// FromGateway asks one gateway's admin API.
int FromGateway(const ServerOptions& server, const std::string& address, const std::string& format,
                std::ostream& out, std::ostream& err) {
  const std::string url = "http://" + address;
  StatusOr<rapidjson::Document> answer = CallServer(server.At(url), "GET", "/api/v1/plugins");
  if (!answer.ok()) {
    err << answer.status().message() << '\n';
    return 1;
  }
  const rapidjson::Value* items = json::Find(*answer, "items");
  StatusOr<std::vector<core::PluginRecord>> records =
      items == nullptr ? StatusOr<std::vector<core::PluginRecord>>(
                             InvalidArgumentError("the answer has no \"items\""))
                       : core::ParsePluginsJson(*items);
  if (!records.ok()) {
    err << "error: unexpected answer from " << url << ": " << records.status().message() << '\n';
    return 1;
  }
  if (format == "json") {
    out << Pretty(*answer) << '\n';
  } else {
    PrintPlugins(*records, format, out);
    const rapidjson::Value* types = json::Find(*answer, "filterTypes");
    if (types != nullptr && types->IsArray() && !types->Empty()) {
      out << '\n';
      TablePrinter table({"FILTER TYPE", "PHASE", "ORDER", "PLUGIN"});
      for (const rapidjson::Value& t : types->GetArray()) {
        table.AddRow({json::GetString(t, "name"), json::GetString(t, "phase"),
                      std::to_string(json::GetInt(t, "order").value_or(0)),
                      json::GetString(t, "plugin")});
      }
      table.Print(out);
    }
  }
  for (const core::PluginRecord& r : *records) {
    if (!r.ok()) return 1;
  }
  return 0;
}

}  // namespace

int ListGatewayPlugins(const ServerOptions& server, const std::string& address,
                       const std::string& format, std::ostream& out, std::ostream& err) {
  return address.empty() ? FromController(server, format, out, err)
                         : FromGateway(server, address, format, out, err);
}

}  // namespace portico::ctl
