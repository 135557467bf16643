#include "core/plugin/manifest.h"

#include <cctype>
#include <limits>
#include <set>
#include <utility>

#include "portico/sdk/json.h"

namespace portico::core {
namespace {

struct CapabilityName {
  uint32_t bit;
  std::string_view name;
};
constexpr CapabilityName kCapabilities[] = {
    {PORTICO_CAP_PROCESSOR, "processor"},
    {PORTICO_CAP_SYNC, "sync"},
    {PORTICO_CAP_HANDLER, "handler"},
    {PORTICO_CAP_ROUTE_FILTER, "routeFilter"},
    {PORTICO_CAP_POLICY_TARGET, "policyTarget"},
    {PORTICO_CAP_REFERENCE_POLICY, "referencePolicy"},
};

Status FieldError(std::string_view field, std::string_view problem) {
  return InvalidArgumentError("manifest " + std::string(field) + ": " + std::string(problem));
}

// RequiredString reads a required non-empty string member.
StatusOr<std::string> RequiredString(const rapidjson::Value& obj, const char* member,
                                     const std::string& field) {
  const rapidjson::Value* v = json::Find(obj, member);
  if (v == nullptr) return FieldError(field, "missing (a non-empty string)");
  if (!v->IsString() || v->GetStringLength() == 0) {
    return FieldError(field, "expected a non-empty string");
  }
  return std::string(v->GetString(), v->GetStringLength());
}

// OptionalString reads an optional string member (`fallback` when absent).
StatusOr<std::string> OptionalString(const rapidjson::Value& obj, const char* member,
                                     const std::string& field, std::string fallback = "") {
  const rapidjson::Value* v = json::Find(obj, member);
  if (v == nullptr) return fallback;
  if (!v->IsString()) return FieldError(field, "expected a string");
  return std::string(v->GetString(), v->GetStringLength());
}

// StringArray reads an array of non-empty strings; absent is empty unless `required`.
StatusOr<std::vector<std::string>> StringArray(const rapidjson::Value& obj, const char* member,
                                               const std::string& field, bool required) {
  std::vector<std::string> out;
  const rapidjson::Value* v = json::Find(obj, member);
  if (v == nullptr) {
    if (required) return FieldError(field, "missing (a non-empty array of strings)");
    return out;
  }
  if (!v->IsArray()) return FieldError(field, "expected an array of strings");
  for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
    const rapidjson::Value& item = (*v)[i];
    if (!item.IsString() || item.GetStringLength() == 0) {
      return FieldError(field + "[" + std::to_string(i) + "]", "expected a non-empty string");
    }
    out.emplace_back(item.GetString(), item.GetStringLength());
  }
  if (required && out.empty()) return FieldError(field, "expected a non-empty array of strings");
  return out;
}

StatusOr<uint32_t> AbiNumber(const rapidjson::Value& abi, const char* member) {
  std::string field = std::string("abi.") + member;
  const rapidjson::Value* v = json::Find(abi, member);
  if (v == nullptr) return FieldError(field, "missing (a non-negative integer)");
  if (!v->IsUint64() || v->GetUint64() > std::numeric_limits<uint32_t>::max()) {
    return FieldError(field, "expected a non-negative 32-bit integer");
  }
  return static_cast<uint32_t>(v->GetUint64());
}

bool IsKindName(std::string_view s) {
  if (s.empty() || !std::isupper(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// IsGroupName accepts "" (core) or a lower-case DNS subdomain ("gateway.networking.k8s.io").
bool IsGroupName(std::string_view s) {
  for (char c : s) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.')) {
      return false;
    }
  }
  return s.empty() || (s.front() != '.' && s.back() != '.');
}

bool IsLowerName(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-')) {
      return false;
    }
  }
  return true;
}

