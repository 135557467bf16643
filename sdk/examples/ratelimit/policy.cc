// policy.cc: see policy.h.
#include "policy.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "portico/sdk/fields.h"
#include "portico/sdk/json_writer.h"
#include "portico/sdk/names.h"
#include "portico/sdk/policy_peers.h"
#include "portico/sdk/timestamp.h"

namespace example::ratelimit {
namespace {

namespace json = portico::json;
namespace sdk = portico::sdk;
using portico::OkStatus;
using portico::Status;
using portico::StatusOr;

std::string Describe(const Target& t, const std::string& ns) {
  return t.kind + " " + ns + "/" + t.name;
}

// Contends lists the targets a peer's export says it resolved.
std::vector<Target> Contends(const rapidjson::Value& exported) {
  std::vector<Target> out;
  const rapidjson::Value* ts = json::Find(exported, "contends");
  if (ts == nullptr || !ts->IsArray()) return out;
  for (const auto& t : ts->GetArray()) {
    out.push_back({json::GetString(t, "kind"), json::GetString(t, "name")});
  }
  return out;
}

void WriteTarget(sdk::JsonWriter& w, const Target& t, const std::string& ns) {
  w.BeginObject().Field("group", kGatewayGroup).Field("kind", t.kind);
  w.Field("namespace", ns).Field("name", t.name).EndObject();
}

// SyncedJson is the filter's configuration (filter.h) plus filter_binding.v1's "attach".
std::string SyncedJson(const sdk::Object& obj, const RateLimitSpec& spec,
                       const std::string& created, const std::vector<const Target*>& applied) {
  const std::string& ns = obj.ref().ns;
  sdk::JsonWriter w;
  w.BeginObject().Key("metadata").BeginObject().Field("namespace", ns);
  w.Field("name", obj.ref().name).Field("generation", obj.generation()).EndObject();
  w.Key("limit").BeginObject().Field("requests", spec.requests);
  w.Field("intervalMs", spec.interval_ms).EndObject();
  w.Key("key").BeginObject().Field("type", spec.key_type);
  if (!spec.header.empty()) w.Field("header", spec.header);
  w.EndObject();
  w.Key("attach").BeginObject().Key("targets").BeginArray();
  for (const Target* t : applied) {
    w.BeginObject().Key(t->kind == "Gateway" ? "gateway" : "route").BeginObject();
    w.Field("namespace", ns).Field("name", t->name).EndObject().EndObject();
  }
  w.EndArray().Field("created", created).EndObject();
  return w.EndObject().Take();
}

}  // namespace

StatusOr<RateLimitSpec> ParseSpec(const rapidjson::Value& spec) {
  RateLimitSpec out;
  const rapidjson::Value* refs = json::Find(spec, "targetRefs");
  if (refs == nullptr || !refs->IsArray() || refs->Empty()) {
    return sdk::FieldError("spec.targetRefs", "at least one target is required");
  }
  for (rapidjson::SizeType i = 0; i < refs->Size(); ++i) {
    const std::string field = "spec.targetRefs[" + std::to_string(i) + "]";
    PORTICO_ASSIGN_OR_RETURN(std::string kind, sdk::RequiredString((*refs)[i], "kind", field));
    PORTICO_ASSIGN_OR_RETURN(std::string name, sdk::RequiredString((*refs)[i], "name", field));
    if (kind != "Gateway" && kind != "HTTPRoute") {
      return sdk::FieldError(field + ".kind", "must be Gateway or HTTPRoute, not " + kind);
    }
    Target t{kind, name};
    auto seen = std::find(out.targets.begin(), out.targets.end(), t);
    if (seen != out.targets.end()) {
      return sdk::FieldError(field, "targets " + kind + " " + name + " again (as spec.targetRefs[" +
                                        std::to_string(seen - out.targets.begin()) + "])");
    }
    out.targets.push_back(std::move(t));
  }
  std::optional<int64_t> requests = json::GetInt(spec, "limit.requests");
  if (!requests || *requests < 1) {
    return sdk::FieldError("spec.limit.requests", "must be a positive integer");
  }
  out.requests = *requests;
  const std::string interval = json::GetString(spec, "limit.interval");
  std::optional<int64_t> ms = portico::sdk::names::ParseDuration(interval);
  if (!ms || *ms < 1 || *ms > kMaxIntervalMs) {
    return sdk::FieldError("spec.limit.interval",
                           "\"" + interval + "\" must be a duration from 1ms to 24h (e.g. 1m)");
  }
  out.interval_ms = *ms;
  out.key_type = json::GetString(spec, "key.type", "Route");
  out.header = json::GetString(spec, "key.header");
  if (out.key_type != "Route" && out.key_type != "ClientAddress" && out.key_type != "Header") {
    return sdk::FieldError("spec.key.type",
                           "must be Route, ClientAddress or Header, not " + out.key_type);
  }
  if (out.key_type == "Header" && out.header.empty()) {
    return sdk::FieldError("spec.key.header", "is required when spec.key.type is Header");
  }
  if (out.key_type != "Header" && !out.header.empty()) {
    return sdk::FieldError("spec.key.header", "is only allowed when spec.key.type is Header");
  }
  if (!out.header.empty() && !portico::sdk::names::IsHeaderName(out.header)) {
    return sdk::FieldError("spec.key.header", "\"" + out.header + "\" is not an HTTP header name");
  }
  return out;
}

Status ProcessRateLimitPolicy(const sdk::Object& obj, sdk::ProcessContext& ctx,
                              sdk::ProcessResult& result) {
  PORTICO_ASSIGN_OR_RETURN(const rapidjson::Document* doc, obj.doc());
  static const rapidjson::Value kEmpty(rapidjson::kObjectType);
  const rapidjson::Value* spec_json = json::Find(*doc, "spec");
  StatusOr<RateLimitSpec> spec = ParseSpec(spec_json != nullptr ? *spec_json : kEmpty);
  if (!spec.ok()) return spec.status().WithPrefix(obj.ref().Display());
  const std::string& ns = obj.ref().ns;
  const std::string created = json::GetString(*doc, "metadata.creationTimestamp");
  StatusOr<int64_t> created_ms = sdk::CreatedUnixMs(created);
  if (!created_ms.ok()) return created_ms.status().WithPrefix(obj.ref().Display());

  // 1. References: every target must exist (its export) in the policy's namespace.
  std::vector<bool> resolved;
  for (const Target& t : spec->targets) {
    resolved.push_back(ctx.GetExport({kGatewayGroup, t.kind, ns, t.name}).has_value());
    // Sync scope: the policy goes to every gateway holding one of its targets.
    result.LinkParent({kGatewayGroup, t.kind, ns, t.name});
  }

  // 2. Conflicts: on each target the oldest policy contending for it applies.
  const sdk::PolicyPeers peers = sdk::ListPolicyPeers(ctx, kGroup, kKind, ns, obj.ref().name);
  auto older_winner = [&](const Target& t) -> const sdk::PolicyPeers::Peer* {
    for (const auto& peer : peers.peers) {
      if (!sdk::OlderPolicy(peer.created_unix_ms, peer.name, *created_ms, obj.ref().name)) break;
      const std::vector<Target> contends = Contends(*peer.export_json);
      if (std::find(contends.begin(), contends.end(), t) != contends.end()) return &peer;
    }
    return nullptr;
  };

  // 3. Status per ancestor (the target), and the targets it applies to.
  sdk::JsonWriter status;
  status.BeginObject().Key("ancestors").BeginArray();
  sdk::JsonWriter exported;
  exported.BeginObject().Field("createdUnixMs", *created_ms).Key("contends").BeginArray();
  std::vector<const Target*> applied;
  for (size_t i = 0; i < spec->targets.size(); ++i) {
    const Target& t = spec->targets[i];
    std::vector<sdk::Condition> conditions;
    if (!resolved[i]) {
      const std::string missing = Describe(t, ns) + " does not exist";
      conditions = {{"Accepted", "False", "TargetNotFound", missing},
                    {"ResolvedRefs", "False", "TargetNotFound", missing}};
    } else if (const sdk::PolicyPeers::Peer* winner = older_winner(t)) {
      const std::string why = "RateLimitPolicy " + ns + "/" + winner->name +
                              " is older and already applies to " + Describe(t, ns) +
                              "; of two RateLimitPolicies on one target the oldest wins";
      conditions = {{"Accepted", "False", "Conflicted", why},
                    {"ResolvedRefs", "True", "ResolvedRefs", ""},
                    {"Conflicted", "True", "Conflicted", why}};
    } else {
      conditions = {{"Accepted", "True", "Accepted", ""},
                    {"ResolvedRefs", "True", "ResolvedRefs", ""}};
      applied.push_back(&t);
    }
    if (resolved[i]) {
      exported.BeginObject().Field("kind", t.kind).Field("name", t.name).EndObject();
    }
    status.BeginObject().Key("ancestorRef");
    WriteTarget(status, t, ns);
    sdk::WriteConditions(status, conditions, obj.generation());
    status.EndObject();
  }
  result.SetStatus(status.EndArray().EndObject().Take());
  result.SetExport(exported.EndArray().EndObject().Take());
  // Nothing synced where it applies nowhere: no gateway runs a limiter for it.
  if (!applied.empty()) result.SetSynced(SyncedJson(obj, *spec, created, applied));
  return OkStatus();
}

Status StageRateLimitPolicy(const sdk::Txn& txn, const std::vector<sdk::Change>& changes) {
  // The processor syncs a view only where the policy applies, always with "attach".
  return sdk::StageFilterBindings(txn, changes, kFilterType);
}

}  // namespace example::ratelimit
