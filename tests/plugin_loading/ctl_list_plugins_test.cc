// ctl_list_plugins_test.cc: runs the built portico-ctl list-plugins on the fixture plugins and on
// the in-tree plugins, as an operator would.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "portico/sdk/abi.h"
#include "portico/sdk/json.h"
#include "portico/sdk/version.h"
#include "tests/plugin_loading/test_dir.h"

namespace portico {
namespace {

// The verdict list-plugins prints for a plugin built against this SDK.
const std::string kAbiOk =
    std::to_string(PORTICO_ABI_MAJOR) + "." + std::to_string(PORTICO_ABI_MINOR) + " ok";

using ::portico::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using CtlRun = ::portico::testing::ShellRun;

// RunCtl runs portico-ctl with `args` (shell words) and captures its output and exit status.
CtlRun RunCtl(const std::string& args, bool with_stderr = false) {
  return ::portico::testing::RunShell(std::string(PORTICO_CTL) + " " + args +
                                      (with_stderr ? " 2>&1" : " 2>/dev/null"));
}

std::string Quote(const std::string& s) { return "'" + s + "'"; }

// ByName parses list-plugins JSON into name -> object.
std::map<std::string, const rapidjson::Value*> ByName(const rapidjson::Document& doc) {
  std::map<std::string, const rapidjson::Value*> out;
  for (const auto& plugin : doc.GetArray()) out[json::GetString(plugin, "name")] = &plugin;
  return out;
}

TEST(CtlListPluginsTest, JsonOnTheFixturesFlagsRejectedPlugins) {
  CtlRun run = RunCtl("list-plugins --dir " + Quote(PORTICO_FIXTURES_DIR) + " -o json");
  EXPECT_EQ(run.exit_code, 1) << run.out;
  auto doc = json::Parse(run.out, "list-plugins output");
  ASSERT_TRUE(doc.ok()) << doc.status() << "\n" << run.out;
  ASSERT_TRUE(doc->IsArray());
  auto plugins = ByName(*doc);

  ASSERT_TRUE(plugins.contains("fixture-good"));
  const rapidjson::Value& good = *plugins["fixture-good"];
  EXPECT_EQ(json::GetString(good, "status"), "ok");
  EXPECT_EQ(json::Find(good, "reason"), nullptr);
  EXPECT_EQ(json::GetString(good, "version"), "0.1.0");
  EXPECT_EQ(json::GetString(good, "abiVerdict"), kAbiOk);
  EXPECT_EQ(json::GetInt(good, "abi.major"), 1);
  EXPECT_EQ(json::GetString(good, "sdkVersion"), PORTICO_SDK_VERSION);
  EXPECT_EQ(json::GetString(good, "sha256").size(), 64u);
  EXPECT_THAT(json::GetString(good, "path"), HasSubstr("libportico-fixture-good.so"));
  const rapidjson::Value& kind = good["kinds"][0];
  EXPECT_EQ(json::GetString(kind, "group"), "example.portico.io");
  EXPECT_EQ(json::GetString(kind, "kind"), "Widget");
  EXPECT_EQ(std::string(kind["versions"][0].GetString()), "v1");
  EXPECT_EQ(json::GetString(kind, "sync"), "always");
  EXPECT_EQ(std::string(good["capabilities"][0].GetString()), "processor");

  const rapidjson::Value& abi2 = *plugins["fixture-abi-major-manifest"];
  EXPECT_EQ(json::GetString(abi2, "status"), "rejected");
  EXPECT_EQ(json::GetString(abi2, "abiVerdict"), "2.0 incompatible");
  EXPECT_THAT(json::GetString(abi2, "reason"), HasSubstr("built for ABI 2.0"));

  ASSERT_TRUE(plugins.contains("libportico-fixture-not-a-plugin.so"));
  const rapidjson::Value& not_plugin = *plugins["libportico-fixture-not-a-plugin.so"];
  EXPECT_EQ(json::GetString(not_plugin, "status"), "rejected");
  EXPECT_EQ(json::GetString(not_plugin, "abiVerdict"), "<none>");
  EXPECT_THAT(json::GetString(not_plugin, "reason"), HasSubstr("no .portico_manifest section"));

  const rapidjson::Value& truncated = *plugins["libportico-fixture-truncated.so"];
  EXPECT_THAT(json::GetString(truncated, "reason"), HasSubstr("truncated ELF"));

  // Pre-flight only: faults that need loading (a missing entry, a failing registration) are not
  // visible, and the plugin whose constructor aborts was never run.
  EXPECT_EQ(json::GetString(*plugins["fixture-missing-entry"], "status"), "ok");
  EXPECT_EQ(json::GetString(*plugins["fixture-failing-registration"], "status"), "ok");
}

TEST(CtlListPluginsTest, TableAndWide) {
  TempDir dir;
  dir.AddFixture("good");
  dir.AddFixture("abi-major-manifest");
  CtlRun table = RunCtl("list-plugins --dir " + Quote(dir.path().string()));
  EXPECT_EQ(table.exit_code, 1);
  EXPECT_THAT(table.out, StartsWith("NAME"));
  std::string header = table.out.substr(0, table.out.find('\n'));
  EXPECT_THAT(header, ::testing::MatchesRegex("NAME +VERSION +ABI +SDK +KINDS +STATUS"));
  EXPECT_THAT(table.out, HasSubstr("example.portico.io/Widget(v1)"));
  EXPECT_THAT(table.out, HasSubstr(kAbiOk));
  EXPECT_THAT(table.out, HasSubstr("2.0 incompatible"));
  EXPECT_THAT(table.out, HasSubstr("rejected: built for ABI 2.0"));
  // Columns line up: every row's VERSION starts where the header's does.
  size_t version_at = header.find("VERSION");
  std::string row = table.out.substr(header.size() + 1);
  EXPECT_EQ(row.find("0.1.0"), version_at) << table.out;

  CtlRun wide = RunCtl("list-plugins --dir " + Quote(dir.path().string()) + " -o wide");
  EXPECT_EQ(wide.exit_code, 1);
  EXPECT_THAT(wide.out, ::testing::ContainsRegex("STATUS +CAPABILITIES +SHA256 +PATH"));
  EXPECT_THAT(wide.out, HasSubstr("processor,sync"));
  EXPECT_THAT(wide.out, HasSubstr(dir.path().string() + "/libportico-fixture-good.so"));
}

TEST(CtlListPluginsTest, AllGoodExitsZero) {
  TempDir dir;
  dir.AddFixture("good");
  dir.AddFixture("gadget");
  CtlRun run = RunCtl("list-plugins --dir " + Quote(dir.path().string()) + " -o json");
  EXPECT_EQ(run.exit_code, 0) << run.out;
  auto doc = json::Parse(run.out);
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(doc->Size(), 2u);
}

TEST(CtlListPluginsTest, EmptyAndMissingDirectories) {
  TempDir dir;
  CtlRun empty_json = RunCtl("list-plugins --dir " + Quote(dir.path().string()) + " -o json");
  EXPECT_EQ(empty_json.exit_code, 0);
  EXPECT_EQ(empty_json.out, "[]\n");
  CtlRun empty = RunCtl("list-plugins --dir " + Quote(dir.path().string()), true);
  EXPECT_EQ(empty.exit_code, 0);
  EXPECT_THAT(empty.out, HasSubstr("No plugins found"));
  CtlRun missing = RunCtl("list-plugins --dir /nonexistent/plugins", true);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.out, HasSubstr("does not exist"));
}

// --target gateway asks the controller (or, with --address, one gateway); the integration test
// gateway_plugins_test.py runs it against real processes. Here: nothing listens.
TEST(CtlListPluginsTest, TargetGatewayWithNobodyListeningIsAnErrorNamingWhom) {
  CtlRun run = RunCtl("list-plugins --target gateway --server http://127.0.0.1:1", true);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.out, HasSubstr("127.0.0.1:1"));
  CtlRun direct = RunCtl("list-plugins --target gateway --address 127.0.0.1:1", true);
  EXPECT_EQ(direct.exit_code, 1);
  EXPECT_THAT(direct.out, HasSubstr("127.0.0.1:1"));
  CtlRun stray = RunCtl("list-plugins --dir /tmp --address 127.0.0.1:1", true);
  EXPECT_EQ(stray.exit_code, 1);
  EXPECT_THAT(stray.out, HasSubstr("--address needs --target gateway"));
  EXPECT_NE(RunCtl("list-plugins --target nowhere").exit_code, 0);
  EXPECT_NE(RunCtl("list-plugins --dir /tmp --target gateway").exit_code, 0);
  EXPECT_NE(RunCtl("list-plugins --dir /tmp -o yaml").exit_code, 0);
}

