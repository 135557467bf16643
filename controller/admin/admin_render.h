// admin_render.h: the JSON bodies of the admin API, rendered from the backend's values.
//
// Objects are served as the reconciler shows them (ObjectView::json: apiVersion, kind, metadata,
// spec, status; Secret material already redacted) with one extra top-level member:
//   "portico": {"source": {"file": "routes.yaml", "line": 3}, "syncedHash": "...", "error": ""}
//   plus, when its newest generation was refused, "refusedGeneration", "servingGeneration" and
//   "violations": [{"field", "line", "message"}].
// Lists are {"apiVersion": "v1", "kind": "List", "items": [...]} like kubectl's.
//
// Thread-safety: pure functions.
#ifndef PORTICO_CONTROLLER_ADMIN_ADMIN_RENDER_H_
#define PORTICO_CONTROLLER_ADMIN_ADMIN_RENDER_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "controller/admin/admin_backend.h"
#include "core/common/time_format.h"
#include "core/plugin/kind_registry.h"

namespace portico::controller::admin {

// RenderInfo: GET /api/v1/info.
std::string RenderInfo(const ServerInfo& info, const ControllerStats& stats, int64_t now_unix_ms);
// RenderPlugins: GET /api/v1/plugins, {"items": [<plugin_json.h records>]}.
std::string RenderPlugins(const core::PluginSet& plugins);
// RenderKinds: GET /api/v1/kinds, {"items": [...]} in start-up (`reads`) order.
std::string RenderKinds(const core::KindRegistry& registry);
// RenderObject: one object (see the file comment).
std::string RenderObject(const ObjectView& view);
// RenderObjectList: {"apiVersion": "v1", "kind": "List", "items": [...]}.
std::string RenderObjectList(const std::vector<ObjectView>& views);
// RenderErrors: GET /api/v1/errors, {"items": [{"file", "line", "object", "message"}]}; a refused
// object's item adds "refusedGeneration", "servingGeneration" and "violations": [{"field",
// "line", "message"}].
std::string RenderErrors(const std::vector<ConfigError>& errors);
// RenderApplied: POST /api/v1/apply, {"items": [{"apiVersion", "kind", "group", "plural",
// "namespace", "name", "result"}]}.
std::string RenderApplied(const std::vector<AppliedObject>& applied);

// RenderGateways: GET /api/v1/gateways, {"items": [{"name", "clientId", "peer", "gateways",
// "gatewayClass", "addresses", "state", "ackedVersion", "sentVersion", "head", "lag",
// "connectedUnixMs", "connected", "syncedObjects", "inventory": [{"name", "version"}],
// "nacks": [{"key", "hash", "reason"}]}]}.
std::string RenderGateways(const std::vector<sync::ConnectedGateway>& gateways);
// RenderGatewaySynced: GET /api/v1/gateways/NAME/synced, what the controller believes the
// gateway holds: {"name", "total", "objects": [{"key": "group/kind/ns/name", "hash"}],
// "kinds": {"Kind.group": {"ns/name": hash}}} (the second form is the gateway's own
// /api/v1/synced shape, for `portico-ctl diff`).
std::string RenderGatewaySynced(std::string_view name,
                                const std::map<std::string, std::string>& synced);

// RenderDeleted: DELETE /api/v1/objects/..., {"deleted": {"kind", "group", "plural",
// "namespace", "name"}}.
std::string RenderDeleted(const core::KindInfo& kind, const sdk::ObjectRef& ref);

// FormatRfc3339 renders Unix milliseconds as "2024-05-01T12:00:00Z" (core/common/time_format.h).
using core::FormatRfc3339;

// QualifiedPlural names a kind the way kubectl's messages do:
// "httproutes.gateway.networking.k8s.io", "secrets" for the core group.
std::string QualifiedPlural(const core::KindInfo& kind);

}  // namespace portico::controller::admin

#endif  // PORTICO_CONTROLLER_ADMIN_ADMIN_RENDER_H_
