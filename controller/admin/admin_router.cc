#include "controller/admin/admin_router.h"

#include <chrono>
#include <map>
#include <optional>
#include <string_view>

#include "controller/admin/admin_render.h"
#include "controller/admin/metrics_text.h"

namespace portico::controller::admin {
namespace {

constexpr std::string_view kObjectsPrefix = "/api/v1/objects/";
constexpr std::string_view kGatewaysPrefix = "/api/v1/gateways/";

// SplitPath splits "/a/b/c" into {"a", "b", "c"}, ignoring one trailing '/'.
std::vector<std::string> SplitPath(std::string_view path) {
  std::vector<std::string> parts;
  while (!path.empty()) {
    if (path.front() == '/') {
      path.remove_prefix(1);
      continue;
    }
    size_t slash = path.find('/');
    parts.emplace_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash);
  }
  return parts;
}

AdminResponse MethodNotAllowed(const AdminRequest& request, std::string_view allow) {
  AdminResponse response =
      ErrorResponse(405, "method " + request.method + " is not allowed on " + request.path +
                             " (allowed: " + std::string(allow) + ")");
  response.headers.emplace_back("Allow", std::string(allow));
  return response;
}

// Flag reads a boolean query parameter: present with "", "1" or "true" is true.
bool Flag(const AdminRequest& request, std::string_view name) {
  auto it = request.query.find(name);
  if (it == request.query.end()) return false;
  return it->second.empty() || it->second == "1" || it->second == "true";
}

std::string QueryValue(const AdminRequest& request, std::string_view name) {
  auto it = request.query.find(name);
  return it == request.query.end() ? std::string() : it->second;
}

AdminResponse Ok(std::string body) { return JsonResponse(200, std::move(body)); }

}  // namespace

AdminRouter::AdminRouter(AdminBackend* backend, std::function<int64_t()> now_unix_ms)
    : backend_(backend), now_unix_ms_(std::move(now_unix_ms)) {
  if (!now_unix_ms_) {
    now_unix_ms_ = [] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
          .count();
    };
  }
}

AdminResponse AdminRouter::Handle(const AdminRequest& request) const {
  std::string path = request.path;
  if (path.size() > 1 && path.back() == '/') path.pop_back();
  const std::string& method = request.method;
  bool get = method == "GET";
  bool post = method == "POST";

  if (path == "/healthz") {
    return get ? Ok("{\"status\":\"ok\"}") : MethodNotAllowed(request, "GET");
  }
  if (path == "/readyz") {
    if (!get) return MethodNotAllowed(request, "GET");
    if (backend_->Ready()) return Ok("{\"ready\":true}");
    AdminResponse response =
        ErrorResponse(503, "not ready: the initial configuration is still being processed");
    return response;
  }
  if (path == "/metrics") {
    if (!get) return MethodNotAllowed(request, "GET");
    AdminResponse response;
    response.content_type = kMetricsContentType;
    response.body = RenderMetrics(backend_->Stats(), backend_->Plugins().registry);
    return response;
  }
  if (path == "/api/v1/info") {
    if (!get) return MethodNotAllowed(request, "GET");
    return Ok(RenderInfo(backend_->Info(), backend_->Stats(), now_unix_ms_()));
  }
  if (path == "/api/v1/plugins") {
    return get ? Ok(RenderPlugins(backend_->Plugins())) : MethodNotAllowed(request, "GET");
  }
  if (path == "/api/v1/kinds") {
    return get ? Ok(RenderKinds(backend_->Plugins().registry)) : MethodNotAllowed(request, "GET");
  }
  if (path == "/api/v1/errors") {
    return get ? Ok(RenderErrors(backend_->Errors())) : MethodNotAllowed(request, "GET");
  }
  if (path == "/api/v1/apply") {
    return post ? Apply(request) : MethodNotAllowed(request, "POST");
  }
  if (path == "/api/v1/reload") {
    if (!post) return MethodNotAllowed(request, "POST");
    Status reloaded = backend_->Reload();
    if (!reloaded.ok()) return ErrorFor(reloaded);
    std::string body = "{\"reloaded\":true,\"serverId\":\"" + backend_->Info().server_id + "\"}";
    return Ok(body);
  }
  if (path == "/api/v1/admin/wipe-all") {
    if (!backend_->Info().testing) {
      return ErrorResponse(404, "no such endpoint: " + path +
                                    " (wipe-all is served only when the controller runs with "
                                    "--testing)");
    }
    if (!post) return MethodNotAllowed(request, "POST");
    StatusOr<size_t> wiped = backend_->WipeAll();
    if (!wiped.ok()) return ErrorFor(wiped.status());
    return Ok("{\"deleted\":" + std::to_string(*wiped) + "}");
  }
  if (path == "/api/v1/gateways") {
    return get ? Ok(RenderGateways(backend_->Gateways())) : MethodNotAllowed(request, "GET");
  }
  if (path.starts_with(kGatewaysPrefix)) {
    std::vector<std::string> parts = SplitPath(path.substr(kGatewaysPrefix.size()));
    if (parts.size() == 2 && parts[1] == "synced") {
      if (!get) return MethodNotAllowed(request, "GET");
      std::optional<std::map<std::string, std::string>> synced = backend_->GatewaySynced(parts[0]);
      if (!synced) return ErrorResponse(404, "no gateway named \"" + parts[0] + "\" is connected");
      return Ok(RenderGatewaySynced(parts[0], *synced));
    }
  }
  if (path.starts_with(kObjectsPrefix)) {
    std::vector<std::string> parts = SplitPath(path.substr(kObjectsPrefix.size()));
    if (!parts.empty() && parts.size() <= 3) return Objects(request, parts);
  }
  return ErrorResponse(404, "no such endpoint: " + path);
}

