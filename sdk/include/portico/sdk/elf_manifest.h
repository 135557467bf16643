// elf_manifest.h: ExtractElfManifest, the manifest a plugin embeds in its ELF section
// ".portico_manifest", read from the file's bytes without loading the shared object, so no plugin
// code runs (DESIGN.md §3). The hosts' pre-flight (core/plugin/preflight.h) and the SDK's fake
// host read it with this one reader.
//
// Only ELF64 little-endian shared objects (e_type ET_DYN) are accepted. Every offset and size is
// bounds-checked against the image, so truncated or garbage files yield an error, never a crash.
// Header-only, std only. Thread-safety: pure functions.
#ifndef PORTICO_SDK_ELF_MANIFEST_H_
#define PORTICO_SDK_ELF_MANIFEST_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "portico/sdk/abi.h"
#include "portico/sdk/status.h"

namespace portico::sdk {
namespace elf_detail {

// ELF64 constants and field offsets (System V gABI); decoded by hand, little-endian, so the
// reader neither depends on <elf.h> nor on the host's byte order.
inline constexpr unsigned char kElfMagic[4] = {0x7f, 'E', 'L', 'F'};
inline constexpr size_t kEiClass = 4;
inline constexpr size_t kEiData = 5;
inline constexpr unsigned char kElfClass64 = 2;
inline constexpr unsigned char kElfData2Lsb = 1;
inline constexpr uint16_t kEtDyn = 3;
inline constexpr size_t kEhdrSize = 64;
inline constexpr size_t kEhdrType = 16;
inline constexpr size_t kEhdrShoff = 40;
inline constexpr size_t kEhdrShentsize = 58;
inline constexpr size_t kEhdrShnum = 60;
inline constexpr size_t kEhdrShstrndx = 62;
inline constexpr size_t kShdrSize = 64;
inline constexpr size_t kShdrName = 0;
inline constexpr size_t kShdrType = 4;
inline constexpr size_t kShdrOffset = 24;
inline constexpr size_t kShdrSizeField = 32;
inline constexpr size_t kShdrLink = 40;
inline constexpr uint32_t kShtNobits = 8;
inline constexpr uint16_t kShnXindex = 0xffff;

// The caller has bounds-checked [at, at + N).
inline uint64_t ReadLe(std::string_view image, size_t at, size_t bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < bytes; ++i) {
    value |= static_cast<uint64_t>(static_cast<unsigned char>(image[at + i])) << (8 * i);
  }
  return value;
}

// Fits is true when [offset, offset + size) lies inside an image of `total` bytes, without
// overflowing.
inline bool Fits(uint64_t offset, uint64_t size, uint64_t total) {
  return offset <= total && size <= total - offset;
}

struct Section {
  uint32_t name;
  uint32_t type;
  uint64_t offset;
  uint64_t size;
  uint32_t link;
};

inline Section ReadSection(std::string_view image, uint64_t at) {
  return Section{static_cast<uint32_t>(ReadLe(image, at + kShdrName, 4)),
                 static_cast<uint32_t>(ReadLe(image, at + kShdrType, 4)),
                 ReadLe(image, at + kShdrOffset, 8), ReadLe(image, at + kShdrSizeField, 8),
                 static_cast<uint32_t>(ReadLe(image, at + kShdrLink, 4))};
}

}  // namespace elf_detail

