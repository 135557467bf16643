#include "gateway/admin/gateway_admin.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <chrono>
#include <ctime>
#include <map>
#include <optional>
#include <string_view>

#include "core/common/time_format.h"
#include "core/plugin/kind_id.h"
#include "core/plugin/manifest.h"
#include "core/plugin/plugin_json.h"

namespace portico::gateway {
namespace {

using core::admin::AdminRequest;
using core::admin::AdminResponse;
using core::admin::ErrorResponse;
using core::admin::JsonResponse;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

AdminResponse Ok(std::string body) { return JsonResponse(200, std::move(body)); }

AdminResponse MethodNotAllowed(const AdminRequest& request, std::string_view allow) {
  AdminResponse response =
      ErrorResponse(405, "method " + request.method + " is not allowed on " + request.path +
                             " (allowed: " + std::string(allow) + ")");
  response.headers.emplace_back("Allow", std::string(allow));
  return response;
}

void String(Writer& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void Strings(Writer& w, std::string_view key, const std::vector<std::string>& values) {
  String(w, key);
  w.StartArray();
  for (const std::string& v : values) String(w, v);
  w.EndArray();
}

// RenderFilterTypes lists the registered filter types: [{"name", "phase", "order", "plugin"}].
std::string RenderFilterTypes(const core::KindRegistry& registry) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartArray();
  for (const core::FilterTypeInfo* type : registry.FilterTypes()) {
    w.StartObject();
    w.Key("name");
    String(w, type->name);
    w.Key("phase");
    String(w, core::FilterPhaseName(type->phase));
    w.Key("order");
    w.Int(type->order);
    w.Key("plugin");
    String(w, type->plugin_name);
    w.EndObject();
  }
  w.EndArray();
  return std::string(buffer.GetString(), buffer.GetSize());
}

void Counts(Writer& w, std::string_view key, const std::map<std::string, size_t>& counts) {
  String(w, key);
  w.StartObject();
  for (const auto& [name, count] : counts) {
    String(w, name);
    w.Uint64(count);
  }
  w.EndObject();
}

std::string Done(const rapidjson::StringBuffer& buffer) {
  return std::string(buffer.GetString(), buffer.GetSize());
}

using core::FormatRfc3339;

// KindLabel renders "Kind.group" ("Kind" for the core group), like RuntimeStats.synced_by_kind.
std::string KindLabel(const core::StoreKey& key) {
  return core::KindId{key.group, key.kind}.ToString();
}

std::string ObjectLabel(const core::StoreKey& key) {
  return key.ns.empty() ? key.name : key.ns + "/" + key.name;
}

void EntryKeys(Writer& w, std::string_view key, const std::vector<core::EntryKey>& entries) {
  String(w, key);
  w.StartArray();
  for (const auto& [format, id] : entries) {
    w.StartObject();
    w.Key("format");
    String(w, format);
    w.Key("id");
    String(w, id);
    w.EndObject();
  }
  w.EndArray();
}

std::string RenderStats(const core::RuntimeStats& s) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("syncedObjects");
  w.Uint64(s.synced_objects);
  Counts(w, "syncedByKind", s.synced_by_kind);
  w.Key("entries");
  w.Uint64(s.entries);
  Counts(w, "entriesByFormat", s.entries_by_format);
  w.Key("owners");
  w.Uint64(s.owners);
  w.Key("bytes");
  w.Uint64(s.bytes);
  w.Key("generation");
  w.Uint64(s.generation);
  w.Key("version");
  w.Uint64(s.version);
  w.Key("commits");
  w.Uint64(s.commits);
  w.Key("nacks");
  w.Uint64(s.nacks);
  w.EndObject();
  return Done(buffer);
}

std::string RenderHistory(const std::vector<core::CommitRecord>& records) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("items");
  w.StartArray();
  for (const core::CommitRecord& r : records) {
    w.StartObject();
    w.Key("generation");
    w.Uint64(r.generation);
    w.Key("version");
    w.Uint64(r.version);
    w.Key("time");
    String(w, FormatRfc3339(r.time_unix_ms));
    w.Key("timeUnixMs");
    w.Int64(r.time_unix_ms);
    w.Key("replaceAll");
    w.Bool(r.replace_all);
    w.Key("changes");
    w.Uint64(r.changes);
    w.Key("nacks");
    w.Uint64(r.nacks);
    EntryKeys(w, "added", r.added);
    EntryKeys(w, "removed", r.removed);
    EntryKeys(w, "changed", r.changed);
    w.Key("truncated");
    w.Bool(r.truncated);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return Done(buffer);
}

std::string RenderInfo(const GatewayAdminInfo& info, const SyncStatus& s, int64_t now_unix_ms) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("name");
  String(w, info.name);
  w.Key("clientId");
  String(w, s.client_id);
  w.Key("controller");
  String(w, s.controller);
  Strings(w, "controllers", s.controllers);
  w.Key("failovers");
  w.Uint64(s.failovers);
  w.Key("epoch");
  w.Uint64(s.epoch);
  w.Key("staleEpochs");
  w.Uint64(s.stale_epochs);
  w.Key("connected");
  w.Bool(s.connected);
  w.Key("serverId");
  String(w, s.server_id);
  w.Key("serverIdSeen");
  String(w, s.server_id_seen);
  w.Key("appliedVersion");
  w.Uint64(s.applied_version);
  w.Key("serverHead");
  w.Uint64(s.server_head);
  w.Key("lag");
  w.Uint64(s.lag());
  w.Key("ready");
  w.Bool(s.ready);
  w.Key("readySource");
  String(w, s.ReadySource());
  w.Key("fromSnapshot");
  w.Bool(s.from_snapshot);
  Strings(w, "gateways", info.gateways);
  w.Key("gatewayClass");
  String(w, info.gateway_class);
  Strings(w, "addresses", info.addresses);
  w.Key("snapshotPath");
  String(w, info.snapshot_path);
  w.Key("version");
  String(w, info.version);
  w.Key("started");
  String(w, FormatRfc3339(info.started_unix_ms));
  w.Key("uptimeSeconds");
  w.Int64((now_unix_ms - info.started_unix_ms) / 1000);
  w.Key("connects");
  w.Uint64(s.connects);
  w.Key("reconnects");
  w.Uint64(s.reconnects);
  w.Key("disconnects");
  w.Uint64(s.disconnects);
  w.Key("snapshotsApplied");
  w.Uint64(s.snapshots_applied);
  w.Key("batchesApplied");
  w.Uint64(s.batches_applied);
  w.Key("nacksSent");
  w.Uint64(s.nacks_sent);
  w.Key("replaysIgnored");
  w.Uint64(s.replays_ignored);
  w.Key("rejections");
  w.Uint64(s.rejections);
  w.Key("droppedPartials");
  w.Uint64(s.dropped_partials);
  w.Key("lastError");
  String(w, s.last_error);
  w.EndObject();
  return Done(buffer);
}

