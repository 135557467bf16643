#include "controller/admin/admin_render.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdio>
#include <ctime>

#include "core/plugin/kind_id.h"
#include "core/plugin/manifest.h"
#include "core/plugin/plugin_json.h"
#include "core/store/store_key.h"

namespace portico::controller::admin {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void String(Writer& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void Strings(Writer& w, const char* key, const std::vector<std::string>& items) {
  w.Key(key);
  w.StartArray();
  for (const auto& item : items) String(w, item);
  w.EndArray();
}

std::string Done(const rapidjson::StringBuffer& buffer) {
  return std::string(buffer.GetString(), buffer.GetSize());
}

// Violations renders "violations": [{"field", "line", "message"}] ("line" when known).
void Violations(Writer& w, const std::vector<FieldViolation>& violations) {
  w.Key("violations");
  w.StartArray();
  for (const FieldViolation& v : violations) {
    w.StartObject();
    w.Key("field");
    String(w, v.field);
    if (v.line > 0) {
      w.Key("line");
      w.Int(v.line);
    }
    w.Key("message");
    String(w, v.message);
    w.EndObject();
  }
  w.EndArray();
}

// PorticoMember renders the "portico" member's value of an object.
std::string PorticoMember(const ObjectView& view) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("source");
  w.StartObject();
  w.Key("file");
  String(w, view.source.file);
  w.Key("line");
  w.Int(view.source.line);
  w.EndObject();
  w.Key("generation");
  w.Int64(view.generation);
  w.Key("syncedHash");
  String(w, view.synced_hash);
  w.Key("error");
  String(w, view.error);
  if (view.refusal.has_value()) {
    w.Key("refusedGeneration");
    w.Int64(view.refusal->generation);
    w.Key("servingGeneration");
    w.Int64(view.serving_generation);
    Violations(w, view.refusal->violations);
  }
  w.EndObject();
  return Done(buffer);
}

void AppendObject(std::string* out, const ObjectView& view) {
  const std::string& json = view.json;
  size_t close = json.find_last_of('}');
  size_t open = json.find('{');
  if (close == std::string::npos || open == std::string::npos || open > close) {
    *out += "{\"portico\":" + PorticoMember(view) + "}";
    return;
  }
  bool empty = json.find_first_not_of(" \t\r\n", open + 1) == close;
  out->append(json, 0, close);
  *out += empty ? "\"portico\":" : ",\"portico\":";
  *out += PorticoMember(view);
  out->append(json, close, std::string::npos);
}

}  // namespace

std::string QualifiedPlural(const core::KindInfo& kind) {
  return kind.id.group.empty() ? kind.plural : kind.plural + "." + kind.id.group;
}

// HaObject renders HaInfo: {"enabled": false} without an election.
void HaObject(Writer& w, const HaInfo& ha) {
  w.StartObject();
  w.Key("enabled");
  w.Bool(ha.enabled);
  if (ha.enabled) {
    char lease[32];
    std::snprintf(lease, sizeof(lease), "%llx", static_cast<unsigned long long>(ha.lease_id));
    w.Key("controllerId");
    String(w, ha.controller_id);
    w.Key("role");
    String(w, ha.leader ? "leader" : ha.leader_id.empty() ? "unknown" : "follower");
    w.Key("leader");
    w.StartObject();
    w.Key("id");
    String(w, ha.leader_id);
    w.Key("leaseId");  // hex, as etcdctl prints lease ids
    String(w, ha.lease_id == 0 ? "" : lease);
    w.Key("leaseTtlSeconds");
    w.Int64(ha.lease_ttl_seconds);
    w.Key("epoch");
    w.Int64(ha.epoch);
    w.Key("since");
    String(w, ha.leader_since_unix_ms == 0 ? "" : FormatRfc3339(ha.leader_since_unix_ms));
    w.EndObject();
    w.Key("transitions");
    w.Uint64(ha.transitions);
    w.Key("electionError");
    String(w, ha.election_error);
    w.Key("etcd");
    w.StartObject();
    w.Key("revision");
    w.Int64(ha.etcd_revision);
    w.Key("connected");
    w.Bool(ha.etcd_connected);
    w.Key("endpoint");
    String(w, ha.etcd_endpoint);
    w.EndObject();
    w.Key("statusWrites");
    w.StartObject();
    w.Key("puts");
    w.Uint64(ha.status_puts);
    w.Key("deletes");
    w.Uint64(ha.status_deletes);
    w.Key("fenced");
    w.Uint64(ha.status_fenced);
    w.Key("last");
    String(w, ha.status_last_write_unix_ms == 0 ? "" : FormatRfc3339(ha.status_last_write_unix_ms));
    w.Key("error");
    String(w, ha.status_error);
    w.EndObject();
  }
  w.EndObject();
}

