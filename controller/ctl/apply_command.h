// apply_command.h: `portico-ctl apply -f FILE|DIR|-`: sends manifests to a controller's admin
// API (POST /api/v1/apply), one request per file, which validates every document before it
// writes any into its config source. A directory means its .yaml, .yml and .json files (-R:
// recursively). Prints kubectl's "httproute.gateway.networking.k8s.io/web created" lines;
// --wait returns once the controller processed the objects. Exit status 1 when a file failed.
//
// Thread-safety: runs on the main thread.
#ifndef PORTICO_CONTROLLER_CTL_APPLY_COMMAND_H_
#define PORTICO_CONTROLLER_CTL_APPLY_COMMAND_H_

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "controller/ctl/server_call.h"

namespace portico::ctl {

struct ApplyOptions {
  std::vector<std::string> files;  // -f, repeatable
  bool recursive = false;          // -R
  bool wait = false;               // --wait
};

// AddApplyCommand registers `apply`; `exit_code` and `server` must outlive app.parse().
void AddApplyCommand(CLI::App& app, int* exit_code, const ServerOptions* server);

int RunApply(const ApplyOptions& options, const ServerOptions& server, std::ostream& out,
             std::ostream& err);

// LowerKindGroup renders "httproute.gateway.networking.k8s.io" ("secret" for the core group),
// how kubectl names a kind in apply and delete messages.
std::string LowerKindGroup(std::string_view kind, std::string_view group);

}  // namespace portico::ctl

#endif  // PORTICO_CONTROLLER_CTL_APPLY_COMMAND_H_
