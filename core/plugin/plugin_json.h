// plugin_json.h: the JSON form of plugin records, shared by `portico-ctl list-plugins -o json`
// and the controller's admin API (GET /api/v1/plugins), and its parser, so `list-plugins
// --target controller` prints the same tables as `--dir` from what a controller reports.
//
// Format: an array of {"name", "version", "description", "manifestVersion", "abi": {"major",
// "minor"}, "sdkVersion", "abiVerdict", "kinds": [{"group", "kind", "versions", "plural",
// "shortNames", "scope", "reads", "capabilities", "sync"}], "capabilities", "status": "ok" |
// "rejected", "reason" (when rejected), "sha256", "path"}. Manifest fields are absent when the
// file had no readable manifest.
//
// Thread-safety: pure functions.
#ifndef PORTICO_CORE_PLUGIN_PLUGIN_JSON_H_
#define PORTICO_CORE_PLUGIN_PLUGIN_JSON_H_

#include <string>
#include <vector>

#include "core/plugin/preflight.h"
#include "portico/sdk/json.h"
#include "portico/sdk/status.h"

namespace portico::core {

// RenderPluginsJson renders `records` as a JSON array (indented by two spaces when `pretty`).
std::string RenderPluginsJson(const std::vector<PluginRecord>& records, bool pretty);

// ParsePluginsJson reads an array written by RenderPluginsJson back into records (the inverse,
// except `loaded`, which is not rendered). INVALID_ARGUMENT names the entry and field at fault.
StatusOr<std::vector<PluginRecord>> ParsePluginsJson(const rapidjson::Value& array);

}  // namespace portico::core

#endif  // PORTICO_CORE_PLUGIN_PLUGIN_JSON_H_
