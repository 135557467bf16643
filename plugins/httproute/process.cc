// process.cc: see process.h.
#include "process.h"

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "attach.h"
#include "backends.h"
#include "normalize.h"
#include "portico/sdk/gateway_api.h"
#include "portico/sdk/json_writer.h"
#include "support.h"
#include "validate.h"

namespace portico::plugins::httproute {
namespace {

const rapidjson::Value* Array(const rapidjson::Value& v, const char* name) {
  const rapidjson::Value* a = json::Find(v, name);
  return a != nullptr && a->IsArray() ? a : nullptr;
}

std::vector<std::string> Strings(const rapidjson::Value& v, const char* name) {
  std::vector<std::string> out;
  if (const rapidjson::Value* a = Array(v, name)) {
    for (const auto& s : a->GetArray()) {
      if (s.IsString()) out.emplace_back(s.GetString(), s.GetStringLength());
    }
  }
  return out;
}

// RuleSupport is which rules survive, and the conditions dropping the others causes.
struct RuleSupport {
  std::vector<bool> kept;
  size_t kept_count = 0;
  std::string dropped;  // "spec.rules[1] (filter type CORS is not supported), ..."
};

RuleSupport CheckRules(const rapidjson::Value& rules) {
  RuleSupport out;
  for (rapidjson::SizeType i = 0; i < rules.Size(); ++i) {
    std::optional<std::string> bad = UnsupportedFeature(rules[i]);
    out.kept.push_back(!bad);
    if (bad) {
      out.dropped += (out.dropped.empty() ? "" : ", ") + std::string("spec.rules[") +
                     std::to_string(i) + "] (" + *bad + ")";
    } else {
      ++out.kept_count;
    }
  }
  return out;
}

struct ParentResult {
  const rapidjson::Value* parent_ref;
  Attachment attachment;
};

std::string SyncedJson(const sdk::Object& obj, const rapidjson::Value& spec,
                       const std::vector<ParentResult>& parents, const RuleSupport& support) {
  sdk::JsonWriter w;
  w.BeginObject().Key("metadata").BeginObject().Field("name", obj.ref().name);
  w.Field("namespace", obj.ref().ns).Field("generation", obj.generation());
  // Gateway API precedence ranks older routes first: the handler needs the creation time.
  if (auto doc = obj.doc(); doc.ok()) {
    std::string created = json::GetString(**doc, "metadata.creationTimestamp");
    if (!created.empty()) w.Field("creationTimestamp", created);
  }
  w.EndObject();
  w.Key("hostnames").BeginArray();
  for (const std::string& h : Strings(spec, "hostnames")) w.String(h);
  w.EndArray().Key("parents").BeginArray();
  for (const ParentResult& p : parents) {
    if (p.attachment.accepted.status != "True") continue;
    for (const AttachedListener& l : p.attachment.listeners) {
      w.BeginObject().Key("gateway").BeginObject().Field("namespace", p.attachment.gateway.ns);
      w.Field("name", p.attachment.gateway.name).EndObject().Field("listener", l.name);
      w.Key("hostnames").BeginArray();
      for (const std::string& h : l.hostnames) w.String(h);
      w.EndArray().EndObject();
    }
  }
  w.EndArray().Key("rules").BeginArray();
  const rapidjson::Value& rules = spec["rules"];
  for (rapidjson::SizeType i = 0; i < rules.Size(); ++i) {
    if (!support.kept[i]) continue;
    w.BeginObject().Field("index", static_cast<int64_t>(i));
    for (const auto& m : rules[i].GetObject()) w.Key(m.name.GetString()).Value(m.value);
    w.EndObject();
  }
  w.EndArray();
  return w.EndObject().Take();
}

// BackendKeys are the resolved backend keys ("<namespace>/<service>:<port>") of the kept rules:
// their backendRefs and RequestMirror backends, each once, sorted.
std::set<std::string> BackendKeys(const rapidjson::Value& rules, const RuleSupport& support) {
  std::set<std::string> keys;
  auto add = [&](const rapidjson::Value& ref) {
    if (std::string key = json::GetString(ref, "key"); !key.empty()) keys.insert(key);
  };
  for (rapidjson::SizeType i = 0; i < rules.Size(); ++i) {
    if (!support.kept[i]) continue;
    if (const rapidjson::Value* refs = Array(rules[i], "backendRefs")) {
      for (const auto& ref : refs->GetArray()) add(ref);
    }
    if (const rapidjson::Value* filters = Array(rules[i], "filters")) {
      for (const auto& f : filters->GetArray()) {
        if (const rapidjson::Value* ref = json::FindPath(f, "requestMirror.backendRef")) add(*ref);
      }
    }
  }
  return keys;
}

// ExportJson: the normalized parentRefs and hostnames, the Services the kept rules send to
// ("backends") and the Gateways that accepted the route ("gateways"), which policies on
// Services (BackendTLSPolicy) read to find the Gateways their Services are reached through.
std::string ExportJson(const rapidjson::Value& spec, const std::vector<ParentResult>& parents,
                       const RuleSupport& support) {
  sdk::JsonWriter w;
  w.BeginObject();
  for (const char* key : {"parentRefs", "hostnames"}) {
    w.Key(key);
    if (const rapidjson::Value* v = json::Find(spec, key)) {
      w.Value(*v);
    } else {
      w.BeginArray().EndArray();
    }
  }
  w.Key("backends").BeginArray();
  for (const std::string& key : BackendKeys(spec["rules"], support)) {
    size_t slash = key.find('/'), colon = key.rfind(':');
    if (slash == std::string::npos || colon == std::string::npos || colon < slash) continue;
    w.BeginObject().Field("namespace", key.substr(0, slash));
    w.Field("name", key.substr(slash + 1, colon - slash - 1));
    w.Field("port", static_cast<int64_t>(std::stoll(key.substr(colon + 1)))).EndObject();
  }
  w.EndArray().Key("gateways").BeginArray();
  std::set<sdk::ObjectRef> seen;
  for (const ParentResult& p : parents) {
    if (p.attachment.accepted.status != "True" || !seen.insert(p.attachment.gateway).second) {
      continue;
    }
    w.BeginObject().Field("namespace", p.attachment.gateway.ns);
    w.Field("name", p.attachment.gateway.name).EndObject();
  }
  w.EndArray();
  return w.EndObject().Take();
}

}  // namespace

Status ProcessRoute(const sdk::Object& obj, sdk::ProcessContext& ctx, sdk::ProcessResult& result) {
  PORTICO_ASSIGN_OR_RETURN(const rapidjson::Document* doc, obj.doc());
  static const rapidjson::Value kEmpty(rapidjson::kObjectType);
  const rapidjson::Value* spec_json = json::Find(*doc, "spec");
  const rapidjson::Value& spec_in =
      spec_json != nullptr && spec_json->IsObject() ? *spec_json : kEmpty;
  PORTICO_RETURN_IF_ERROR(ValidateRoute(spec_in).WithPrefix(obj.ref().Display()));
  rapidjson::Document spec = NormalizeRoute(spec_in, obj.ref().ns);
  const std::string& ns = obj.ref().ns;

  // Rules: drop what gateways cannot implement, resolve the references of the rest.
  rapidjson::Value& rules = spec["rules"];
  RuleSupport support = CheckRules(rules);
  RefResolver resolver(ctx, ns, spec.GetAllocator());
  for (rapidjson::SizeType i = 0; i < rules.Size(); ++i) {
    if (support.kept[i]) resolver.ResolveRule(rules[i], "spec.rules[" + std::to_string(i) + "]");
  }

  // Parents.
  RouteScope scope(ctx, ns, Strings(spec, "hostnames"));
  std::vector<ParentResult> parents;
  if (const rapidjson::Value* refs = Array(spec, "parentRefs")) {
    for (const auto& ref : refs->GetArray()) {
      Attachment a = Attach(ref, scope);
      if (!a.judged) continue;
      if (a.accepted.status == "True" && support.kept_count == 0) {
        a.accepted = {"Accepted", "False", "UnsupportedValue",
                      "every rule uses an unsupported feature: " + support.dropped};
      }
      parents.push_back({&ref, std::move(a)});
    }
  }

  // Status, and the attachedRoutes contributions of accepted parents.
  std::optional<sdk::Condition> partially_invalid;
  if (!support.dropped.empty() && support.kept_count > 0) {
    partially_invalid = sdk::Condition{"PartiallyInvalid", "True", "UnsupportedValue",
                                       "Dropped Rule(s): " + support.dropped};
  }
  sdk::JsonWriter status;
  status.BeginObject().Key("parents").BeginArray();
  std::set<std::pair<sdk::ObjectRef, std::string>> counted;
  bool any_accepted = false;
  for (const ParentResult& p : parents) {
    status.BeginObject().Key("parentRef").Value(*p.parent_ref);
    status.Field("controllerName", sdk::gateway_api::kControllerName);
    std::vector<sdk::Condition> conditions{p.attachment.accepted, resolver.condition()};
    if (partially_invalid && p.attachment.accepted.status == "True") {
      conditions.push_back(*partially_invalid);
    }
    sdk::WriteConditions(status, conditions, obj.generation());
    status.EndObject();
    if (p.attachment.accepted.status != "True") continue;
    any_accepted = true;
    result.LinkParent(p.attachment.gateway);  // sync scope: the route goes with its Gateways
    for (const AttachedListener& l : p.attachment.listeners) {
      if (!counted.emplace(p.attachment.gateway, l.name).second) continue;
      result.Contribute(p.attachment.gateway, "count:listeners[name=" + l.name + "].attachedRoutes",
                        "");
    }
  }
  if (any_accepted) {  // the route's Webhooks go where the route goes
    for (const sdk::ObjectRef& filter : resolver.filters()) result.LinkReference(filter);
  }

  result.SetStatus(status.EndArray().EndObject().Take());
  if (any_accepted) result.SetSynced(SyncedJson(obj, spec, parents, support));
  result.SetExport(ExportJson(spec, parents, support));
  return OkStatus();
}

}  // namespace portico::plugins::httproute
