// manifest.h: PluginManifest, the identity a plugin embeds in its .so (manifest.json plus the
// ABI and SDK versions added by portico_add_plugin()), its parser and validator, and the checks
// a host makes of a plugin against it: the ABI, the descriptor, the registered kinds. The one
// implementation of these rules: portico-controller, portico-gateway and portico-ctl use it
// (core/plugin), and so does the SDK's fake host, so a plugin the hosts refuse is refused under
// test too, with the same message.
//
// Format (DESIGN.md §3; docs/plugins.md):
//   {"name":"gateway","version":"0.1.0","description":"...","manifestVersion":1,
//    "abi":{"major":1,"minor":0},"sdkVersion":"0.1.0","libraries":["libcrypto.so.3"],
//    "kinds":[{"group":"gateway.networking.k8s.io","kind":"Gateway","versions":["v1"],
//              "plural":"gateways","shortNames":["gtw"],"scope":"Namespaced",
//              "reads":["GatewayClass.gateway.networking.k8s.io","Secret"],
//              "capabilities":["processor","sync","handler"],"sync":"always",
//              "schema":"schemas/gateway.json"}]}
// Header-only, std + RapidJSON. Thread-safety: value types and pure functions.
#ifndef PORTICO_SDK_MANIFEST_H_
#define PORTICO_SDK_MANIFEST_H_

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "portico/sdk/abi.h"
#include "portico/sdk/json.h"
#include "portico/sdk/kind_id.h"
#include "portico/sdk/status.h"
#include "portico/sdk/types.h"
#include "portico/sdk/version.h"

