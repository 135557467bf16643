// json_schema_messages.h: the wording of JSON Schema failures shared by SchemaValidator's
// first-failure report (json_schema.cc) and its every-violation walk (json_schema_violations.cc),
// so that both say the same thing about the same field. Internal to core/common.
//
// Thread-safety: pure functions over the caller's values.
#ifndef PORTICO_CORE_COMMON_JSON_SCHEMA_MESSAGES_H_
#define PORTICO_CORE_COMMON_JSON_SCHEMA_MESSAGES_H_

#include <string>
#include <string_view>

#include "portico/sdk/json.h"

namespace portico::core::schema_text {

std::string_view View(const rapidjson::Value& v);
// Member finds `name` in an object value; nullptr when `v` is null, not an object or lacks it.
const rapidjson::Value* Member(const rapidjson::Value* v, std::string_view name);
// Quote renders a value as (truncated) JSON; QuoteString a string.
std::string Quote(const rapidjson::Value& v);
std::string QuoteString(std::string_view s);
// CodePoints counts a UTF-8 string's code points (what minLength/maxLength count).
size_t CodePoints(const rapidjson::Value& v);
// IsPlainName: a map key rendered as ".key" in field paths (others as ["key"]).
bool IsPlainName(std::string_view s);
// Resolve follows local "$ref"s ("#/definitions/x") from `node`; nullptr when one dangles.
const rapidjson::Value* Resolve(const rapidjson::Value& root, const rapidjson::Value* node);
// Reason renders why `inst` failed `keyword` of the schema node `schema`; `last_token` is the
// unknown member's name for "additionalProperties".
std::string Reason(std::string_view keyword, const rapidjson::Value* schema,
                   const rapidjson::Value* inst, std::string_view last_token);

}  // namespace portico::core::schema_text

#endif  // PORTICO_CORE_COMMON_JSON_SCHEMA_MESSAGES_H_