std::string RenderPlaneStats(const server::DataPlaneStats& s) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("generation");
  w.Uint64(s.generation);
  w.Key("workers");
  w.Uint64(s.workers);
  w.Key("connectionsAccepted");
  w.Uint64(s.connections_accepted);
  w.Key("connectionsOpen");
  w.Uint64(s.connections_open);
  w.Key("requests");
  w.Uint64(s.requests);
  w.Key("retries");
  w.Uint64(s.retries);
  w.Key("responses");
  w.StartObject();
  for (size_t i = 1; i < s.responses.size(); ++i) {
    w.Key((std::to_string(i) + "xx").c_str());
    w.Uint64(s.responses[i]);
  }
  w.EndObject();
  w.Key("upstreamConnects");
  w.Uint64(s.upstream_connects);
  w.Key("upstreamReuses");
  w.Uint64(s.upstream_reuses);
  w.Key("upstreamOpen");
  w.Uint64(s.upstream_open);
  w.Key("mirrorRequests");
  w.Uint64(s.mirror_requests);
  w.Key("mirrorFailures");
  w.Uint64(s.mirror_failures);
  w.Key("mirrorConnects");
  w.Uint64(s.mirror_connects);
  w.Key("mirrorInFlight");
  w.Uint64(s.mirror_in_flight);
  w.Key("filterCalls");
  w.Uint64(s.filter_calls);
  w.Key("filterCallFailures");
  w.Uint64(s.filter_call_failures);
  w.Key("filterCallsCancelled");
  w.Uint64(s.filter_calls_cancelled);
  w.Key("filterCallsInFlight");
  w.Uint64(s.filter_calls_in_flight);
  w.Key("tlsFailures");
  w.Uint64(s.tls_failures);
  w.Key("connectionsShed");
  w.Uint64(s.connections_shed);
  w.Key("connectionsRefused");
  w.Uint64(s.connections_refused);
  w.Key("acceptFailures");
  w.Uint64(s.accept_failures);
  // Local error answers by status and reason: [{"status": 400, "reason": "bare_lf", "count": 2}].
  w.Key("rejected");
  w.StartArray();
  for (const auto& [key, count] : s.rejected) {
    w.StartObject();
    w.Key("status");
    w.Int(key.first);
    w.Key("reason");
    w.String(key.second.data(), static_cast<rapidjson::SizeType>(key.second.size()));
    w.Key("count");
    w.Uint64(count);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return Done(buffer);
}

}  // namespace

