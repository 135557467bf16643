// diff_command.h: `portico-ctl diff`, what the controller believes a gateway holds against what
// the gateway says it holds.
//
//   portico-ctl diff --gateway NAME [--gateway-admin URL] [--server URL]
//
// Reads GET /api/v1/gateways/NAME/synced from the controller and GET /api/v1/synced from the
// gateway's admin API (default http://127.0.0.1:5900), after checking with its /api/v1/info
// that the gateway there is NAME (by name or client id). Both answers carry
// "kinds": {"Kind.group": {"ns/name": hash}}. Prints one line per object that differs, sorted by
// kind then name, as kubectl diff would mark them:
//   + HTTPRoute.gateway.networking.k8s.io default/web              controller has, gateway lacks
//   - Service default/old                                           gateway has, controller not
//   ~ Gateway.gateway.networking.k8s.io default/web controller=<hash12> gateway=<hash12>
// or "no differences". Exit status like diff(1): 0 identical, 1 different, 2 on errors (the
// controller or gateway cannot be asked, NAME is not connected, or the gateway at the URL is
// another one). The two reads are not one atomic cut: while a batch is in flight the answer may
// show its objects; a note on stderr says so when the gateway reports lag.
//
// Thread-safety: runs on the main thread; ParseSyncedKinds, DiffSynced and FormatDiffEntry are
// pure.
#ifndef PORTICO_CONTROLLER_CTL_DIFF_COMMAND_H_
#define PORTICO_CONTROLLER_CTL_DIFF_COMMAND_H_

#include <CLI/CLI.hpp>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "controller/ctl/server_call.h"
#include "portico/sdk/json.h"
#include "portico/sdk/status.h"

namespace portico::ctl {

inline constexpr char kDefaultGatewayAdmin[] = "http://127.0.0.1:5900";

struct DiffOptions {
  std::string gateway;                               // --gateway NAME (required)
  std::string gateway_admin = kDefaultGatewayAdmin;  // --gateway-admin URL
};

// SyncedKinds: "Kind.group" -> "ns/name" (or "name") -> content hash.
using SyncedKinds = std::map<std::string, std::map<std::string, std::string>>;

// DiffEntry is one object that differs.
struct DiffEntry {
  enum class Op { kControllerOnly, kGatewayOnly, kHashDiffers };
  Op op;
  std::string kind;    // "Kind.group"
  std::string object;  // "ns/name"
  std::string controller_hash;
  std::string gateway_hash;
};

// AddDiffCommand registers `diff`; `exit_code` and `server` must outlive app.parse().
void AddDiffCommand(CLI::App& app, int* exit_code, const ServerOptions* server);

int RunDiff(const DiffOptions& options, const ServerOptions& server, std::ostream& out,
            std::ostream& err);

// ParseSyncedKinds reads the "kinds" member of either admin answer. INVALID_ARGUMENT naming
// `source` when it is missing or not {"Kind": {"name": "hash"}}.
StatusOr<SyncedKinds> ParseSyncedKinds(const rapidjson::Value& answer, std::string_view source);

// DiffSynced compares the two views; the result is sorted by kind, then object.
std::vector<DiffEntry> DiffSynced(const SyncedKinds& controller, const SyncedKinds& gateway);

// FormatDiffEntry renders one line (no newline); hashes are cut to 12 characters.
std::string FormatDiffEntry(const DiffEntry& entry);

}  // namespace portico::ctl

#endif  // PORTICO_CONTROLLER_CTL_DIFF_COMMAND_H_
