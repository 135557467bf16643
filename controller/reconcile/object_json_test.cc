#include "controller/reconcile/object_json.h"

#include <gtest/gtest.h>

#include "portico/sdk/secret_data.h"

#include "controller/reconcile/object_render.h"
#include "core/common/time_format.h"

namespace portico::controller {
namespace {

rapidjson::Document Parse(const char* text) {
  rapidjson::Document doc;
  doc.Parse(text);
  EXPECT_FALSE(doc.HasParseError()) << text;
  return doc;
}

TEST(ObjectJsonTest, SpecEqualIgnoresMetadataStatusAndOrder) {
  auto a = Parse(R"({"kind":"K","metadata":{"labels":{"a":"b"}},"spec":{"x":1,"y":[1,2]}})");
  auto b = Parse(R"({"spec":{"y":[1,2],"x":1},"kind":"K","status":{"s":1},"metadata":{}})");
  auto c = Parse(R"({"kind":"K","spec":{"x":2,"y":[1,2]}})");
  auto d = Parse(R"({"kind":"K","spec":{"x":1,"y":[1,2]},"data":{"k":"v"}})");
  EXPECT_TRUE(SpecEqual(a, b));
  EXPECT_FALSE(SpecEqual(a, c));
  EXPECT_FALSE(SpecEqual(a, d));
  EXPECT_FALSE(SpecEqual(d, a));
}

TEST(ObjectJsonTest, LabelsAndStamps) {
  auto doc = Parse(R"({"metadata":{"name":"x","labels":{"a":"1","n":2},"generation":9}})");
  EXPECT_EQ(LabelsOf(doc), (std::map<std::string, std::string>{{"a", "1"}}));
  SetMetadataStamps(doc, doc.GetAllocator(), 2, "2026-11-30T12:00:00Z");
  EXPECT_EQ(json::GetInt(doc, "metadata.generation"), 2);
  EXPECT_EQ(json::GetString(doc, "metadata.creationTimestamp"), "2026-11-30T12:00:00Z");
  auto bare = Parse(R"({"kind":"K"})");
  SetMetadataStamps(bare, bare.GetAllocator(), 1, "t");
  EXPECT_EQ(json::Serialize(bare), R"({"kind":"K","metadata":{"generation":1,)"
                                   R"("creationTimestamp":"t"}})");
}

TEST(ObjectJsonTest, SecretPayloadMergesStringData) {
  auto doc = Parse(R"({"kind":"Secret","type":"kubernetes.io/tls",)"
                   R"("data":{"a":"YQ==","b":"Yg=="},"stringData":{"b":"bee"}})");
  EXPECT_EQ(SecretPayload(doc), R"({"type":"kubernetes.io/tls","data":{"a":"YQ==","b":"YmVl"}})");
  EXPECT_EQ(SecretPayload(Parse(R"({"kind":"Secret"})")), R"({"type":"Opaque","data":{}})");
}

TEST(ObjectJsonTest, RedactSecretHidesValuesAndLastApplied) {
  auto doc = Parse(
      R"({"kind":"Secret","metadata":{"name":"s","annotations":{)"
      R"("kubectl.kubernetes.io/last-applied-configuration":"{\"data\":{\"k\":\"c2VjcmV0\"}}",)"
      R"("keep":"me"}},"data":{"k":"c2VjcmV0"},"stringData":{"p":"hunter2"}})");
  RedactSecret(doc, doc.GetAllocator());
  std::string out = json::Serialize(doc);
  EXPECT_EQ(out.find("c2VjcmV0"), std::string::npos) << out;
  EXPECT_EQ(out.find("hunter2"), std::string::npos) << out;
  EXPECT_NE(out.find(R"("keep":"me")"), std::string::npos) << out;
  EXPECT_NE(out.find(R"("k":"REDACTED")"), std::string::npos) << out;
}

TEST(ObjectJsonTest, RedactSecretTextCutsQuotationsAndValues) {
  auto doc = Parse(R"({"data":{"k":"c2VjcmV0!"},"stringData":{"p":"hunter2"}})");
  EXPECT_EQ(RedactSecretText(R"(Secret a/b: data.k: must be base64 (got "c2VjcmV0!"))", doc),
            "Secret a/b: data.k: must be base64 (got REDACTED)");
  EXPECT_EQ(RedactSecretText("bad key hunter2 here", doc), "bad key REDACTED here");
}

TEST(ObjectJsonTest, Base64AndTime) {
  EXPECT_EQ(sdk::Base64Encode(""), "");
  EXPECT_EQ(sdk::Base64Encode("f"), "Zg==");
  EXPECT_EQ(sdk::Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(sdk::Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(sdk::Base64Encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(core::FormatRfc3339(1796040000000), "2026-11-30T12:00:00Z");
  EXPECT_EQ(core::FormatRfc3339(1796040000999), "2026-11-30T12:00:00Z");
  EXPECT_EQ(core::FormatRfc3339(0), "1970-01-01T00:00:00Z");
}

TEST(ObjectRenderTest, RawRenderingOfASecretIsRedacted) {
  auto doc = Parse(R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},)"
                   R"("data":{"k":"c2VjcmV0"},"status":{"x":1}})");
  std::string out = RenderRaw(sdk::ObjectRef{"", "Secret", "default", "s"}, doc, 1, "t");
  EXPECT_EQ(out, R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","generation":1,)"
                 R"("creationTimestamp":"t"},"data":{"k":"REDACTED"}})");
}

}  // namespace
}  // namespace portico::controller
