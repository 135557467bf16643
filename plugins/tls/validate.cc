// validate.cc: see validate.h.
#include "validate.h"

#include <map>
#include <set>

#include "portico/sdk/names.h"

namespace portico::plugins::tls {
namespace {

Status FieldError(const std::string& field, const std::string& what) {
  return InvalidArgumentError(field + ": " + what);
}
std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }
std::string At(const std::string& field, size_t i) { return field + "[" + std::to_string(i) + "]"; }

const rapidjson::Value* Array(const rapidjson::Value& v, const char* name) {
  const rapidjson::Value* a = json::Find(v, name);
  return a != nullptr && a->IsArray() ? a : nullptr;
}

// VersionRank orders "TLSv1.2" < "TLSv1.3"; 0 when unknown.
int VersionRank(const std::string& v) {
  if (v == "TLSv1.2") return 12;
  if (v == "TLSv1.3") return 13;
  return 0;
}

StatusOr<SecretRef> ParseSecretRef(const rapidjson::Value& v, const std::string& field) {
  SecretRef ref{json::GetString(v, "namespace"), json::GetString(v, "name")};
  if (!sdk::names::IsDnsSubdomain(ref.name)) {
    return FieldError(field + ".name", Quoted(ref.name) + " is not a valid Secret name");
  }
  if (!ref.ns.empty() && !sdk::names::IsDnsLabel(ref.ns)) {
    return FieldError(field + ".namespace", Quoted(ref.ns) + " is not a valid namespace");
  }
  return ref;
}

Status ParseTargets(const rapidjson::Value& spec, TlsPolicySpec& out) {
  const rapidjson::Value* targets = Array(spec, "targetRefs");
  if (targets == nullptr || targets->Empty()) {
    return FieldError("spec.targetRefs", "at least one target is required");
  }
  std::map<std::pair<std::string, std::string>, size_t> seen;
  for (rapidjson::SizeType i = 0; i < targets->Size(); ++i) {
    const rapidjson::Value& t = (*targets)[i];
    std::string field = At("spec.targetRefs", i);
    TargetRef ref{json::GetString(t, "group", kGatewayGroup), json::GetString(t, "kind", "Gateway"),
                  json::GetString(t, "name"), json::GetString(t, "sectionName")};
    if (ref.group != kGatewayGroup || ref.kind != "Gateway") {
      return FieldError(field,
                        "only Gateways (group gateway.networking.k8s.io) can be targeted, not " +
                            ref.kind + (ref.group.empty() ? "" : "." + ref.group));
    }
    if (!sdk::names::IsDnsSubdomain(ref.name)) {
      return FieldError(field + ".name", Quoted(ref.name) + " is not a valid name");
    }
    if (!ref.section_name.empty() && !sdk::names::IsDnsSubdomain(ref.section_name)) {
      return FieldError(field + ".sectionName",
                        Quoted(ref.section_name) + " is not a valid section name");
    }
    if (auto [it, fresh] = seen.emplace(std::make_pair(ref.name, ref.section_name), i); !fresh) {
      return FieldError(
          field, "duplicate target Gateway " + Quoted(ref.name) +
                     (ref.section_name.empty() ? "" : " section " + Quoted(ref.section_name)) +
                     " (also spec.targetRefs[" + std::to_string(it->second) + "])");
    }
    out.targets.push_back(std::move(ref));
  }
  return OkStatus();
}

Status ParseClientCertificate(const rapidjson::Value& c, TlsPolicySpec& out) {
  ClientCertificate cc;
  cc.mode = json::GetString(c, "mode", "Require");
  if (cc.mode != "None" && cc.mode != "Optional" && cc.mode != "Require") {
    return FieldError("spec.clientCertificate.mode",
                      Quoted(cc.mode) + " is not None, Optional or Require");
  }
  if (const rapidjson::Value* refs = Array(c, "caCertificateRefs")) {
    for (rapidjson::SizeType i = 0; i < refs->Size(); ++i) {
      PORTICO_ASSIGN_OR_RETURN(
          SecretRef ref,
          ParseSecretRef((*refs)[i], At("spec.clientCertificate.caCertificateRefs", i)));
      cc.ca_refs.push_back(std::move(ref));
    }
  }
  cc.verify_depth = json::GetInt(c, "verifyDepth");
  if (cc.mode == "None") {
    if (!cc.ca_refs.empty()) {
      return FieldError("spec.clientCertificate.caCertificateRefs",
                        "must be empty when mode is None");
    }
    if (cc.verify_depth) {
      return FieldError("spec.clientCertificate.verifyDepth", "must not be set when mode is None");
    }
  } else if (cc.ca_refs.empty()) {
    return FieldError("spec.clientCertificate.caCertificateRefs",
                      "at least one CA is required when mode is " + cc.mode);
  }
  if (cc.verify_depth && (*cc.verify_depth < 1 || *cc.verify_depth > 100)) {
    return FieldError("spec.clientCertificate.verifyDepth", "must be 1-100");
  }
  out.client_certificate = std::move(cc);
  return OkStatus();
}

}  // namespace

