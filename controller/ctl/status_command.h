// status_command.h: `portico-ctl status`, a controller's state and the gateways connected to it
// over ConfigSync, from its admin API (GET /api/v1/info, /api/v1/gateways and /api/v1/errors).
//
//   portico-ctl status [--server URL] [-o table|json]
//
// table prints a summary (server, server id, version, ready, head, objects, errors, gateways;
// for controllers on etcd also "HA: <id> (leader|follower|unknown)", "Leader: <id> (lease <hex>,
// TTL <n> s, epoch <n>)" and "Revision: <n> (etcd, watching <member>)")
// and, when gateways are connected, kubectl-style rows
//   NAME  SERVES  ADDRESSES  ACKED  HEAD  LAG  NACKS  CONNECTED-SINCE
// SERVES lists the served Gateways ("ns/name") and "class=NAME" for a served GatewayClass; HEAD
// is the newest version told to the gateway; LAG is the store's head minus ACKED.
// Then, when the controller reports problems (GET /api/v1/errors), rows
//   WHERE  OBJECT  PROBLEM
// one per error, and one per violation of a refused object ("web.yaml:14  HTTPRoute default/web
// spec.rules[0].matches[0].path.type: must be ..."), the problem cut to 100 characters.
// json prints {"controller": <info>, "gateways": [<gateway>...], "errors": [<error>...]} as the
// admin API answers them.
// Exit status 0, or 1 when the controller cannot be asked (the reason on stderr).
//
// Thread-safety: runs on the main thread; the Render functions are pure.
#ifndef PORTICO_CONTROLLER_CTL_STATUS_COMMAND_H_
#define PORTICO_CONTROLLER_CTL_STATUS_COMMAND_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <ostream>
#include <string>

#include "controller/ctl/server_call.h"
#include "portico/sdk/json.h"

namespace portico::ctl {

struct StatusOptions {
  std::string output = "table";
  int64_t now_unix_s = 0;  // 0: the system clock (tests pin it)
};

// AddStatusCommand registers `status`; `exit_code` and `server` must outlive app.parse().
void AddStatusCommand(CLI::App& app, int* exit_code, const ServerOptions* server);

int RunStatus(const StatusOptions& options, const ServerOptions& server, std::ostream& out,
              std::ostream& err);

// RenderStatusTable prints the summary of `info` (GET /api/v1/info) and the table of `gateways`
// (the "items" of GET /api/v1/gateways) as seen at `now_unix_s`; `server` is the URL asked.
void RenderStatusTable(const std::string& server, const rapidjson::Value& info,
                       const rapidjson::Value& gateways, int64_t now_unix_s, std::ostream& out);

// RenderErrorTable prints the rows of `errors` (the "items" of GET /api/v1/errors); nothing when
// there are none.
void RenderErrorTable(const rapidjson::Value& errors, std::ostream& out);

// RenderStatusJson prints {"controller": info, "gateways": gateways, "errors": errors} (errors
// left out when null), indented.
void RenderStatusJson(const rapidjson::Value& info, const rapidjson::Value& gateways,
                      std::ostream& out, const rapidjson::Value* errors = nullptr);

}  // namespace portico::ctl

#endif  // PORTICO_CONTROLLER_CTL_STATUS_COMMAND_H_