// ExtractElfManifest returns the manifest text (up to its terminating NUL) from the bytes of an
// ELF image. Errors (messages are meant to be shown to operators):
//   INVALID_ARGUMENT "not an ELF shared object ..." (no ELF magic, not ET_DYN), or an unsupported
//                    class or byte order;
//   DATA_LOSS        "truncated ELF (section headers past end of file)" and other truncations,
//                    "corrupt ELF (...)" for inconsistent headers;
//   NOT_FOUND        "no .portico_manifest section (not a Portico plugin)".
inline StatusOr<std::string> ExtractElfManifest(std::string_view image) {
  if (image.size() < sizeof(elf_detail::kElfMagic) ||
      std::memcmp(image.data(), elf_detail::kElfMagic, sizeof(elf_detail::kElfMagic)) != 0) {
    return InvalidArgumentError("not an ELF shared object (no ELF magic)");
  }
  if (image.size() < elf_detail::kEhdrSize) {
    return DataLossError("truncated ELF (file shorter than the 64-byte ELF header)");
  }
  auto elf_class = static_cast<unsigned char>(image[elf_detail::kEiClass]);
  if (elf_class != elf_detail::kElfClass64) {
    return InvalidArgumentError("unsupported ELF class " + std::to_string(elf_class) +
                                " (Portico plugins are 64-bit ELF)");
  }
  auto elf_data = static_cast<unsigned char>(image[elf_detail::kEiData]);
  if (elf_data != elf_detail::kElfData2Lsb) {
    return InvalidArgumentError("unsupported ELF byte order " + std::to_string(elf_data) +
                                " (Portico plugins are little-endian)");
  }
  auto type = static_cast<uint16_t>(elf_detail::ReadLe(image, elf_detail::kEhdrType, 2));
  if (type != elf_detail::kEtDyn) {
    return InvalidArgumentError("not an ELF shared object (ELF type " + std::to_string(type) +
                                ", expected 3 = ET_DYN)");
  }

  const uint64_t total = image.size();
  uint64_t shoff = elf_detail::ReadLe(image, elf_detail::kEhdrShoff, 8);
  uint64_t shentsize = elf_detail::ReadLe(image, elf_detail::kEhdrShentsize, 2);
  uint64_t shnum = elf_detail::ReadLe(image, elf_detail::kEhdrShnum, 2);
  uint64_t shstrndx = elf_detail::ReadLe(image, elf_detail::kEhdrShstrndx, 2);
  if (shoff == 0) {
    return NotFoundError(
        "no .portico_manifest section (not a Portico plugin): the ELF has no section headers");
  }
  if (shentsize < elf_detail::kShdrSize) {
    return DataLossError("corrupt ELF (section header entry size " + std::to_string(shentsize) +
                         " < 64)");
  }
  // Section 0 carries the real count and name-table index when they do not fit in 16 bits.
  if (!elf_detail::Fits(shoff, shentsize, total)) {
    return DataLossError("truncated ELF (section headers past end of file)");
  }
  elf_detail::Section first = elf_detail::ReadSection(image, shoff);
  if (shnum == 0) shnum = first.size;
  if (shstrndx == elf_detail::kShnXindex) shstrndx = first.link;
  if (shnum > total / shentsize || !elf_detail::Fits(shoff, shnum * shentsize, total)) {
    return DataLossError("truncated ELF (section headers past end of file)");
  }
  if (shstrndx >= shnum) {
    return DataLossError("corrupt ELF (section name table index " + std::to_string(shstrndx) +
                         " out of range)");
  }
  elf_detail::Section names = elf_detail::ReadSection(image, shoff + shstrndx * shentsize);
  if (names.type == elf_detail::kShtNobits || !elf_detail::Fits(names.offset, names.size, total)) {
    return DataLossError("truncated ELF (section name table past end of file)");
  }
  std::string_view strtab = image.substr(names.offset, names.size);

  constexpr std::string_view kWanted = PORTICO_MANIFEST_SECTION;
  for (uint64_t i = 0; i < shnum; ++i) {
    elf_detail::Section s = elf_detail::ReadSection(image, shoff + i * shentsize);
    if (s.name >= strtab.size()) continue;  // a bad name cannot be ours
    std::string_view name = strtab.substr(s.name);
    size_t nul = name.find('\0');
    if (nul == std::string_view::npos || name.substr(0, nul) != kWanted) continue;
    if (s.type == elf_detail::kShtNobits) {
      return DataLossError("corrupt ELF (.portico_manifest section has no file data)");
    }
    if (!elf_detail::Fits(s.offset, s.size, total)) {
      return DataLossError("truncated ELF (.portico_manifest section past end of file)");
    }
    std::string_view data = image.substr(s.offset, s.size);
    size_t end = data.find('\0');
    if (end == std::string_view::npos) {
      return DataLossError("corrupt .portico_manifest section (not NUL-terminated)");
    }
    if (end == 0) return DataLossError("empty .portico_manifest section");
    return std::string(data.substr(0, end));
  }
  return NotFoundError("no .portico_manifest section (not a Portico plugin)");
}

}  // namespace portico::sdk

#endif  // PORTICO_SDK_ELF_MANIFEST_H_
