#include "core/plugin/manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "core/plugin/preflight.h"
#include "portico/sdk/json.h"

namespace portico::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kGateway[] = R"({
  "name": "gateway", "version": "0.1.0", "description": "Gateway API Gateway and GatewayClass",
  "manifestVersion": 1, "abi": {"major": 1, "minor": 0}, "sdkVersion": "0.1.0",
  "kinds": [
    {"group": "gateway.networking.k8s.io", "kind": "Gateway", "versions": ["v1", "v1beta1"],
     "plural": "gateways", "shortNames": ["gtw"], "scope": "Namespaced",
     "reads": ["GatewayClass.gateway.networking.k8s.io", "Secret"],
     "capabilities": ["processor", "sync", "handler"], "sync": "always",
     "schema": "schemas/gateway.json"},
    {"group": "gateway.networking.k8s.io", "kind": "GatewayClass", "versions": ["v1"],
     "plural": "gatewayclasses", "scope": "Cluster"}
  ]})";

// ParseEdited parses kGateway, applies `edit` and returns the error of parsing the result.
template <typename Edit>
Status ParseEdited(Edit edit) {
  auto doc = json::Parse(kGateway);
  EXPECT_TRUE(doc.ok());
  edit(*doc, doc->GetAllocator());
  auto parsed = ParseManifest(json::Serialize(*doc));
  return parsed.ok() ? OkStatus() : parsed.status();
}

TEST(ManifestTest, ParsesTheDocumentedExample) {
  auto m = ParseManifest(kGateway);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->name, "gateway");
  EXPECT_EQ(m->version, "0.1.0");
  EXPECT_EQ(m->description, "Gateway API Gateway and GatewayClass");
  EXPECT_EQ(m->sdk_version, "0.1.0");
  EXPECT_EQ(m->manifest_version, 1);
  EXPECT_EQ(m->abi_major, 1u);
  EXPECT_EQ(m->abi_minor, 0u);
  ASSERT_EQ(m->kinds.size(), 2u);
  const ManifestKind& gw = m->kinds[0];
  EXPECT_EQ(gw.id, (KindId{"gateway.networking.k8s.io", "Gateway"}));
  EXPECT_THAT(gw.versions, ElementsAre("v1", "v1beta1"));
  EXPECT_EQ(gw.plural, "gateways");
  EXPECT_THAT(gw.short_names, ElementsAre("gtw"));
  EXPECT_EQ(gw.scope, PORTICO_SCOPE_NAMESPACED);
  EXPECT_THAT(gw.reads, ElementsAre(KindId{"gateway.networking.k8s.io", "GatewayClass"},
                                    KindId{"", "Secret"}));
  EXPECT_THAT(gw.capabilities, ElementsAre("processor", "sync", "handler"));
  EXPECT_EQ(gw.capability_bits, PORTICO_CAP_PROCESSOR | PORTICO_CAP_SYNC | PORTICO_CAP_HANDLER);
  EXPECT_EQ(gw.sync_policy, PORTICO_SYNC_ALWAYS);
  EXPECT_EQ(gw.schema, "schemas/gateway.json");
  const ManifestKind& gc = m->kinds[1];
  EXPECT_EQ(gc.scope, PORTICO_SCOPE_CLUSTER);
  EXPECT_EQ(gc.sync_policy, PORTICO_SYNC_NEVER);  // the default
  EXPECT_TRUE(gc.reads.empty());
}