std::string RenderInfo(const ServerInfo& info, const ControllerStats& stats, int64_t now_unix_ms) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("serverId");
  String(w, info.server_id);
  w.Key("version");
  String(w, info.version);
  w.Key("started");
  String(w, FormatRfc3339(info.started_unix_ms));
  w.Key("uptimeSeconds");
  w.Int64((now_unix_ms - info.started_unix_ms) / 1000);
  w.Key("configSource");
  String(w, info.config_source);
  w.Key("testing");
  w.Bool(info.testing);
  w.Key("ready");
  w.Bool(stats.ready);
  w.Key("head");
  w.Uint64(stats.head);
  w.Key("objects");
  w.StartObject();
  size_t total = 0;
  for (const auto& [kind, count] : stats.objects_by_kind) {
    String(w, kind);
    w.Uint64(count);
    total += count;
  }
  w.EndObject();
  w.Key("objectsTotal");
  w.Uint64(total);
  w.Key("queueDepth");
  w.Uint64(stats.reconciler.queue_depth);
  w.Key("processed");
  w.Uint64(stats.reconciler.processed);
  w.Key("pluginsLoaded");
  w.Uint64(stats.plugins_loaded);
  w.Key("pluginsRefused");
  w.Uint64(stats.plugins_refused);
  w.Key("configErrors");
  w.Uint64(stats.config_errors);
  w.Key("reloads");
  w.Uint64(stats.reloads);
  w.Key("connectedGateways");
  w.Uint64(stats.sync.connected);
  w.Key("ha");
  HaObject(w, info.ha);
  w.EndObject();
  return Done(buffer);
}

