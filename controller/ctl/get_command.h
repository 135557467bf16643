// get_command.h: `portico-ctl get`, objects with their status from a controller's admin API.
//
//   portico-ctl get KIND [NAME...] [-n NS | -A] [-o table|wide|yaml|json|name]
//   portico-ctl get KIND/NAME ...
//
// KIND is resolved by the controller the way kubectl does ("httproutes", "gtw",
// "Gateway.gateway.networking.k8s.io"). Without -n the namespace is "default" (ignored for
// cluster-scoped kinds). yaml and json print the objects as the controller holds them, status
// included; several objects print as a kubectl List. Exit status 1 on any error, with kubectl's
// "Error from server (NotFound): ..." messages.
//
// Thread-safety: runs on the main thread.
#ifndef PORTICO_CONTROLLER_CTL_GET_COMMAND_H_
#define PORTICO_CONTROLLER_CTL_GET_COMMAND_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "controller/ctl/server_call.h"

namespace portico::ctl {

struct GetOptions {
  std::vector<std::string> args;  // KIND [NAME...] or KIND/NAME...
  std::string ns;                 // -n; empty: "default"
  bool all_namespaces = false;    // -A
  std::string output = "table";
  int64_t now_unix_s = 0;  // 0: the system clock (tests pin it)
};

// AddGetCommand registers `get`; `exit_code` and `server` must outlive app.parse().
void AddGetCommand(CLI::App& app, int* exit_code, const ServerOptions* server);

int RunGet(const GetOptions& options, const ServerOptions& server, std::ostream& out,
           std::ostream& err);

// StripPortico removes the admin API's "portico" member (source, error) from an object, which
// yaml/json output leaves out as kubectl would; except for an object with an error, which keeps
// what says why (source, error, and for a refused generation the refused and serving
// generations and every violation with its field and line).
void StripPortico(rapidjson::Value& object);

}  // namespace portico::ctl

#endif  // PORTICO_CONTROLLER_CTL_GET_COMMAND_H_