TEST(ManifestTest, ErrorsNameTheField) {
  struct Case {
    std::string want;
    std::function<void(rapidjson::Document&, rapidjson::Document::AllocatorType&)> edit;
  };
  std::vector<Case> cases = {
      {"manifest name: missing", [](auto& d, auto&) { d.RemoveMember("name"); }},
      {"manifest name: expected a non-empty string", [](auto& d, auto&) { d["name"].SetInt(3); }},
      {"manifest name: \"two words\" contains white space",
       [](auto& d, auto&) { d["name"].SetString("two words"); }},
      {"manifest version: missing", [](auto& d, auto&) { d.RemoveMember("version"); }},
      {"manifest sdkVersion: missing", [](auto& d, auto&) { d.RemoveMember("sdkVersion"); }},
      {"manifest manifestVersion: missing",
       [](auto& d, auto&) { d.RemoveMember("manifestVersion"); }},
      {"manifest manifestVersion: 2 is newer than this host reads (1)",
       [](auto& d, auto&) { d["manifestVersion"].SetInt(2); }},
      {"manifest abi: missing", [](auto& d, auto&) { d.RemoveMember("abi"); }},
      {"manifest abi.major: missing", [](auto& d, auto&) { d["abi"].RemoveMember("major"); }},
      {"manifest abi.minor: expected a non-negative 32-bit integer",
       [](auto& d, auto&) { d["abi"]["minor"].SetInt(-1); }},
      {"manifest kinds: missing", [](auto& d, auto&) { d.RemoveMember("kinds"); }},
      {"manifest kinds: expected an array", [](auto& d, auto&) { d["kinds"].SetObject(); }},
      {"manifest kinds[1]: expected an object",
       [](auto& d, auto&) { d["kinds"][1].SetString("Gateway"); }},
      {"manifest kinds[0].kind: missing",
       [](auto& d, auto&) { d["kinds"][0].RemoveMember("kind"); }},
      {"manifest kinds[0].kind: \"gateway\" is not a kind name",
       [](auto& d, auto&) { d["kinds"][0]["kind"].SetString("gateway"); }},
      {"manifest kinds[0].group: \"Gateway.API\" is not an API group",
       [](auto& d, auto&) { d["kinds"][0]["group"].SetString("Gateway.API"); }},
      {"manifest kinds[0].versions: expected a non-empty array of strings",
       [](auto& d, auto&) { d["kinds"][0]["versions"].SetArray(); }},
      {"manifest kinds[1].versions: missing",
       [](auto& d, auto&) { d["kinds"][1].RemoveMember("versions"); }},
      {"manifest kinds[0].versions[1]: expected a non-empty string",
       [](auto& d, auto&) { d["kinds"][0]["versions"][1].SetInt(1); }},
      {"manifest kinds[1].plural: missing",
       [](auto& d, auto&) { d["kinds"][1].RemoveMember("plural"); }},
      {"manifest kinds[0].plural: \"Gateways\" must be lower-case",
       [](auto& d, auto&) { d["kinds"][0]["plural"].SetString("Gateways"); }},
      {"manifest kinds[0].shortNames[0]: \"GTW\" must be lower-case",
       [](auto& d, auto&) { d["kinds"][0]["shortNames"][0].SetString("GTW"); }},
      {"manifest kinds[0].scope: \"Global\" (expected Namespaced or Cluster)",
       [](auto& d, auto&) { d["kinds"][0]["scope"].SetString("Global"); }},
      {"manifest kinds[0].reads[1]: \"secret\" is not \"Kind.group\" or \"Kind\"",
       [](auto& d, auto&) { d["kinds"][0]["reads"][1].SetString("secret"); }},
      {"manifest kinds[0].capabilities[2]: unknown capability \"teleport\"",
       [](auto& d, auto&) { d["kinds"][0]["capabilities"][2].SetString("teleport"); }},
      {"manifest kinds[0].sync: \"sometimes\" (expected never, always, toReferrers or attached)",
       [](auto& d, auto&) { d["kinds"][0]["sync"].SetString("sometimes"); }},
      {"manifest kinds[1]: kind GatewayClass.gateway.networking.k8s.io is listed twice",
       [](auto& d, auto&) { d["kinds"][0]["kind"].SetString("GatewayClass"); }},
  };
  for (auto& c : cases) {
    Status status = ParseEdited(c.edit);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << c.want;
    EXPECT_THAT(status.message(), HasSubstr(c.want));
  }
}