StatusOr<ManifestKind> ParseKind(const rapidjson::Value& entry, const std::string& at) {
  if (!entry.IsObject()) return FieldError(at, "expected an object");
  ManifestKind k;
  PORTICO_ASSIGN_OR_RETURN(k.id.kind, RequiredString(entry, "kind", at + ".kind"));
  if (!IsKindName(k.id.kind)) {
    return FieldError(at + ".kind", "\"" + k.id.kind +
                                        "\" is not a kind name (PascalCase, "
                                        "letters and digits, e.g. \"HTTPRoute\")");
  }
  PORTICO_ASSIGN_OR_RETURN(k.id.group, OptionalString(entry, "group", at + ".group"));
  if (!IsGroupName(k.id.group)) {
    return FieldError(at + ".group", "\"" + k.id.group +
                                         "\" is not an API group (a lower-case "
                                         "DNS name, or \"\" for the core group)");
  }
  PORTICO_ASSIGN_OR_RETURN(k.versions, StringArray(entry, "versions", at + ".versions", true));
  PORTICO_ASSIGN_OR_RETURN(k.plural, RequiredString(entry, "plural", at + ".plural"));
  if (!IsLowerName(k.plural)) {
    return FieldError(at + ".plural", "\"" + k.plural + "\" must be lower-case letters and digits");
  }
  PORTICO_ASSIGN_OR_RETURN(k.short_names,
                           StringArray(entry, "shortNames", at + ".shortNames", false));
  for (size_t i = 0; i < k.short_names.size(); ++i) {
    if (!IsLowerName(k.short_names[i])) {
      return FieldError(at + ".shortNames[" + std::to_string(i) + "]",
                        "\"" + k.short_names[i] + "\" must be lower-case letters and digits");
    }
  }
  PORTICO_ASSIGN_OR_RETURN(std::string scope,
                           OptionalString(entry, "scope", at + ".scope", "Namespaced"));
  if (scope == "Namespaced") {
    k.scope = PORTICO_SCOPE_NAMESPACED;
  } else if (scope == "Cluster") {
    k.scope = PORTICO_SCOPE_CLUSTER;
  } else {
    return FieldError(at + ".scope", "\"" + scope + "\" (expected Namespaced or Cluster)");
  }
  PORTICO_ASSIGN_OR_RETURN(std::vector<std::string> reads,
                           StringArray(entry, "reads", at + ".reads", false));
  for (size_t i = 0; i < reads.size(); ++i) {
    KindId id = KindId::Parse(reads[i]);
    if (!IsKindName(id.kind) || !IsGroupName(id.group)) {
      return FieldError(at + ".reads[" + std::to_string(i) + "]",
                        "\"" + reads[i] + "\" is not \"Kind.group\" or \"Kind\"");
    }
    k.reads.push_back(std::move(id));
  }
  PORTICO_ASSIGN_OR_RETURN(k.capabilities,
                           StringArray(entry, "capabilities", at + ".capabilities", false));
  for (size_t i = 0; i < k.capabilities.size(); ++i) {
    uint32_t bit = CapabilityBit(k.capabilities[i]);
    if (bit == 0) {
      return FieldError(at + ".capabilities[" + std::to_string(i) + "]",
                        "unknown capability \"" + k.capabilities[i] +
                            "\" (expected processor, sync, handler, routeFilter, policyTarget "
                            "or referencePolicy)");
    }
    k.capability_bits |= bit;
  }
  PORTICO_ASSIGN_OR_RETURN(std::string sync, OptionalString(entry, "sync", at + ".sync", "never"));
  if (sync == "never") {
    k.sync_policy = PORTICO_SYNC_NEVER;
  } else if (sync == "always") {
    k.sync_policy = PORTICO_SYNC_ALWAYS;
  } else if (sync == "toReferrers") {
    k.sync_policy = PORTICO_SYNC_TO_REFERRERS;
  } else if (sync == "attached") {
    k.sync_policy = PORTICO_SYNC_ATTACHED;
  } else {
    return FieldError(at + ".sync",
                      "\"" + sync + "\" (expected never, always, toReferrers or attached)");
  }
  PORTICO_ASSIGN_OR_RETURN(k.schema, OptionalString(entry, "schema", at + ".schema"));
  return k;
}

}  // namespace

