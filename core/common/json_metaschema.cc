#include "core/common/json_metaschema.h"

#include <string>

#include "core/common/json_schema.h"
#include "portico/sdk/json.h"

namespace portico::core {
namespace {

// The draft-04 meta-schema (http://json-schema.org/draft-04/schema), with every schema object
// closed to the keywords json_schema.h implements ("additionalProperties": false), without
// "format" and "patternProperties".
constexpr std::string_view kMetaschema = R"JSON({
  "$schema": "http://json-schema.org/draft-04/schema#",
  "description": "draft-04 schemas as Portico's validator implements them",
  "definitions": {
    "schemaArray": {"type": "array", "minItems": 1, "items": {"$ref": "#"}},
    "positiveInteger": {"type": "integer", "minimum": 0},
    "simpleTypes": {"enum": ["array", "boolean", "integer", "null", "number", "object", "string"]},
    "stringArray": {"type": "array", "items": {"type": "string"}, "minItems": 1,
                    "uniqueItems": true},
    "schemaMap": {"type": "object", "additionalProperties": {"$ref": "#"}}
  },
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "id": {"type": "string"},
    "$schema": {"enum": ["http://json-schema.org/draft-04/schema#",
                         "http://json-schema.org/draft-04/schema"]},
    "$ref": {"type": "string"},
    "title": {"type": "string"},
    "description": {"type": "string"},
    "default": {},
    "multipleOf": {"type": "number", "minimum": 0, "exclusiveMinimum": true},
    "maximum": {"type": "number"},
    "exclusiveMaximum": {"type": "boolean"},
    "minimum": {"type": "number"},
    "exclusiveMinimum": {"type": "boolean"},
    "maxLength": {"$ref": "#/definitions/positiveInteger"},
    "minLength": {"$ref": "#/definitions/positiveInteger"},
    "pattern": {"type": "string"},
    "additionalItems": {"anyOf": [{"type": "boolean"}, {"$ref": "#"}]},
    "items": {"anyOf": [{"$ref": "#"}, {"$ref": "#/definitions/schemaArray"}]},
    "maxItems": {"$ref": "#/definitions/positiveInteger"},
    "minItems": {"$ref": "#/definitions/positiveInteger"},
    "uniqueItems": {"type": "boolean"},
    "maxProperties": {"$ref": "#/definitions/positiveInteger"},
    "minProperties": {"$ref": "#/definitions/positiveInteger"},
    "required": {"$ref": "#/definitions/stringArray"},
    "additionalProperties": {"anyOf": [{"type": "boolean"}, {"$ref": "#"}]},
    "definitions": {"$ref": "#/definitions/schemaMap"},
    "properties": {"$ref": "#/definitions/schemaMap"},
    "dependencies": {"type": "object", "additionalProperties": {
        "anyOf": [{"$ref": "#"}, {"$ref": "#/definitions/stringArray"}]}},
    "enum": {"type": "array", "minItems": 1, "uniqueItems": true},
    "type": {"anyOf": [
        {"$ref": "#/definitions/simpleTypes"},
        {"type": "array", "items": {"$ref": "#/definitions/simpleTypes"}, "minItems": 1,
         "uniqueItems": true}]},
    "allOf": {"$ref": "#/definitions/schemaArray"},
    "anyOf": {"$ref": "#/definitions/schemaArray"},
    "oneOf": {"$ref": "#/definitions/schemaArray"},
    "not": {"$ref": "#"}
  },
  "dependencies": {"exclusiveMaximum": ["maximum"], "exclusiveMinimum": ["minimum"]}
})JSON";

}  // namespace

std::string_view SupportedMetaschema() { return kMetaschema; }

Status CheckSupportedSchema(std::string_view schema_json, std::string_view what) {
  PORTICO_ASSIGN_OR_RETURN(SchemaValidator meta,
                           SchemaValidator::Compile(kMetaschema, "the supported meta-schema"));
  PORTICO_ASSIGN_OR_RETURN(rapidjson::Document doc, json::Parse(schema_json, std::string(what)));
  PORTICO_RETURN_IF_ERROR(meta.Validate(doc, what));
  return SchemaValidator::Compile(schema_json, what).status();
}

}  // namespace portico::core
