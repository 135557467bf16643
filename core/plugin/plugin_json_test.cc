// plugin_json_test.cc: the plugin records' JSON renders and parses back to the same records.
#include "core/plugin/plugin_json.h"

#include <gtest/gtest.h>

namespace portico::core {
namespace {

PluginRecord GoodRecord() {
  PluginRecord r;
  r.path = "/plugins/libportico-gateway.so";
  r.sha256 = std::string(64, 'a');
  core::PluginManifest m;
  m.name = "gateway";
  m.version = "0.1.0";
  m.description = "Gateway API Gateway";
  m.sdk_version = "0.1.0";
  m.manifest_version = 1;
  m.abi_major = 1;
  m.abi_minor = 0;
  core::ManifestKind k;
  k.id = {"gateway.networking.k8s.io", "Gateway"};
  k.versions = {"v1", "v1beta1"};
  k.plural = "gateways";
  k.short_names = {"gtw"};
  k.reads = {core::KindId::Parse("GatewayClass.gateway.networking.k8s.io"),
             core::KindId::Parse("Secret")};
  k.capabilities = {"processor", "sync"};
  k.capability_bits = core::CapabilityBit("processor") | core::CapabilityBit("sync");
  k.sync_policy = PORTICO_SYNC_ALWAYS;
  m.kinds.push_back(k);
  r.manifest = m;
  return r;
}

PluginRecord RefusedRecord() {
  PluginRecord r;
  r.path = "/plugins/libbroken.so";
  r.Reject("no .portico_manifest section; build it with portico_add_plugin()");
  return r;
}

TEST(PluginJsonTest, RoundTripRendersTheSameRecords) {
  std::vector<PluginRecord> records = {GoodRecord(), RefusedRecord()};
  std::string text = RenderPluginsJson(records, /*pretty=*/false);
  auto doc = json::Parse(text);
  ASSERT_TRUE(doc.ok()) << doc.status();
  auto parsed = ParsePluginsJson(*doc);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ(RenderPluginsJson(*parsed, true), RenderPluginsJson(records, true));
  EXPECT_FALSE((*parsed)[1].ok());
  EXPECT_FALSE((*parsed)[1].manifest.has_value());
  EXPECT_EQ((*parsed)[0].manifest->kinds[0].sync_policy, PORTICO_SYNC_ALWAYS);
}

TEST(PluginJsonTest, RejectsWrongShapes) {
  auto doc = json::Parse(R"({"name":"x"})");
  ASSERT_TRUE(doc.ok());
  EXPECT_FALSE(ParsePluginsJson(*doc).ok());
  auto bad = json::Parse(R"([{"name":"x","version":"1","kinds":7}])");
  ASSERT_TRUE(bad.ok());
  auto parsed = ParsePluginsJson(*bad);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("plugins[0].kinds"), std::string::npos);
}

}  // namespace
}  // namespace portico::core