AdminResponse AdminRouter::Objects(const AdminRequest& request,
                                   const std::vector<std::string>& parts) const {
  bool get = request.method == "GET";
  bool del = request.method == "DELETE";
  const core::KindRegistry& registry = backend_->Plugins().registry;
  StatusOr<const core::KindInfo*> resolved = registry.Resolve(parts[0]);
  if (!resolved.ok()) {
    if (resolved.status().code() == StatusCode::kNotFound) {
      return ErrorResponse(404, "the server doesn't have a resource type \"" + parts[0] + "\"");
    }
    return ErrorResponse(400, resolved.status().message());
  }
  const core::KindInfo& kind = **resolved;
  bool cluster = kind.scope == PORTICO_SCOPE_CLUSTER;
  std::string ns_query = QueryValue(request, "namespace");

  if (parts.size() == 1) {
    if (!get) return MethodNotAllowed(request, "GET");
    return Ok(RenderObjectList(backend_->List(&kind, cluster ? "" : ns_query)));
  }
  if (!get && !del) return MethodNotAllowed(request, "GET, DELETE");

  sdk::ObjectRef ref;
  ref.group = kind.id.group;
  ref.kind = kind.id.kind;
  if (parts.size() == 2) {
    ref.name = parts[1];
    if (!cluster) ref.ns = ns_query.empty() ? "default" : ns_query;
  } else {
    if (cluster) {
      return ErrorResponse(400, kind.id.kind + " is cluster-scoped: use /api/v1/objects/" +
                                    kind.plural + "/" + parts[2]);
    }
    ref.ns = parts[1];
    ref.name = parts[2];
  }
  std::string what = QualifiedPlural(kind) + " \"" + ref.name + "\" not found" +
                     (ref.ns.empty() ? "" : " in namespace \"" + ref.ns + "\"");
  if (get) {
    std::optional<ObjectView> view = backend_->Get(ref);
    if (!view) return ErrorResponse(404, what);
    return Ok(RenderObject(*view));
  }
  Status deleted = backend_->Delete(ref, Flag(request, "wait"));
  if (deleted.code() == StatusCode::kNotFound) return ErrorResponse(404, what);
  if (!deleted.ok()) return ErrorFor(deleted);
  return Ok(RenderDeleted(kind, ref));
}

AdminResponse AdminRouter::Apply(const AdminRequest& request) const {
  if (request.body.find_first_not_of(" \t\r\n") == std::string::npos) {
    return ErrorResponse(400, "apply: the request body is empty (send YAML or JSON documents)");
  }
  StatusOr<std::vector<AppliedObject>> applied =
      backend_->Apply(request.body, Flag(request, "wait"));
  if (!applied.ok()) {
    StatusCode code = applied.status().code();
    if (code == StatusCode::kInvalidArgument || code == StatusCode::kNotFound) {
      return ErrorResponse(422, applied.status().message());
    }
    return ErrorFor(applied.status());
  }
  return Ok(RenderApplied(*applied));
}

}  // namespace portico::controller::admin
