// apply_documents.h: PrepareApply, the admin API's apply check: parse the request body (YAML or
// JSON, one or more documents) and validate every document (identify, schema, defaults) with
// the ObjectValidator BEFORE anything is written, so a bad document never reaches the config
// source and the answer names every document at fault. Also ContentHash, the fingerprint that
// tells whether a document differs from what the config source last delivered.
//
// Thread-safety: pure functions (the validator is const and thread-safe).
#ifndef PORTICO_CONTROLLER_ADMIN_APPLY_DOCUMENTS_H_
#define PORTICO_CONTROLLER_ADMIN_APPLY_DOCUMENTS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "controller/center/object_limits.h"
#include "controller/center/yaml_to_json.h"
#include "controller/reconcile/object_validator.h"
#include "portico/sdk/json.h"
#include "portico/sdk/status.h"

namespace portico::controller::admin {

// PreparedObject is one validated document of an apply request.
struct PreparedObject {
  ValidatedObject validated;
  std::string api_version;
  int line = 1;  // where the document starts in the body
  // ContentHash of the document as written (before defaults): equal to the hash of what the
  // config source delivers once it has read the document back.
  uint64_t content_hash = 0;
};

// PrepareApply: see the file comment. INVALID_ARGUMENT when the body does not parse, holds no
// document, a document is not an object, the same object twice, or documents that fail
// validation (one line each, with every schema violation: "document 2 (line 14): HTTPRoute
// default/web: spec.a: ...; spec.b: ...") or are over `objects` (as the config source would
// refuse them). NOT_FOUND when every failure is an unknown kind.
StatusOr<std::vector<PreparedObject>> PrepareApply(std::string_view body,
                                                   const ObjectValidator& validator,
                                                   const YamlLimits& limits = {},
                                                   const ObjectLimits& objects = {});

// ContentHash fingerprints a document (its compact JSON serialization), leaving out
// metadata.resourceVersion and metadata.creationTimestamp, which config sources stamp.
uint64_t ContentHash(const rapidjson::Value& doc);

}  // namespace portico::controller::admin

#endif  // PORTICO_CONTROLLER_ADMIN_APPLY_DOCUMENTS_H_
