// process.cc: see process.h.
#include "process.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "portico/sdk/fields.h"
#include "portico/sdk/json_writer.h"
#include "portico/sdk/policy_peers.h"
#include "portico/sdk/timestamp.h"
#include "validate.h"

namespace portico::plugins::tls {
namespace {

using ::portico::sdk::Quoted;

sdk::Condition AcceptTarget(const TargetRef& target, const std::string& ns,
                            sdk::ProcessContext& ctx) {
  std::string gateway = "Gateway " + ns + "/" + target.name;
  std::optional<std::string> exported = ctx.GetExport({kGatewayGroup, "Gateway", ns, target.name});
  if (!exported) return {"Accepted", "False", "TargetNotFound", gateway + " does not exist"};
  auto doc = json::Parse(*exported, gateway);
  const rapidjson::Value* listeners = doc.ok() ? json::Find(*doc, "listeners") : nullptr;
  bool section_found = false;
  bool tls_listener = false;
  if (listeners != nullptr && listeners->IsArray()) {
    for (const auto& l : listeners->GetArray()) {
      if (!target.section_name.empty() && json::GetString(l, "name") != target.section_name) {
        continue;
      }
      section_found = true;
      std::string protocol = json::GetString(l, "protocol");
      tls_listener = tls_listener || protocol == "HTTPS" || protocol == "TLS";
    }
  }
  if (!target.section_name.empty() && !section_found) {
    return {"Accepted", "False", "TargetNotFound",
            gateway + " has no listener \"" + target.section_name + "\""};
  }
  if (!tls_listener) {
    return {"Accepted", "False", "Invalid",
            target.section_name.empty() ? gateway + " has no HTTPS or TLS listener"
                                        : "listener \"" + target.section_name + "\" of " + gateway +
                                              " is not HTTPS or TLS"};
  }
  return {"Accepted", "True", "Accepted", ""};
}

// ResolvedSecret is a usable Secret: its namespace (filled in) and name, and the SHA-256 of its
// material as its certificate.v1 entry carries it.
struct ResolvedSecret {
  std::string ns;
  std::string name;
  std::string sha256;
};

// Resolution is the outcome for the policy's Secrets: the usable ones, and the ResolvedRefs=False
// condition of the first unusable one, if any.
struct Resolution {
  std::optional<ResolvedSecret> certificate;
  std::vector<ResolvedSecret> cas;
  std::optional<sdk::Condition> failure;
};

// ResolveSecret checks one reference against the Secret plugin's export; nullopt with `*failure`
// set when the Secret cannot be used.
std::optional<ResolvedSecret> ResolveSecret(const SecretRef& ref, const std::string& ns,
                                            const std::string& field, bool certificate,
                                            sdk::ProcessContext& ctx,
                                            std::optional<sdk::Condition>* failure) {
  std::string secret_ns = ref.ns.empty() ? ns : ref.ns;
  std::string secret = "Secret " + secret_ns + "/" + ref.name;
  const char* bad_reason = certificate ? "InvalidCertificateRef" : "InvalidCACertificateRef";
  auto fail = [&](const char* reason, const std::string& message) {
    if (!*failure)
      *failure = sdk::Condition{"ResolvedRefs", "False", reason, field + ": " + message};
    return std::nullopt;
  };
  if (secret_ns != ns &&
      !ctx.ReferenceAllowed(kGroup, "TLSPolicy", ns, {"", "Secret", secret_ns, ref.name})) {
    return fail("RefNotPermitted",
                secret +
                    " is in another namespace and no ReferenceGrant there allows TLSPolicies "
                    "from " +
                    ns + " to reference it");
  }
  std::optional<std::string> exported = ctx.GetExport({"", "Secret", secret_ns, ref.name});
  if (!exported) return fail(bad_reason, secret + " does not exist");
  auto doc = json::Parse(*exported, secret);
  if (!doc.ok()) return fail(bad_reason, secret + " has no readable export");
  std::string sha256;
  if (certificate) {
    std::string type = json::GetString(*doc, "type");
    if (type != "kubernetes.io/tls") {
      return fail(bad_reason,
                  secret + " is of type " + Quoted(type) + ", not a kubernetes.io/tls Secret");
    }
    const rapidjson::Value* valid = json::Find(*doc, "tlsValid");
    if (valid == nullptr || !valid->IsBool() || !valid->GetBool()) {
      return fail(bad_reason,
                  secret + ": " + json::GetString(*doc, "message", "its material is not usable"));
    }
    sha256 = json::GetString(*doc, "sha256");
  } else {
    const rapidjson::Value* ca = json::Find(*doc, "ca");
    if (ca == nullptr || !ca->IsObject()) return fail(bad_reason, secret + " has no ca.crt");
    const rapidjson::Value* valid = json::Find(*ca, "valid");
    if (valid == nullptr || !valid->IsBool() || !valid->GetBool()) {
      return fail(bad_reason,
                  secret + ": " + json::GetString(*ca, "message", "its ca.crt is not usable"));
    }
    sha256 = json::GetString(*ca, "sha256");
  }
  if (sha256.empty()) return fail(bad_reason, secret + ": its material has no digest");
  return ResolvedSecret{secret_ns, ref.name, sha256};
}

Resolution ResolveSecrets(const TlsPolicySpec& spec, const std::string& ns,
                          sdk::ProcessContext& ctx) {
  Resolution out;
  if (spec.certificate) {
    out.certificate =
        ResolveSecret(*spec.certificate, ns, "spec.certificateRef", true, ctx, &out.failure);
  }
  if (spec.client_certificate) {
    const auto& refs = spec.client_certificate->ca_refs;
    for (size_t i = 0; i < refs.size(); ++i) {
      std::optional<ResolvedSecret> ca = ResolveSecret(
          refs[i], ns, "spec.clientCertificate.caCertificateRefs[" + std::to_string(i) + "]", false,
          ctx, &out.failure);
      if (ca) out.cas.push_back(std::move(*ca));
    }
  }
  return out;
}

// ---------------------------------------------------------------- conflicts

// Contender is a policy as conflict resolution sees it: age, identity, hostnames and the targets
// it would apply to but for conflicts.
struct Contender {
  int64_t created = kUnknownCreatedUnixMs;
  std::string name;
  std::vector<std::string> hostnames;
  std::vector<TargetRef> targets;
};

bool Older(const Contender& a, const Contender& b) {
  return sdk::OlderPolicy(a.created, a.name, b.created, b.name);
}

// SharedListener: both targets cover a listener (same Gateway; same sectionName, or either
// without one).
bool SharedListener(const TargetRef& a, const TargetRef& b) {
  return a.name == b.name &&
         (a.section_name.empty() || b.section_name.empty() || a.section_name == b.section_name);
}

// SharedHostname returns the description of a hostname both lists cover, or nullopt.
std::optional<std::string> SharedHostname(const std::vector<std::string>& a,
                                          const std::vector<std::string>& b) {
  if (a.empty() || b.empty()) {
    if (a.empty() && b.empty()) return std::string("every hostname (neither sets hostnames)");
    return std::nullopt;
  }
  for (const std::string& h : a) {
    if (std::find(b.begin(), b.end(), h) != b.end()) return "hostname " + Quoted(h);
  }
  return std::nullopt;
}

// ParseContender reads one peer (ListPolicyPeers); nullopt when it contends for nothing.
std::optional<Contender> ParseContender(const sdk::PolicyPeers::Peer& peer) {
  Contender c;
  c.name = peer.name;
  c.created = peer.created_unix_ms;
  const rapidjson::Value* e = peer.export_json;
  if (const rapidjson::Value* hs = json::Find(*e, "hostnames"); hs != nullptr && hs->IsArray()) {
    for (const auto& h : hs->GetArray()) {
      if (h.IsString()) c.hostnames.emplace_back(h.GetString(), h.GetStringLength());
    }
  }
  const rapidjson::Value* ts = json::Find(*e, "contends");
  if (ts == nullptr || !ts->IsArray()) return std::nullopt;
  for (const auto& t : ts->GetArray()) {
    c.targets.push_back(
        {kGatewayGroup, "Gateway", json::GetString(t, "name"), json::GetString(t, "sectionName")});
  }
  if (c.targets.empty()) return std::nullopt;
  return c;
}

// Conflicts returns, per target of `self` for which `candidate` is set, the Conflicted message
// when an older policy wins there. `others` are the other policies of the namespace.
std::vector<std::optional<std::string>> Conflicts(const Contender& self,
                                                  const std::vector<bool>& candidate,
                                                  std::vector<Contender> others,
                                                  const std::string& ns) {
  std::vector<std::optional<std::string>> out(self.targets.size());
  std::sort(others.begin(), others.end(), Older);
  // Applied (policy, target) pairs of the policies older than self, oldest first.
  std::vector<std::pair<const Contender*, const TargetRef*>> applied;
  auto winner = [&](const Contender& c,
                    const TargetRef& t) -> std::optional<std::pair<const Contender*, std::string>> {
    for (const auto& [p, pt] : applied) {
      if (p == &c || !SharedListener(t, *pt)) continue;  // a policy never conflicts with itself
      std::optional<std::string> host = SharedHostname(c.hostnames, p->hostnames);
      if (!host) continue;
      const std::string& section = t.section_name.empty() ? pt->section_name : t.section_name;
      std::string where = section.empty()
                              ? "Gateway " + ns + "/" + t.name
                              : "listener " + Quoted(section) + " of Gateway " + ns + "/" + t.name;
      return std::make_pair(p, *host + " on " + where);
    }
    return std::nullopt;
  };
  for (const Contender& c : others) {
    if (!Older(c, self)) break;
    for (const TargetRef& t : c.targets) {
      if (!winner(c, t)) applied.emplace_back(&c, &t);
    }
  }
  for (size_t i = 0; i < self.targets.size(); ++i) {
    if (!candidate[i]) continue;
    if (auto w = winner(self, self.targets[i])) {
      out[i] = "TLSPolicy " + ns + "/" + w->first->name + " is older and already applies to " +
               w->second + "; of two TLSPolicies for one hostname the oldest wins";
    }
  }
  return out;
}

// ---------------------------------------------------------------- writing

void WriteTarget(sdk::JsonWriter& w, const TargetRef& t, const std::string& ns) {
  w.BeginObject()
      .Field("group", t.group)
      .Field("kind", t.kind)
      .Field("namespace", ns)
      .Field("name", t.name);
  if (!t.section_name.empty()) w.Field("sectionName", t.section_name);
  w.EndObject();
}

void WriteResolvedSecret(sdk::JsonWriter& w, const ResolvedSecret& s) {
  w.BeginObject().Key("secretRef").BeginObject().Field("namespace", s.ns).Field("name", s.name);
  w.EndObject().Field("sha256", s.sha256).EndObject();
}

void WriteStrings(sdk::JsonWriter& w, std::string_view key, const std::vector<std::string>& v) {
  w.Key(key).BeginArray();
  for (const std::string& s : v) w.String(s);
  w.EndArray();
}

// SyncedJson is what the handler stages (stage.h): the resolved settings and the targets the
// policy applies to.
std::string SyncedJson(const sdk::Object& obj, const TlsPolicySpec& spec, int64_t created,
                       const Resolution& secrets, const std::vector<const TargetRef*>& applied) {
  const std::string& ns = obj.ref().ns;
  sdk::JsonWriter w;
  w.BeginObject().Key("metadata").BeginObject().Field("name", obj.ref().name);
  w.Field("namespace", ns).Field("generation", obj.generation()).EndObject();
  w.Field("createdUnixMs", created).Key("targets").BeginArray();
  for (const TargetRef* t : applied) {
    w.BeginObject().Key("gateway").BeginObject().Field("namespace", ns).Field("name", t->name);
    w.EndObject();
    if (!t->section_name.empty()) w.Field("listener", t->section_name);
    w.EndObject();
  }
  w.EndArray();
  WriteStrings(w, "hostnames", spec.hostnames);
  if (secrets.certificate) {
    w.Key("certificate");
    WriteResolvedSecret(w, *secrets.certificate);
  }
  w.Field("minVersion", spec.min_version).Field("maxVersion", spec.max_version);
  WriteStrings(w, "ciphers", spec.ciphers);
  WriteStrings(w, "alpn", spec.alpn);
  if (spec.client_certificate) {
    const ClientCertificate& cc = *spec.client_certificate;
    w.Key("clientCertificate").BeginObject().Field("mode", cc.mode);
    if (cc.verify_depth) w.Field("verifyDepth", *cc.verify_depth);
    w.Key("caCertificates").BeginArray();
    for (const ResolvedSecret& ca : secrets.cas) WriteResolvedSecret(w, ca);
    w.EndArray();
    WriteStrings(w, "allowedSans", cc.allowed_sans);
    w.EndObject();
  }
  return w.EndObject().Take();
}

std::string ExportJson(const TlsPolicySpec& spec, const std::string& ns, int64_t created,
                       const std::vector<const TargetRef*>& contends) {
  sdk::JsonWriter w;
  w.BeginObject().Key("targetRefs").BeginArray();
  for (const TargetRef& t : spec.targets) WriteTarget(w, t, ns);
  w.EndArray();
  WriteStrings(w, "hostnames", spec.hostnames);
  w.Field("createdUnixMs", created).Key("contends").BeginArray();
  for (const TargetRef* t : contends) WriteTarget(w, *t, ns);
  return w.EndArray().EndObject().Take();
}

}  // namespace

Status ProcessTlsPolicy(const sdk::Object& obj, sdk::ProcessContext& ctx,
                        sdk::ProcessResult& result) {
  PORTICO_ASSIGN_OR_RETURN(const rapidjson::Document* doc, obj.doc());
  static const rapidjson::Value kEmpty(rapidjson::kObjectType);
  const rapidjson::Value* spec_json = json::Find(*doc, "spec");
  StatusOr<TlsPolicySpec> spec = ParseTlsPolicy(spec_json != nullptr ? *spec_json : kEmpty);
  if (!spec.ok()) return spec.status().WithPrefix(obj.ref().Display());
  const std::string& ns = obj.ref().ns;
  StatusOr<int64_t> created_or =
      sdk::CreatedUnixMs(json::GetString(*doc, "metadata.creationTimestamp"));
  if (!created_or.ok()) return created_or.status().WithPrefix(obj.ref().Display());
  const int64_t created = *created_or;

  // 1. What does not depend on other policies: targets, ALPN, Secrets.
  std::vector<sdk::Condition> accepted;
  for (const TargetRef& t : spec->targets) accepted.push_back(AcceptTarget(t, ns, ctx));
  std::optional<std::string> unsupported = UnsupportedAlpn(*spec);
  Resolution secrets = ResolveSecrets(*spec, ns, ctx);
  const sdk::Condition resolved = secrets.failure
                                      ? *secrets.failure
                                      : sdk::Condition{"ResolvedRefs", "True", "ResolvedRefs", ""};

  // 2. Conflicts with the other policies of the namespace, on the targets this one accepts.
  Contender self{created, obj.ref().name, spec->hostnames, spec->targets};
  std::vector<bool> candidate;
  std::vector<const TargetRef*> contends;
  for (size_t i = 0; i < spec->targets.size(); ++i) {
    candidate.push_back(accepted[i].status == "True" && !unsupported);
    if (candidate.back() && !secrets.failure) contends.push_back(&spec->targets[i]);
  }
  std::vector<Contender> others;
  for (const auto& peer :
       sdk::ListPolicyPeers(ctx, kGroup, "TLSPolicy", ns, obj.ref().name).peers) {
    if (std::optional<Contender> c = ParseContender(peer)) others.push_back(std::move(*c));
  }
  std::vector<std::optional<std::string>> conflicts =
      Conflicts(self, candidate, std::move(others), ns);

  // 3. Status per ancestor; the targets the policy applies to.
  std::vector<std::vector<sdk::Condition>> conditions;
  std::vector<const TargetRef*> applied;
  for (size_t i = 0; i < spec->targets.size(); ++i) {
    sdk::Condition a = accepted[i];
    std::optional<sdk::Condition> conflicted;
    if (a.status == "True" && unsupported) {
      a = {"Accepted", "False", "UnsupportedValue", *unsupported};
    } else if (a.status == "True" && conflicts[i]) {
      a = {"Accepted", "False", "Conflicted", *conflicts[i]};
      conflicted = sdk::Condition{"Conflicted", "True", "Conflicted", *conflicts[i]};
    }
    if (a.status == "True" && !secrets.failure) applied.push_back(&spec->targets[i]);
    conditions.push_back({a, resolved});
    if (conflicted) conditions.back().push_back(*conflicted);
  }

  if (!applied.empty()) result.SetSynced(SyncedJson(obj, *spec, created, secrets, applied));
  // Sync scope: the policy goes with its Gateways, the material of the Secrets it may use with
  // the policy (never a Secret it is not allowed to reference).
  for (const TargetRef& t : spec->targets) {
    result.LinkParent({kGatewayGroup, "Gateway", ns, t.name});
  }
  if (secrets.certificate) {
    result.LinkReference({"", "Secret", secrets.certificate->ns, secrets.certificate->name});
  }
  for (const ResolvedSecret& ca : secrets.cas) result.LinkReference({"", "Secret", ca.ns, ca.name});
  result.SetExport(ExportJson(*spec, ns, created, contends));

  sdk::JsonWriter status;
  status.BeginObject().Key("ancestors").BeginArray();
  for (size_t i = 0; i < spec->targets.size(); ++i) {
    status.BeginObject().Key("ancestorRef");
    WriteTarget(status, spec->targets[i], ns);
    sdk::WriteConditions(status, conditions[i], obj.generation());
    status.EndObject();
  }
  result.SetStatus(status.EndArray().EndObject().Take());
  return OkStatus();
}

}  // namespace portico::plugins::tls
