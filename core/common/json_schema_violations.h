// json_schema_violations.h: CollectViolations, a walk of a draft-04 schema beside a document
// that reports every failure instead of the first (RapidJSON 1.1 stops at the first and has no
// way to go on). It follows RapidJSON 1.1's semantics for the keywords SchemaValidator accepts
// (local "$ref"s, constraints beside a "$ref" ignored, "pattern" on RapidJSON's regex engine,
// "integer" only for integral JSON numbers, no "format"), and words each failure with
// schema_text::Reason, like SchemaValidator::Validate. Internal to core/common: callers use
// SchemaValidator::Violations, which lets RapidJSON decide validity.
//
// "anyOf", "oneOf" and "not" are judged as a whole (one violation at their field, as RapidJSON
// reports them); everything else is descended into, so two bad fields are two violations.
//
// Thread-safety: pure function over the caller's values.
#ifndef PORTICO_CORE_COMMON_JSON_SCHEMA_VIOLATIONS_H_
#define PORTICO_CORE_COMMON_JSON_SCHEMA_VIOLATIONS_H_

#include <cstddef>
#include <vector>

#include "core/common/json_schema.h"
#include "portico/sdk/json.h"

namespace portico::core::schema_text {

// CollectViolations lists at most `max` failures of `doc` against the schema `root`, in
// document order.
std::vector<SchemaViolation> CollectViolations(const rapidjson::Value& root,
                                               const rapidjson::Value& doc, size_t max);

}  // namespace portico::core::schema_text

#endif  // PORTICO_CORE_COMMON_JSON_SCHEMA_VIOLATIONS_H_
