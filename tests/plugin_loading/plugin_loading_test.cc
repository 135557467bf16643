// plugin_loading_test.cc: loads real .so fixtures (see fixtures/ and CMakeLists.txt) with the
// real loader. Each refusal test loads a fresh directory holding the bad fixture beside the good
// one, and checks the one-line refusal (file path, what was found, the fix) and that the good
// plugin still loaded and works.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "core/plugin/elf_manifest.h"
#include "core/plugin/plugin_loader.h"
#include "portico/sdk/json.h"
#include "portico/sdk/types.h"
#include "tests/plugin_loading/test_dir.h"

namespace portico::core {
namespace {

using ::portico::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr char kGroup[] = "example.portico.io";

PluginSet Load(const TempDir& dir) {
  auto set = LoadPluginDir(dir.path());
  EXPECT_TRUE(set.ok()) << set.status();
  return set.ok() ? std::move(set).value() : PluginSet{};
}

// ExpectRefused checks the plugin at `path` was refused with a single line naming the file and
// containing every one of `words`.
void ExpectRefused(const PluginSet& set, const std::string& path,
                   const std::vector<std::string>& words) {
  const PluginRecord* record = set.FindPlugin(path);
  ASSERT_NE(record, nullptr) << path;
  EXPECT_FALSE(record->ok()) << path << " was accepted";
  EXPECT_FALSE(record->loaded);
  std::string line = record->RefusalLine();
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  EXPECT_THAT(line, HasSubstr(path));
  for (const std::string& word : words) EXPECT_THAT(line, HasSubstr(word));
  // Nothing of a refused plugin stays registered.
  for (const KindInfo* kind : set.registry.Kinds()) EXPECT_NE(kind->plugin_path, path);
  bool listed = false;
  for (const std::string& refusal : set.RefusalLines()) listed |= refusal == line;
  EXPECT_TRUE(listed) << line;
}

// ExpectGoodLoaded checks the good fixture at `path` is accepted and provides Widget.
void ExpectGoodLoaded(const PluginSet& set, const std::string& path) {
  const PluginRecord* record = set.FindPlugin(path);
  ASSERT_NE(record, nullptr) << path;
  EXPECT_TRUE(record->ok()) << record->RefusalLine();
  EXPECT_TRUE(record->loaded);
  const KindInfo* widget = set.registry.Find(kGroup, "Widget");
  ASSERT_NE(widget, nullptr);
  EXPECT_EQ(widget->plugin_path, path);
  EXPECT_EQ(widget->plugin_name, "fixture-good");
}

// FakeHost is a minimal host side of process(): it serves Widget exports and records what the
// processor wrote.
struct FakeHost {
  std::map<std::string, std::string> widget_exports;  // "ns/name" -> export JSON
  std::vector<std::string> contributions;

