#include "controller/ctl/delete_command.h"

#include <iostream>
#include <memory>

#include "controller/ctl/apply_command.h"
#include "controller/ctl/manifest_files.h"

namespace portico::ctl {
namespace {

struct Target {
  std::string kind;  // as the admin API resolves it
  std::string name;
  std::string ns;
};

// DeleteOne deletes one object and reports it; returns false on failure.
bool DeleteOne(const Target& t, const DeleteOptions& options, const ServerOptions& server,
               std::ostream& out, std::ostream& err) {
  std::string path = ObjectsPath(t.kind, t.name, t.ns);
  if (options.wait)
    path += (path.find('?') == std::string::npos ? "?" : "&") + std::string("wait=true");
  StatusOr<rapidjson::Document> answer = CallServer(server, "DELETE", path);
  if (!answer.ok()) {
    if (answer.status().code() == StatusCode::kNotFound && options.ignore_not_found) return true;
    err << answer.status().message() << '\n';
    return false;
  }
  out << LowerKindGroup(json::GetString(*answer, "deleted.kind"),
                        json::GetString(*answer, "deleted.group"))
      << " \"" << json::GetString(*answer, "deleted.name") << "\" deleted\n";
  return true;
}

}  // namespace

int RunDelete(const DeleteOptions& options, const ServerOptions& server, std::ostream& out,
              std::ostream& err) {
  std::vector<Target> targets;
  std::string ns = options.ns.empty() ? "default" : options.ns;
  if (!options.files.empty()) {
    if (!options.args.empty()) {
      err << "error: name cannot be provided when a path is specified\n";
      return 1;
    }
    for (const std::string& path : options.files) {
      StatusOr<std::vector<std::string>> files = CollectManifestFiles(path, options.recursive);
      if (!files.ok()) {
        err << "error: " << files.status().message() << '\n';
        return 1;
      }
      for (const std::string& file : *files) {
        StatusOr<std::string> text = ReadManifest(file);
        if (!text.ok()) {
          err << "error: " << text.status().message() << '\n';
          return 1;
        }
        StatusOr<std::vector<ManifestObject>> objects = ReadManifestObjects(*text, file);
        if (!objects.ok()) {
          err << "error: " << objects.status().message() << '\n';
          return 1;
        }
        for (const ManifestObject& o : *objects) {
          targets.push_back({o.KindName(), o.name, o.ns.empty() ? ns : o.ns});
        }
      }
    }
  } else if (options.args.empty()) {
    err << "error: you must provide one or more resources by argument or filename\n";
    return 1;
  } else if (options.args[0].find('/') != std::string::npos) {
    for (const std::string& arg : options.args) {
      size_t slash = arg.find('/');
      if (slash == std::string::npos || slash == 0 || slash + 1 == arg.size()) {
        err << "error: arguments in resource/name form must have a single resource and name\n";
        return 1;
      }
      targets.push_back({arg.substr(0, slash), arg.substr(slash + 1), ns});
    }
  } else {
    if (options.args.size() < 2) {
      err << "error: resource(s) were provided, but no name was specified\n";
      return 1;
    }
    for (size_t i = 1; i < options.args.size(); ++i) {
      targets.push_back({options.args[0], options.args[i], ns});
    }
  }
  int exit_code = 0;
  for (const Target& t : targets) {
    if (!DeleteOne(t, options, server, out, err)) exit_code = 1;
  }
  return exit_code;
}

void AddDeleteCommand(CLI::App& app, int* exit_code, const ServerOptions* server) {
  auto options = std::make_shared<DeleteOptions>();
  CLI::App* cmd = app.add_subcommand("delete", "Delete objects by kind and name, or by file");
  cmd->add_option("args", options->args, "KIND NAME... or KIND/NAME...");
  cmd->add_option("-f,--filename", options->files, "File, directory or - naming the objects");
  cmd->add_option("-n,--namespace", options->ns, "Namespace (default: default)");
  cmd->add_flag("-R,--recursive", options->recursive, "Descend into subdirectories with -f");
  cmd->add_flag("--ignore-not-found", options->ignore_not_found,
                "Treat an object that does not exist as deleted");
  cmd->add_flag("--wait", options->wait, "Return once the controller dropped the objects");
  cmd->callback([options, exit_code, server] {
    *exit_code = RunDelete(*options, *server, std::cout, std::cerr);
  });
}

}  // namespace portico::ctl
