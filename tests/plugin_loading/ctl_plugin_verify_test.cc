// ctl_plugin_verify_test.cc: runs the built `portico-ctl plugin verify` on the fixture plugins, as
// a plugin author would: every broken fixture is refused with one line naming the file, what was
// found and the fix; the good ones pass. (The shipped plugins and the SDK example are verified
// by the plugin_verify_* CTest tests that portico_add_plugin_verify_test() adds.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "tests/plugin_loading/test_dir.h"

namespace portico {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

using CtlRun = ::portico::testing::ShellRun;

CtlRun RunVerify(const std::string& plugin, const std::string& extra = "") {
  return ::portico::testing::RunShell(std::string(PORTICO_CTL) + " plugin verify '" + plugin +
                                      "' " + extra + " 2>/dev/null");
}

std::string Fixture(const char* dir, const std::string& name) {
  return (std::filesystem::path(dir) / ("libportico-fixture-" + name + ".so")).string();
}

// Findings are the lines that are neither notes nor the summary.
std::vector<std::string> Findings(const CtlRun& run, const std::string& file) {
  std::vector<std::string> out;
  std::istringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(file + ": note: ", 0) == 0 || line.rfind("OK: ", 0) == 0 ||
        line.rfind("FAILED: ", 0) == 0) {
      continue;
    }
    out.push_back(line);
  }
  return out;
}

struct BrokenCase {
  const char* dir;
  std::string fixture;
  std::vector<std::string> words;  // all in one finding line
  std::string extra_args = "";
};

void PrintTo(const BrokenCase& c, std::ostream* os) { *os << c.fixture; }

class BrokenFixtureTest : public ::testing::TestWithParam<BrokenCase> {};

