#include "core/common/json_schema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace portico::core {
namespace {

using ::testing::HasSubstr;

// A small schema exercising every keyword the error renderer knows.
constexpr const char* kSchema = R"json({
  "$schema": "http://json-schema.org/draft-04/schema#",
  "definitions": {
    "pathMatch": {
      "type": "object",
      "additionalProperties": false,
      "default": {"type": "PathPrefix", "value": "/"},
      "properties": {
        "type": {"enum": ["Exact", "PathPrefix", "RegularExpression"], "default": "PathPrefix"},
        "value": {"type": "string", "maxLength": 8, "default": "/"}
      }
    },
    "group": {"type": "string", "pattern": "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]+)*)?$",
              "default": ""},
    "hostname": {"type": "string", "title": "a lower-case hostname", "pattern": "^[a-z.]+$"}
  },
  "type": "object",
  "required": ["kind", "spec"],
  "additionalProperties": false,
  "properties": {
    "kind": {"enum": ["Thing"]},
    "metadata": {
      "type": "object",
      "properties": {
        "labels": {
          "type": "object",
          "maxProperties": 2,
          "additionalProperties": {"type": "string", "maxLength": 5}
        }
      }
    },
    "spec": {
      "type": "object",
      "additionalProperties": false,
      "required": ["name"],
      "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 10},
        "hostnames": {"type": "array", "maxItems": 2, "items": {"$ref": "#/definitions/hostname"}},
        "port": {"type": "integer", "minimum": 1, "maximum": 65535},
        "ratio": {"type": "number", "minimum": 0, "exclusiveMinimum": true},
        "targetPort": {"type": ["integer", "string"], "minimum": 1, "pattern": "^[a-z]+$"},
        "tags": {"type": "array", "minItems": 1, "uniqueItems": true, "items": {"type": "string"}},
        "parentGroup": {"$ref": "#/definitions/group", "default": "example.io"},
        "backendGroup": {"$ref": "#/definitions/group"},
        "target": {
          "type": "object",
          "properties": {"service": {"type": "string"}, "url": {"type": "string"}},
          "oneOf": [{"required": ["service"]}, {"required": ["url"]}]
        },
        "path": {
          "type": "string",
          "anyOf": [
            {"pattern": "^/", "description": "start with \"/\""},
            {"pattern": "^\\*$", "description": "be \"*\""}
          ],
          "not": {"pattern": "//", "description": "contain \"//\""}
        },
        "rules": {
          "type": "array",
          "items": {
            "type": "object",
            "additionalProperties": false,
            "properties": {
              "matches": {
                "type": "array",
                "default": [{"path": {"type": "PathPrefix", "value": "/"}}],
                "items": {
                  "type": "object",
                  "additionalProperties": false,
                  "properties": {
                    "path": {"$ref": "#/definitions/pathMatch"},
                    "headers": {"type": "array", "items": {"type": "object"}}
                  }
                }
              },
              "weight": {"type": "integer", "default": 1}
            }
          }
        }
      }
    }
  }
})json";

SchemaValidator MustCompile(const char* schema = kSchema) {
  StatusOr<SchemaValidator> v = SchemaValidator::Compile(schema, "test.json");
  EXPECT_TRUE(v.ok()) << v.status();
  return std::move(v).value();
}

rapidjson::Document MustParse(std::string_view text) {
  StatusOr<rapidjson::Document> doc = json::Parse(text);
  EXPECT_TRUE(doc.ok()) << doc.status();
  return std::move(doc).value();
}

// Error validates `text` and returns the error message ("" when valid).
std::string Error(const SchemaValidator& v, std::string_view text,
                  std::string_view name = "Thing default/x") {
  rapidjson::Document doc = MustParse(text);
  Status s = v.Validate(doc, name);
  if (s.ok()) return "";
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  return s.message();
}

TEST(SchemaValidatorCompileTest, RejectsInvalidJson) {
  StatusOr<SchemaValidator> v = SchemaValidator::Compile("{\"type\": ", "schemas/x.json");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(v.status().message(), HasSubstr("schemas/x.json: invalid JSON at offset"));
}

TEST(SchemaValidatorCompileTest, RejectsNonObject) {
  StatusOr<SchemaValidator> v = SchemaValidator::Compile("[]", "schemas/x.json");
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.status().message(), HasSubstr("must be an object"));
}

