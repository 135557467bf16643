// manifest.h: PluginManifest, the identity a plugin embeds in its .so (manifest.json plus the
// ABI and SDK versions added by portico_add_plugin()), and its parser/validator.
//
// Format (DESIGN.md §3):
//   {"name":"gateway","version":"0.1.0","description":"...","manifestVersion":1,
//    "abi":{"major":1,"minor":0},"sdkVersion":"0.1.0","libraries":["libcrypto.so.3"],
//    "kinds":[{"group":"gateway.networking.k8s.io","kind":"Gateway","versions":["v1"],
//              "plural":"gateways","shortNames":["gtw"],"scope":"Namespaced",
//              "reads":["GatewayClass.gateway.networking.k8s.io","Secret"],
//              "capabilities":["processor","sync","handler"],"sync":"always",
//              "schema":"schemas/gateway.json"}]}
// Thread-safety: value types and pure functions.
#ifndef PORTICO_CORE_PLUGIN_MANIFEST_H_
#define PORTICO_CORE_PLUGIN_MANIFEST_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/plugin/kind_id.h"
#include "portico/sdk/abi.h"
#include "portico/sdk/status.h"

namespace portico::core {

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

// ParseManifest parses and validates manifest JSON. Errors are INVALID_ARGUMENT naming the field:
// "manifest kinds[0].plural: missing (a non-empty lower-case string)".
StatusOr<PluginManifest> ParseManifest(std::string_view json);

// CapabilityBit maps a capability name to its PORTICO_CAP_* bit; 0 when unknown.
uint32_t CapabilityBit(std::string_view name);
// CapabilityNames lists the names of the bits set in `bits`, in bit order.
std::vector<std::string> CapabilityNames(uint32_t bits);
// ScopeName renders "Namespaced" or "Cluster".
std::string_view ScopeName(portico_kind_scope scope);
// SyncPolicyName renders "never", "always", "toReferrers" or "attached".
std::string_view SyncPolicyName(portico_sync_policy policy);
// FilterPhaseName renders "early", "authn", "authz", "ratelimit", "transform", "upstream" or
// "response".
std::string_view FilterPhaseName(portico_filter_phase phase);

}  // namespace portico::core

#endif  // PORTICO_CORE_PLUGIN_MANIFEST_H_
