#include "core/common/json_metaschema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace portico::core {
namespace {

using ::testing::HasSubstr;

std::string Schema(const std::string& spec) {
  return R"({"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
             "definitions": {"name": {"type": "string", "pattern": "^[a-z]+$"}},
             "properties": {"spec": )" +
         spec + "}}";
}

TEST(JsonMetaschemaTest, SupportedDraft04Passes) {
  Status s = CheckSupportedSchema(
      Schema(R"({"type": "object", "required": ["a"], "additionalProperties": false,
                 "properties": {"a": {"$ref": "#/definitions/name"},
                                "n": {"type": ["integer", "null"], "minimum": 0, "default": 1},
                                "l": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                                "m": {"type": "object", "additionalProperties": {"type": "string"}},
                                "o": {"oneOf": [{"required": ["x"]}, {"required": ["y"]}]},
                                "e": {"enum": ["A", "B"], "description": "one of two"}}})"),
      "test schema");
  EXPECT_TRUE(s.ok()) << s;
}

TEST(JsonMetaschemaTest, KeywordsTheValidatorIgnoresAreRefusedWhereTheyAre) {
  struct Case {
    std::string spec;
    std::string words;
  };
  for (const Case& c : std::vector<Case>{
           {R"({"type": "integer", "const": 3})", "properties.spec: unknown field \"const\""},
           {R"({"type": "string", "format": "uri"})", "unknown field \"format\""},
           {R"({"type": "object", "patternProperties": {"^x": {}}})", "\"patternProperties\""},
           {R"({"type": "object", "requried": ["a"]})", "unknown field \"requried\""},
           {R"({"if": {}, "then": {}})", "unknown field"},
           {R"({"type": "strnig"})", "properties.spec.type"},
           {R"({"type": "object", "properties": {"a": {"minLength": -1}}})", "minLength"},
       }) {
    Status s = CheckSupportedSchema(Schema(c.spec), "test schema");
    EXPECT_FALSE(s.ok()) << c.spec;
    EXPECT_THAT(s.message(), HasSubstr("test schema: ")) << c.spec;
    EXPECT_THAT(s.message(), HasSubstr(c.words)) << c.spec;
  }
}

TEST(JsonMetaschemaTest, WhatTheMetaschemaCannotSeeTheCompilerRefuses) {
  Status s = CheckSupportedSchema(Schema(R"({"type": "string", "pattern": "\\d+"})"), "x");
  EXPECT_FALSE(s.ok());
  s = CheckSupportedSchema(Schema(R"({"$ref": "#/definitions/missing"})"), "x");
  EXPECT_FALSE(s.ok());
  EXPECT_FALSE(CheckSupportedSchema("not json", "x").ok());
}

}  // namespace
}  // namespace portico::core
