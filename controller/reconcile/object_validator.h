// object_validator.h: ObjectValidator, the first step of the reconcile pipeline: identify an
// object's kind from apiVersion/kind, check the version is served, apply the schema's defaults
// and validate it against the kind's JSON Schema (DESIGN.md §3), before any processor runs.
//
// Thread-safety: built once from a KindRegistry, then const; Validate may run concurrently.
// Ownership: keeps pointers into the KindRegistry, which must outlive it.
#ifndef PORTICO_CONTROLLER_RECONCILE_OBJECT_VALIDATOR_H_
#define PORTICO_CONTROLLER_RECONCILE_OBJECT_VALIDATOR_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "controller/center/config_center.h"
#include "core/common/json_schema.h"
#include "core/plugin/kind_registry.h"
#include "portico/sdk/json.h"
#include "portico/sdk/status.h"
#include "portico/sdk/types.h"

namespace portico::controller {

// ValidatedObject is an object that passed validation, with its kind and identity.
struct ValidatedObject {
  const core::KindInfo* kind = nullptr;
  std::string version;  // from apiVersion
  sdk::ObjectRef ref;
};

class ObjectValidator {
 public:
  // Create compiles the schema of every kind in `registry`; a schema that does not compile is
  // an error naming the kind and its plugin.
  static StatusOr<ObjectValidator> Create(const core::KindRegistry& registry);

  // Validate identifies `doc`'s kind, defaults it in place and validates it. Errors name the
  // object ("HTTPRoute default/web") and the field; an unknown kind names the apiVersion/kind
  // and says which plugins are loaded.
  // With `violations`, a document failing its schema gets every violation listed there and in
  // the error's message (joined by "; "), not only the first.
  StatusOr<ValidatedObject> Validate(rapidjson::Document& doc,
                                     std::vector<FieldViolation>* violations = nullptr) const;

 private:
  explicit ObjectValidator(const core::KindRegistry* registry) : registry_(registry) {}

  const core::KindRegistry* registry_;
  std::map<core::KindId, core::SchemaValidator> schemas_;
};

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_RECONCILE_OBJECT_VALIDATOR_H_
