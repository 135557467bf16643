// fields.h: FieldError, RequiredString and Quoted, the field helpers plugins use to read the JSON
// they wrote themselves (synced views, contributions) and to name the field at fault when it is not
// the shape they expect. Header-only.
// Threading: pure functions.
#ifndef PORTICO_SDK_FIELDS_H_
#define PORTICO_SDK_FIELDS_H_

#include <string>
#include <string_view>

#include "portico/sdk/json.h"
#include "portico/sdk/status.h"

namespace portico::sdk {

// FieldError is INVALID_ARGUMENT "<field>: <what>".
inline Status FieldError(const std::string& field, const std::string& what) {
  return InvalidArgumentError(field + ": " + what);
}

// Quoted renders `s` in double quotes, as messages name a value: spec.path: "/x" is not ...
inline std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

// RequiredString returns member `key` of `obj`, a non-empty string, or an error naming
// "<field>.<key>" (just `key` when `field` is empty).
inline StatusOr<std::string> RequiredString(const rapidjson::Value& obj, const char* key,
                                            const std::string& field) {
  const rapidjson::Value* v = json::Find(obj, key);
  if (v == nullptr || !v->IsString() || v->GetStringLength() == 0) {
    return FieldError(field.empty() ? key : field + "." + key, "must be a non-empty string");
  }
  return std::string(v->GetString(), v->GetStringLength());
}

}  // namespace portico::sdk

#endif  // PORTICO_SDK_FIELDS_H_
