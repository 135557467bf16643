// json_metaschema.h: CheckSupportedSchema, whether a kind's JSON Schema is one the host's
// validator (json_schema.h) implements: draft-04 checked against its meta-schema, restricted to
// the keywords RapidJSON 1.1 enforces, then compiled as the host compiles it.
//
// A keyword the validator does not implement would be ignored silently, so an object the plugin
// author meant to refuse would reach the processor: "const", "if"/"then"/"else", "examples"
// (draft-06 and later), "format" (not checked), "patternProperties" (checked wrongly) and any
// unknown or misspelt keyword ("requried") are refused, naming the schema location.
// Thread-safety: a pure function.
#ifndef PORTICO_CORE_COMMON_JSON_METASCHEMA_H_
#define PORTICO_CORE_COMMON_JSON_METASCHEMA_H_

#include <string_view>

#include "portico/sdk/status.h"

namespace portico::core {

// CheckSupportedSchema returns OK when `schema_json` is a draft-04 schema using only supported
// keywords and compiles; else INVALID_ARGUMENT "<what>: <location>: <problem>".
Status CheckSupportedSchema(std::string_view schema_json, std::string_view what);

// SupportedMetaschema is the meta-schema CheckSupportedSchema validates against (JSON text).
std::string_view SupportedMetaschema();

}  // namespace portico::core

#endif  // PORTICO_CORE_COMMON_JSON_METASCHEMA_H_
