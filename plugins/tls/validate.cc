// validate.cc: see validate.h.
#include "validate.h"

#include <algorithm>
#include <map>
#include <set>

#include "portico/sdk/fields.h"
#include "portico/sdk/names.h"

namespace portico::plugins::tls {
namespace {

using ::portico::sdk::FieldError;
using ::portico::sdk::Quoted;
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

// IsUri: "scheme:rest" with an RFC 3986 scheme and a non-empty rest of visible ASCII.
bool IsUri(std::string_view s) {
  size_t colon = s.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == s.size()) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!alpha(s[0])) return false;
  for (size_t i = 1; i < colon; ++i) {
    char c = s[i];
    if (!alpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.') return false;
  }
  for (size_t i = colon + 1; i < s.size(); ++i) {
    if (s[i] <= 0x20 || s[i] >= 0x7f) return false;
  }
  return true;
}

Status ParseAllowedSans(const rapidjson::Value& sans, ClientCertificate& cc) {
  const std::string field = "spec.clientCertificate.allowedSans";
  if (!sans.IsArray()) return FieldError(field, "must be an array");
  if (sans.Empty()) {
    return FieldError(field, "must name at least one SAN (leave it out to accept any)");
  }
  std::set<std::string> seen;
  for (rapidjson::SizeType i = 0; i < sans.Size(); ++i) {
    std::string san = sans[i].IsString() ? sans[i].GetString() : "";
    bool uri = san.find(':') != std::string::npos;
    if (uri ? !IsUri(san) : !sdk::names::IsHostname(san, /*allow_wildcard=*/false)) {
      return FieldError(At(field, i),
                        Quoted(san) + " is neither a DNS name (lower case, no wildcard) nor a " +
                            "URI (scheme:rest)");
    }
    if (!seen.insert(san).second) return FieldError(At(field, i), "duplicate SAN " + Quoted(san));
    cc.allowed_sans.push_back(std::move(san));
  }
  return OkStatus();
}

Status ParseAlpn(const rapidjson::Value& alpn, TlsPolicySpec& out) {
  if (!alpn.IsArray()) return FieldError("spec.alpn", "must be an array");
  if (alpn.Empty()) {
    return FieldError("spec.alpn", "must name at least one protocol (leave it out for http/1.1)");
  }
  std::set<std::string> seen;
  for (rapidjson::SizeType i = 0; i < alpn.Size(); ++i) {
    std::string id = alpn[i].IsString() ? alpn[i].GetString() : "";
    bool visible = std::all_of(id.begin(), id.end(), [](char c) { return c > 0x20 && c < 0x7f; });
    if (id.empty() || id.size() > 255 || !visible) {
      return FieldError(At("spec.alpn", i),
                        Quoted(id) + " is not a protocol id (1-255 visible ASCII characters)");
    }
    if (!seen.insert(id).second) {
      return FieldError(At("spec.alpn", i), "duplicate protocol " + Quoted(id));
    }
    out.alpn.push_back(std::move(id));
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
  if (const rapidjson::Value* sans = json::Find(c, "allowedSans")) {
    PORTICO_RETURN_IF_ERROR(ParseAllowedSans(*sans, cc));
  }
  if (cc.mode == "None") {
    if (!cc.ca_refs.empty()) {
      return FieldError("spec.clientCertificate.caCertificateRefs",
                        "must be empty when mode is None");
    }
    if (cc.verify_depth) {
      return FieldError("spec.clientCertificate.verifyDepth", "must not be set when mode is None");
    }
    if (json::Find(c, "allowedSans") != nullptr) {
      return FieldError("spec.clientCertificate.allowedSans", "must not be set when mode is None");
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
  const rapidjson::Value* alpn = json::Find(spec, "alpn");
  if (alpn != nullptr) {
    PORTICO_RETURN_IF_ERROR(ParseAlpn(*alpn, out));
  } else {
    out.alpn = {"http/1.1"};
  }
  if (const rapidjson::Value* client = json::Find(spec, "clientCertificate")) {
    PORTICO_RETURN_IF_ERROR(ParseClientCertificate(*client, out));
  }
  if (!out.certificate && !versions && out.ciphers.empty() && alpn == nullptr &&
      !out.client_certificate) {
    return FieldError(
        "spec",
        "a TLSPolicy must set at least one of certificateRef, minVersion, maxVersion, "
        "ciphers, alpn or clientCertificate");
  }
  return out;
}

std::optional<std::string> UnsupportedAlpn(const TlsPolicySpec& spec) {
  for (size_t i = 0; i < spec.alpn.size(); ++i) {
    const std::string& id = spec.alpn[i];
    if (id == "http/1.1" || id == "http/1.0") continue;
    std::string why = id == "h2" ? "HTTP/2 is not implemented; the gateway serves HTTP/1.1 only"
                                 : "the gateway serves only http/1.1 and http/1.0 over TLS";
    return At("spec.alpn", i) + ": " + Quoted(id) + ": " + why;
  }
  return std::nullopt;
}

}  // namespace portico::plugins::tls