std::string RenderGateways(const std::vector<sync::ConnectedGateway>& gateways) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("items");
  w.StartArray();
  for (const sync::ConnectedGateway& g : gateways) {
    w.StartObject();
    w.Key("name");
    String(w, g.name);
    w.Key("clientId");
    String(w, g.client_id);
    w.Key("peer");
    String(w, g.peer);
    Strings(w, "gateways", g.gateways);
    w.Key("gatewayClass");
    String(w, g.gateway_class);
    Strings(w, "addresses", g.addresses);
    w.Key("state");
    String(w, g.state);
    w.Key("ackedVersion");
    w.Uint64(g.acked_version);
    w.Key("sentVersion");
    w.Uint64(g.sent_version);
    w.Key("head");
    w.Uint64(g.head);
    w.Key("lag");
    w.Uint64(g.lag);
    w.Key("connectedUnixMs");
    w.Int64(g.connected_unix_ms);
    w.Key("connected");
    String(w, FormatRfc3339(g.connected_unix_ms));
    w.Key("syncedObjects");
    w.Uint64(g.synced_objects);
    w.Key("inventory");
    w.StartArray();
    for (const sync::GatewayPlugin& p : g.plugins) {
      w.StartObject();
      w.Key("name");
      String(w, p.name);
      w.Key("version");
      String(w, p.version);
      w.Key("sha256");
      String(w, p.sha256);
      Strings(w, "handlers", p.handlers);
      Strings(w, "filterTypes", p.filter_types);
      w.EndObject();
    }
    w.EndArray();
    w.Key("nacks");
    w.StartArray();
    for (const sync::GatewayNack& n : g.nacks) {
      w.StartObject();
      w.Key("key");
      String(w, n.key);
      w.Key("hash");
      String(w, n.hash);
      w.Key("reason");
      String(w, n.reason);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return Done(buffer);
}

std::string RenderGatewaySynced(std::string_view name,
                                const std::map<std::string, std::string>& synced) {
  // Keys are StoreKey::ToString(): "group/kind/namespace/name" (group and namespace may be "").
  std::map<std::string, std::map<std::string, std::string>> kinds;
  for (const auto& [key, hash] : synced) {
    StatusOr<core::StoreKey> parsed = core::StoreKey::Parse(key);
    if (!parsed.ok()) continue;
    std::string object = parsed->ns.empty() ? parsed->name : parsed->ns + "/" + parsed->name;
    kinds[core::KindId{parsed->group, parsed->kind}.ToString()][object] = hash;
  }
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("name");
  String(w, name);
  w.Key("total");
  w.Uint64(synced.size());
  w.Key("objects");
  w.StartArray();
  for (const auto& [key, hash] : synced) {
    w.StartObject();
    w.Key("key");
    String(w, key);
    w.Key("hash");
    String(w, hash);
    w.EndObject();
  }
  w.EndArray();
  w.Key("kinds");
  w.StartObject();
  for (const auto& [kind, objects] : kinds) {
    String(w, kind);
    w.StartObject();
    for (const auto& [object, hash] : objects) {
      String(w, object);
      String(w, hash);
    }
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  return Done(buffer);
}

std::string RenderPlugins(const core::PluginSet& plugins) {
  return "{\"items\":" + core::RenderPluginsJson(plugins.plugins, /*pretty=*/false) + "}";
}

std::string RenderKinds(const core::KindRegistry& registry) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("items");
  w.StartArray();
  std::vector<const core::KindInfo*> kinds = registry.KindsInOrder();
  if (kinds.empty()) kinds = registry.Kinds();
  for (const core::KindInfo* k : kinds) {
    w.StartObject();
    w.Key("group");
    String(w, k->id.group);
    w.Key("kind");
    String(w, k->id.kind);
    Strings(w, "versions", k->versions);
    w.Key("plural");
    String(w, k->plural);
    Strings(w, "shortNames", k->short_names);
    w.Key("scope");
    String(w, core::ScopeName(k->scope));
    std::vector<std::string> reads;
    for (const auto& read : k->reads) reads.push_back(read.ToString());
    Strings(w, "reads", reads);
    Strings(w, "capabilities", core::CapabilityNames(k->capabilities));
    w.Key("sync");
    String(w, core::SyncPolicyName(k->sync_policy));
    w.Key("plugin");
    String(w, k->plugin_name);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return Done(buffer);
}

std::string RenderObject(const ObjectView& view) {
  std::string out;
  out.reserve(view.json.size() + 128);
  AppendObject(&out, view);
  return out;
}

std::string RenderObjectList(const std::vector<ObjectView>& views) {
  size_t size = 64;
  for (const ObjectView& view : views) size += view.json.size() + 160;
  std::string out;
  out.reserve(size);
  out += "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[";
  bool first = true;
  for (const ObjectView& view : views) {
    if (!first) out += ',';
    first = false;
    AppendObject(&out, view);
  }
  out += "]}";
  return out;
}

std::string RenderErrors(const std::vector<ConfigError>& errors) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("items");
  w.StartArray();
  for (const ConfigError& e : errors) {
    w.StartObject();
    w.Key("file");
    String(w, e.source.file);
    w.Key("line");
    w.Int(e.source.line);
    w.Key("object");
    String(w, e.object);
    w.Key("message");
    String(w, e.message);
    if (!e.violations.empty()) {
      w.Key("refusedGeneration");
      w.Int64(e.refused_generation);
      w.Key("servingGeneration");
      w.Int64(e.serving_generation);
      Violations(w, e.violations);
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return Done(buffer);
}

std::string RenderApplied(const std::vector<AppliedObject>& applied) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("items");
  w.StartArray();
  for (const AppliedObject& a : applied) {
    w.StartObject();
    w.Key("apiVersion");
    String(w, a.api_version);
    w.Key("kind");
    String(w, a.ref.kind);
    w.Key("group");
    String(w, a.ref.group);
    w.Key("plural");
    String(w, a.plural);
    if (!a.ref.ns.empty()) {
      w.Key("namespace");
      String(w, a.ref.ns);
    }
    w.Key("name");
    String(w, a.ref.name);
    w.Key("result");
    String(w, a.result);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return Done(buffer);
}

std::string RenderDeleted(const core::KindInfo& kind, const sdk::ObjectRef& ref) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("deleted");
  w.StartObject();
  w.Key("kind");
  String(w, kind.id.kind);
  w.Key("group");
  String(w, kind.id.group);
  w.Key("plural");
  String(w, kind.plural);
  if (!ref.ns.empty()) {
    w.Key("namespace");
    String(w, ref.ns);
  }
  w.Key("name");
  String(w, ref.name);
  w.EndObject();
  w.EndObject();
  return Done(buffer);
}

}  // namespace portico::controller::admin