namespace portico::sdk {

// The newest manifestVersion this host understands.
inline constexpr int64_t kManifestVersion = 1;

// ManifestKind is one entry of a manifest's "kinds".
struct ManifestKind {
  KindId id;
  std::vector<std::string> versions;
  std::string plural;
  std::vector<std::string> short_names;
  portico_kind_scope scope = PORTICO_SCOPE_NAMESPACED;
  std::vector<KindId> reads;
  std::vector<std::string> capabilities;  // as written: "processor", "sync", ...
  uint32_t capability_bits = 0;           // PORTICO_CAP_* of `capabilities`
  portico_sync_policy sync_policy = PORTICO_SYNC_NEVER;
  std::string schema;  // the schema file named in manifest.json (informational)
};

// PluginManifest is a parsed and validated manifest.
struct PluginManifest {
  std::string name;
  std::string version;
  std::string description;
  std::string sdk_version;
  int64_t manifest_version = 0;
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;
  // Shared libraries (sonames, "libcrypto.so.3") the plugin links beyond the C and C++ runtimes
  // (libc, libm, libstdc++, libgcc_s); `portico-ctl plugin verify` refuses an undeclared one.
  std::vector<std::string> libraries;
  std::vector<ManifestKind> kinds;
};

// CapabilityBit maps a capability name to its PORTICO_CAP_* bit; 0 when unknown.
inline uint32_t CapabilityBit(std::string_view name);

namespace manifest_detail {

inline constexpr std::string_view kRebuild = "rebuild it against Portico SDK " PORTICO_SDK_VERSION;
// The size of the ABI 1.0 descriptor: a plugin may send a larger one (a newer minor), never less.
inline constexpr size_t kDescriptorV1Size =
    offsetof(portico_plugin_v1_descriptor, register_plugin) +
    sizeof(portico_plugin_v1_descriptor::register_plugin);

struct CapabilityName {
  uint32_t bit;
  std::string_view name;
};
inline constexpr CapabilityName kCapabilities[] = {
    {PORTICO_CAP_PROCESSOR, "processor"},
    {PORTICO_CAP_SYNC, "sync"},
    {PORTICO_CAP_HANDLER, "handler"},
    {PORTICO_CAP_ROUTE_FILTER, "routeFilter"},
    {PORTICO_CAP_POLICY_TARGET, "policyTarget"},
    {PORTICO_CAP_REFERENCE_POLICY, "referencePolicy"},
};

inline Status FieldError(std::string_view field, std::string_view problem) {
  return InvalidArgumentError("manifest " + std::string(field) + ": " + std::string(problem));
}

// RequiredString reads a required non-empty string member.
inline StatusOr<std::string> RequiredString(const rapidjson::Value& obj, const char* member,
                                            const std::string& field) {
  const rapidjson::Value* v = json::Find(obj, member);
  if (v == nullptr) return FieldError(field, "missing (a non-empty string)");
  if (!v->IsString() || v->GetStringLength() == 0) {
    return FieldError(field, "expected a non-empty string");
  }
  return std::string(v->GetString(), v->GetStringLength());
}

// OptionalString reads an optional string member (`fallback` when absent).
inline StatusOr<std::string> OptionalString(const rapidjson::Value& obj, const char* member,
                                            const std::string& field, std::string fallback = "") {
  const rapidjson::Value* v = json::Find(obj, member);
  if (v == nullptr) return fallback;
  if (!v->IsString()) return FieldError(field, "expected a string");
  return std::string(v->GetString(), v->GetStringLength());
}

// StringArray reads an array of non-empty strings; absent is empty unless `required`.
inline StatusOr<std::vector<std::string>> StringArray(const rapidjson::Value& obj,
                                                      const char* member, const std::string& field,
                                                      bool required) {
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

inline StatusOr<uint32_t> AbiNumber(const rapidjson::Value& abi, const char* member) {
  std::string field = std::string("abi.") + member;
  const rapidjson::Value* v = json::Find(abi, member);
  if (v == nullptr) return FieldError(field, "missing (a non-negative integer)");
  if (!v->IsUint64() || v->GetUint64() > std::numeric_limits<uint32_t>::max()) {
    return FieldError(field, "expected a non-negative 32-bit integer");
  }
  return static_cast<uint32_t>(v->GetUint64());
}

inline bool IsKindName(std::string_view s) {
  if (s.empty() || !std::isupper(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// IsGroupName accepts "" (core) or a lower-case DNS subdomain ("gateway.networking.k8s.io").
inline bool IsGroupName(std::string_view s) {
  for (char c : s) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.')) {
      return false;
    }
  }
  return s.empty() || (s.front() != '.' && s.back() != '.');
}

inline bool IsLowerName(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-')) {
      return false;
    }
  }
  return true;
}

inline StatusOr<ManifestKind> ParseKind(const rapidjson::Value& entry, const std::string& at) {
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

inline std::string AbiString(uint32_t major, uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

inline std::string KindList(const std::set<KindId>& kinds) {
  std::string out;
  for (const KindId& id : kinds) {
    if (!out.empty()) out += ", ";
    out += id.ToString();
  }
  return out;
}

}  // namespace manifest_detail

// ParseManifest parses and validates manifest JSON. Errors are INVALID_ARGUMENT naming the field:
// "manifest kinds[0].plural: missing (a non-empty lower-case string)".
inline StatusOr<PluginManifest> ParseManifest(std::string_view text) {
  auto parsed = json::Parse(text, "manifest");
  if (!parsed.ok()) return parsed.status();
  const rapidjson::Document& doc = *parsed;
  if (!doc.IsObject()) return InvalidArgumentError("manifest: expected a JSON object");

  PluginManifest m;
  const rapidjson::Value* mv = json::Find(doc, "manifestVersion");
  if (mv == nullptr) return manifest_detail::FieldError("manifestVersion", "missing (an integer)");
  if (!mv->IsInt64() || mv->GetInt64() < 1) {
    return manifest_detail::FieldError("manifestVersion", "expected a positive integer");
  }
  m.manifest_version = mv->GetInt64();
  if (m.manifest_version > kManifestVersion) {
    return manifest_detail::FieldError(
        "manifestVersion", std::to_string(m.manifest_version) + " is newer than this host reads (" +
                               std::to_string(kManifestVersion) + ")");
  }
  PORTICO_ASSIGN_OR_RETURN(m.name, manifest_detail::RequiredString(doc, "name", "name"));
  for (char c : m.name) {
    if (std::isspace(static_cast<unsigned char>(c)) ||
        std::iscntrl(static_cast<unsigned char>(c))) {
      return manifest_detail::FieldError("name", "\"" + m.name + "\" contains white space");
    }
  }
  PORTICO_ASSIGN_OR_RETURN(m.version, manifest_detail::RequiredString(doc, "version", "version"));
  PORTICO_ASSIGN_OR_RETURN(m.description,
                           manifest_detail::OptionalString(doc, "description", "description"));
  PORTICO_ASSIGN_OR_RETURN(m.sdk_version,
                           manifest_detail::RequiredString(doc, "sdkVersion", "sdkVersion"));
  const rapidjson::Value* abi = json::Find(doc, "abi");
  if (abi == nullptr)
    return manifest_detail::FieldError("abi", "missing (an object {\"major\":..,\"minor\":..})");
  if (!abi->IsObject())
    return manifest_detail::FieldError("abi", "expected an object {\"major\":..,\"minor\":..}");
  PORTICO_ASSIGN_OR_RETURN(m.abi_major, manifest_detail::AbiNumber(*abi, "major"));
  PORTICO_ASSIGN_OR_RETURN(m.abi_minor, manifest_detail::AbiNumber(*abi, "minor"));

  PORTICO_ASSIGN_OR_RETURN(m.libraries,
                           manifest_detail::StringArray(doc, "libraries", "libraries", false));
  for (size_t i = 0; i < m.libraries.size(); ++i) {
    const std::string& soname = m.libraries[i];
    if (soname.rfind("lib", 0) != 0 || soname.find(".so") == std::string::npos ||
        soname.find('/') != std::string::npos) {
      return manifest_detail::FieldError(
          "libraries[" + std::to_string(i) + "]",
          "\"" + soname + "\" is not a library soname (e.g. \"libcrypto.so.3\")");
    }
  }

  const rapidjson::Value* kinds = json::Find(doc, "kinds");
  if (kinds == nullptr) return manifest_detail::FieldError("kinds", "missing (an array)");
  if (!kinds->IsArray()) return manifest_detail::FieldError("kinds", "expected an array");
  std::set<KindId> seen;
  for (rapidjson::SizeType i = 0; i < kinds->Size(); ++i) {
    std::string at = "kinds[" + std::to_string(i) + "]";
    PORTICO_ASSIGN_OR_RETURN(ManifestKind kind, manifest_detail::ParseKind((*kinds)[i], at));
    if (!seen.insert(kind.id).second) {
      return manifest_detail::FieldError(at, "kind " + kind.id.ToString() + " is listed twice");
    }
    m.kinds.push_back(std::move(kind));
  }
  return m;
}

// UnknownManifestFields lists the members of manifest JSON that no host reads, by path
// ("kinds[0].capabilites"). Hosts ignore them (a newer manifestVersion may add fields);
// portico_add_plugin() refuses them at configure time, since a misspelt field is otherwise
// silently dropped (a kind without its capabilities).
inline std::vector<std::string> UnknownManifestFields(const rapidjson::Value& doc) {
  static constexpr std::string_view kTop[] = {
      "name", "version",    "description", "manifestVersion",
      "abi",  "sdkVersion", "libraries",   "kinds"};
  static constexpr std::string_view kKind[] = {"group",      "kind",  "versions", "plural",
                                               "shortNames", "scope", "reads",    "capabilities",
                                               "sync",       "schema"};
  auto known = [](const auto& names, std::string_view member) {
    for (std::string_view n : names) {
      if (n == member) return true;
    }
    return false;
  };
  std::vector<std::string> out;
  if (!doc.IsObject()) return out;
  for (const auto& m : doc.GetObject()) {
    std::string_view member(m.name.GetString(), m.name.GetStringLength());
    if (!known(kTop, member)) out.emplace_back(member);
  }
  const rapidjson::Value* kinds = json::Find(doc, "kinds");
  if (kinds == nullptr || !kinds->IsArray()) return out;
  for (rapidjson::SizeType i = 0; i < kinds->Size(); ++i) {
    if (!(*kinds)[i].IsObject()) continue;
    for (const auto& m : (*kinds)[i].GetObject()) {
      std::string_view member(m.name.GetString(), m.name.GetStringLength());
      if (!known(kKind, member)) {
        out.push_back("kinds[" + std::to_string(i) + "]." + std::string(member));
      }
    }
  }
  return out;
}

inline uint32_t CapabilityBit(std::string_view name) {
  for (const auto& c : manifest_detail::kCapabilities) {
    if (c.name == name) return c.bit;
  }
  return 0;
}

// CapabilityNames lists the names of the bits set in `bits`, in bit order.
inline std::vector<std::string> CapabilityNames(uint32_t bits) {
  std::vector<std::string> out;
  for (const auto& c : manifest_detail::kCapabilities) {
    if ((bits & c.bit) != 0) out.emplace_back(c.name);
  }
  return out;
}

// ScopeName renders "Namespaced" or "Cluster".
inline std::string_view ScopeName(portico_kind_scope scope) {
  return scope == PORTICO_SCOPE_CLUSTER ? "Cluster" : "Namespaced";
}

// SyncPolicyName renders "never", "always", "toReferrers" or "attached".
inline std::string_view SyncPolicyName(portico_sync_policy policy) {
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

// FilterPhaseName renders "early", "authn", "authz", "ratelimit", "transform", "upstream" or
// "response".
inline std::string_view FilterPhaseName(portico_filter_phase phase) {
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

// CheckAbi judges a plugin built for ABI `major.minor` against this host (PORTICO_ABI_MAJOR,
// PORTICO_ABI_MINOR): the major must match and the minor must not be newer. The error message is
// a refusal reason: "built for ABI 2.0; this host speaks 1.x; rebuild against Portico SDK 0.1.0".
inline Status CheckAbi(uint32_t major, uint32_t minor) {
  const std::string host = std::to_string(PORTICO_ABI_MAJOR) + ".x";
  const std::string rebuild(manifest_detail::kRebuild);
  if (major != PORTICO_ABI_MAJOR) {
    return FailedPreconditionError("built for ABI " + manifest_detail::AbiString(major, minor) +
                                   "; this host speaks " + host + "; " + rebuild);
  }
  if (minor > PORTICO_ABI_MINOR) {
    return FailedPreconditionError(
        "built for ABI " + manifest_detail::AbiString(major, minor) + ", newer than this host's " +
        manifest_detail::AbiString(PORTICO_ABI_MAJOR, PORTICO_ABI_MINOR) +
        "; upgrade the host or " + rebuild);
  }
  return OkStatus();
}

// ManifestRefusal turns a manifest extraction or parse error (ExtractElfManifest, ParseManifest)
// into a refusal reason with its fix.
inline std::string ManifestRefusal(const Status& status) {
  switch (status.code()) {
    case StatusCode::kNotFound:
      return status.message() +
             "; remove the file from the plugin directory, or build it with portico_add_plugin()";
    case StatusCode::kInvalidArgument:
      if (status.message().rfind("manifest", 0) == 0) {
        return "invalid embedded manifest: " + status.message() +
               "; fix manifest.json and rebuild the plugin";
      }
      return status.message() +
             "; remove it from the plugin directory (only Portico plugins belong there)";
    case StatusCode::kDataLoss:
      return status.message() + "; the file is damaged: reinstall or rebuild the plugin";
    default:
      return status.message() + "; check the file's permissions";
  }
}

// CheckDescriptor judges what portico_plugin_v1() returned against the plugin's manifest.
inline Status CheckDescriptor(const portico_plugin_v1_descriptor* d,
                              const PluginManifest& manifest) {
  if (d == nullptr) {
    return FailedPreconditionError(PORTICO_ENTRY_V1 "() returned NULL; " +
                                   std::string(manifest_detail::kRebuild));
  }
  if (d->struct_size < manifest_detail::kDescriptorV1Size) {
    return FailedPreconditionError(
        "descriptor struct_size " + std::to_string(d->struct_size) + " smaller than " +
        std::to_string(manifest_detail::kDescriptorV1Size) + " (the ABI 1.0 descriptor); " +
        std::string(manifest_detail::kRebuild));
  }
  if (d->abi_major != PORTICO_ABI_MAJOR) {
    return FailedPreconditionError(
        "descriptor says ABI " + std::to_string(d->abi_major) + "." + std::to_string(d->abi_minor) +
        " (its manifest says " + std::to_string(manifest.abi_major) + "." +
        std::to_string(manifest.abi_minor) + "); this host speaks " +
        std::to_string(PORTICO_ABI_MAJOR) + ".x; " + std::string(manifest_detail::kRebuild));
  }
  if (d->abi_minor > PORTICO_ABI_MINOR) {
    return FailedPreconditionError(
        "descriptor says ABI " + std::to_string(d->abi_major) + "." + std::to_string(d->abi_minor) +
        ", newer than this host's " + std::to_string(PORTICO_ABI_MAJOR) + "." +
        std::to_string(PORTICO_ABI_MINOR) + "; " + std::string(manifest_detail::kRebuild));
  }
  if (d->register_plugin == nullptr) {
    return FailedPreconditionError("descriptor has no register_plugin; " +
                                   std::string(manifest_detail::kRebuild));
  }
  std::string_view name = sdk::View(d->name);
  if (name != manifest.name) {
    return FailedPreconditionError("descriptor names the plugin \"" + std::string(name) +
                                   "\" but its manifest says \"" + manifest.name + "\"; " +
                                   std::string(manifest_detail::kRebuild) +
                                   " with portico_add_plugin()");
  }
  return OkStatus();
}

// CrossCheckKinds: a plugin must register exactly the kinds its manifest lists.
inline Status CrossCheckKinds(const std::set<KindId>& registered, const PluginManifest& manifest) {
  std::set<KindId> listed;
  for (const ManifestKind& k : manifest.kinds) listed.insert(k.id);
  if (registered == listed) return OkStatus();
  std::set<KindId> extra;
  std::set<KindId> missing;
  for (const KindId& id : registered) {
    if (!listed.contains(id)) extra.insert(id);
  }
  for (const KindId& id : listed) {
    if (!registered.contains(id)) missing.insert(id);
  }
  std::string found = "registered kinds differ from the manifest (";
  if (!extra.empty())
    found += "registered but not in the manifest: " + manifest_detail::KindList(extra);
  if (!extra.empty() && !missing.empty()) found += "; ";
  if (!missing.empty())
    found += "in the manifest but not registered: " + manifest_detail::KindList(missing);
  return FailedPreconditionError(
      found + "); make manifest.json list exactly the kinds Setup registers and rebuild");
}

}  // namespace portico::sdk

#endif  // PORTICO_SDK_MANIFEST_H_