// The in-tree plugins (built before this test) list every kind of DESIGN.md §3, all accepted.
TEST(CtlListPluginsTest, InTreePluginsListEveryKind) {
  CtlRun run = RunCtl("list-plugins --dir " + Quote(PORTICO_PLUGIN_OUTPUT_DIR) + " -o json");
  auto doc = json::Parse(run.out, "list-plugins output");
  ASSERT_TRUE(doc.ok()) << doc.status() << "\n" << run.out;
  ASSERT_TRUE(doc->IsArray());
  std::set<std::string> kinds;
  for (const auto& plugin : doc->GetArray()) {
    EXPECT_EQ(json::GetString(plugin, "status"), "ok")
        << json::GetString(plugin, "path") << ": " << json::GetString(plugin, "reason");
    EXPECT_EQ(json::GetString(plugin, "abiVerdict"), kAbiOk);
    for (const auto& kind : plugin["kinds"].GetArray()) {
      kinds.insert(json::GetString(kind, "group") + "/" + json::GetString(kind, "kind"));
    }
  }
  const std::set<std::string> expected = {"/ConfigMap",
                                          "/Namespace",
                                          "/Secret",
                                          "/Service",
                                          "discovery.k8s.io/EndpointSlice",
                                          "gateway.networking.k8s.io/BackendTLSPolicy",
                                          "gateway.networking.k8s.io/GatewayClass",
                                          "gateway.networking.k8s.io/Gateway",
                                          "gateway.networking.k8s.io/HTTPRoute",
                                          "gateway.networking.k8s.io/ReferenceGrant",
                                          "portico.io/TLSPolicy",
                                          "portico.io/Webhook"};
  EXPECT_EQ(kinds, expected);
  EXPECT_EQ(run.exit_code, 0) << run.out;
}

}  // namespace
}  // namespace portico
