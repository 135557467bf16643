// elf_dynamic.h: reads what a shared object offers to and asks of the dynamic linker, from its
// ELF file alone (no dlopen, no plugin code runs): the libraries it needs (DT_NEEDED), its
// RUNPATH, and its dynamic symbols (.dynsym), defined and undefined. `portico-ctl plugin verify`
// uses it to check that a plugin exports only its ABI entry and needs only allowed libraries.
//
// Only ELF64 little-endian images are read (as in elf_manifest.h); every offset is bounds-checked,
// so a truncated or garbage file yields an error, never a crash.
// Thread-safety: pure functions.
#ifndef PORTICO_CORE_PLUGIN_ELF_DYNAMIC_H_
#define PORTICO_CORE_PLUGIN_ELF_DYNAMIC_H_

#include <string>
#include <string_view>
#include <vector>

#include "portico/sdk/status.h"

namespace portico::core {

// DynamicSymbol is one .dynsym entry (the null entry 0 is skipped).
struct DynamicSymbol {
  std::string name;
  bool defined = false;   // st_shndx != SHN_UNDEF
  bool weak = false;      // STB_WEAK (else STB_GLOBAL; local symbols are not listed)
  bool function = false;  // STT_FUNC or STT_GNU_IFUNC
  std::string version;    // the version it needs ("GLIBC_2.34"), "" when unversioned
  std::string library;    // the library that version belongs to ("libc.so.6"), or ""
};

// ElfDynamic is what ReadElfDynamic found.
struct ElfDynamic {
  std::vector<std::string> needed;     // DT_NEEDED, in file order
  std::string runpath;                 // DT_RUNPATH, else DT_RPATH, else ""
  std::vector<DynamicSymbol> symbols;  // GLOBAL and WEAK symbols of .dynsym, in table order

  // Exported lists the defined GLOBAL/WEAK symbols' names.
  std::vector<std::string> Exported() const;
  // Undefined lists the undefined symbols a load must resolve (non-weak ones).
  std::vector<const DynamicSymbol*> Undefined() const;
};

// ReadElfDynamic decodes `image` (the bytes of an ELF shared object). Errors name what is wrong:
// INVALID_ARGUMENT "not an ELF shared object ...", DATA_LOSS "truncated ELF (...)" /
// "corrupt ELF (...)", NOT_FOUND "no .dynsym section (...)".
StatusOr<ElfDynamic> ReadElfDynamic(std::string_view image);

}  // namespace portico::core

#endif  // PORTICO_CORE_PLUGIN_ELF_DYNAMIC_H_