GatewayAdminRouter::GatewayAdminRouter(GatewayAdminInfo info, const core::PluginSet* plugins,
                                       const core::GatewayRuntime* runtime,
                                       std::function<SyncStatus()> sync_status,
                                       std::function<int64_t()> now_unix_ms,
                                       std::function<server::DataPlaneStats()> plane_stats)
    : info_(std::move(info)),
      plugins_(plugins),
      runtime_(runtime),
      sync_status_(std::move(sync_status)),
      now_unix_ms_(std::move(now_unix_ms)),
      plane_stats_(std::move(plane_stats)) {
  if (!now_unix_ms_) {
    now_unix_ms_ = [] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
          .count();
    };
  }
}

AdminResponse GatewayAdminRouter::Handle(const AdminRequest& request) const {
  std::string path = request.path;
  if (path.size() > 1 && path.back() == '/') path.pop_back();
  bool get = request.method == "GET";
  auto only_get = [&](auto render) -> AdminResponse {
    return get ? render() : MethodNotAllowed(request, "GET");
  };

  if (path == "/healthz") return only_get([] { return Ok("{\"status\":\"ok\"}"); });
  if (path == "/readyz") {
    return only_get([&] {
      SyncStatus s = sync_status_();
      if (s.ready) return Ok("{\"ready\":true,\"source\":\"" + s.ReadySource() + "\"}");
      return ErrorResponse(503,
                           "not ready: no configuration applied yet (waiting for a snapshot "
                           "from the controller at " +
                               s.controller + ")");
    });
  }
  if (path == "/metrics") {
    return only_get([&] {
      AdminResponse response;
      response.content_type = kGatewayMetricsContentType;
      std::optional<server::DataPlaneStats> plane;
      if (plane_stats_) plane = plane_stats_();
      response.body =
          RenderGatewayMetrics(sync_status_(), runtime_->Stats(), plane ? &*plane : nullptr);
      return response;
    });
  }
  if (path == "/api/v1/info") {
    return only_get([&] { return Ok(RenderInfo(info_, sync_status_(), now_unix_ms_())); });
  }
  if (path == "/api/v1/plugins") {
    return only_get([&] {
      return Ok("{\"items\":" + core::RenderPluginsJson(plugins_->plugins, /*pretty=*/false) +
                ",\"filterTypes\":" + RenderFilterTypes(plugins_->registry) + "}");
    });
  }
  if (path == "/api/v1/synced") return only_get([&] { return Synced(request); });
  if (path == "/api/v1/runtime")
    return only_get([&] { return Ok(RenderStats(runtime_->Stats())); });
  if (path == "/api/v1/runtime/history") {
    return only_get([&] { return Ok(RenderHistory(runtime_->History())); });
  }
  if (path == "/api/v1/dataplane" && plane_stats_) {
    return only_get([&] { return Ok(RenderPlaneStats(plane_stats_())); });
  }
  return ErrorResponse(404, "no such endpoint: " + path);
}

