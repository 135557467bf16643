// main.cc: portico-ctl, the command-line client (DESIGN.md §8). Each subcommand lives in its own
// file and registers itself on the app (list_plugins.h; later get, apply, delete, status, diff,
// gen-certs). Flags and output follow kubectl habits.
#include <CLI/CLI.hpp>

#include "controller/ctl/list_plugins.h"

int main(int argc, char** argv) {
  CLI::App app{"portico-ctl: inspect and manage Portico controllers, gateways and plugins"};
  app.set_version_flag("--version", PORTICO_VERSION);
  app.require_subcommand(1);
  int exit_code = 0;
  portico::ctl::AddListPluginsCommand(app, &exit_code);
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