TEST(SchemaValidatorCompileTest, RejectsPatternsRapidJsonCannotCompile) {
  for (const char* pattern : {R"(^\\d+$)", R"(^[a-z\\-]+$)", R"(^(?:a|b)$)", R"(^a\\/b$)"}) {
    std::string schema = std::string(R"({"properties": {"a": {"pattern": ")") + pattern + R"("}}})";
    StatusOr<SchemaValidator> v = SchemaValidator::Compile(schema, "x.json");
    ASSERT_FALSE(v.ok()) << pattern;
    EXPECT_THAT(v.status().message(), HasSubstr("x.json: #/properties/a/pattern: pattern"));
  }
  StatusOr<SchemaValidator> keys = SchemaValidator::Compile(
      R"({"properties": {"m": {"patternProperties": {"^[a-z]+$": {}}}}})", "x.json");
  ASSERT_FALSE(keys.ok());
  EXPECT_THAT(keys.status().message(),
              HasSubstr("x.json: #/properties/m/patternProperties: not supported"));
}

TEST(SchemaValidatorCompileTest, ChecksSchemasNotData) {
  // A property named like a keyword is still a schema; "enum" and "default" hold data.
  StatusOr<SchemaValidator> prop = SchemaValidator::Compile(
      R"({"properties": {"default": {"type": "string", "pattern": "^\\d$"}}})", "x");
  ASSERT_FALSE(prop.ok());
  EXPECT_THAT(prop.status().message(), HasSubstr("#/properties/default/pattern"));
  StatusOr<SchemaValidator> items = SchemaValidator::Compile(
      R"json({"items": [{"not": {"anyOf": [{"pattern": "(?:x)"
}]
}
}]
})json",
      "x");
  ASSERT_FALSE(items.ok());
  EXPECT_THAT(items.status().message(), HasSubstr("#/items/0/not/anyOf/0/pattern"));
  EXPECT_TRUE(SchemaValidator::Compile(
                  R"({"enum": [{"pattern": "^\\d$"}], "default": {"$ref": "nowhere"}})", "x")
                  .ok());
}

TEST(SchemaValidatorCompileTest, RejectsDanglingAndRemoteRefs) {
  StatusOr<SchemaValidator> dangling =
      SchemaValidator::Compile(R"({"properties": {"a": {"$ref": "#/definitions/nope"}}})", "x");
  ASSERT_FALSE(dangling.ok());
  EXPECT_THAT(dangling.status().message(), HasSubstr("#/properties/a/$ref"));
  StatusOr<SchemaValidator> remote =
      SchemaValidator::Compile(R"({"$ref": "http://example.com/s.json"})", "x");
  ASSERT_FALSE(remote.ok());
  EXPECT_THAT(remote.status().message(), HasSubstr("only local references"));
}

TEST(SchemaValidatorCompileTest, AcceptsSupportedPatterns) {
  // The Gateway API patterns in the form our schemas use them.
  SchemaValidator v = MustCompile(R"json({"properties": {
    "d": {"pattern": "^([0-9]{1,5}(h|m|s|ms)){1,4}$"},
    "h": {"pattern": "^[A-Za-z0-9!#$%&'*+.^_`|~-]+$"},
    "o": {"pattern": "(^\\*$)|(^([a-zA-Z][a-zA-Z0-9+.-]+)://([^:/?#]+)(:([0-9]{1,5}))?$)"}}})json");
  EXPECT_EQ(Error(v, R"({"d": "1h30m", "h": "X-Header_1", "o": "https://a.example:8443"})"), "");
  EXPECT_THAT(Error(v, R"({"d": "1.5s"})"), HasSubstr("d: must match"));
  EXPECT_THAT(Error(v, R"({"d": "1h1m1s1ms1h"})"), HasSubstr("d: must match"));
  EXPECT_THAT(Error(v, R"({"h": "a:b"})"), HasSubstr("h: must match"));
  EXPECT_THAT(Error(v, R"({"o": "https://"})"), HasSubstr("o: must match"));
  EXPECT_EQ(Error(v, R"({"o": "*"})"), "");
}

TEST(SchemaValidatorTest, ValidDocumentPasses) {
  SchemaValidator v = MustCompile();
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "metadata": {"labels": {"a.b/c": "x"}},
      "spec": {"name": "n", "hostnames": ["a.b"], "port": 80, "targetPort": "http",
               "rules": [{"matches": [{"path": {"type": "Exact", "value": "/x"}}]}],
               "target": {"url": "u"}, "path": "/a/b"}})"),
            "");
}

TEST(SchemaValidatorTest, EnumNamesPathAndAllowedValues) {
  SchemaValidator v = MustCompile();
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "spec": {"name": "n",
      "rules": [{"matches": [{"path": {"type": "Exact"}}, {"path": {"type": "Prefix"}}]}]}})",
                  "HTTPRoute default/web"),
            "HTTPRoute default/web: spec.rules[0].matches[1].path.type: must be one of \"Exact\", "
            "\"PathPrefix\", \"RegularExpression\" (got \"Prefix\")");
}

