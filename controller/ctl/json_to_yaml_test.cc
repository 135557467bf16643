// json_to_yaml_test.cc: -o yaml output reads back as the same JSON values.
#include "controller/ctl/json_to_yaml.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

namespace portico::ctl {
namespace {

TEST(JsonToYamlTest, RendersBlockYamlThatReadsBack) {
  auto doc = json::Parse(R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"web",
    "labels":{"on":"true","port":"8080","empty":""}},"spec":{"ports":[{"port":8080}],
    "selector":{},"list":[],"ratio":0.5,"flag":false,"none":null,
    "pem":"-----BEGIN-----\nabc\n-----END-----\n"}})");
  ASSERT_TRUE(doc.ok());
  std::string yaml = JsonToYaml(*doc);
  EXPECT_EQ(yaml.rfind("apiVersion: v1\nkind: Service\n", 0), 0u) << yaml;
  YAML::Node node = YAML::Load(yaml);
  EXPECT_EQ(node["metadata"]["labels"]["on"].as<std::string>(), "true");
  EXPECT_EQ(node["metadata"]["labels"]["port"].Tag(), "!");  // quoted: stays a string
  EXPECT_EQ(node["metadata"]["labels"]["empty"].as<std::string>(), "");
  EXPECT_EQ(node["spec"]["ports"][0]["port"].as<int>(), 8080);
  EXPECT_EQ(node["spec"]["ports"][0]["port"].Tag(), "?");  // plain: a number
  EXPECT_TRUE(node["spec"]["selector"].IsMap());
  EXPECT_TRUE(node["spec"]["list"].IsSequence());
  EXPECT_EQ(node["spec"]["ratio"].as<double>(), 0.5);
  EXPECT_FALSE(node["spec"]["flag"].as<bool>());
  EXPECT_TRUE(node["spec"]["none"].IsNull());
  EXPECT_EQ(node["spec"]["pem"].as<std::string>(), "-----BEGIN-----\nabc\n-----END-----\n");
}

TEST(JsonToYamlTest, QuotesWhatWouldChangeType) {
  for (const char* s : {"", "true", "No", "null", "~", "8080", "-1.5e3", "0x1F", " padded",
                        "2024-05-01T12:00:00Z"}) {
    EXPECT_TRUE(NeedsQuotes(s)) << s;
  }
  for (const char* s : {"web", "gateway.networking.k8s.io/v1", "v1", "Accepted"}) {
    EXPECT_FALSE(NeedsQuotes(s)) << s;
  }
}

}  // namespace
}  // namespace portico::ctl
