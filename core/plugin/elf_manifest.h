// elf_manifest.h: reads the manifest a plugin embeds in its ELF section ".portico_manifest"
// without loading the shared object, so no plugin code runs (DESIGN.md §3).
//
// Only ELF64 little-endian shared objects (e_type ET_DYN) are accepted. Every offset and size is
// bounds-checked against the image, so truncated or garbage files yield an error, never a crash.
// Thread-safety: pure functions.
#ifndef PORTICO_CORE_PLUGIN_ELF_MANIFEST_H_
#define PORTICO_CORE_PLUGIN_ELF_MANIFEST_H_

#include <filesystem>
#include <string>
#include <string_view>

#include "portico/sdk/elf_manifest.h"
#include "portico/sdk/status.h"

namespace portico::core {

// ExtractElfManifest: the manifest text from an ELF image (portico/sdk/elf_manifest.h).
using sdk::ExtractElfManifest;

// ReadElfManifest reads the file at `path` and extracts its manifest (see ExtractElfManifest);
// NOT_FOUND or UNAVAILABLE when the file cannot be read.
StatusOr<std::string> ReadElfManifest(const std::filesystem::path& path);

// ReadFileBytes reads a whole file; shared by the pre-flight, which also hashes the bytes.
StatusOr<std::string> ReadFileBytes(const std::filesystem::path& path);

}  // namespace portico::core

#endif  // PORTICO_CORE_PLUGIN_ELF_MANIFEST_H_