TEST(SchemaValidatorTest, Type) {
  SchemaValidator v = MustCompile();
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "spec": {"name": 5}})"),
            "Thing default/x: spec.name: must be a string (got 5)");
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "spec": {"name": "n", "rules": {}}})"),
            "Thing default/x: spec.rules: must be an array (got an object)");
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "spec": {"name": "n", "targetPort": true}})"),
            "Thing default/x: spec.targetPort: must be an integer or a string (got true)");
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "spec": {"name": "n", "port": 8.5}})"),
            "Thing default/x: spec.port: must be an integer (got 8.5)");
}

TEST(SchemaValidatorTest, RootErrorsHaveNoPath) {
  SchemaValidator v = MustCompile();
  EXPECT_EQ(Error(v, "[]"), "Thing default/x: must be an object (got an array)");
  EXPECT_EQ(Error(v, R"({"kind": "Thing"})"), "Thing default/x: missing required field \"spec\"");
  EXPECT_EQ(Error(v, R"({})"), "Thing default/x: missing required fields \"kind\", \"spec\"");
  EXPECT_EQ(Error(v, R"({"kind": "Thing"})", ""), "missing required field \"spec\"");
}

TEST(SchemaValidatorTest, Required) {
  SchemaValidator v = MustCompile();
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "spec": {"port": 1}})"),
            "Thing default/x: spec: missing required field \"name\"");
}

TEST(SchemaValidatorTest, UnknownFieldSuggestsCloseName) {
  SchemaValidator v = MustCompile();
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "spec": {"name": "n", "hostnmes": []}})"),
            "Thing default/x: spec: unknown field \"hostnmes\" (did you mean \"hostnames\"?)");
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "spec": {"name": "n", "rules": [{"matchs": []}]}})"),
            "Thing default/x: spec.rules[0]: unknown field \"matchs\" (did you mean "
            "\"matches\"?)");
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "spec": {"name": "n", "rules": [{"zzzzzz": 1}]}})"),
            "Thing default/x: spec.rules[0]: unknown field \"zzzzzz\"; known fields: matches, "
            "weight");
}

TEST(SchemaValidatorTest, Pattern) {
  SchemaValidator v = MustCompile();
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "spec": {"name": "n", "hostnames": ["ok", "B@d"]}})"),
            "Thing default/x: spec.hostnames[1]: must be a lower-case hostname, matching "
            "^[a-z.]+$ (got \"B@d\")");
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "spec": {"name": "n", "targetPort": "HTTP"}})"),
            "Thing default/x: spec.targetPort: must match ^[a-z]+$ (got \"HTTP\")");
}

TEST(SchemaValidatorTest, Ranges) {
  SchemaValidator v = MustCompile();
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "spec": {"name": "n", "port": 0}})"),
            "Thing default/x: spec.port: must be >= 1 (got 0)");
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "spec": {"name": "n", "port": 70000}})"),
            "Thing default/x: spec.port: must be <= 65535 (got 70000)");
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "spec": {"name": "n", "ratio": 0}})"),
            "Thing default/x: spec.ratio: must be > 0 (got 0)");
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "spec": {"name": "n", "targetPort": 0}})"),
            "Thing default/x: spec.targetPort: must be >= 1 (got 0)");
}

TEST(SchemaValidatorTest, Lengths) {
  SchemaValidator v = MustCompile();
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "spec": {"name": ""}})"),
            "Thing default/x: spec.name: must be at least 1 character long (got 0: \"\")");
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "spec": {"name": "abcdefghijk"}})"),
            "Thing default/x: spec.name: must be at most 10 characters long (got 11)");
  // Lengths count code points, not bytes.
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "spec": {"name": "ééééééééé"}})"), "");
}

TEST(SchemaValidatorTest, ItemsAndProperties) {
  SchemaValidator v = MustCompile();
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "spec": {"name": "n", "hostnames": ["a", "b", "c"]}})"),
            "Thing default/x: spec.hostnames: must have at most 2 items (got 3)");
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "spec": {"name": "n", "tags": []}})"),
            "Thing default/x: spec.tags: must have at least 1 item (got 0)");
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "spec": {"name": "n", "tags": ["a", "a"]}})"),
            "Thing default/x: spec.tags[1]: must be unique within the list (got \"a\")");
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "metadata": {"labels": {"a": "1", "b": "2", "c": "3"}},
                        "spec": {"name": "n"}})"),
            "Thing default/x: metadata.labels: must have at most 2 entries (got 3)");
}

