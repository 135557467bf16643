// yaml_to_json_test: typing of scalars, several documents, and refusals with file:line.
#include "controller/center/yaml_to_json.h"

#include <gtest/gtest.h>

#include "portico/sdk/json.h"

namespace portico::controller {
namespace {

TEST(YamlToJsonTest, TypesPlainScalarsAndKeepsQuotedStrings) {
  auto docs =
      ParseYamlDocuments("a: 1\nb: \"1\"\nc: true\nd: 'true'\ne: ~\nf: 1.5\ng: web\n", "x.yaml");
  ASSERT_TRUE(docs.ok()) << docs.status();
  ASSERT_EQ(docs->size(), 1u);
  EXPECT_EQ(json::Serialize((*docs)[0].json),
            R"({"a":1,"b":"1","c":true,"d":"true","e":null,"f":1.5,"g":"web"})");
}

TEST(YamlToJsonTest, SeveralDocumentsWithLines) {
  auto docs = ParseYamlDocuments("kind: A\n---\n---\nkind: B\n", "x.yaml");
  ASSERT_TRUE(docs.ok()) << docs.status();
  ASSERT_EQ(docs->size(), 2u);
  EXPECT_EQ(json::GetString((*docs)[1].json, "kind"), "B");
  EXPECT_EQ((*docs)[1].line, 4);
}

TEST(YamlToJsonTest, SyntaxErrorNamesFileAndLine) {
  auto docs = ParseYamlDocuments("a: 1\nb: [1, 2\n", "routes.yaml");
  ASSERT_FALSE(docs.ok());
  EXPECT_NE(docs.status().message().find("routes.yaml:"), std::string::npos) << docs.status();
}

TEST(YamlToJsonTest, DuplicateKeyRefused) {
  auto docs = ParseYamlDocuments("a: 1\na: 2\n", "d.yaml");
  ASSERT_FALSE(docs.ok());
  EXPECT_NE(docs.status().message().find("d.yaml:2:1: duplicate key \"a\""), std::string::npos)
      << docs.status();
}

TEST(YamlToJsonTest, AliasBombRefused) {
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'j'; ++c, ++prev) {
    bomb += std::string(1, c) + ": &" + c + " [*" + prev + ", *" + prev + ", *" + prev + ", *" +
            prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev +
            ", *" + prev + "]\n";
  }
  YamlLimits limits;
  limits.max_nodes = 100'000;  // the bomb expands to 10^10 nodes; stop early, quickly
  auto docs = ParseYamlDocuments(bomb, "bomb.yaml", limits);
  ASSERT_FALSE(docs.ok());
  EXPECT_NE(docs.status().message().find("alias bomb"), std::string::npos) << docs.status();
}

TEST(YamlToJsonTest, DeepNestingRefused) {
  std::string deep(200, '[');
  deep += std::string(200, ']');
  auto docs = ParseYamlDocuments(deep, "deep.yaml");
  ASSERT_FALSE(docs.ok());
  EXPECT_NE(docs.status().message().find("nesting deeper"), std::string::npos) << docs.status();
}

TEST(YamlToJsonTest, AliasesExpandPerDocument) {
  auto docs = ParseYamlDocuments(
      "base: &b {port: 80, tags: [a, b]}\nx: *b\nk: &k name\n*k : v\n---\nother: 1\n", "a.yaml");
  ASSERT_TRUE(docs.ok()) << docs.status();
  ASSERT_EQ(docs->size(), 2u);
  EXPECT_EQ(json::Serialize((*docs)[0].json),
            R"({"base":{"port":80,"tags":["a","b"]},"x":{"port":80,"tags":["a","b"]},)"
            R"("k":"name","name":"v"})");
  EXPECT_EQ((*docs)[1].line, 6);
  // Anchors do not cross documents.
  EXPECT_FALSE(ParseYamlDocuments("a: &x 1\n---\nb: *x\n", "a.yaml").ok());
}

TEST(YamlToJsonTest, RefusesNonScalarKeysAndSelfReferences) {
  auto complex_key = ParseYamlDocuments("? [a, b]\n: v\n", "k.yaml");
  ASSERT_FALSE(complex_key.ok());
  EXPECT_NE(complex_key.status().message().find("map keys must be scalars"), std::string::npos);
  auto loop = ParseYamlDocuments("a: &a [1, *a]\n", "loop.yaml");
  ASSERT_FALSE(loop.ok());
  EXPECT_NE(loop.status().message().find("loop.yaml:1:"), std::string::npos) << loop.status();
}

TEST(YamlToJsonTest, DuplicateKeyInALargeMap) {
  std::string map;
  for (int i = 0; i < 100; ++i) map += "k" + std::to_string(i) + ": " + std::to_string(i) + "\n";
  ASSERT_TRUE(ParseYamlDocuments(map, "big.yaml").ok());
  auto docs = ParseYamlDocuments(map + "k42: again\n", "big.yaml");
  ASSERT_FALSE(docs.ok());
  EXPECT_NE(docs.status().message().find("big.yaml:101:1: duplicate key \"k42\""),
            std::string::npos)
      << docs.status();
}

TEST(YamlToJsonTest, AliasBombRefusedBeforeExpanding) {
  // 10^12 nodes: refused from the anchors' sizes, with the default limits, without expanding.
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'l'; ++c, ++prev) {
    std::string p = std::string("*") + prev;
    bomb += std::string(1, c) + ": &" + c + " [" + p + ", " + p + ", " + p + ", " + p + ", " + p +
            ", " + p + ", " + p + ", " + p + ", " + p + ", " + p + "]\n";
  }
  auto docs = ParseYamlDocuments(bomb, "bomb.yaml");
  ASSERT_FALSE(docs.ok());
  EXPECT_NE(docs.status().message().find("more than 1000000 nodes (alias bomb?)"),
            std::string::npos)
      << docs.status();
}

}  // namespace
}  // namespace portico::controller
