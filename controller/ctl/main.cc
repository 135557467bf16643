// main.cc: portico-ctl, the command-line client (DESIGN.md §8). Each subcommand lives in its own
// file and registers itself on the app: list-plugins (list_plugins.h), get (get_command.h),
// apply (apply_command.h), delete (delete_command.h), gen-certs (gen_certs_command.h), status
// (status_command.h), diff (diff_command.h), plugin verify (plugin_verify_command.h), import
// and export (etcd_commands.h). Flags and output follow kubectl habits; the global
// --server (env PORTICO_SERVER) names the controller.
#include <CLI/CLI.hpp>

#include "controller/ctl/apply_command.h"
#include "controller/ctl/delete_command.h"
#include "controller/ctl/diff_command.h"
#include "controller/ctl/etcd_commands.h"
#include "controller/ctl/gen_certs_command.h"
#include "controller/ctl/get_command.h"
#include "controller/ctl/list_plugins.h"
#include "controller/ctl/plugin_verify_command.h"
#include "controller/ctl/server_call.h"
#include "controller/ctl/status_command.h"

int main(int argc, char** argv) {
  CLI::App app{"portico-ctl: inspect and manage Portico controllers, gateways and plugins"};
  app.set_version_flag("--version", PORTICO_VERSION);
  app.require_subcommand(1);
  app.fallthrough();  // global flags may follow the subcommand, as with kubectl
  int exit_code = 0;
  portico::ctl::ServerOptions server;
  portico::ctl::AddServerOption(app, &server);
  portico::ctl::AddListPluginsCommand(app, &exit_code, &server);
  portico::ctl::AddGetCommand(app, &exit_code, &server);
  portico::ctl::AddApplyCommand(app, &exit_code, &server);
  portico::ctl::AddDeleteCommand(app, &exit_code, &server);
  portico::ctl::AddGenCertsCommand(app, &exit_code);
  portico::ctl::AddStatusCommand(app, &exit_code, &server);
  portico::ctl::AddDiffCommand(app, &exit_code, &server);
  portico::ctl::AddPluginCommand(app, &exit_code);
  portico::ctl::AddEtcdCommands(app, &exit_code);
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