TEST(SchemaValidatorTest, MapKeysThatAreNotPlainNamesAreBracketed) {
  SchemaValidator v = MustCompile();
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "metadata": {"labels": {"app.io/name": "toolong"}},
                        "spec": {"name": "n"}})"),
            "Thing default/x: metadata.labels[\"app.io/name\"]: must be at most 5 characters long "
            "(got 7)");
}

TEST(SchemaValidatorTest, OneOfRequiredAlternatives) {
  SchemaValidator v = MustCompile();
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "spec": {"name": "n", "target": {}}})"),
            "Thing default/x: spec.target: exactly one of \"service\", \"url\" must be set (got "
            "none)");
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "spec": {"name": "n",
                        "target": {"service": "s", "url": "u"}}})"),
            "Thing default/x: spec.target: exactly one of \"service\", \"url\" must be set (got "
            "\"service\" and \"url\")");
}

TEST(SchemaValidatorTest, AnyOfAndNotUseDescriptions) {
  SchemaValidator v = MustCompile();
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "spec": {"name": "n", "path": "x"}})"),
            "Thing default/x: spec.path: must satisfy at least one of: start with \"/\"; be "
            "\"*\"");
  EXPECT_EQ(Error(v, R"({"kind": "Thing", "spec": {"name": "n", "path": "/a//b"}})"),
            "Thing default/x: spec.path: must not contain \"//\" (got \"/a//b\")");
}

TEST(SchemaValidatorTest, LongValuesAreTruncated) {
  SchemaValidator v = MustCompile();
  std::string long_value(500, 'x');
  std::string message = Error(v, R"({"kind": "Other", "spec": {"name": "n"}})");
  EXPECT_EQ(message, "Thing default/x: kind: must be \"Thing\" (got \"Other\")");
  message = Error(v, R"({"kind": ")" + long_value + R"(", "spec": {"name": "n"}})");
  EXPECT_THAT(message, HasSubstr("xxx...)"));
  EXPECT_LT(message.size(), 200u);
}

// Lines renders Violations() as "field: reason" lines.
std::vector<std::string> Lines(const SchemaValidator& v, std::string_view text) {
  rapidjson::Document doc = MustParse(text);
  std::vector<std::string> out;
  for (const SchemaViolation& violation : v.Violations(doc)) {
    out.push_back(violation.field.empty() ? violation.reason
                                          : violation.field + ": " + violation.reason);
  }
  return out;
}

TEST(SchemaViolationsTest, EveryViolationInDocumentOrder) {
  SchemaValidator v = MustCompile();
  EXPECT_THAT(
      Lines(v, R"({"kind": "Thing", "spec": {"name": 5, "port": 70000, "hostnames": ["ok", "B@d"],
                  "rules": [{"matchs": []},
                            {"matches": [{"path": {"type": "Exact"}}, {"path": {"type": "P"}}]}],
                  "tags": ["a", "a"], "target": {}}})"),
      ::testing::ElementsAre(
          "spec.name: must be a string (got 5)", "spec.port: must be <= 65535 (got 70000)",
          "spec.hostnames[1]: must be a lower-case hostname, matching ^[a-z.]+$ (got \"B@d\")",
          "spec.rules[0]: unknown field \"matchs\" (did you mean \"matches\"?)",
          "spec.rules[1].matches[1].path.type: must be one of \"Exact\", \"PathPrefix\", "
          "\"RegularExpression\" (got \"P\")",
          "spec.tags[1]: must be unique within the list (got \"a\")",
          "spec.target: exactly one of \"service\", \"url\" must be set (got none)"));
  EXPECT_THAT(Lines(v, R"({"spec": {"port": 0}, "extra": 1})"),
              ::testing::ElementsAre("spec.port: must be >= 1 (got 0)",
                                     "spec: missing required field \"name\"",
                                     "unknown field \"extra\"; known fields: kind, metadata, spec",
                                     "missing required field \"kind\""));
  EXPECT_TRUE(Lines(v, R"({"kind": "Thing", "spec": {"name": "n"}})").empty());
}