StatusOr<TlsPolicySpec> ParseTlsPolicy(const rapidjson::Value& spec) {
  TlsPolicySpec out;
  PORTICO_RETURN_IF_ERROR(ParseTargets(spec, out));
  if (const rapidjson::Value* hostnames = Array(spec, "hostnames")) {
    std::set<std::string> seen;
    for (rapidjson::SizeType i = 0; i < hostnames->Size(); ++i) {
      const rapidjson::Value& h = (*hostnames)[i];
      std::string hostname = h.IsString() ? h.GetString() : "";
      if (!sdk::names::IsHostname(hostname, /*allow_wildcard=*/true)) {
        return FieldError(At("spec.hostnames", i), Quoted(hostname) + " is not a valid hostname");
      }
      if (!seen.insert(hostname).second) {
        return FieldError(At("spec.hostnames", i), "duplicate hostname " + Quoted(hostname));
      }
      out.hostnames.push_back(hostname);
    }
  }
  if (const rapidjson::Value* cert = json::Find(spec, "certificateRef")) {
    PORTICO_ASSIGN_OR_RETURN(out.certificate, ParseSecretRef(*cert, "spec.certificateRef"));
  }
  bool versions =
      json::Find(spec, "minVersion") != nullptr || json::Find(spec, "maxVersion") != nullptr;
  out.min_version = json::GetString(spec, "minVersion", "TLSv1.2");
  out.max_version = json::GetString(spec, "maxVersion", "TLSv1.3");
  for (const auto& [field, value] : {std::make_pair("spec.minVersion", out.min_version),
                                     std::make_pair("spec.maxVersion", out.max_version)}) {
    if (VersionRank(value) == 0) {
      return FieldError(field, Quoted(value) + " is not TLSv1.2 or TLSv1.3");
    }
  }
  if (VersionRank(out.min_version) > VersionRank(out.max_version)) {
    return FieldError("spec.minVersion",
                      Quoted(out.min_version) + " is above maxVersion " + Quoted(out.max_version));
  }
  if (const rapidjson::Value* ciphers = Array(spec, "ciphers")) {
    std::set<std::string> seen;
    for (rapidjson::SizeType i = 0; i < ciphers->Size(); ++i) {
      const rapidjson::Value& c = (*ciphers)[i];
      std::string cipher = c.IsString() ? c.GetString() : "";
      if (cipher.empty()) return FieldError(At("spec.ciphers", i), "must not be empty");
      if (!seen.insert(cipher).second) {
        return FieldError(At("spec.ciphers", i), "duplicate cipher " + Quoted(cipher));
      }
      out.ciphers.push_back(cipher);
    }
    if (!out.ciphers.empty() && out.min_version == "TLSv1.3") {
      return FieldError(
          "spec.ciphers",
          "cipher suites apply to TLS 1.2 only and have no effect when minVersion is TLSv1.3");
    }
  }
  if (const rapidjson::Value* client = json::Find(spec, "clientCertificate")) {
    PORTICO_RETURN_IF_ERROR(ParseClientCertificate(*client, out));
  }
  if (!out.certificate && !versions && out.ciphers.empty() && !out.client_certificate) {
    return FieldError(
        "spec",
        "a TLSPolicy must set at least one of certificateRef, minVersion, maxVersion, "
        "ciphers or clientCertificate");
  }
  return out;
}

}  // namespace portico::plugins::tls
