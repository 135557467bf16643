#include "controller/ctl/apply_command.h"

#include <algorithm>
#include <cctype>
#include <iostream>
#include <memory>

#include "controller/ctl/manifest_files.h"

namespace portico::ctl {

std::string LowerKindGroup(std::string_view kind, std::string_view group) {
  std::string out(kind);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (!group.empty()) out += "." + std::string(group);
  return out;
}

int RunApply(const ApplyOptions& options, const ServerOptions& server, std::ostream& out,
             std::ostream& err) {
  if (options.files.empty()) {
    err << "error: must specify one of -f\n";
    return 1;
  }
  int exit_code = 0;
  size_t sent = 0;
  for (const std::string& path : options.files) {
    StatusOr<std::vector<std::string>> files = CollectManifestFiles(path, options.recursive);
    if (!files.ok()) {
      err << "error: " << files.status().message() << '\n';
      exit_code = 1;
      continue;
    }
    for (const std::string& file : *files) {
      StatusOr<std::string> text = ReadManifest(file);
      if (!text.ok()) {
        err << "error: " << text.status().message() << '\n';
        exit_code = 1;
        continue;
      }
      if (text->find_first_not_of(" \t\r\n") == std::string::npos) continue;
      bool is_json = file.size() > 5 && file.substr(file.size() - 5) == ".json";
      std::string target = std::string("/api/v1/apply") + (options.wait ? "?wait=true" : "");
      StatusOr<rapidjson::Document> answer = CallServer(
          server, "POST", target, *text, is_json ? "application/json" : "application/yaml");
      ++sent;
      if (!answer.ok()) {
        err << answer.status().message() << (file == "-" ? "" : " (file " + file + ")") << '\n';
        exit_code = 1;
        continue;
      }
      const rapidjson::Value* items = json::Find(*answer, "items");
      if (items == nullptr || !items->IsArray()) continue;
      for (const auto& item : items->GetArray()) {
        out << LowerKindGroup(json::GetString(item, "kind"), json::GetString(item, "group")) << "/"
            << json::GetString(item, "name") << " " << json::GetString(item, "result") << '\n';
      }
    }
  }
  if (sent == 0 && exit_code == 0) {
    err << "error: no objects passed to apply\n";
    return 1;
  }
  return exit_code;
}

void AddApplyCommand(CLI::App& app, int* exit_code, const ServerOptions* server) {
  auto options = std::make_shared<ApplyOptions>();
  CLI::App* cmd = app.add_subcommand(
      "apply", "Create or update objects from files (validated by the controller first)");
  cmd->add_option("-f,--filename", options->files, "File, directory or - (stdin); repeatable")
      ->required();
  cmd->add_flag("-R,--recursive", options->recursive, "Descend into subdirectories");
  cmd->add_flag("--wait", options->wait, "Return once the controller processed the objects");
  cmd->callback([options, exit_code, server] {
    *exit_code = RunApply(*options, *server, std::cout, std::cerr);
  });
}

}  // namespace portico::ctl