TEST(SchemaViolationsTest, ASingleFailureIsWhatValidateSays) {
  SchemaValidator v = MustCompile();
  for (const char* text : {
           R"({"kind": "Thing", "spec": {"name": "n", "hostnames": ["a", "b", "c"]}})",
           R"({"kind": "Thing", "spec": {"name": "n", "tags": ["a", "a"]}})",
           R"({"kind": "Thing", "spec": {"name": "n", "path": "/a//b"}})",
           R"({"kind": "Thing", "spec": {"name": "n", "path": "x"}})",
           R"({"kind": "Thing", "spec": {"name": "n", "targetPort": true}})",
           R"({"kind": "Thing", "spec": {"name": "n", "port": 8.5}})",
           R"({"kind": "Thing", "spec": {"name": "n", "ratio": 0}})",
           R"({"kind": "Thing", "metadata": {"labels": {"app.io/name": "toolong"}},
               "spec": {"name": "n"}})",
           R"({"kind": "Thing", "spec": {"name": "n", "target": {"service": "s", "url": "u"}}})",
           "[]",
       }) {
    std::vector<std::string> lines = Lines(v, text);
    ASSERT_EQ(lines.size(), 1u) << text;
    EXPECT_EQ(lines[0], Error(v, text, "")) << text;
  }
  EXPECT_EQ(v.Violations(MustParse(R"({"spec": {"port": 0}, "extra": 1})"), 2).size(), 2u);
}

TEST(SchemaValidatorDefaultsTest, FillsNestedDefaultsWhereParentsExist) {
  SchemaValidator v = MustCompile();
  rapidjson::Document doc = MustParse(R"({"kind": "Thing", "spec": {"name": "n",
      "rules": [{}, {"matches": [{}, {"path": {"type": "Exact"}}], "weight": 5}]}})");
  v.ApplyDefaults(doc);
  EXPECT_EQ(json::Serialize(doc["spec"]["rules"]),
            R"([{"matches":[{"path":{"type":"PathPrefix","value":"/"}}],"weight":1},)"
            R"({"matches":[{"path":{"type":"PathPrefix","value":"/"}},)"
            R"({"path":{"type":"Exact","value":"/"}}],"weight":5}])");
  // A default next to a "$ref" wins over the definition's; otherwise the definition's applies.
  EXPECT_EQ(json::GetString(doc, "spec.parentGroup"), "example.io");
  EXPECT_EQ(json::GetString(doc, "spec.backendGroup", "absent"), "");
  // No parent object is invented: metadata had no default.
  EXPECT_EQ(json::Find(doc, "metadata"), nullptr);
  EXPECT_EQ(v.Validate(doc, "Thing default/x"), OkStatus());
}

TEST(SchemaValidatorDefaultsTest, ReplacesNullAndKeepsGivenValues) {
  SchemaValidator v = MustCompile();
  rapidjson::Document doc = MustParse(
      R"({"kind": "Thing", "spec": {"name": "n", "parentGroup": null, "backendGroup": "x.io"}})");
  v.ApplyDefaults(doc);
  EXPECT_EQ(json::GetString(doc, "spec.parentGroup"), "example.io");
  EXPECT_EQ(json::GetString(doc, "spec.backendGroup"), "x.io");
}

TEST(SchemaValidatorDefaultsTest, LeavesMistypedPartsForValidate) {
  SchemaValidator v = MustCompile();
  rapidjson::Document doc = MustParse(R"({"kind": "Thing", "spec": {"name": "n",
      "rules": [7, {"matches": "all"}]}})");
  v.ApplyDefaults(doc);
  EXPECT_EQ(json::Serialize(doc["spec"]["rules"]), R"([7,{"matches":"all","weight":1}])");
  EXPECT_THAT(v.Validate(doc, "T").message(), HasSubstr("T: spec.rules[0]: must be an object"));
}

TEST(SchemaValidatorTest, ConcurrentValidateIsSafe) {
  SchemaValidator v = MustCompile();
  rapidjson::Document good = MustParse(R"({"kind": "Thing", "spec": {"name": "n",
      "hostnames": ["a.b", "c.d"], "targetPort": "http", "path": "/a/b"}})");
  rapidjson::Document bad = MustParse(R"({"kind": "Thing", "spec": {"name": "n",
      "hostnames": ["a.b", "C.d"]}})");
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, copy = v] {
      for (int i = 0; i < 300; ++i) {
        if (!copy.Validate(good, "T").ok()) ++failures;
        if (copy.Validate(bad, "T").message().find("spec.hostnames[1]") == std::string::npos) {
          ++failures;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace portico::core
