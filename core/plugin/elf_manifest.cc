#include "core/plugin/elf_manifest.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>

#include "portico/sdk/abi.h"

namespace portico::core {
namespace {

// ELF64 constants and field offsets (System V gABI); decoded by hand, little-endian, so the
// reader neither depends on <elf.h> nor on the host's byte order.
constexpr unsigned char kElfMagic[4] = {0x7f, 'E', 'L', 'F'};
constexpr size_t kEiClass = 4;
constexpr size_t kEiData = 5;
constexpr unsigned char kElfClass64 = 2;
constexpr unsigned char kElfData2Lsb = 1;
constexpr uint16_t kEtDyn = 3;
constexpr size_t kEhdrSize = 64;
constexpr size_t kEhdrType = 16;
constexpr size_t kEhdrShoff = 40;
constexpr size_t kEhdrShentsize = 58;
constexpr size_t kEhdrShnum = 60;
constexpr size_t kEhdrShstrndx = 62;
constexpr size_t kShdrSize = 64;
constexpr size_t kShdrName = 0;
constexpr size_t kShdrType = 4;
constexpr size_t kShdrOffset = 24;
constexpr size_t kShdrSizeField = 32;
constexpr size_t kShdrLink = 40;
constexpr uint32_t kShtNobits = 8;
constexpr uint16_t kShnXindex = 0xffff;

// The caller has bounds-checked [at, at + N).
uint64_t ReadLe(std::string_view image, size_t at, size_t bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < bytes; ++i) {
    value |= static_cast<uint64_t>(static_cast<unsigned char>(image[at + i])) << (8 * i);
  }
  return value;
}

// Fits is true when [offset, offset + size) lies inside an image of `total` bytes, without
// overflowing.
bool Fits(uint64_t offset, uint64_t size, uint64_t total) {
  return offset <= total && size <= total - offset;
}

struct Section {
  uint32_t name;
  uint32_t type;
  uint64_t offset;
  uint64_t size;
  uint32_t link;
};

Section ReadSection(std::string_view image, uint64_t at) {
  return Section{static_cast<uint32_t>(ReadLe(image, at + kShdrName, 4)),
                 static_cast<uint32_t>(ReadLe(image, at + kShdrType, 4)),
                 ReadLe(image, at + kShdrOffset, 8), ReadLe(image, at + kShdrSizeField, 8),
                 static_cast<uint32_t>(ReadLe(image, at + kShdrLink, 4))};
}

}  // namespace

StatusOr<std::string> ExtractElfManifest(std::string_view image) {
  if (image.size() < sizeof(kElfMagic) ||
      std::memcmp(image.data(), kElfMagic, sizeof(kElfMagic)) != 0) {
    return InvalidArgumentError("not an ELF shared object (no ELF magic)");
  }
  if (image.size() < kEhdrSize) {
    return DataLossError("truncated ELF (file shorter than the 64-byte ELF header)");
  }
  auto elf_class = static_cast<unsigned char>(image[kEiClass]);
  if (elf_class != kElfClass64) {
    return InvalidArgumentError("unsupported ELF class " + std::to_string(elf_class) +
                                " (Portico plugins are 64-bit ELF)");
  }
  auto elf_data = static_cast<unsigned char>(image[kEiData]);
  if (elf_data != kElfData2Lsb) {
    return InvalidArgumentError("unsupported ELF byte order " + std::to_string(elf_data) +
                                " (Portico plugins are little-endian)");
  }
  auto type = static_cast<uint16_t>(ReadLe(image, kEhdrType, 2));
  if (type != kEtDyn) {
    return InvalidArgumentError("not an ELF shared object (ELF type " + std::to_string(type) +
                                ", expected 3 = ET_DYN)");
  }

  const uint64_t total = image.size();
  uint64_t shoff = ReadLe(image, kEhdrShoff, 8);
  uint64_t shentsize = ReadLe(image, kEhdrShentsize, 2);
  uint64_t shnum = ReadLe(image, kEhdrShnum, 2);
  uint64_t shstrndx = ReadLe(image, kEhdrShstrndx, 2);
  if (shoff == 0) {
    return NotFoundError(
        "no .portico_manifest section (not a Portico plugin): the ELF has no section headers");
  }
  if (shentsize < kShdrSize) {
    return DataLossError("corrupt ELF (section header entry size " + std::to_string(shentsize) +
                         " < 64)");
  }
  // Section 0 carries the real count and name-table index when they do not fit in 16 bits.
  if (!Fits(shoff, shentsize, total)) {
    return DataLossError("truncated ELF (section headers past end of file)");
  }
  Section first = ReadSection(image, shoff);
  if (shnum == 0) shnum = first.size;
  if (shstrndx == kShnXindex) shstrndx = first.link;
  if (shnum > total / shentsize || !Fits(shoff, shnum * shentsize, total)) {
    return DataLossError("truncated ELF (section headers past end of file)");
  }
  if (shstrndx >= shnum) {
    return DataLossError("corrupt ELF (section name table index " + std::to_string(shstrndx) +
                         " out of range)");
  }
  Section names = ReadSection(image, shoff + shstrndx * shentsize);
  if (names.type == kShtNobits || !Fits(names.offset, names.size, total)) {
    return DataLossError("truncated ELF (section name table past end of file)");
  }
  std::string_view strtab = image.substr(names.offset, names.size);

  constexpr std::string_view kWanted = PORTICO_MANIFEST_SECTION;
  for (uint64_t i = 0; i < shnum; ++i) {
    Section s = ReadSection(image, shoff + i * shentsize);
    if (s.name >= strtab.size()) continue;  // a bad name cannot be ours
    std::string_view name = strtab.substr(s.name);
    size_t nul = name.find('\0');
    if (nul == std::string_view::npos || name.substr(0, nul) != kWanted) continue;
    if (s.type == kShtNobits) {
      return DataLossError("corrupt ELF (.portico_manifest section has no file data)");
    }
    if (!Fits(s.offset, s.size, total)) {
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

StatusOr<std::string> ReadFileBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int err = errno;
    std::string reason = err != 0 ? std::strerror(err) : "cannot open";
    return err == ENOENT ? NotFoundError("cannot read file: " + reason)
                         : UnavailableError("cannot read file: " + reason);
  }
  // One sized read: an istreambuf_iterator copy goes byte by byte (1 s for 15 MB in Debug).
  std::string bytes;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
    bytes.append(buffer, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return UnavailableError("cannot read file: I/O error");
  return bytes;
}

StatusOr<std::string> ReadElfManifest(const std::filesystem::path& path) {
  PORTICO_ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(path));
  return ExtractElfManifest(bytes);
}

}  // namespace portico::core
