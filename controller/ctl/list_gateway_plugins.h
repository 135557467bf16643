// list_gateway_plugins.h: `portico-ctl list-plugins --target gateway`: what plugins (kinds with a
// gateway handler, filter types) the gateways run.
//
//   portico-ctl list-plugins --target gateway [--server URL] [-o table|json|wide]
//       every gateway connected to the controller, from the inventory its ConfigSync Hello
//       announced (GET /api/v1/gateways): one table per gateway
//   portico-ctl list-plugins --target gateway --address HOST:PORT [-o table|json|wide]
//       one gateway, asked directly on its admin API (GET /api/v1/plugins): its plugins as
//       `--dir` prints them, then its filter types
//
// Exit status: 0, or 1 when the controller or gateway cannot be asked or a plugin was refused.
// Thread-safety: runs on the main thread.
#ifndef PORTICO_CONTROLLER_CTL_LIST_GATEWAY_PLUGINS_H_
#define PORTICO_CONTROLLER_CTL_LIST_GATEWAY_PLUGINS_H_

#include <ostream>
#include <string>

#include "controller/ctl/server_call.h"

namespace portico::ctl {

// ListGatewayPlugins asks the controller at `server`, or the gateway admin at `address` when it
// is set, and prints in `format` ("table", "wide" or "json").
int ListGatewayPlugins(const ServerOptions& server, const std::string& address,
                       const std::string& format, std::ostream& out, std::ostream& err);

}  // namespace portico::ctl

#endif  // PORTICO_CONTROLLER_CTL_LIST_GATEWAY_PLUGINS_H_
