// manifest.h: PluginManifest, the identity a plugin embeds in its .so, and its parser and
// validator: the SDK's (portico/sdk/manifest.h), so the hosts and the SDK's fake host judge a
// manifest by one set of rules.
// Thread-safety: value types and pure functions.
#ifndef PORTICO_CORE_PLUGIN_MANIFEST_H_
#define PORTICO_CORE_PLUGIN_MANIFEST_H_

#include "core/plugin/kind_id.h"
#include "portico/sdk/manifest.h"

namespace portico::core {

using sdk::CapabilityBit;
using sdk::CapabilityNames;
using sdk::FilterPhaseName;
using sdk::kManifestVersion;
using sdk::ManifestKind;
using sdk::ParseManifest;
using sdk::PluginManifest;
using sdk::ScopeName;
using sdk::SyncPolicyName;

}  // namespace portico::core

#endif  // PORTICO_CORE_PLUGIN_MANIFEST_H_