StatusOr<PluginManifest> ParseManifest(std::string_view text) {
  auto parsed = json::Parse(text, "manifest");
  if (!parsed.ok()) return parsed.status();
  const rapidjson::Document& doc = *parsed;
  if (!doc.IsObject()) return InvalidArgumentError("manifest: expected a JSON object");

  PluginManifest m;
  const rapidjson::Value* mv = json::Find(doc, "manifestVersion");
  if (mv == nullptr) return FieldError("manifestVersion", "missing (an integer)");
  if (!mv->IsInt64() || mv->GetInt64() < 1) {
    return FieldError("manifestVersion", "expected a positive integer");
  }
  m.manifest_version = mv->GetInt64();
  if (m.manifest_version > kManifestVersion) {
    return FieldError("manifestVersion", std::to_string(m.manifest_version) +
                                             " is newer than this host reads (" +
                                             std::to_string(kManifestVersion) + ")");
  }
  PORTICO_ASSIGN_OR_RETURN(m.name, RequiredString(doc, "name", "name"));
  for (char c : m.name) {
    if (std::isspace(static_cast<unsigned char>(c)) ||
        std::iscntrl(static_cast<unsigned char>(c))) {
      return FieldError("name", "\"" + m.name + "\" contains white space");
    }
  }
  PORTICO_ASSIGN_OR_RETURN(m.version, RequiredString(doc, "version", "version"));
  PORTICO_ASSIGN_OR_RETURN(m.description, OptionalString(doc, "description", "description"));
  PORTICO_ASSIGN_OR_RETURN(m.sdk_version, RequiredString(doc, "sdkVersion", "sdkVersion"));
  const rapidjson::Value* abi = json::Find(doc, "abi");
  if (abi == nullptr) return FieldError("abi", "missing (an object {\"major\":..,\"minor\":..})");
  if (!abi->IsObject()) return FieldError("abi", "expected an object {\"major\":..,\"minor\":..}");
  PORTICO_ASSIGN_OR_RETURN(m.abi_major, AbiNumber(*abi, "major"));
  PORTICO_ASSIGN_OR_RETURN(m.abi_minor, AbiNumber(*abi, "minor"));

  PORTICO_ASSIGN_OR_RETURN(m.libraries, StringArray(doc, "libraries", "libraries", false));
  for (size_t i = 0; i < m.libraries.size(); ++i) {
    const std::string& soname = m.libraries[i];
    if (soname.rfind("lib", 0) != 0 || soname.find(".so") == std::string::npos ||
        soname.find('/') != std::string::npos) {
      return FieldError("libraries[" + std::to_string(i) + "]",
                        "\"" + soname + "\" is not a library soname (e.g. \"libcrypto.so.3\")");
    }
  }

  const rapidjson::Value* kinds = json::Find(doc, "kinds");
  if (kinds == nullptr) return FieldError("kinds", "missing (an array)");
  if (!kinds->IsArray()) return FieldError("kinds", "expected an array");
  std::set<KindId> seen;
  for (rapidjson::SizeType i = 0; i < kinds->Size(); ++i) {
    std::string at = "kinds[" + std::to_string(i) + "]";
    PORTICO_ASSIGN_OR_RETURN(ManifestKind kind, ParseKind((*kinds)[i], at));
    if (!seen.insert(kind.id).second) {
      return FieldError(at, "kind " + kind.id.ToString() + " is listed twice");
    }
    m.kinds.push_back(std::move(kind));
  }
  return m;
}

uint32_t CapabilityBit(std::string_view name) {
  for (const auto& c : kCapabilities) {
    if (c.name == name) return c.bit;
  }
  return 0;
}

std::vector<std::string> CapabilityNames(uint32_t bits) {
  std::vector<std::string> out;
  for (const auto& c : kCapabilities) {
    if ((bits & c.bit) != 0) out.emplace_back(c.name);
  }
  return out;
}

std::string_view ScopeName(portico_kind_scope scope) {
  return scope == PORTICO_SCOPE_CLUSTER ? "Cluster" : "Namespaced";
}

std::string_view SyncPolicyName(portico_sync_policy policy) {
  switch (policy) {
    case PORTICO_SYNC_NEVER:
      return "never";
    case PORTICO_SYNC_ALWAYS:
      return "always";
    case PORTICO_SYNC_TO_REFERRERS:
      return "toReferrers";
    case PORTICO_SYNC_ATTACHED:
      return "attached";
  }
  return "never";
}

std::string_view FilterPhaseName(portico_filter_phase phase) {
  switch (phase) {
    case PORTICO_PHASE_EARLY:
      return "early";
    case PORTICO_PHASE_AUTHN:
      return "authn";
    case PORTICO_PHASE_AUTHZ:
      return "authz";
    case PORTICO_PHASE_RATELIMIT:
      return "ratelimit";
    case PORTICO_PHASE_TRANSFORM:
      return "transform";
    case PORTICO_PHASE_UPSTREAM:
      return "upstream";
    case PORTICO_PHASE_RESPONSE:
      return "response";
  }
  return "unknown";
}

}  // namespace portico::core
