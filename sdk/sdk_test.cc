// sdk_test: the header-only SDK's value types (Status, StatusOr, lists, JSON helpers).
#include <gtest/gtest.h>

#include "portico/sdk/json.h"
#include "portico/sdk/plugin.h"
#include "portico/sdk/status.h"
#include "portico/sdk/timestamp.h"
#include "portico/sdk/types.h"

namespace portico {
namespace {

TEST(StatusTest, CodesAndMessages) {
  Status ok;
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.ToString(), "OK");
  Status bad = InvalidArgumentError("HTTPRoute default/web: spec.rules[0]: bad");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.ToString(), "INVALID_ARGUMENT: HTTPRoute default/web: spec.rules[0]: bad");
  EXPECT_EQ(bad.WithPrefix("file a.yaml").message(), "file a.yaml: HTTPRoute default/web: spec.rules[0]: bad");
}

StatusOr<int> Half(int v) {
  if (v % 2 != 0) return InvalidArgumentError("odd");
  return v / 2;
}

Status UseHalf(int v, int* out) {
  PORTICO_ASSIGN_OR_RETURN(*out, Half(v));
  return OkStatus();
}

TEST(StatusOrTest, ValueOrError) {
  int out = 0;
  EXPECT_TRUE(UseHalf(4, &out).ok());
  EXPECT_EQ(out, 2);
  Status s = UseHalf(3, &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  StatusOr<int> from_ok_status = OkStatus();
  EXPECT_FALSE(from_ok_status.ok());  // an OK status without value is a bug, reported as INTERNAL
  EXPECT_EQ(from_ok_status.status().code(), StatusCode::kInternal);
}

TEST(ListTest, SplitAndJoinRoundTrip) {
  EXPECT_EQ(sdk::SplitList(" v1, v1beta1,,"), (std::vector<std::string>{"v1", "v1beta1"}));
  EXPECT_EQ(sdk::JoinList({"a", "b"}), "a,b");
  EXPECT_TRUE(sdk::SplitList("").empty());
}

TEST(JsonTest, PathsAndErrors) {
  auto doc = json::Parse(R"({"metadata":{"name":"web","generation":3}})");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(json::GetString(*doc, "metadata.name"), "web");
  EXPECT_EQ(json::GetInt(*doc, "metadata.generation"), 3);
  EXPECT_EQ(json::FindPath(*doc, "metadata.missing.x"), nullptr);
  auto bad = json::Parse("{\"a\":", "routes.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("routes.yaml"), std::string::npos);
}

TEST(TimestampTest, Rfc3339ToUnixMs) {
  EXPECT_EQ(*sdk::ParseTimestampUnixMs("2023-11-14T22:13:20Z"), 1700000000000);
  EXPECT_EQ(*sdk::ParseTimestampUnixMs("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(*sdk::ParseTimestampUnixMs("2023-11-14T22:13:20.25Z"), 1700000000250);
  EXPECT_EQ(*sdk::ParseTimestampUnixMs("2023-11-15T00:13:20+02:00"), 1700000000000);
  EXPECT_EQ(*sdk::ParseTimestampUnixMs("2024-02-29T00:00:00Z"), 1709164800000);
  for (const char* bad :
       {"", "yesterday", "2023-11-14", "2023-13-14T22:13:20Z", "2023-11-14T22:13:20",
        "2023-11-14T22:13:20.Z", "2023-11-14T22:13:20+2"}) {
    StatusOr<int64_t> parsed = sdk::ParseTimestampUnixMs(bad);
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(sdk::ParseTimestampUnixMs("soon").status().message(),
            "\"soon\" is not an RFC 3339 time");
}

TEST(TimestampTest, CreatedUnixMsOrdersByAge) {
  EXPECT_EQ(*sdk::CreatedUnixMs("2023-11-14T22:13:20Z"), 1700000000000);
  EXPECT_EQ(*sdk::CreatedUnixMs(""), sdk::kUnknownCreatedUnixMs);  // absent: the youngest
  EXPECT_GT(sdk::kUnknownCreatedUnixMs, *sdk::CreatedUnixMs("2999-12-31T23:59:59Z"));
  EXPECT_EQ(*sdk::CreatedUnixMs("1960-01-01T00:00:00Z"), 0);  // never below 0
  EXPECT_EQ(sdk::CreatedUnixMs("soon").status().message(),
            "metadata.creationTimestamp: \"soon\" is not an RFC 3339 time");
}

TEST(ManifestTest, KindSpecFromManifestEntry) {
  auto doc = json::Parse(R"({"group":"g.io","kind":"Thing","versions":["v1"],"plural":"things",
      "shortNames":["th"],"scope":"Cluster","reads":["Secret"],"capabilities":["processor","handler"],
      "sync":"toReferrers"})");
  ASSERT_TRUE(doc.ok());
  auto spec = sdk::KindSpecFromManifest(*doc);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->plural, "things");
  EXPECT_EQ(spec->scope, PORTICO_SCOPE_CLUSTER);
  EXPECT_EQ(spec->capabilities, PORTICO_CAP_PROCESSOR | PORTICO_CAP_HANDLER);
  EXPECT_EQ(spec->sync_policy, PORTICO_SYNC_TO_REFERRERS);
  auto bad = json::Parse(R"({"kind":"Thing","capabilities":["teleport"]})");
  auto rejected = sdk::KindSpecFromManifest(*bad);
  ASSERT_FALSE(rejected.ok());
  EXPECT_NE(rejected.status().message().find("teleport"), std::string::npos);
}

TEST(PluginTest, KindTheManifestLacksFailsRegistrationNamingIt) {
  sdk::Plugin plugin;
  ASSERT_TRUE(plugin
                  .LoadManifest(R"({"kinds":[{"group":"g.io","kind":"Thing","versions":["v1"],
                      "plural":"things"}]})")
                  .ok());
  EXPECT_EQ(plugin.Kind("g.io", "Thing").plural, "things");
  EXPECT_TRUE(plugin.errors().empty());
  plugin.Kind("g.io", "Thingy")
      .Process(
          [](const sdk::Object&, sdk::ProcessContext&, sdk::ProcessResult&) { return OkStatus(); });
  ASSERT_EQ(plugin.errors().size(), 1u);
  EXPECT_EQ(plugin.errors()[0],
            "Kind(\"g.io\", \"Thingy\"): kind Thingy.g.io is not in the plugin's manifest.json (it "
            "lists: Thing.g.io); add it to \"kinds\" there, or fix the group or kind passed to "
            "Kind()");
  EXPECT_EQ(plugin.kinds().size(), 1u);                    // the unlisted kind is never registered
  portico_registrar registrar{sizeof(portico_registrar)};  // never reached: the error comes first
  Status status = sdk::detail::RegisterAll(plugin, &registrar);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("Thingy.g.io is not in the plugin's manifest.json"),
            std::string::npos);
}

TEST(PluginTest, WithoutAManifestKindDeclaresAFreshSpec) {
  sdk::Plugin plugin;
  plugin.Kind("g.io", "Thing").Versions({"v1"});
  EXPECT_TRUE(plugin.errors().empty());
  ASSERT_EQ(plugin.kinds().size(), 1u);
  EXPECT_EQ(plugin.kinds()[0].versions, std::vector<std::string>{"v1"});
}

}  // namespace
}  // namespace portico
