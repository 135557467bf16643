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

#include "portico/sdk/status.h"

namespace portico::core {

// ExtractElfManifest returns the manifest text (up to its terminating NUL) from the bytes of an
// ELF image. Errors (messages are meant to be shown to operators):
//   INVALID_ARGUMENT "not an ELF shared object ..." (no ELF magic, not ET_DYN), or an unsupported
//                    class or byte order;
//   DATA_LOSS        "truncated ELF (section headers past end of file)" and other truncations,
//                    "corrupt ELF (...)" for inconsistent headers;
//   NOT_FOUND        "no .portico_manifest section (not a Portico plugin)".
StatusOr<std::string> ExtractElfManifest(std::string_view image);

// ReadElfManifest reads the file at `path` and extracts its manifest (see ExtractElfManifest);
// NOT_FOUND or UNAVAILABLE when the file cannot be read.
StatusOr<std::string> ReadElfManifest(const std::filesystem::path& path);

// ReadFileBytes reads a whole file; shared by the pre-flight, which also hashes the bytes.
StatusOr<std::string> ReadFileBytes(const std::filesystem::path& path);

}  // namespace portico::core

#endif  // PORTICO_CORE_PLUGIN_ELF_MANIFEST_H_
