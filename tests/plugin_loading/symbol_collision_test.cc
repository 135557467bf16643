// A plugin exporting a symbol the host exports too (issue 15 item 7). What happens, proven on a
// raw dlopen: RTLD_LOCAL keeps the host's own calls on the host's copy, but the plugin's calls to
// its own exported function go through the global scope, where the host comes first, so the
// plugin runs the host's code. Hence the loader's pre-flight refuses such a plugin.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/plugin/plugin_loader.h"

// The host's copy (exported from this test binary by the linker: CMakeLists.txt).
extern "C" __attribute__((visibility("default"), noinline)) int portico_host_collision_probe() {
  return 1;
}

namespace portico::core {
namespace {

using ::testing::HasSubstr;

const std::string kFixture =
    std::string(PORTICO_COLLISION_FIXTURES_DIR) + "/libportico-fixture-host-collision.so";

TEST(SymbolCollisionTest, RtldLocalKeepsTheHostsSymbolButThePluginRunsTheHostsCopy) {
  void* handle = dlopen(kFixture.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto plugin_probe = reinterpret_cast<int (*)()>(dlsym(handle, "portico_host_collision_probe"));
  auto plugin_calls = reinterpret_cast<int (*)()>(dlsym(handle, "portico_fixture_calls_probe"));
  ASSERT_NE(plugin_probe, nullptr);
  ASSERT_NE(plugin_calls, nullptr);
  EXPECT_EQ(plugin_probe(), 2);  // the plugin's own definition exists...
  EXPECT_EQ(plugin_calls(), 1);  // ...but its call to it binds to the host's copy
  // The host is unaffected: its calls and the global scope still find its own.
  EXPECT_EQ(portico_host_collision_probe(), 1);
  EXPECT_EQ(reinterpret_cast<void*>(dlsym(RTLD_DEFAULT, "portico_host_collision_probe")),
            reinterpret_cast<void*>(&portico_host_collision_probe));
  // Never dlclose'd: the hosts never unload plugins either.
}

TEST(SymbolCollisionTest, TheLoaderRefusesAPluginExportingAHostSymbol) {
  PluginSet set = LoadPluginFiles({kFixture});
  ASSERT_EQ(set.plugins.size(), 1u);
  const PluginRecord& record = set.plugins[0];
  EXPECT_FALSE(record.ok());
  EXPECT_FALSE(record.loaded);
  EXPECT_THAT(record.reason, HasSubstr("exports portico_host_collision_probe, which the host "
                                       "binary exports too"));
  EXPECT_THAT(record.reason, HasSubstr("-fvisibility=hidden"));
  EXPECT_EQ(set.registry.Find("example.portico.io", "RawThing"), nullptr);
  // Its other export (no collision) is not named: only what collides is the reason.
  EXPECT_THAT(record.reason, ::testing::Not(HasSubstr("portico_fixture_calls_probe")));
}

}  // namespace
}  // namespace portico::core