TEST_P(BrokenFixtureTest, RefusedWithOneLineNamingTheFileAndTheFix) {
  const BrokenCase& c = GetParam();
  const std::string file = Fixture(c.dir, c.fixture);
  ASSERT_TRUE(std::filesystem::exists(file)) << file;
  CtlRun run = RunVerify(file, c.extra_args);
  EXPECT_EQ(run.exit_code, 1) << run.out;
  std::vector<std::string> findings = Findings(run, file);
  ASSERT_FALSE(findings.empty()) << run.out;
  bool matched = false;
  for (const std::string& line : findings) {
    EXPECT_THAT(line, StartsWith(file + ": ")) << "every finding names the file";
    EXPECT_THAT(line, HasSubstr("; ")) << "every finding carries its fix: " << line;
    bool all = true;
    for (const std::string& w : c.words) all = all && line.find(w) != std::string::npos;
    matched = matched || all;
  }
  EXPECT_TRUE(matched) << "no finding has all of the expected words; output:\n" << run.out;
  EXPECT_THAT(run.out, HasSubstr("FAILED: " + file));
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, BrokenFixtureTest,
    ::testing::Values(
        BrokenCase{PORTICO_FIXTURES_DIR,
                   "abi-major-manifest",
                   {"built for ABI 2.0; this host speaks 1.x", "rebuild"}},
        BrokenCase{PORTICO_FIXTURES_DIR,
                   "abi-minor-newer",
                   {"built for ABI 1.7, newer than this host's", "upgrade the host"}},
        BrokenCase{PORTICO_FIXTURES_DIR,
                   "abi-major-descriptor",
                   {"descriptor says ABI 2.0 (its manifest says 1.0)", "rebuild"}},
        BrokenCase{PORTICO_FIXTURES_DIR,
                   "small-descriptor",
                   {"descriptor struct_size 16 smaller than", "rebuild"}},
        BrokenCase{PORTICO_FIXTURES_DIR,
                   "small-kind",
                   {"portico_kind struct_size 8 smaller than", "rebuild"}},
        BrokenCase{PORTICO_FIXTURES_DIR,
                   "failing-registration",
                   {"widget warehouse unreachable", "fix what the plugin reports"}},
        BrokenCase{PORTICO_FIXTURES_DIR, "throwing", {"threw: widget setup exploded"}},
        BrokenCase{PORTICO_FIXTURES_DIR,
                   "missing-entry",
                   {"missing entry portico_plugin_v1", "PORTICO_PLUGIN(Setup)"}},
        BrokenCase{PORTICO_FIXTURES_DIR,
                   "not-a-plugin",
                   {"no .portico_manifest section (not a Portico plugin)", "portico_add_plugin()"}},
        BrokenCase{PORTICO_FIXTURES_DIR,
                   "truncated",
                   {"truncated ELF (section headers past end of file)", "reinstall or rebuild"}},
        BrokenCase{PORTICO_FIXTURES_DIR,
                   "manifest-mismatch",
                   {"kind Gremlin.example.portico.io is not in the plugin's manifest.json",
                    "add it to \"kinds\" there"}},
        BrokenCase{PORTICO_FIXTURES_DIR,
                   "raw-twin",
                   {"registered but not in the manifest: Widget.example.portico.io"}},
        BrokenCase{PORTICO_VERIFY_FIXTURES_DIR,
                   "extra-export",
                   {"exports 1 symbol(s) besides portico_plugin_v1: portico_fixture_helper",
                    "visibility"}},
        BrokenCase{PORTICO_VERIFY_FIXTURES_DIR,
                   "undeclared-library",
                   {"needs libcrypto.so.3", "declare it in manifest.json \"libraries\""}},
        BrokenCase{PORTICO_VERIFY_FIXTURES_DIR,
                   "undeclared-library",
                   {"uses libcrypto.so.3 (OpenSSL_version_num)"}},
        BrokenCase{PORTICO_VERIFY_FIXTURES_DIR,
                   "bad-schema",
                   {"schema of Widget.example.portico.io", "const", "schemas/unsupported.json",
                    "draft-04 keywords"}},
        BrokenCase{PORTICO_VERIFY_FIXTURES_DIR,
                   "bad-result",
                   {"processor of Widget.example.portico.io wrote an invalid result", "for input {",
                    "a JSON object as status"}},
        BrokenCase{
            PORTICO_VERIFY_FIXTURES_DIR,
            "crashing-process",
            {"the host process ", "while processing Widget ", "\"size\":", "no input crashes it"}},
        BrokenCase{PORTICO_VERIFY_FIXTURES_DIR,
                   "hanging-process",
                   {"hangs: still running after 5 s while processing Widget ",
                    "\"widgetRef\":", "return promptly"},
                   "--timeout 5"}),
    [](const ::testing::TestParamInfo<BrokenCase>& info) {
      std::string name = info.param.fixture + "_" + std::to_string(info.index);
      for (char& c : name) c = c == '-' ? '_' : c;
      return name;
    });

class GoodFixtureTest : public ::testing::TestWithParam<std::string> {};

// Alone, a plugin whose `reads` another plugin provides still passes (its reads miss: a note).
TEST_P(GoodFixtureTest, PassesWithNoFinding) {
  const std::string file = Fixture(PORTICO_FIXTURES_DIR, GetParam());
  ASSERT_TRUE(std::filesystem::exists(file)) << file;
  CtlRun run = RunVerify(file);
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(Findings(run, file), ::testing::IsEmpty()) << run.out;
  EXPECT_THAT(run.out, HasSubstr("OK: " + file));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GoodFixtureTest,
                         ::testing::Values("good", "gadget", "raw-good", "debug-widget",
                                           "unprovided-reads", "cycle-a"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

TEST(CtlPluginVerifyTest, ProcessorsGetInputThatPassedTheSchema) {
  const std::string file = Fixture(PORTICO_FIXTURES_DIR, "good");
  CtlRun run = RunVerify(file, "--iterations 200 --seed 7");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  // The note counts inputs by fate; some must have reached the processor validated.
  EXPECT_THAT(run.out, HasSubstr("Widget.example.portico.io: 200 inputs, "));
  EXPECT_THAT(run.out, ::testing::Not(HasSubstr(" 0 passed the schema")));
}

TEST(CtlPluginVerifyTest, MissingFileIsOneFinding) {
  CtlRun run = RunVerify("/nonexistent/libportico-x.so");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.out, HasSubstr("/nonexistent/libportico-x.so: cannot read file"));
}

}  // namespace
}  // namespace portico