AdminResponse GatewayAdminRouter::Synced(const AdminRequest& request) const {
  SyncStatus sync = sync_status_();
  std::vector<core::HeldObject> held = runtime_->Held();
  std::optional<core::KindId> filter;
  if (auto it = request.query.find("kind"); it != request.query.end() && !it->second.empty()) {
    StatusOr<const core::KindInfo*> resolved = plugins_->registry.Resolve(it->second);
    if (resolved.ok()) {
      filter = (*resolved)->id;
    } else if (resolved.status().code() == StatusCode::kInvalidArgument) {
      return ErrorResponse(400, resolved.status().message());
    } else {
      // A kind no loaded plugin provides may still be held (from a snapshot file): exact match.
      core::KindId id = core::KindId::Parse(it->second);
      bool held_kind = false;
      for (const core::HeldObject& o : held)
        held_kind |= o.key.group == id.group && o.key.kind == id.kind;
      if (!held_kind) {
        return ErrorResponse(404,
                             "the gateway doesn't have a resource type \"" + it->second + "\"");
      }
      filter = id;
    }
  }
  std::map<std::string, std::map<std::string, std::string>> kinds;
  size_t total = 0;
  for (const core::HeldObject& o : held) {
    if (filter && (o.key.group != filter->group || o.key.kind != filter->kind)) continue;
    kinds[KindLabel(o.key)][ObjectLabel(o.key)] = o.hash;
    ++total;
  }
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("version");
  w.Uint64(sync.applied_version);
  w.Key("serverId");
  String(w, sync.server_id);
  w.Key("fromSnapshot");
  w.Bool(sync.from_snapshot);
  w.Key("total");
  w.Uint64(total);
  w.Key("kinds");
  w.StartObject();
  for (const auto& [kind, objects] : kinds) {
    String(w, kind);
    w.StartObject();
    for (const auto& [name, hash] : objects) {
      String(w, name);
      String(w, hash);
    }
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  return Ok(Done(buffer));
}

namespace {

std::string EscapeLabel(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

void Metric(std::string& out, std::string_view name, std::string_view type, std::string_view help,
            uint64_t value) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
  out += name;
  out += ' ';
  out += std::to_string(value);
  out += '\n';
}

void Labelled(std::string& out, std::string_view name, std::string_view help,
              std::string_view label, const std::map<std::string, size_t>& values,
              std::string_view type = "gauge") {
  out += "# HELP " + std::string(name) + " " + std::string(help) + "\n# TYPE " + std::string(name) +
         " " + std::string(type) + "\n";
  for (const auto& [key, value] : values) {
    out += std::string(name) + "{" + std::string(label) + "=\"" + EscapeLabel(key) + "\"} " +
           std::to_string(value) + "\n";
  }
}

}  // namespace

std::string RenderGatewayMetrics(const SyncStatus& s, const core::RuntimeStats& r,
                                 const server::DataPlaneStats* plane) {
  std::string out;
  Metric(out, "portico_gateway_sync_connected", "gauge",
         "1 while the ConfigSync stream to the controller is open", s.connected ? 1 : 0);
  Metric(out, "portico_gateway_sync_ready", "gauge",
         "1 once a snapshot (controller or file) is applied", s.ready ? 1 : 0);
  Metric(out, "portico_gateway_sync_from_snapshot", "gauge",
         "1 while the configuration held came from the snapshot file", s.from_snapshot ? 1 : 0);
  Metric(out, "portico_gateway_sync_applied_version", "gauge", "Last applied sync version",
         s.applied_version);
  Metric(out, "portico_gateway_sync_server_head", "gauge", "Controller head version last reported",
         s.server_head);
  Metric(out, "portico_gateway_sync_lag", "gauge", "Server head minus applied version", s.lag());
  Metric(out, "portico_gateway_sync_connects_total", "counter", "Streams established", s.connects);
  Metric(out, "portico_gateway_sync_reconnects_total", "counter",
         "Streams established after the first", s.reconnects);
  Metric(out, "portico_gateway_sync_disconnects_total", "counter",
         "Streams ended or failed to open", s.disconnects);
  Metric(out, "portico_gateway_sync_snapshots_total", "counter", "Snapshots applied",
         s.snapshots_applied);
  Metric(out, "portico_gateway_sync_batches_total", "counter", "Batches applied",
         s.batches_applied);
  Metric(out, "portico_gateway_sync_nacks_total", "counter", "Objects nacked to the controller",
         s.nacks_sent);
  Metric(out, "portico_gateway_sync_replays_ignored_total", "counter",
         "Batches or snapshots older than the applied version, acked and not applied",
         s.replays_ignored);
  Metric(out, "portico_gateway_sync_rejections_total", "counter", "Streams the controller rejected",
         s.rejections);
  Metric(out, "portico_gateway_sync_dropped_partials_total", "counter",
         "Snapshots or batches cut short by a broken stream and dropped", s.dropped_partials);
  Metric(out, "portico_gateway_runtime_commits_total", "counter", "Runtime snapshots committed",
         r.commits);
  Metric(out, "portico_gateway_runtime_generation", "gauge", "Generation of the current snapshot",
         r.generation);
  Metric(out, "portico_gateway_runtime_synced_objects", "gauge", "Synced objects held",
         r.synced_objects);
  Metric(out, "portico_gateway_runtime_entries", "gauge", "Runtime contributions held", r.entries);
  Metric(out, "portico_gateway_runtime_bytes", "gauge", "JSON bytes held by the runtime", r.bytes);
  Labelled(out, "portico_gateway_runtime_synced_objects_by_kind", "Synced objects held per kind",
           "kind", r.synced_by_kind);
  Labelled(out, "portico_gateway_runtime_entries_by_format", "Contributions held per format",
           "format", r.entries_by_format);
  if (plane == nullptr) return out;
  const server::DataPlaneStats& p = *plane;
  Metric(out, "portico_gateway_dataplane_generation", "gauge",
         "Configuration generation the workers serve", p.generation);
  Metric(out, "portico_gateway_connections_accepted_total", "counter",
         "Client connections accepted", p.connections_accepted);
  Metric(out, "portico_gateway_connections_open", "gauge", "Client connections open",
         p.connections_open);
  Metric(out, "portico_gateway_requests_total", "counter", "Requests received", p.requests);
  Metric(out, "portico_gateway_retries_total", "counter",
         "Upstream attempts retried by route retry policies", p.retries);
  std::map<std::string, size_t> by_class;
  for (size_t i = 1; i < p.responses.size(); ++i) {
    by_class[std::to_string(i) + "xx"] = p.responses[i];
  }
  Labelled(out, "portico_gateway_responses_total", "Responses by status class", "code", by_class,
           "counter");
  Metric(out, "portico_gateway_upstream_connects_total", "counter", "Upstream connections opened",
         p.upstream_connects);
  Metric(out, "portico_gateway_upstream_reuses_total", "counter",
         "Requests sent on a pooled upstream connection", p.upstream_reuses);
  Metric(out, "portico_gateway_upstream_open", "gauge", "Upstream connections open",
         p.upstream_open);
  Metric(out, "portico_gateway_mirror_requests_total", "counter",
         "RequestMirror copies written in full", p.mirror_requests);
  Metric(out, "portico_gateway_mirror_failures_total", "counter",
         "RequestMirror copies dropped, refused, reset or timed out", p.mirror_failures);
  Metric(out, "portico_gateway_mirror_connects_total", "counter",
         "Connections opened to RequestMirror backends", p.mirror_connects);
  Metric(out, "portico_gateway_mirror_in_flight", "gauge",
         "RequestMirror copies whose answer is not read yet", p.mirror_in_flight);
  Metric(out, "portico_gateway_filter_calls_total", "counter", "Filters' outbound calls answered",
         p.filter_calls);
  Metric(out, "portico_gateway_filter_call_failures_total", "counter",
         "Filters' outbound calls refused, reset or timed out", p.filter_call_failures);
  Metric(out, "portico_gateway_filter_calls_cancelled_total", "counter",
         "Filters' outbound calls abandoned because their request ended", p.filter_calls_cancelled);
  Metric(out, "portico_gateway_filter_calls_in_flight", "gauge",
         "Filters' outbound calls in flight", p.filter_calls_in_flight);
  Metric(out, "portico_gateway_tls_failures_total", "counter",
         "TLS sessions that failed (handshake refused or broken record)", p.tls_failures);
  Metric(out, "portico_gateway_connections_shed_total", "counter",
         "Idle client connections closed at the connection cap to admit a new one",
         p.connections_shed);
  Metric(out, "portico_gateway_connections_refused_total", "counter",
         "New client connections closed at the connection cap (none idle)", p.connections_refused);
  Metric(out, "portico_gateway_accept_failures_total", "counter",
         "accept(2) calls that ran out of file descriptors or memory", p.accept_failures);
  out +=
      "# HELP portico_gateway_rejected_total Requests answered locally with an error (or "
      "ended after their response began), by status and reason\n"
      "# TYPE portico_gateway_rejected_total counter\n";
  for (const auto& [key, count] : p.rejected) {
    out += "portico_gateway_rejected_total{code=\"" + std::to_string(key.first) + "\",reason=\"" +
           EscapeLabel(key.second) + "\"} " + std::to_string(count) + "\n";
  }
  return out;
}

}  // namespace portico::gateway
