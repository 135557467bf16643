#include "controller/ctl/get_command.h"

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <iostream>
#include <memory>

#include "controller/ctl/json_to_yaml.h"
#include "controller/ctl/object_table.h"

namespace portico::ctl {
namespace {

using Value = rapidjson::Value;

std::string Pretty(const Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
  w.SetIndent(' ', 4);
  value.Accept(w);
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

// ResourceName renders "httproute.gateway.networking.k8s.io/web" (kubectl's -o name).
std::string ResourceName(const Value& object) {
  std::string kind = json::GetString(object, "kind");
  std::transform(kind.begin(), kind.end(), kind.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string api_version = json::GetString(object, "apiVersion");
  size_t slash = api_version.rfind('/');
  if (slash != std::string::npos) kind += "." + api_version.substr(0, slash);
  return kind + "/" + json::GetString(object, "metadata.name");
}

// IsClusterScoped asks the controller whether `kind` is cluster-scoped (for messages only).
bool IsClusterScoped(const ServerOptions& server, const std::string& kind) {
  StatusOr<rapidjson::Document> kinds = CallServer(server, "GET", "/api/v1/kinds");
  if (!kinds.ok()) return false;
  const Value* items = json::Find(*kinds, "items");
  if (items == nullptr || !items->IsArray()) return false;
  std::string wanted = kind;
  std::transform(wanted.begin(), wanted.end(), wanted.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  wanted = wanted.substr(0, wanted.find('.'));
  for (const auto& k : items->GetArray()) {
    std::vector<std::string> names = {json::GetString(k, "kind"), json::GetString(k, "plural")};
    if (const Value* shorts = json::Find(k, "shortNames"); shorts && shorts->IsArray()) {
      for (const auto& s : shorts->GetArray()) names.emplace_back(s.GetString());
    }
    for (std::string& name : names) {
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (name == wanted) return json::GetString(k, "scope") == "Cluster";
    }
  }
  return false;
}

}  // namespace

void StripPortico(Value& object) {
  if (!object.IsObject()) return;
  auto portico = object.FindMember("portico");
  if (portico == object.MemberEnd()) return;
  if (json::GetString(portico->value, "error").empty()) {
    object.RemoveMember(portico);
    return;
  }
  if (!portico->value.IsObject()) return;
  for (const char* name : {"syncedHash", "generation"}) {  // metadata.generation says it
    auto it = portico->value.FindMember(name);
    if (it != portico->value.MemberEnd()) portico->value.EraseMember(it);  // keeps the order
  }
}

int RunGet(const GetOptions& options, const ServerOptions& server, std::ostream& out,
           std::ostream& err) {
  if (options.args.empty()) {
    err << "error: you must specify the type of resource to get (e.g. portico-ctl get "
           "httproutes)\n";
    return 1;
  }
  // KIND NAME... or KIND/NAME...
  std::vector<std::pair<std::string, std::string>> wanted;  // (kind, name); name "" = list
  if (options.args[0].find('/') != std::string::npos) {
    for (const std::string& arg : options.args) {
      size_t slash = arg.find('/');
      if (slash == std::string::npos || slash == 0 || slash + 1 == arg.size()) {
        err << "error: arguments in resource/name form must have a single resource and name\n";
        return 1;
      }
      wanted.emplace_back(arg.substr(0, slash), arg.substr(slash + 1));
    }
  } else if (options.args.size() == 1) {
    wanted.emplace_back(options.args[0], "");
  } else {
    for (size_t i = 1; i < options.args.size(); ++i) {
      wanted.emplace_back(options.args[0], options.args[i]);
    }
  }
  if (options.all_namespaces && !options.ns.empty()) {
    err << "error: -n and -A cannot be used together\n";
    return 1;
  }
  std::string ns = options.all_namespaces ? "" : (options.ns.empty() ? "default" : options.ns);

  rapidjson::Document list(rapidjson::kObjectType);
  auto& alloc = list.GetAllocator();
  Value items(rapidjson::kArrayType);
  bool single = wanted.size() == 1 && !wanted[0].second.empty();
  int exit_code = 0;
  for (const auto& [kind, name] : wanted) {
    if (!name.empty() && options.all_namespaces) {
      err << "error: a resource cannot be retrieved by name across all namespaces\n";
      return 1;
    }
    StatusOr<rapidjson::Document> answer = CallServer(server, "GET", ObjectsPath(kind, name, ns));
    if (!answer.ok()) {
      err << answer.status().message() << '\n';
      exit_code = 1;
      continue;
    }
    if (name.empty()) {
      Value* got = answer->HasMember("items") ? &(*answer)["items"] : nullptr;
      if (got != nullptr && got->IsArray()) {
        for (auto& item : got->GetArray()) items.PushBack(Value(item, alloc), alloc);
      }
    } else {
      items.PushBack(Value(*answer, alloc), alloc);
    }
  }
  if (items.Empty()) {
    if (exit_code == 0 && options.output != "json" && options.output != "yaml") {
      if (options.all_namespaces || IsClusterScoped(server, wanted[0].first)) {
        err << "No resources found\n";
      } else {
        err << "No resources found in " << ns << " namespace.\n";
      }
      return 0;
    }
    if (exit_code != 0) return exit_code;
  }

  const std::string& format = options.output;
  if (format == "table" || format == "wide") {
    std::vector<const Value*> objects;
    for (const auto& item : items.GetArray()) objects.push_back(&item);
    int64_t now = options.now_unix_s != 0 ? options.now_unix_s
                                          : std::chrono::duration_cast<std::chrono::seconds>(
                                                std::chrono::system_clock::now().time_since_epoch())
                                                .count();
    if (!objects.empty()) PrintObjectTable(objects, options.all_namespaces, now, out);
    return exit_code;
  }
  if (format == "name") {
    for (const auto& item : items.GetArray()) out << ResourceName(item) << '\n';
    return exit_code;
  }
  for (auto& item : items.GetArray()) StripPortico(item);
  const Value* printed = nullptr;
  if (single && items.Size() == 1) {
    printed = &items[0];
  } else {
    list.AddMember("apiVersion", "v1", alloc);
    list.AddMember("items", items, alloc);
    list.AddMember("kind", "List", alloc);
    printed = &list;
  }
  out << (format == "json" ? Pretty(*printed) : JsonToYaml(*printed));
  return exit_code;
}

void AddGetCommand(CLI::App& app, int* exit_code, const ServerOptions* server) {
  auto options = std::make_shared<GetOptions>();
  CLI::App* cmd = app.add_subcommand("get", "Show objects of one kind with their status");
  cmd->add_option("args", options->args, "KIND [NAME...] or KIND/NAME...")->required();
  cmd->add_option("-n,--namespace", options->ns, "Namespace (default: default)");
  cmd->add_flag("-A,--all-namespaces", options->all_namespaces, "Objects of every namespace");
  cmd->add_option("-o,--output", options->output, "Output format: table, wide, yaml, json, name")
      ->check(CLI::IsMember({"table", "wide", "yaml", "json", "name"}))
      ->capture_default_str();
  cmd->callback([options, exit_code, server] {
    *exit_code = RunGet(*options, *server, std::cout, std::cerr);
  });
}

}  // namespace portico::ctl
