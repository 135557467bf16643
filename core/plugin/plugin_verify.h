// plugin_verify.h: the checks of `portico-ctl plugin verify` that judge a plugin file by the
// hosts' own rules: its embedded manifest (ParseManifest) and ABI (CheckAbi) as the pre-flight
// sees them, its exports (only the ABI entry), the libraries it needs and where its undefined
// symbols come from (the C and C++ runtimes, or a library its manifest declares in "libraries"),
// and its kinds' JSON Schemas (json_metaschema.h). Loading and fuzzing live in portico-ctl.
//
// Every finding is one line: "<file>: <what was found>; <the fix>".
// Thread-safety: pure functions over the file system; values.
#ifndef PORTICO_CORE_PLUGIN_PLUGIN_VERIFY_H_
#define PORTICO_CORE_PLUGIN_PLUGIN_VERIFY_H_

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/plugin/elf_dynamic.h"
#include "core/plugin/kind_registry.h"
#include "core/plugin/preflight.h"

namespace portico::core {

// VerifyFinding is one problem and its fix.
struct VerifyFinding {
  std::string what;
  std::string fix;

  // Line renders "<file>: <what>; <fix>".
  std::string Line(std::string_view file) const;
  // FromReason splits a refusal reason of the hosts ("what; fix", PluginRecord::reason).
  static VerifyFinding FromReason(const std::string& reason);
};

// IsRuntimeLibrary is true for the libraries every plugin may need: glibc's (libc, libm,
// libpthread, libdl, librt, the dynamic loader), libstdc++, libgcc_s, and the sanitizer runtimes
// an instrumented build links (libasan, libubsan, liblsan, libtsan).
bool IsRuntimeLibrary(std::string_view soname);

// StaticVerification is what the file alone says.
struct StaticVerification {
  PluginRecord record;                // the hosts' pre-flight (manifest and ABI)
  std::optional<ElfDynamic> dynamic;  // when the dynamic section could be read
  std::vector<VerifyFinding> findings;
};

// VerifyPluginFile runs the checks that need no plugin code: the pre-flight (a refusal is a
// finding), the exports (exactly PORTICO_ENTRY_V1) and the needed libraries (runtime libraries
// or those the manifest declares).
StaticVerification VerifyPluginFile(const std::filesystem::path& path);

// SymbolResolver names the library (soname or file name) that defines an unversioned symbol
// once the plugin is loaded, or "" when none does.
using SymbolResolver = std::function<std::string(const std::string& symbol)>;

// CheckSymbolProviders judges every undefined, non-weak symbol of `dynamic`: its provider
// (from its symbol version, else from `resolve`) must be a runtime library or one `manifest`
// declares. One finding per offending library, naming a few of its symbols.
std::vector<VerifyFinding> CheckSymbolProviders(const ElfDynamic& dynamic,
                                                const PluginManifest& manifest,
                                                const SymbolResolver& resolve);

// CheckKindSchemas checks every kind of `registry` that `manifest` lists: a processor or sync
// kind must have a schema, and each schema must be one the host's validator implements.
std::vector<VerifyFinding> CheckKindSchemas(const KindRegistry& registry,
                                            const PluginManifest& manifest);

}  // namespace portico::core

#endif  // PORTICO_CORE_PLUGIN_PLUGIN_VERIFY_H_
