// process.cc: see process.h.
#include "process.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "portico/sdk/fields.h"
#include "portico/sdk/gateway_api.h"
#include "portico/sdk/json_writer.h"
#include "portico/sdk/policy_peers.h"
#include "portico/sdk/timestamp.h"
#include "validate.h"
#include "x509/ca_reference.h"

namespace portico::plugins::backendtlspolicy {
namespace {

using ::portico::sdk::Quoted;
using GatewayKey = std::pair<std::string, std::string>;  // (namespace, name)

// TargetResult is what resolution found for one targetRef.
struct TargetResult {
  bool service = false;                   // a core Service that exists
  std::optional<int64_t> port;            // the port sectionName names (none without sectionName)
  std::optional<sdk::Condition> problem;  // Accepted=False for this target (TargetNotFound,
                                          // Conflicted)
  std::set<GatewayKey> ancestors;         // Gateways through which routes reach it
};

std::string Describe(const TargetRef& t, const std::string& ns) {
  std::string out = "Service " + ns + "/" + t.name;
  return t.section_name.empty() ? out : out + " port " + Quoted(t.section_name);
}

// ResolveTarget reads the Service (its port names) for one target.
TargetResult ResolveTarget(const TargetRef& t, const std::string& ns, sdk::ProcessContext& ctx) {
  TargetResult out;
  if (!t.IsService()) return out;  // no route sends to it: no ancestor to report on
  std::optional<std::string> exported = ctx.GetExport({"", "Service", ns, t.name});
  if (!exported) return out;  // routes cannot resolve it either: no ancestor
  out.service = true;
  if (t.section_name.empty()) return out;
  auto doc = json::Parse(*exported, "Service " + ns + "/" + t.name);
  const rapidjson::Value* ports = doc.ok() ? json::Find(*doc, "ports") : nullptr;
  if (ports != nullptr && ports->IsArray()) {
    for (const auto& p : ports->GetArray()) {
      if (json::GetString(p, "name") == t.section_name) out.port = json::GetInt(p, "port");
    }
  }
  if (!out.port) {
    out.problem = sdk::Condition{"Accepted", "False", "TargetNotFound",
                                 "spec.targetRefs: Service " + ns + "/" + t.name +
                                     " has no port named " + Quoted(t.section_name)};
  }
  return out;
}

// FindAncestors adds, to each Service target, the Gateways that accepted a route sending to it
// (to the sectionName's port when there is one), from the HTTPRoute plugin's exports.
void FindAncestors(const std::string& ns, const std::vector<TargetRef>& targets,
                   std::vector<TargetResult>& results, sdk::ProcessContext& ctx) {
  auto routes = json::Parse(ctx.ListExports(kGroup, "HTTPRoute"), "HTTPRoute list");
  if (!routes.ok() || !routes->IsArray()) return;
  for (const auto& item : routes->GetArray()) {
    const rapidjson::Value* e = json::Find(item, "export");
    const rapidjson::Value* backends = e != nullptr ? json::Find(*e, "backends") : nullptr;
    const rapidjson::Value* gateways = e != nullptr ? json::Find(*e, "gateways") : nullptr;
    if (backends == nullptr || !backends->IsArray() || gateways == nullptr ||
        !gateways->IsArray()) {
      continue;
    }
    for (size_t i = 0; i < targets.size(); ++i) {
      if (!results[i].service) continue;
      bool reaches =
          std::any_of(backends->Begin(), backends->End(), [&](const rapidjson::Value& b) {
            return json::GetString(b, "namespace") == ns &&
                   json::GetString(b, "name") == targets[i].name &&
                   // Without the named port every route to the Service counts, so that
                   // the TargetNotFound problem reaches its Gateways' status.
                   (!results[i].port || json::GetInt(b, "port") == results[i].port);
          });
      if (!reaches) continue;
      for (const auto& g : gateways->GetArray()) {
        results[i].ancestors.emplace(json::GetString(g, "namespace"), json::GetString(g, "name"));
      }
    }
  }
}

// ResolvedCa is a usable CA bundle and the SHA-256 of its certificate.v1 "ca" entry.
struct ResolvedCa {
  std::string kind;
  std::string name;
  std::string sha256;
};

struct CaResolution {
  std::vector<ResolvedCa> cas;
  std::optional<sdk::Condition> failure;  // ResolvedRefs=False of the first unusable reference
};

CaResolution ResolveCas(const BackendTlsPolicySpec& spec, const std::string& ns,
                        sdk::ProcessContext& ctx) {
  CaResolution out;
  for (size_t i = 0; i < spec.ca_refs.size(); ++i) {
    const CaRef& ref = spec.ca_refs[i];
    x509::CaLookup found = x509::LookUpCaCertificate({ref.group, ref.kind, ns, ref.name}, ctx);
    if (found.ok()) {
      bool seen = std::any_of(out.cas.begin(), out.cas.end(), [&](const ResolvedCa& c) {
        return c.kind == ref.kind && c.name == ref.name;
      });
      if (!seen) out.cas.push_back({ref.kind, ref.name, std::move(found.sha256)});
      continue;
    }
    if (out.failure) continue;
    const char* reason = found.problem == x509::CaProblem::kUnsupportedKind
                             ? "InvalidKind"
                             : "InvalidCACertificateRef";
    out.failure = sdk::Condition{
        "ResolvedRefs", "False", reason,
        "spec.validation.caCertificateRefs[" + std::to_string(i) + "]: " + found.message};
  }
  return out;
}

// Contender is another policy of the namespace as its export shows it.
struct Contender {
  int64_t created = sdk::kUnknownCreatedUnixMs;
  std::string name;
  std::vector<TargetRef> targets;
};

bool Precedes(const Contender& a, const Contender& b) {
  return sdk::OlderPolicy(a.created, a.name, b.created, b.name);
}

bool SameTarget(const TargetRef& a, const TargetRef& b) {
  return a.group == b.group && a.kind == b.kind && a.name == b.name &&
         a.section_name == b.section_name;
}

std::vector<Contender> ListContenders(const std::string& ns, const std::string& self,
                                      sdk::ProcessContext& ctx) {
  std::vector<Contender> out;
  const sdk::PolicyPeers peers = sdk::ListPolicyPeers(ctx, kGroup, "BackendTLSPolicy", ns, self);
  for (const auto& peer : peers.peers) {
    Contender c{peer.created_unix_ms, peer.name, {}};
    const rapidjson::Value* ts = json::Find(*peer.export_json, "targets");
    if (ts != nullptr && ts->IsArray()) {
      for (const auto& t : ts->GetArray()) {
        c.targets.push_back({json::GetString(t, "group"), json::GetString(t, "kind"),
                             json::GetString(t, "name"), json::GetString(t, "sectionName")});
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

// MarkConflicts sets Accepted=False/Conflicted on each target an older policy also names.
void MarkConflicts(const Contender& self, const std::vector<Contender>& others,
                   const std::string& ns, std::vector<TargetResult>& results) {
  for (size_t i = 0; i < self.targets.size(); ++i) {
    const Contender* winner = &self;
    for (const Contender& o : others) {
      bool names_it = std::any_of(o.targets.begin(), o.targets.end(), [&](const TargetRef& t) {
        return SameTarget(t, self.targets[i]);
      });
      if (names_it && Precedes(o, *winner)) winner = &o;
    }
    if (winner == &self || results[i].problem) continue;
    results[i].problem = sdk::Condition{
        "Accepted", "False", "Conflicted",
        "BackendTLSPolicy " + ns + "/" + winner->name + " also targets " +
            Describe(self.targets[i], ns) +
            " and takes precedence (the oldest by creationTimestamp, then the first by name)"};
  }
}

// ---------------------------------------------------------------- writing

void WriteTargetRef(sdk::JsonWriter& w, const TargetRef& t) {
  w.BeginObject().Field("group", t.group).Field("kind", t.kind).Field("name", t.name);
  if (!t.section_name.empty()) w.Field("sectionName", t.section_name);
  w.EndObject();
}

std::string ExportJson(const BackendTlsPolicySpec& spec, int64_t created) {
  sdk::JsonWriter w;
  w.BeginObject().Field("createdUnixMs", created).Key("targets").BeginArray();
  for (const TargetRef& t : spec.targets) WriteTargetRef(w, t);
  return w.EndArray().EndObject().Take();
}

// SyncedJson is what the handler stages (stage.h) for the targets the policy applies to; with
// `invalid` set, the reason those backends must be refused instead of the settings.
std::string SyncedJson(const sdk::Object& obj, const BackendTlsPolicySpec& spec,
                       const std::vector<const TargetRef*>& applied, const CaResolution& cas,
                       const std::optional<std::string>& invalid) {
  const std::string& ns = obj.ref().ns;
  sdk::JsonWriter w;
  w.BeginObject().Key("metadata").BeginObject().Field("name", obj.ref().name);
  w.Field("namespace", ns).Field("generation", obj.generation()).EndObject();
  w.Key("targets").BeginArray();
  for (const TargetRef* t : applied) {
    w.BeginObject().Field("service", t->name);
    if (!t->section_name.empty()) w.Field("sectionName", t->section_name);
    w.EndObject();
  }
  w.EndArray().Field("hostname", spec.hostname);
  if (invalid) {
    w.Field("invalid", *invalid);
  } else if (!spec.well_known.empty()) {
    w.Field("wellKnownCACertificates", spec.well_known);
  } else {
    w.Key("caCertificates").BeginArray();
    for (const ResolvedCa& ca : cas.cas) {
      w.BeginObject().Key("ref").BeginObject().Field("kind", ca.kind).Field("namespace", ns);
      w.Field("name", ca.name).EndObject().Field("sha256", ca.sha256).EndObject();
    }
    w.EndArray();
  }
  w.Key("subjectAltNames").BeginArray();
  for (const SubjectAltName& san : spec.subject_alt_names) {
    w.BeginObject().Field("type", san.type);
    w.Field(san.type == "URI" ? "uri" : "hostname", san.value).EndObject();
  }
  return w.EndArray().EndObject().Take();
}

}  // namespace

Status ProcessBackendTlsPolicy(const sdk::Object& obj, sdk::ProcessContext& ctx,
                               sdk::ProcessResult& result) {
  PORTICO_ASSIGN_OR_RETURN(const rapidjson::Document* doc, obj.doc());
  static const rapidjson::Value kEmpty(rapidjson::kObjectType);
  const rapidjson::Value* spec_json = json::Find(*doc, "spec");
  StatusOr<BackendTlsPolicySpec> spec =
      ParseBackendTlsPolicy(spec_json != nullptr ? *spec_json : kEmpty);
  if (!spec.ok()) return spec.status().WithPrefix(obj.ref().Display());
  const std::string& ns = obj.ref().ns;
  StatusOr<int64_t> created_or =
      sdk::CreatedUnixMs(json::GetString(*doc, "metadata.creationTimestamp"));
  if (!created_or.ok()) return created_or.status().WithPrefix(obj.ref().Display());
  const int64_t created = *created_or;

  // 1. Targets, the Gateways reaching them, the CA references, conflicts.
  std::vector<TargetResult> targets;
  for (const TargetRef& t : spec->targets) targets.push_back(ResolveTarget(t, ns, ctx));
  FindAncestors(ns, spec->targets, targets, ctx);
  CaResolution cas = ResolveCas(*spec, ns, ctx);
  Contender self{created, obj.ref().name, spec->targets};
  MarkConflicts(self, ListContenders(ns, obj.ref().name, ctx), ns, targets);

  // 2. What holds for the whole policy.
  std::optional<sdk::Condition> policy_problem;
  if (!spec->options.empty()) {
    std::string keys;
    for (const std::string& k : spec->options) keys += (keys.empty() ? "" : ", ") + Quoted(k);
    policy_problem = sdk::Condition{"Accepted", "False", "Invalid",
                                    "spec.options: Portico implements no BackendTLSPolicy "
                                    "options (got " +
                                        keys + ")"};
  } else if (!spec->ca_refs.empty() && cas.cas.empty()) {
    policy_problem =
        sdk::Condition{"Accepted", "False", "NoValidCACertificate",
                       "no caCertificateRefs entry is usable: " +
                           (cas.failure ? cas.failure->message : std::string("none given"))};
  }
  const sdk::Condition resolved =
      cas.failure.value_or(sdk::Condition{"ResolvedRefs", "True", "ResolvedRefs", ""});

  // 3. The targets it applies to; what gateways do for them.
  std::vector<const TargetRef*> applied;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (targets[i].service && !targets[i].problem) applied.push_back(&spec->targets[i]);
  }
  std::optional<std::string> invalid;
  if (policy_problem) {
    invalid = policy_problem->reason + ": " + policy_problem->message;
  } else if (cas.failure) {
    invalid = cas.failure->reason + ": " + cas.failure->message;
  }
  if (!applied.empty()) result.SetSynced(SyncedJson(obj, *spec, applied, cas, invalid));

  // 4. Status per ancestor Gateway, and the sync links.
  std::set<GatewayKey> ancestors;
  for (const TargetResult& t : targets) ancestors.insert(t.ancestors.begin(), t.ancestors.end());
  sdk::JsonWriter status;
  status.BeginObject().Key("ancestors").BeginArray();
  for (const GatewayKey& g : ancestors) {
    sdk::Condition accepted{"Accepted", "True", "Accepted", ""};
    if (policy_problem) {
      accepted = *policy_problem;
    } else {
      std::optional<sdk::Condition> first_problem;
      bool applies = false;
      for (const TargetResult& t : targets) {
        if (!t.ancestors.count(g)) continue;
        if (!t.problem) applies = true;
        if (t.problem && !first_problem) first_problem = t.problem;
      }
      if (!applies && first_problem) accepted = *first_problem;
    }
    status.BeginObject().Key("ancestorRef").BeginObject().Field("group", kGroup);
    status.Field("kind", "Gateway").Field("namespace", g.first).Field("name", g.second);
    status.EndObject().Field("controllerName", sdk::gateway_api::kControllerName);
    sdk::WriteConditions(status, {accepted, resolved}, obj.generation());
    status.EndObject();
    result.LinkParent({kGroup, "Gateway", g.first, g.second});
  }
  result.SetStatus(status.EndArray().EndObject().Take());
  if (!invalid) {
    for (const ResolvedCa& ca : cas.cas) result.LinkReference({"", ca.kind, ns, ca.name});
  }
  result.SetExport(ExportJson(*spec, created));
  return OkStatus();
}

}  // namespace portico::plugins::backendtlspolicy
