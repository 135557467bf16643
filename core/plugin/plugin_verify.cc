#include "core/plugin/plugin_verify.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/common/json_metaschema.h"
#include "core/plugin/elf_manifest.h"
#include "portico/sdk/abi.h"

namespace portico::core {
namespace {

bool HasPrefix(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Soname reduces a path ("/lib/x86_64-linux-gnu/libc.so.6") to its file name.
std::string Soname(std::string_view library) {
  size_t slash = library.rfind('/');
  return std::string(slash == std::string_view::npos ? library : library.substr(slash + 1));
}

bool Declared(const PluginManifest& manifest, std::string_view soname) {
  return std::find(manifest.libraries.begin(), manifest.libraries.end(), soname) !=
         manifest.libraries.end();
}

std::string Join(const std::vector<std::string>& items, size_t most) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < most; ++i) out += (i == 0 ? "" : ", ") + items[i];
  if (items.size() > most) out += ", ... (" + std::to_string(items.size()) + " in all)";
  return out;
}

constexpr std::string_view kDeclareFix =
    "link it statically, or declare it in manifest.json \"libraries\" (its soname) so operators "
    "know to install it";

}  // namespace

std::string VerifyFinding::Line(std::string_view file) const {
  return std::string(file) + ": " + what + "; " + fix;
}

VerifyFinding VerifyFinding::FromReason(const std::string& reason) {
  size_t at = reason.find("; ");
  if (at == std::string::npos) return {reason, "fix the plugin and rebuild it"};
  return {reason.substr(0, at), reason.substr(at + 2)};
}

bool IsRuntimeLibrary(std::string_view soname) {
  static constexpr std::string_view kExact[] = {
      "libc.so.6",  "libm.so.6",  "libstdc++.so.6",       "libgcc_s.so.1",        "libpthread.so.0",
      "libdl.so.2", "librt.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"};
  for (std::string_view s : kExact) {
    if (soname == s) return true;
  }
  for (std::string_view prefix : {"libasan.so.", "libubsan.so.", "liblsan.so.", "libtsan.so."}) {
    if (HasPrefix(soname, prefix)) return true;
  }
  return false;
}

StaticVerification VerifyPluginFile(const std::filesystem::path& path) {
  StaticVerification out;
  out.record = PreflightPlugin(path);
  if (!out.record.ok()) {
    // The pre-flight's reason already says what was found and the fix.
    out.findings.push_back(VerifyFinding::FromReason(out.record.reason));
  }
  auto bytes = ReadFileBytes(path);
  if (!bytes.ok()) return out;
  auto dynamic = ReadElfDynamic(*bytes);
  if (!dynamic.ok()) {
    if (out.record.ok()) {
      out.findings.push_back({"cannot read its dynamic symbols: " + dynamic.status().message(),
                              "rebuild it with portico_add_plugin()"});
    }
    return out;
  }
  out.dynamic = std::move(dynamic).value();

  std::vector<std::string> extra;
  for (const std::string& name : out.dynamic->Exported()) {
    if (name != PORTICO_ENTRY_V1) extra.push_back(name);  // a missing entry: the loader says so
  }
  if (!extra.empty()) {
    out.findings.push_back(
        {"exports " + std::to_string(extra.size()) + " symbol(s) besides " PORTICO_ENTRY_V1 ": " +
             Join(extra, 5),
         "build it with portico_add_plugin() (hidden visibility and an export map), or mark "
         "them static or __attribute__((visibility(\"hidden\")))"});
  }
  if (out.record.manifest) {
    for (const std::string& needed : out.dynamic->needed) {
      if (IsRuntimeLibrary(needed) || Declared(*out.record.manifest, needed)) continue;
      out.findings.push_back({"needs " + needed +
                                  ", which is neither a C/C++ runtime library "
                                  "nor declared in its manifest",
                              std::string(kDeclareFix)});
    }
  }
  return out;
}

std::vector<VerifyFinding> CheckSymbolProviders(const ElfDynamic& dynamic,
                                                const PluginManifest& manifest,
                                                const SymbolResolver& resolve) {
  std::map<std::string, std::vector<std::string>> by_library;  // "" = defined nowhere
  for (const DynamicSymbol* symbol : dynamic.Undefined()) {
    std::string library = symbol->library;
    if (library.empty() && resolve) library = resolve(symbol->name);
    library = Soname(library);
    if (!library.empty() && (IsRuntimeLibrary(library) || Declared(manifest, library))) continue;
    by_library[library].push_back(symbol->name);
  }
  std::vector<VerifyFinding> out;
  for (const auto& [library, symbols] : by_library) {
    if (library.empty()) {
      out.push_back({"undefined symbol(s) no library it links defines: " + Join(symbols, 5) +
                         " (they would bind to the host's own symbols, which the ABI forbids)",
                     "link the library that defines them, or reach the host through the ABI"});
    } else {
      out.push_back({"uses " + library + " (" + Join(symbols, 3) +
                         "), which is neither a C/C++ runtime library nor declared in its "
                         "manifest",
                     std::string(kDeclareFix)});
    }
  }
  return out;
}

std::vector<VerifyFinding> CheckKindSchemas(const KindRegistry& registry,
                                            const PluginManifest& manifest) {
  std::vector<VerifyFinding> out;
  for (size_t i = 0; i < manifest.kinds.size(); ++i) {
    const ManifestKind& listed = manifest.kinds[i];
    const KindInfo* kind = registry.Find(listed.id);
    if (kind == nullptr || kind->schema.empty()) continue;
    const std::string file = listed.schema.empty() ? "its schema" : listed.schema;
    Status status = CheckSupportedSchema(kind->schema, "schema of " + kind->id.ToString());
    if (!status.ok()) {
      out.push_back({status.message(), "fix " + file + " (manifest kinds[" + std::to_string(i) +
                                           "].schema) to use only the draft-04 keywords the "
                                           "host's validator implements (core/common/"
                                           "json_schema.h)"});
    }
  }
  return out;
}

}  // namespace portico::core
