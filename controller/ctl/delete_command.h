// delete_command.h: `portico-ctl delete`: removes objects from a controller's config source
// through its admin API (DELETE /api/v1/objects/...).
//
//   portico-ctl delete KIND NAME... [-n NS] [--ignore-not-found] [--wait]
//   portico-ctl delete KIND/NAME...
//   portico-ctl delete -f FILE|DIR|- [-R]      (the objects the files name)
//
// Prints kubectl's `httproute.gateway.networking.k8s.io "web" deleted`. Exit status 1 when an
// object could not be deleted (NotFound included unless --ignore-not-found).
//
// Thread-safety: runs on the main thread.
#ifndef PORTICO_CONTROLLER_CTL_DELETE_COMMAND_H_
#define PORTICO_CONTROLLER_CTL_DELETE_COMMAND_H_

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "controller/ctl/server_call.h"

namespace portico::ctl {

struct DeleteOptions {
  std::vector<std::string> args;   // KIND NAME... or KIND/NAME...
  std::vector<std::string> files;  // -f
  std::string ns;                  // -n
  bool recursive = false;
  bool ignore_not_found = false;
  bool wait = false;
};

// AddDeleteCommand registers `delete`; `exit_code` and `server` must outlive app.parse().
void AddDeleteCommand(CLI::App& app, int* exit_code, const ServerOptions* server);

int RunDelete(const DeleteOptions& options, const ServerOptions& server, std::ostream& out,
              std::ostream& err);

}  // namespace portico::ctl

#endif  // PORTICO_CONTROLLER_CTL_DELETE_COMMAND_H_
