#include "core/plugin/elf_dynamic.h"

#include <elf.h>

#include <bit>
#include <cstring>
#include <map>
#include <optional>

namespace portico::core {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the ELF reader decodes little-endian images in place");

// Fits is true when [offset, offset + size) lies inside `total` bytes, without overflowing.
bool Fits(uint64_t offset, uint64_t size, uint64_t total) {
  return offset <= total && size <= total - offset;
}

// Image is a bounds-checked view of the file.
class Image {
 public:
  explicit Image(std::string_view bytes) : bytes_(bytes) {}

  template <typename T>
  std::optional<T> Read(uint64_t at) const {
    if (!Fits(at, sizeof(T), bytes_.size())) return std::nullopt;
    T value;
    std::memcpy(&value, bytes_.data() + at, sizeof(T));
    return value;
  }
  // String reads the NUL-terminated string at `at` of a string table [offset, offset + size).
  std::optional<std::string> String(const Elf64_Shdr& table, uint64_t at) const {
    if (table.sh_type == SHT_NOBITS || !Fits(table.sh_offset, table.sh_size, bytes_.size()) ||
        at >= table.sh_size) {
      return std::nullopt;
    }
    std::string_view data = bytes_.substr(table.sh_offset + at, table.sh_size - at);
    size_t nul = data.find('\0');
    if (nul == std::string_view::npos) return std::nullopt;
    return std::string(data.substr(0, nul));
  }
  uint64_t size() const { return bytes_.size(); }

 private:
  std::string_view bytes_;
};

Status Corrupt(const std::string& what) { return DataLossError("corrupt ELF (" + what + ")"); }

// Versions maps a .gnu.version index to (version name, library) from .gnu.version_r.
using Versions = std::map<uint16_t, std::pair<std::string, std::string>>;

StatusOr<Versions> ReadVerneed(const Image& image, const std::vector<Elf64_Shdr>& sections,
                               const Elf64_Shdr& verneed) {
  Versions out;
  if (verneed.sh_link >= sections.size()) return Corrupt(".gnu.version_r string table index");
  const Elf64_Shdr& strings = sections[verneed.sh_link];
  uint64_t at = verneed.sh_offset;
  for (uint64_t n = 0; n < verneed.sh_info; ++n) {
    auto need = image.Read<Elf64_Verneed>(at);
    if (!need) return DataLossError("truncated ELF (.gnu.version_r past end of file)");
    std::string file = image.String(strings, need->vn_file).value_or("");
    uint64_t aux_at = at + need->vn_aux;
    for (uint32_t a = 0; a < need->vn_cnt; ++a) {
      auto aux = image.Read<Elf64_Vernaux>(aux_at);
      if (!aux) return DataLossError("truncated ELF (.gnu.version_r past end of file)");
      out[aux->vna_other] = {image.String(strings, aux->vna_name).value_or(""), file};
      if (aux->vna_next == 0) break;
      aux_at += aux->vna_next;
    }
    if (need->vn_next == 0) break;
    at += need->vn_next;
  }
  return out;
}

}  // namespace

std::vector<std::string> ElfDynamic::Exported() const {
  std::vector<std::string> out;
  for (const DynamicSymbol& s : symbols) {
    if (s.defined) out.push_back(s.name);
  }
  return out;
}

std::vector<const DynamicSymbol*> ElfDynamic::Undefined() const {
  std::vector<const DynamicSymbol*> out;
  for (const DynamicSymbol& s : symbols) {
    if (!s.defined && !s.weak) out.push_back(&s);
  }
  return out;
}

