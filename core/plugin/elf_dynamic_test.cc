#include "core/plugin/elf_dynamic.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/plugin/elf_manifest.h"
#include "core/plugin/plugin_verify.h"

namespace portico::core {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

std::string TestLib() {
  auto bytes = ReadFileBytes(PORTICO_TESTLIB);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return bytes.ok() ? *bytes : "";
}

TEST(ElfDynamicTest, ReadsExportsNeededLibrariesAndVersionedImports) {
  auto dynamic = ReadElfDynamic(TestLib());
  ASSERT_TRUE(dynamic.ok()) << dynamic.status();
  // The test library exports its one function (no visibility tricks) and calls nothing but what
  // an instrumented build adds (the sanitizer runtimes).
  EXPECT_THAT(dynamic->Exported(), Contains("portico_testlib_answer"));
  for (const std::string& needed : dynamic->needed) EXPECT_TRUE(IsRuntimeLibrary(needed)) << needed;
  EXPECT_THAT(dynamic->Exported(), Not(Contains("")));
}

TEST(ElfDynamicTest, AnInTreePluginExportsOnlyItsEntryAndImportsVersionedRuntimeSymbols) {
  auto bytes = ReadFileBytes(std::string(PORTICO_PLUGIN_OUTPUT_DIR) + "/libportico-gateway.so");
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto dynamic = ReadElfDynamic(*bytes);
  ASSERT_TRUE(dynamic.ok()) << dynamic.status();
  EXPECT_EQ(dynamic->Exported(), std::vector<std::string>{"portico_plugin_v1"});
  EXPECT_THAT(dynamic->needed, Contains("libstdc++.so.6"));
  // libstdc++ and libc symbols carry their version, which names the library.
  bool saw_versioned = false;
  for (const DynamicSymbol* s : dynamic->Undefined()) {
    if (s->library.empty()) continue;
    saw_versioned = true;
    EXPECT_TRUE(IsRuntimeLibrary(s->library)) << s->name << " from " << s->library;
    EXPECT_FALSE(s->version.empty()) << s->name;
  }
  EXPECT_TRUE(saw_versioned);
}

TEST(ElfDynamicTest, GarbageAndTruncatedImagesAreErrorsNotCrashes) {
  EXPECT_THAT(ReadElfDynamic("").status().message(), HasSubstr("not an ELF shared object"));
  EXPECT_THAT(ReadElfDynamic("hello world, not elf").status().message(),
              HasSubstr("not an ELF shared object"));
  std::string image = TestLib();
  ASSERT_GT(image.size(), 3000u);
  for (size_t size : {size_t{20}, size_t{64}, size_t{1000}, size_t{3000}, image.size() - 1}) {
    auto dynamic = ReadElfDynamic(std::string_view(image).substr(0, size));
    EXPECT_FALSE(dynamic.ok()) << "cut at " << size;
  }
  // Flip bytes everywhere: every outcome is a value or an error.
  for (size_t at = 0; at < image.size(); at += 97) {
    std::string broken = image;
    broken[at] = static_cast<char>(~broken[at]);
    (void)ReadElfDynamic(broken);
  }
}

TEST(PluginVerifyTest, RuntimeLibraries) {
  for (const char* ok : {"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1",
                         "libasan.so.8", "libubsan.so.1"}) {
    EXPECT_TRUE(IsRuntimeLibrary(ok)) << ok;
  }
  for (const char* no : {"libcrypto.so.3", "libssl.so.3", "libz.so.1", "libc.so"}) {
    EXPECT_FALSE(IsRuntimeLibrary(no)) << no;
  }
}

TEST(PluginVerifyTest, SymbolProvidersMustBeRuntimeOrDeclared) {
  ElfDynamic dynamic;
  dynamic.symbols = {{"memcpy", false, false, true, "GLIBC_2.14", "libc.so.6"},
                     {"EVP_sha256", false, false, true, "OPENSSL_3.0.0", "libcrypto.so.3"},
                     {"mystery", false, false, true, "", ""},
                     {"__gmon_start__", false, true, false, "", ""}};  // weak: never judged
  PluginManifest manifest;
  auto resolve = [](const std::string& symbol) {
    return symbol == "mystery" ? std::string("/usr/lib/libmystery.so.1") : std::string();
  };
  std::vector<VerifyFinding> findings = CheckSymbolProviders(dynamic, manifest, resolve);
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_THAT(findings[0].what, HasSubstr("uses libcrypto.so.3 (EVP_sha256)"));
  EXPECT_THAT(findings[1].what, HasSubstr("uses libmystery.so.1 (mystery)"));
  manifest.libraries = {"libcrypto.so.3", "libmystery.so.1"};
  EXPECT_TRUE(CheckSymbolProviders(dynamic, manifest, resolve).empty());
  findings = CheckSymbolProviders(dynamic, manifest, nullptr);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_THAT(findings[0].what, HasSubstr("no library it links defines: mystery"));
}

}  // namespace
}  // namespace portico::core