  static int GetExport(void* host, const portico_object_ref* ref, portico_sink* out) {
    auto* self = static_cast<FakeHost*>(host);
    if (sdk::View(ref->kind) != "Widget") return 0;
    auto it = self->widget_exports.find(std::string(sdk::View(ref->ns)) + "/" +
                                        std::string(sdk::View(ref->name)));
    if (it == self->widget_exports.end()) return 0;
    sdk::WriteSink(out, it->second);
    return 1;
  }
  static void Contribute(void* host, const portico_object_ref* target, portico_str topic,
                         portico_str json) {
    static_cast<FakeHost*>(host)->contributions.push_back(
        std::string(sdk::View(target->kind)) + " " + std::string(sdk::View(target->name)) + " " +
        std::string(sdk::View(topic)) + " " + std::string(sdk::View(json)));
  }
};

struct Outcome {
  portico_code code = PORTICO_UNKNOWN;
  std::string error;
  std::string synced;
  std::string status;
  std::string export_view;
};

// RunProcess calls the kind's process hook through the registry, as the controller will.
Outcome RunProcess(const KindInfo& kind, FakeHost& host, const std::string& name,
                   const std::string& json) {
  std::string ns = "default";
  portico_object object{};
  object.struct_size = sizeof(object);
  object.ref = portico_object_ref{sizeof(portico_object_ref), sdk::Str(kind.id.group),
                                  sdk::Str(kind.id.kind), sdk::Str(ns), sdk::Str(name)};
  object.version = sdk::Str(kind.versions.front());
  object.json = sdk::Str(json);
  object.generation = 1;
  portico_process_context ctx{};
  ctx.struct_size = sizeof(ctx);
  ctx.host = &host;
  ctx.get_export = &FakeHost::GetExport;
  sdk::StringSink synced;
  sdk::StringSink status;
  sdk::StringSink export_view;
  portico_process_result result{};
  result.struct_size = sizeof(result);
  result.synced = *synced.sink();
  result.status = *status.sink();
  result.export_ = *export_view.sink();
  result.host = &host;
  result.contribute = &FakeHost::Contribute;
  sdk::StringSink error;
  Outcome out;
  EXPECT_NE(kind.hooks.process, nullptr);
  if (kind.hooks.process == nullptr) return out;
  out.code = kind.hooks.process(kind.hooks.user, &object, &ctx, &result, error.sink());
  out.error = error.take();
  out.synced = synced.take();
  out.status = status.take();
  out.export_view = export_view.take();
  return out;
}

std::string WidgetJson(const std::string& kind, int size, const std::string& widget_ref = "") {
  std::string spec = "{\"size\":" + std::to_string(size) +
                     (widget_ref.empty() ? "" : ",\"widgetRef\":\"" + widget_ref + "\"") + "}";
  return "{\"apiVersion\":\"example.portico.io/v1\",\"kind\":\"" + kind +
         "\",\"metadata\":{\"name\":\"w\",\"namespace\":\"default\"},\"spec\":" + spec + "}";
}

// CheckWidgetProcessor runs `kind`'s processor on a valid and an invalid object.
void CheckWidgetProcessor(const KindInfo& kind, const std::string& compiler, bool debug_stl) {
  FakeHost host;
  Outcome ok = RunProcess(kind, host, "w", WidgetJson(kind.id.kind, 21));
  ASSERT_EQ(ok.code, PORTICO_OK) << ok.error;
  auto synced = json::Parse(ok.synced);
  ASSERT_TRUE(synced.ok()) << ok.synced;
  EXPECT_EQ(json::GetInt(*synced, "size"), 21);
  EXPECT_EQ(json::GetInt(*synced, "doubled"), 42);
  EXPECT_EQ(json::GetInt(*synced, "parts"), 5);
  EXPECT_EQ(json::GetString(*synced, "kind"), kind.id.kind);
  EXPECT_EQ(json::GetString(*synced, "compiler"), compiler);
  ASSERT_TRUE((*synced)["debugStl"].IsBool());
  EXPECT_EQ((*synced)["debugStl"].GetBool(), debug_stl);
  EXPECT_EQ(ok.export_view, "{\"size\":21}");
  EXPECT_THAT(ok.status, HasSubstr("\"Accepted\",\"status\":\"True\""));

  Outcome bad = RunProcess(kind, host, "w", WidgetJson(kind.id.kind, -1));
  EXPECT_EQ(bad.code, PORTICO_INVALID_ARGUMENT);
  EXPECT_EQ(bad.error, kind.id.kind + " default/w: spec.size: must be >= 0");
  EXPECT_THAT(bad.synced, IsEmpty());
}

TEST(PluginLoadingTest, GoodPluginLoadsRegistersAndProcesses) {
  TempDir dir;
  std::string good = dir.AddFixture("good");
  PluginSet set = Load(dir);
  ASSERT_EQ(set.plugins.size(), 1u);
  ExpectGoodLoaded(set, good);
  EXPECT_THAT(set.RefusalLines(), IsEmpty());

  const PluginRecord& record = set.plugins[0];
  ASSERT_TRUE(record.manifest.has_value());
  EXPECT_EQ(record.manifest->name, "fixture-good");
  EXPECT_EQ(record.manifest->abi_major, static_cast<uint32_t>(PORTICO_ABI_MAJOR));
  EXPECT_EQ(record.sha256.size(), 64u);

  const KindInfo* widget = set.registry.Find(kGroup, "Widget");
  ASSERT_NE(widget, nullptr);
  EXPECT_EQ(widget->versions, std::vector<std::string>{"v1"});
  EXPECT_EQ(widget->plural, "widgets");
  EXPECT_EQ(widget->short_names, std::vector<std::string>{"wd"});
  EXPECT_EQ(widget->scope, PORTICO_SCOPE_NAMESPACED);
  EXPECT_EQ(widget->sync_policy, PORTICO_SYNC_ALWAYS);
  EXPECT_EQ(widget->capabilities & (PORTICO_CAP_PROCESSOR | PORTICO_CAP_SYNC),
            PORTICO_CAP_PROCESSOR | PORTICO_CAP_SYNC);
  EXPECT_THAT(widget->schema, HasSubstr("\"widgetRef\""));  // embedded by portico_add_plugin
  EXPECT_EQ(widget->hooks.stage, nullptr);
  for (const char* name :
       {"widget", "widgets", "wd", "Widget.example.portico.io", "widgets.example.portico.io"}) {
    auto resolved = set.registry.Resolve(name);
    ASSERT_TRUE(resolved.ok()) << name << ": " << resolved.status();
    EXPECT_EQ(*resolved, widget);
  }
  EXPECT_EQ(set.registry.Order(), std::vector<KindId>{widget->id});
  CheckWidgetProcessor(*widget, "gcc", false);
}

TEST(PluginLoadingTest, DependentKindIsOrderedAfterWhatItReadsAndReadsThroughTheHost) {
  TempDir dir;
  std::string good = dir.AddFixture("good");
  dir.AddFixture("gadget");  // sorts (and so loads) before good: reads are resolved at the end
  PluginSet set = Load(dir);
  EXPECT_THAT(set.RefusalLines(), IsEmpty());
  ExpectGoodLoaded(set, good);
  const KindInfo* gadget = set.registry.Find(kGroup, "Gadget");
  ASSERT_NE(gadget, nullptr);
  EXPECT_EQ(gadget->reads, std::vector<KindId>{KindId::Parse("Widget.example.portico.io")});
  EXPECT_EQ(set.registry.Order(), (std::vector<KindId>{{kGroup, "Widget"}, {kGroup, "Gadget"}}));

  FakeHost host;
  host.widget_exports["default/big"] = "{\"size\":99}";
  Outcome found = RunProcess(*gadget, host, "g", WidgetJson("Gadget", 1, "big"));
  ASSERT_EQ(found.code, PORTICO_OK) << found.error;
  auto synced = json::Parse(found.synced);
  ASSERT_TRUE(synced.ok());
  EXPECT_EQ(json::GetInt(*synced, "widgetSize"), 99);
  EXPECT_EQ(host.contributions,
            std::vector<std::string>{"Widget big usedBy {\"kind\":\"Gadget\"}"});

  Outcome missing = RunProcess(*gadget, host, "g", WidgetJson("Gadget", 1, "nope"));
  ASSERT_EQ(missing.code, PORTICO_OK);
  EXPECT_THAT(missing.status, HasSubstr("WidgetNotFound"));
  EXPECT_THAT(missing.synced, IsEmpty());
}

TEST(PluginLoadingTest, PureCPluginLoadsAndProcesses) {
  TempDir dir;
  std::string good = dir.AddFixture("good");
  dir.AddFixture("raw-good");
  PluginSet set = Load(dir);
  EXPECT_THAT(set.RefusalLines(), IsEmpty());
  ExpectGoodLoaded(set, good);
  const KindInfo* raw = set.registry.Find(kGroup, "RawThing");
  ASSERT_NE(raw, nullptr);
  FakeHost host;
  Outcome out = RunProcess(*raw, host, "r", "{}");
  EXPECT_EQ(out.code, PORTICO_OK);
  EXPECT_EQ(out.synced, "{\"raw\":true}");
}

TEST(PluginLoadingTest, GccDebugStlBuildLoadsAndWorks) {
  TempDir dir;
  std::string good = dir.AddFixture("good");
  dir.AddFixture("debug-widget");
  PluginSet set = Load(dir);
  EXPECT_THAT(set.RefusalLines(), IsEmpty());
  ExpectGoodLoaded(set, good);
  const KindInfo* kind = set.registry.Find(kGroup, "DebugWidget");
  ASSERT_NE(kind, nullptr);
  CheckWidgetProcessor(*kind, "gcc", true);
}

TEST(PluginLoadingTest, ClangDebugStlBuildLoadsAndWorks) {
  if (!PORTICO_HAVE_CLANG_FIXTURE) GTEST_SKIP() << "clang++ was not found at configure time";
  TempDir dir;
  std::string good = dir.AddFixture("good");
  dir.AddFixture("clang-widget");
  PluginSet set = Load(dir);
  EXPECT_THAT(set.RefusalLines(), IsEmpty());
  ExpectGoodLoaded(set, good);
  const KindInfo* kind = set.registry.Find(kGroup, "ClangWidget");
  ASSERT_NE(kind, nullptr);
  CheckWidgetProcessor(*kind, "clang", true);
  // The good (GCC) plugin in the same process is unaffected.
  CheckWidgetProcessor(*set.registry.Find(kGroup, "Widget"), "gcc", false);
}

// RefusalCase: one bad fixture loaded beside the good one.
struct RefusalCase {
  std::string fixture;
  std::vector<std::string> words;
};

void PrintTo(const RefusalCase& c, std::ostream* os) { *os << c.fixture; }

class RefusalTest : public ::testing::TestWithParam<RefusalCase> {};

TEST_P(RefusalTest, RefusedWithOneLineAndTheGoodPluginStillLoads) {
  const RefusalCase& c = GetParam();
  TempDir dir;
  std::string good = dir.AddFixture("good");
  std::string bad = dir.AddFixture(c.fixture);
  PluginSet set = Load(dir);
  ASSERT_EQ(set.plugins.size(), 2u);
  ExpectRefused(set, bad, c.words);
  ExpectGoodLoaded(set, good);
  EXPECT_EQ(set.RefusalLines().size(), 1u);
  CheckWidgetProcessor(*set.registry.Find(kGroup, "Widget"), "gcc", false);
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, RefusalTest,
    ::testing::Values(
        RefusalCase{"abi-major-manifest",
                    {"built for ABI 2.0; this host speaks 1.x; rebuild it against Portico SDK"}},
        RefusalCase{
            "abi-minor-newer",
            {"built for ABI 1.7, newer than this host's 1." + std::to_string(PORTICO_ABI_MINOR),
             "upgrade the host"}},
        RefusalCase{
            "abi-major-descriptor",
            {"descriptor says ABI 2.0 (its manifest says 1.0)", "this host speaks 1.x", "rebuild"}},
        RefusalCase{"small-descriptor",
                    {"descriptor struct_size 16 smaller than " +
                         std::to_string(sizeof(portico_plugin_v1_descriptor)),
                     "rebuild"}},
        RefusalCase{"small-kind",
                    {"registration refused: portico_kind struct_size 8 smaller than", "rebuild"}},
        RefusalCase{"widget-twin",
                    {"kind Widget.example.portico.io already provided by plugin fixture-good (",
                     "libportico-fixture-good.so)", "remove one of the two plugins"}},
        RefusalCase{"raw-twin",
                    {"registration refused: kind Widget.example.portico.io already provided by "
                     "plugin fixture-good"}},
        RefusalCase{"failing-registration",
                    {"registration failed: UNAVAILABLE: widget warehouse unreachable",
                     "fix what the plugin reports"}},
        RefusalCase{"throwing", {"registration failed: INTERNAL:", "threw: widget setup exploded"}},
        RefusalCase{"missing-entry", {"missing entry portico_plugin_v1", "PORTICO_PLUGIN"}},
        RefusalCase{"not-a-plugin",
                    {"no .portico_manifest section (not a Portico plugin)",
                     "remove the file from the plugin directory"}},
        RefusalCase{"truncated",
                    {"truncated ELF (section headers past end of file)", "reinstall or rebuild"}},
        RefusalCase{"unprovided-reads",
                    {"kind Sprocket reads Service, which no loaded plugin provides",
                     "add the plugin that provides Service"}},
        // The SDK's Kind() names the unlisted kind (a raw C plugin meets the hosts' cross-check
        // of registered and listed kinds instead: raw-twin in ctl_plugin_verify_test.cc).
        RefusalCase{"manifest-mismatch",
                    {"registration failed: INVALID_ARGUMENT: Kind(\"example.portico.io\", "
                     "\"Gremlin\"): kind Gremlin.example.portico.io is not in the plugin's "
                     "manifest.json (it lists: Gizmo.example.portico.io)",
                     "add it to \"kinds\" there"}}),
    [](const ::testing::TestParamInfo<RefusalCase>& info) {
      std::string name = info.param.fixture;
      for (char& c : name) c = c == '-' ? '_' : c;
      return name;
    });

TEST(PluginLoadingTest, RefusedRegistrationLeavesNoKindBehind) {
  TempDir dir;
  std::string good = dir.AddFixture("good");
  std::string twin = dir.AddFixture("raw-twin");  // registered RawExtra before its refusal
  PluginSet set = Load(dir);
  ExpectRefused(set, twin, {"already provided"});
  EXPECT_EQ(set.registry.Find(kGroup, "RawExtra"), nullptr);
  EXPECT_FALSE(set.registry.Resolve("rawextras").ok());
  ExpectGoodLoaded(set, good);
}

TEST(PluginLoadingTest, FilesThatAreNotElfAreRefused) {
  TempDir dir;
  std::string good = dir.AddFixture("good");
  std::string text = dir.AddFile("libportico-notes.so", "these are not the plugins\n");
  std::string empty = dir.AddFile("libportico-empty.so", "");
  dir.AddFile("README.txt", "ignored: not *.so");
  PluginSet set = Load(dir);
  ASSERT_EQ(set.plugins.size(), 3u);
  ExpectRefused(set, text, {"not an ELF shared object", "remove it from the plugin directory"});
  ExpectRefused(set, empty, {"not an ELF shared object"});
  ExpectGoodLoaded(set, good);
}

TEST(PluginLoadingTest, InvalidManifestNamesTheField) {
  // A valid ELF whose manifest lacks "plural": take the raw-good fixture and patch its manifest
  // in place (same length, so the ELF stays consistent).
  TempDir dir;
  std::string good = dir.AddFixture("good");
  auto bytes = ReadFileBytes(portico::testing::FixturePath("raw-good"));
  ASSERT_TRUE(bytes.ok());
  size_t at = bytes->find("\"plural\":\"rawthings\"");
  ASSERT_NE(at, std::string::npos);
  bytes->replace(at, 8, "\"plurax\"");
  std::string patched = dir.AddFile("libportico-patched.so", *bytes);
  PluginSet set = Load(dir);
  ExpectRefused(set, patched,
                {"invalid embedded manifest: manifest kinds[0].plural: missing",
                 "fix manifest.json and rebuild"});
  ExpectGoodLoaded(set, good);
}

TEST(PluginLoadingTest, RefusalsCascadeToKindsReadingARefusedPlugin) {
  TempDir dir;
  std::string good = dir.AddFixture("good");
  std::string unprovided = dir.AddFixture("unprovided-reads");
  std::string cascade = dir.AddFixture("cascade");
  PluginSet set = Load(dir);
  ExpectRefused(set, unprovided, {"kind Sprocket reads Service, which no loaded plugin provides"});
  ExpectRefused(set, cascade,
                {"kind Doohickey reads Sprocket.example.portico.io, whose plugin "
                 "fixture-unprovided-reads (" +
                     unprovided + ") was refused",
                 "fix that plugin first"});
  ExpectGoodLoaded(set, good);
  EXPECT_EQ(set.registry.Order(), (std::vector<KindId>{KindId{kGroup, "Widget"}}));
}

TEST(PluginLoadingTest, DependentWithoutItsProviderIsRefused) {
  TempDir dir;
  std::string gadget = dir.AddFixture("gadget");
  dir.AddFixture("truncated");  // a damaged copy of Widget's provider: its manifest is unreadable
  PluginSet set = Load(dir);
  ExpectRefused(set, gadget,
                {"kind Gadget reads Widget.example.portico.io, which no loaded plugin provides"});
}

TEST(PluginLoadingTest, ReadsCycleRefusesEveryPluginOnIt) {
  TempDir dir;
  std::string good = dir.AddFixture("good");
  std::string a = dir.AddFixture("cycle-a");
  std::string b = dir.AddFixture("cycle-b");
  PluginSet set = Load(dir);
  const std::string cycle =
      "CycleA.example.portico.io -> CycleB.example.portico.io -> CycleA.example.portico.io";
  ExpectRefused(set, a, {"kind CycleA is on a reads cycle " + cycle, "reads must be acyclic"});
  ExpectRefused(set, b, {"kind CycleB is on a reads cycle " + cycle});
  ExpectGoodLoaded(set, good);
}

TEST(PluginLoadingTest, WholeFixtureDirectory) {
  auto files = ListPluginFiles(PORTICO_FIXTURES_DIR);
  ASSERT_TRUE(files.ok()) << files.status();
  TempDir dir;
  for (const auto& file : *files) {
    std::filesystem::copy_file(file, dir.path() / file.filename());
  }
  PluginSet set = Load(dir);
  std::vector<std::string> accepted;
  for (const PluginRecord& record : set.plugins) {
    if (record.ok()) accepted.push_back(record.DisplayName());
  }
  std::vector<std::string> expected = {"fixture-debug-widget", "fixture-gadget", "fixture-good",
                                       "fixture-raw-good"};
  if (PORTICO_HAVE_CLANG_FIXTURE) expected.insert(expected.begin(), "fixture-clang-widget");
  EXPECT_EQ(accepted, expected);
  EXPECT_EQ(set.RefusalLines().size(), set.plugins.size() - expected.size());
  for (const std::string& line : set.RefusalLines()) {
    EXPECT_THAT(line, HasSubstr(dir.path().string()));
    EXPECT_THAT(line, Not(HasSubstr("\n")));
  }
  std::vector<std::string> order;
  for (const KindInfo* kind : set.registry.KindsInOrder()) order.push_back(kind->id.kind);
  std::vector<std::string> expected_order = {"DebugWidget", "RawThing", "Widget", "Gadget"};
  if (PORTICO_HAVE_CLANG_FIXTURE) expected_order.insert(expected_order.begin(), "ClangWidget");
  EXPECT_EQ(order, expected_order);
}

// The in-tree plugins (built by their owners into PORTICO_PLUGIN_OUTPUT_DIR) load for real. While
// only some are built, a refusal may only be an unresolved read of a kind not built yet.
TEST(PluginLoadingTest, InTreePluginsLoad) {
  auto files = ListPluginFiles(PORTICO_PLUGIN_OUTPUT_DIR);
  if (!files.ok() || files->empty()) {
    GTEST_SKIP() << "no in-tree plugins built in " << PORTICO_PLUGIN_OUTPUT_DIR;
  }
  TempDir dir;
  for (const auto& file : *files) {
    std::filesystem::copy_file(file, dir.path() / file.filename());
  }
  PluginSet set = Load(dir);
  size_t loaded = 0;
  for (const PluginRecord& record : set.plugins) {
    if (record.ok()) {
      ++loaded;
      continue;
    }
    EXPECT_THAT(record.reason, ::testing::ContainsRegex("reads .*(which no loaded plugin provides|"
                                                        "whose plugin .* was refused)"))
        << record.RefusalLine();
  }
  EXPECT_GT(loaded, 0u);
  EXPECT_EQ(set.registry.Order().size(), set.registry.size());
}

TEST(PluginLoadingTest, MissingDirectoryIsAnError) {
  auto set = LoadPluginDir("/nonexistent/portico/plugins");
  EXPECT_EQ(set.status().code(), StatusCode::kNotFound);
}

// Plugin faults (issue 15, item 7).

TEST(PluginLoadingTest, StaticConstructorAbortIsCaughtByTheTrialLoad) {
  TempDir dir;
  std::ifstream in(
      std::filesystem::path(PORTICO_ABORT_FIXTURES_DIR) / "libportico-fixture-ctor-aborts.so",
      std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(bytes.empty());
  std::string aborts = dir.AddFile("libportico-fixture-ctor-aborts.so", bytes);
  std::string good = dir.AddFixture("good");
  auto set = LoadPluginDir(dir.path(), LoadOptions{.trial_load_in_child = true});
  ASSERT_TRUE(set.ok()) << set.status();
  ExpectRefused(*set, aborts, {"in a child process", "signal 6", "static constructor"});
  ExpectGoodLoaded(*set, good);  // and this process is still alive
}

TEST(PluginLoadingTest, WorldWritableFileOrDirectoryIsRefused) {
  namespace fs = std::filesystem;
  TempDir dir;
  std::string good = dir.AddFixture("good");
  fs::permissions(good, fs::perms::others_write, fs::perm_options::add);
  PluginSet set = Load(dir);
  ExpectRefused(set, good, {"the file is world-writable", "chmod o-w"});
  fs::permissions(good, fs::perms::others_write, fs::perm_options::remove);
  fs::permissions(dir.path(), fs::perms::others_write, fs::perm_options::add);
  set = Load(dir);
  ExpectRefused(set, good, {"its directory " + dir.path().string() + " is world-writable"});
  fs::permissions(dir.path(), fs::perms::others_write, fs::perm_options::remove);
  ExpectGoodLoaded(Load(dir), good);
}

TEST(PluginLoadingTest, OverwritingALoadedPluginOnDiskDoesNotTouchTheRunningCode) {
  TempDir dir;
  std::string good = dir.AddFixture("good");
  PluginSet set = Load(dir);
  ExpectGoodLoaded(set, good);
  // Overwrite the file in place (same inode, as `cp new.so good.so` does): a library mapped
  // from it would now run zeros.
  size_t size = std::filesystem::file_size(good);
  {
    std::ofstream out(good, std::ios::binary | std::ios::in | std::ios::out);
    out << std::string(size, '\0');
  }
  const KindInfo* widget = set.registry.Find(kGroup, "Widget");
  ASSERT_NE(widget, nullptr);
  CheckWidgetProcessor(*widget, "gcc", false);
  // The next load sees the broken file and refuses it with a reason.
  ExpectRefused(Load(dir), good, {"not an ELF shared object"});
}

}  // namespace
}  // namespace portico::core