StatusOr<ElfDynamic> ReadElfDynamic(std::string_view bytes) {
  Image image(bytes);
  auto header = image.Read<Elf64_Ehdr>(0);
  if (bytes.size() < SELFMAG || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0) {
    return InvalidArgumentError("not an ELF shared object (no ELF magic)");
  }
  if (!header) return DataLossError("truncated ELF (file shorter than the ELF header)");
  if (header->e_ident[EI_CLASS] != ELFCLASS64 || header->e_ident[EI_DATA] != ELFDATA2LSB) {
    return InvalidArgumentError(
        "unsupported ELF class or byte order (Portico plugins are 64-bit "
        "little-endian ELF)");
  }
  if (header->e_type != ET_DYN) {
    return InvalidArgumentError("not an ELF shared object (ELF type " +
                                std::to_string(header->e_type) + ", expected 3 = ET_DYN)");
  }
  if (header->e_shoff == 0) return NotFoundError("no .dynsym section (no section headers)");
  if (header->e_shentsize < sizeof(Elf64_Shdr)) return Corrupt("section header entry size");
  auto first = image.Read<Elf64_Shdr>(header->e_shoff);
  if (!first) return DataLossError("truncated ELF (section headers past end of file)");
  uint64_t count = header->e_shnum != 0 ? header->e_shnum : first->sh_size;
  if (count > image.size() / header->e_shentsize) {
    return DataLossError("truncated ELF (section headers past end of file)");
  }
  std::vector<Elf64_Shdr> sections;
  sections.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    auto s = image.Read<Elf64_Shdr>(header->e_shoff + i * header->e_shentsize);
    if (!s) return DataLossError("truncated ELF (section headers past end of file)");
    sections.push_back(*s);
  }

  ElfDynamic out;
  const Elf64_Shdr* dynsym = nullptr;
  const Elf64_Shdr* versym = nullptr;
  const Elf64_Shdr* verneed = nullptr;
  for (const Elf64_Shdr& s : sections) {
    if (s.sh_type != SHT_NOBITS && !Fits(s.sh_offset, s.sh_size, image.size())) {
      return DataLossError("truncated ELF (a section lies past end of file)");
    }
    if (s.sh_type == SHT_DYNSYM) dynsym = &s;
    if (s.sh_type == SHT_GNU_versym) versym = &s;
    if (s.sh_type == SHT_GNU_verneed) verneed = &s;
    if (s.sh_type == SHT_DYNAMIC) {
      if (s.sh_link >= sections.size()) return Corrupt(".dynamic string table index");
      for (uint64_t at = 0; at + sizeof(Elf64_Dyn) <= s.sh_size; at += sizeof(Elf64_Dyn)) {
        auto d = image.Read<Elf64_Dyn>(s.sh_offset + at);
        if (!d || d->d_tag == DT_NULL) break;
        if (d->d_tag == DT_NEEDED) {
          out.needed.push_back(image.String(sections[s.sh_link], d->d_un.d_val).value_or("?"));
        } else if (d->d_tag == DT_RUNPATH || (d->d_tag == DT_RPATH && out.runpath.empty())) {
          out.runpath = image.String(sections[s.sh_link], d->d_un.d_val).value_or("");
        }
      }
    }
  }
  if (dynsym == nullptr) return NotFoundError("no .dynsym section (nothing is exported)");
  if (dynsym->sh_link >= sections.size()) return Corrupt(".dynsym string table index");
  Versions versions;
  if (verneed != nullptr) {
    PORTICO_ASSIGN_OR_RETURN(versions, ReadVerneed(image, sections, *verneed));
  }
  const Elf64_Shdr& strings = sections[dynsym->sh_link];
  const uint64_t n = dynsym->sh_size / sizeof(Elf64_Sym);
  for (uint64_t i = 1; i < n; ++i) {
    auto sym = image.Read<Elf64_Sym>(dynsym->sh_offset + i * sizeof(Elf64_Sym));
    if (!sym) return DataLossError("truncated ELF (.dynsym past end of file)");
    unsigned bind = ELF64_ST_BIND(sym->st_info);
    if (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE) continue;
    DynamicSymbol s;
    auto name = image.String(strings, sym->st_name);
    if (!name) return Corrupt(".dynsym name offset");
    s.name = *name;
    s.defined = sym->st_shndx != SHN_UNDEF;
    s.weak = bind == STB_WEAK;
    unsigned type = ELF64_ST_TYPE(sym->st_info);
    s.function = type == STT_FUNC || type == STT_GNU_IFUNC;
    if (versym != nullptr && !s.defined) {
      auto index = image.Read<uint16_t>(versym->sh_offset + i * sizeof(uint16_t));
      if (index && (*index & 0x7fff) >= 2) {
        if (auto it = versions.find(*index & 0x7fff); it != versions.end()) {
          s.version = it->second.first;
          s.library = it->second.second;
        }
      }
    }
    out.symbols.push_back(std::move(s));
  }
  return out;
}

}  // namespace portico::core