TEST(ManifestTest, LibrariesAreSonames) {
  auto with = [](const std::string& libraries) {
    return ParseManifest(R"({"name":"x","version":"1","manifestVersion":1,)"
                         R"("abi":{"major":1,"minor":0},"sdkVersion":"0.1.0",)"
                         R"("libraries":)" +
                         libraries + R"(,"kinds":[]})");
  };
  auto ok = with(R"(["libcrypto.so.3", "libz.so.1"])");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_THAT(ok->libraries, ElementsAre("libcrypto.so.3", "libz.so.1"));
  EXPECT_THAT(with(R"(["/usr/lib/libz.so.1"])").status().message(),
              HasSubstr("manifest libraries[0]: \"/usr/lib/libz.so.1\" is not a library soname"));
  EXPECT_THAT(with(R"(["crypto"])").status().message(), HasSubstr("libraries[0]"));
  EXPECT_THAT(with(R"("libz.so.1")").status().message(), HasSubstr("libraries"));
}

TEST(ManifestTest, RejectsNonObjectsAndBadJson) {
  EXPECT_THAT(ParseManifest("[1,2]").status().message(), HasSubstr("expected a JSON object"));
  EXPECT_THAT(ParseManifest("{\"name\":").status().message(), HasSubstr("invalid JSON"));
  EXPECT_THAT(ParseManifest("").status().message(), HasSubstr("invalid JSON"));
}

TEST(ManifestTest, EmptyKindsAndCoreGroup) {
  auto m = ParseManifest(R"({"name":"filters","version":"1","manifestVersion":1,
      "abi":{"major":1,"minor":0},"sdkVersion":"0.1.0","kinds":[
      {"kind":"Secret","versions":["v1"],"plural":"secrets"}]})");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->kinds[0].id, (KindId{"", "Secret"}));
}

TEST(KindIdTest, ParseAndToStringRoundTrip) {
  EXPECT_EQ(KindId::Parse("GatewayClass.gateway.networking.k8s.io"),
            (KindId{"gateway.networking.k8s.io", "GatewayClass"}));
  EXPECT_EQ(KindId::Parse("Secret"), (KindId{"", "Secret"}));
  EXPECT_EQ((KindId{"", "Secret"}).ToString(), "Secret");
  EXPECT_EQ((KindId{"example.portico.io", "Widget"}).ToString(), "Widget.example.portico.io");
  EXPECT_LT((KindId{"", "Secret"}), (KindId{"a", "A"}));  // group first
}

TEST(CapabilitiesTest, NamesAndBits) {
  EXPECT_EQ(CapabilityBit("routeFilter"), PORTICO_CAP_ROUTE_FILTER);
  EXPECT_EQ(CapabilityBit("nope"), 0u);
  EXPECT_THAT(CapabilityNames(PORTICO_CAP_PROCESSOR | PORTICO_CAP_REFERENCE_POLICY),
              ElementsAre("processor", "referencePolicy"));
}

TEST(PreflightTest, AbiVerdicts) {
  EXPECT_TRUE(CheckAbi(PORTICO_ABI_MAJOR, PORTICO_ABI_MINOR).ok());
  Status major = CheckAbi(PORTICO_ABI_MAJOR + 1, 0);
  EXPECT_THAT(major.message(), HasSubstr("built for ABI 2.0; this host speaks 1.x; rebuild it "
                                         "against Portico SDK"));
  Status minor = CheckAbi(PORTICO_ABI_MAJOR, PORTICO_ABI_MINOR + 1);
  EXPECT_THAT(minor.message(), HasSubstr("newer than this host's"));

  PluginRecord record;
  record.manifest = *ParseManifest(kGateway);
  EXPECT_EQ(record.AbiVerdict(), "1.0 ok");
  record.manifest->abi_major = 2;
  EXPECT_EQ(record.AbiVerdict(), "2.0 incompatible");
  record.manifest.reset();
  record.path = "/x/libportico-y.so";
  EXPECT_EQ(record.AbiVerdict(), "<none>");
  EXPECT_EQ(record.DisplayName(), "libportico-y.so");
}

TEST(PreflightTest, ScanningAMissingDirectoryIsAnError) {
  auto records = ScanPluginDir("/nonexistent/plugins");
  EXPECT_EQ(records.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace portico::core
