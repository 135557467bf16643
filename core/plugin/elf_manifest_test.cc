#include "core/plugin/elf_manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/plugin/manifest.h"

namespace portico::core {
namespace {

using ::testing::HasSubstr;

void PutLe(std::string& out, size_t at, uint64_t value, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) out[at + i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

struct CraftedSection {
  std::string name;
  uint32_t type = 1;  // SHT_PROGBITS
  std::string data;
};

// MakeElf builds a minimal ELF64 little-endian ET_DYN image: header, section data, .shstrtab,
// then the section header table (section 0 is the null section, .shstrtab the last one).
std::string MakeElf(const std::vector<CraftedSection>& sections) {
  std::string image(64, '\0');
  image[0] = 0x7f;
  image[1] = 'E';
  image[2] = 'L';
  image[3] = 'F';
  image[4] = 2;             // ELFCLASS64
  image[5] = 1;             // ELFDATA2LSB
  image[6] = 1;             // EV_CURRENT
  PutLe(image, 16, 3, 2);   // ET_DYN
  PutLe(image, 18, 62, 2);  // EM_X86_64
  PutLe(image, 20, 1, 4);
  PutLe(image, 52, 64, 2);  // e_ehsize

  std::string strtab(1, '\0');
  std::vector<uint32_t> name_offsets;
  std::vector<uint64_t> data_offsets;
  for (const auto& s : sections) {
    name_offsets.push_back(static_cast<uint32_t>(strtab.size()));
    strtab += s.name;
    strtab += '\0';
    data_offsets.push_back(image.size());
    image += s.data;
  }
  uint32_t strtab_name = static_cast<uint32_t>(strtab.size());
  strtab += ".shstrtab";
  strtab += '\0';
  uint64_t strtab_offset = image.size();
  image += strtab;

  uint64_t shoff = image.size();
  size_t count = sections.size() + 2;
  image.append(count * 64, '\0');
  auto header = [&](size_t index, uint32_t name, uint32_t type, uint64_t offset, uint64_t size) {
    size_t at = shoff + index * 64;
    PutLe(image, at + 0, name, 4);
    PutLe(image, at + 4, type, 4);
    PutLe(image, at + 24, offset, 8);
    PutLe(image, at + 32, size, 8);
  };
  for (size_t i = 0; i < sections.size(); ++i) {
    header(i + 1, name_offsets[i], sections[i].type, data_offsets[i], sections[i].data.size());
  }
  header(count - 1, strtab_name, 3 /* SHT_STRTAB */, strtab_offset, strtab.size());
  PutLe(image, 40, shoff, 8);
  PutLe(image, 58, 64, 2);
  PutLe(image, 60, count, 2);
  PutLe(image, 62, count - 1, 2);
  return image;
}

const std::string kManifestText = R"({"name":"crafted","kinds":[]})";

std::string GoodImage() {
  return MakeElf({{".text", 1, std::string(32, '\x90')},
                  {".portico_manifest", 1, kManifestText + std::string(1, '\0')},
                  {".data", 1, "abc"}});
}

TEST(ElfManifestTest, ReadsTheSectionOfABuiltSharedObject) {
  auto text = ReadElfManifest(PORTICO_TESTLIB);
  ASSERT_TRUE(text.ok()) << text.status();
  auto manifest = ParseManifest(*text);
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  EXPECT_EQ(manifest->name, "testlib");
  EXPECT_EQ(manifest->version, "1.2.3");
}

TEST(ElfManifestTest, ReadsEveryBuiltInTreePlugin) {
  std::error_code ec;
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(PORTICO_PLUGIN_OUTPUT_DIR, ec)) {
    if (entry.path().extension() != ".so") continue;
    ++seen;
    auto text = ReadElfManifest(entry.path());
    ASSERT_TRUE(text.ok()) << entry.path() << ": " << text.status();
    auto manifest = ParseManifest(*text);
    EXPECT_TRUE(manifest.ok()) << entry.path() << ": " << manifest.status();
  }
  if (seen == 0) GTEST_SKIP() << "no plugins built in " << PORTICO_PLUGIN_OUTPUT_DIR;
}

TEST(ElfManifestTest, ExtractsFromACraftedImage) {
  auto text = ExtractElfManifest(GoodImage());
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, kManifestText);
}

TEST(ElfManifestTest, RejectsWhatIsNotElf) {
  for (std::string bytes : {std::string(), std::string("hello, world"),
                            std::string("\x7f"
                                        "EL"),
                            std::string(4096, '\0')}) {
    auto text = ExtractElfManifest(bytes);
    ASSERT_FALSE(text.ok());
    EXPECT_EQ(text.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(text.status().message(), HasSubstr("not an ELF shared object"));
  }
}

TEST(ElfManifestTest, RejectsOtherClassesByteOrdersAndTypes) {
  std::string image = GoodImage();
  std::string elf32 = image;
  elf32[4] = 1;
  EXPECT_THAT(ExtractElfManifest(elf32).status().message(), HasSubstr("64-bit"));
  std::string big_endian = image;
  big_endian[5] = 2;
  EXPECT_THAT(ExtractElfManifest(big_endian).status().message(), HasSubstr("little-endian"));
  std::string executable = image;
  PutLe(executable, 16, 2, 2);  // ET_EXEC
  EXPECT_THAT(ExtractElfManifest(executable).status().message(),
              HasSubstr("not an ELF shared object"));
}

TEST(ElfManifestTest, EveryTruncationIsAnErrorNeverACrash) {
  std::string image = GoodImage();
  for (size_t len = 0; len < image.size(); ++len) {
    auto text = ExtractElfManifest(std::string_view(image).substr(0, len));
    EXPECT_FALSE(text.ok()) << "length " << len;
  }
  // Cut just before the section header table: the classic truncated download.
  uint64_t shoff = 0;
  for (int i = 0; i < 8; ++i)
    shoff |= uint64_t{static_cast<unsigned char>(image[40 + i])} << (8 * i);
  auto text = ExtractElfManifest(std::string_view(image).substr(0, shoff + 10));
  EXPECT_EQ(text.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(text.status().message(), "truncated ELF (section headers past end of file)");
}

TEST(ElfManifestTest, TruncatedBuiltSharedObject) {
  auto bytes = ReadFileBytes(PORTICO_TESTLIB);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  ASSERT_GT(bytes->size(), 3000u);
  auto text = ExtractElfManifest(std::string_view(*bytes).substr(0, 3000));
  EXPECT_EQ(text.status().message(), "truncated ELF (section headers past end of file)");
}

TEST(ElfManifestTest, MissingSectionIsNotAPlugin) {
  auto text = ExtractElfManifest(MakeElf({{".text", 1, "code"}}));
  EXPECT_EQ(text.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(text.status().message(), "no .portico_manifest section (not a Portico plugin)");

  std::string no_headers = GoodImage();
  PutLe(no_headers, 40, 0, 8);  // e_shoff = 0
  EXPECT_THAT(ExtractElfManifest(no_headers).status().message(),
              HasSubstr("no .portico_manifest section (not a Portico plugin)"));
}

TEST(ElfManifestTest, CorruptSections) {
  auto unterminated = ExtractElfManifest(MakeElf({{".portico_manifest", 1, "{\"a\":1}"}}));
  EXPECT_THAT(unterminated.status().message(), HasSubstr("not NUL-terminated"));

  auto empty = ExtractElfManifest(MakeElf({{".portico_manifest", 1, std::string(1, '\0')}}));
  EXPECT_THAT(empty.status().message(), HasSubstr("empty .portico_manifest"));

  auto nobits = ExtractElfManifest(MakeElf({{".portico_manifest", 8, ""}}));
  EXPECT_THAT(nobits.status().message(), HasSubstr("no file data"));

  // Section 1 (the manifest) pointing past the end of the file.
  std::string past_end = GoodImage();
  uint64_t shoff = past_end.size() - 5 * 64;
  PutLe(past_end, shoff + 2 * 64 + 24, past_end.size() - 4, 8);
  EXPECT_EQ(ExtractElfManifest(past_end).status().message(),
            "truncated ELF (.portico_manifest section past end of file)");

  // An offset + size that overflows 64 bits must not wrap around.
  std::string overflow = GoodImage();
  PutLe(overflow, shoff + 2 * 64 + 24, 16, 8);
  PutLe(overflow, shoff + 2 * 64 + 32, ~uint64_t{0} - 8, 8);
  EXPECT_EQ(ExtractElfManifest(overflow).status().code(), StatusCode::kDataLoss);

  std::string bad_strndx = GoodImage();
  PutLe(bad_strndx, 62, 99, 2);
  EXPECT_THAT(ExtractElfManifest(bad_strndx).status().message(), HasSubstr("out of range"));

  std::string small_entries = GoodImage();
  PutLe(small_entries, 58, 32, 2);
  EXPECT_THAT(ExtractElfManifest(small_entries).status().message(), HasSubstr("entry size"));

  std::string many_sections = GoodImage();
  PutLe(many_sections, 60, 0xfff0, 2);
  EXPECT_EQ(ExtractElfManifest(many_sections).status().message(),
            "truncated ELF (section headers past end of file)");

  // A section name offset outside .shstrtab is skipped, not read.
  std::string bad_name = GoodImage();
  PutLe(bad_name, shoff + 2 * 64, 0xffffff, 4);
  EXPECT_EQ(ExtractElfManifest(bad_name).status().code(), StatusCode::kNotFound);
}

TEST(ElfManifestTest, ExtendedSectionCountAndNameIndex) {
  // e_shnum = 0 and e_shstrndx = SHN_XINDEX: the real values live in section 0.
  std::string image = GoodImage();
  uint64_t shoff = image.size() - 5 * 64;
  PutLe(image, 60, 0, 2);
  PutLe(image, 62, 0xffff, 2);
  PutLe(image, shoff + 32, 5, 8);  // sh_size of section 0 = section count
  PutLe(image, shoff + 40, 4, 4);  // sh_link of section 0 = name table index
  auto text = ExtractElfManifest(image);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, kManifestText);
}

TEST(ElfManifestTest, RandomCorruptionNeverCrashes) {
  const std::string good = GoodImage();
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (int round = 0; round < 2000; ++round) {
    std::string image = good;
    int flips = 1 + static_cast<int>(next() % 4);
    for (int i = 0; i < flips; ++i) {
      image[next() % image.size()] = static_cast<char>(next() & 0xff);
    }
    auto text = ExtractElfManifest(image);  // any verdict; ASan checks the reads
    if (text.ok()) {
      EXPECT_LE(text->size(), image.size());
    }
  }
}

TEST(ElfManifestTest, UnreadableFile) {
  auto text = ReadElfManifest("/nonexistent/libportico-nothing.so");
  EXPECT_EQ(text.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(text.status().message(), HasSubstr("cannot read file"));
}

}  // namespace
}  // namespace portico::core
