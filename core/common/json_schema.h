// json_schema.h: JSON Schema (draft-04) validation of whole resource objects, with errors that
// name the object and the field, and Kubernetes-style defaulting from the schema's "default"s.
//
// Every kind ships a draft-04 schema of the whole object (DESIGN.md §3). The host compiles it
// once per kind with SchemaValidator::Compile and, for each object, calls ApplyDefaults (as the
// Kubernetes API server defaults before it validates) and then Validate, before the processor.
//
// Thread-safety: a compiled SchemaValidator is immutable from the caller's point of view; all
// its methods are const and may run concurrently on any thread. Copies share the same state.
#ifndef PORTICO_CORE_COMMON_JSON_SCHEMA_H_
#define PORTICO_CORE_COMMON_JSON_SCHEMA_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "portico/sdk/json.h"
#include "portico/sdk/status.h"

namespace portico::core {

// SchemaViolation is one failure of an object against its schema.
struct SchemaViolation {
  std::string field;   // "spec.rules[0].matches[0].path.type"; "" for the object itself
  std::string reason;  // "must be one of "Exact", "PathPrefix" (got "Prefix")"
  friend bool operator==(const SchemaViolation&, const SchemaViolation&) = default;
};

// SchemaValidator checks objects against one draft-04 JSON Schema with RapidJSON's validator and
// turns its first failure into one readable line:
//
//   HTTPRoute default/web: spec.rules[0].matches[0].path.type: must be one of "Exact",
//   "PathPrefix", "RegularExpression" (got "Prefix")
//
// Supported schemas: draft-04 as RapidJSON 1.1 implements it, with local "$ref"s only
// ("#/definitions/..."). "pattern"s run on RapidJSON's own regex engine, a subset of ECMAScript:
// no \d, \w, \-, \/, (?:...) or lookaround; "^" and "$" anchor the whole pattern wherever they
// appear (in "//|/\\.$" the "$" anchors "//" too, so it no longer finds "/a//b"); to forbid a
// substring, use "not": {"anyOf": [{"pattern": "//"}, ...]}. Compile rejects a pattern that
// engine cannot compile (RapidJSON itself would silently skip it) and "patternProperties"
// (RapidJSON 1.1 validates it wrongly). Constraints beside a "$ref" are ignored, as draft-04 says
// (except "default", see ApplyDefaults). "oneOf"/"anyOf" alternatives with a "description" are
// quoted in errors, and so is the "description" of a "not"; a "title" names what a "pattern" means.
//
// Thread-safety: Validate and ApplyDefaults are const and safe to call concurrently. RapidJSON
// 1.1 keeps match scratch state inside each compiled pattern, so concurrent Validate calls never
// share a compiled schema document: each call borrows one from a small internal pool guarded by a
// mutex (a new one is compiled when all are busy). Copies of a SchemaValidator share the pool.
//
// Leak checkers: RapidJSON keeps pointers in 48 bits with tag bits above them, so LeakSanitizer
// reports a SchemaValidator that is still alive at exit (say, in a leaked singleton) as leaked;
// destroy validators before exit in sanitized builds.
class SchemaValidator {
 public:
  // Compile parses and checks `schema_json`; `what` names the schema in errors (a file path, or
  // "schema of HTTPRoute.gateway.networking.k8s.io"). Errors: INVALID_ARGUMENT, naming the
  // schema location ("#/definitions/x/pattern"), when the text is not JSON or not an object, a
  // "$ref" does not resolve locally, a "pattern" does not compile on RapidJSON's regex engine, or
  // "patternProperties" is used.
  static StatusOr<SchemaValidator> Compile(std::string_view schema_json, std::string_view what);

  // Validate checks `doc`. On failure it returns INVALID_ARGUMENT with the message
  // "<object_name>: <field path>: <reason>", e.g. `spec.listeners[1].port: must be <= 65535
  // (got 70000)`; map keys that are not plain identifiers render as `labels["a.b/c"]`.
  // Only the first failure (in document order) is reported.
  Status Validate(const rapidjson::Value& doc, std::string_view object_name) const;

  // Violations lists every failure of `doc` in document order, at most `max`; empty when `doc`
  // is valid. Validity is RapidJSON's verdict, as for Validate (they always agree), and the
  // field Validate reports always has a failure listed at it or below it; the list comes from
  // a walk of the schema beside the document (json_schema_violations.h) that goes on past the
  // first failure.
  std::vector<SchemaViolation> Violations(const rapidjson::Value& doc, size_t max = 100) const;

  // ApplyDefaults fills in missing (or null) properties that have a "default" in the schema,
  // recursively and only where the parent object exists, like the Kubernetes API server: a
  // defaulted value is itself defaulted further. Follows "$ref"s and "allOf"; a "default" next
  // to a "$ref" wins over one in the referenced definition. Never fails: parts of `doc` whose type
  // does not match the schema are left for Validate to report. `allocator` must own `doc`.
  void ApplyDefaults(rapidjson::Value& doc, rapidjson::Value::AllocatorType& allocator) const;
  void ApplyDefaults(rapidjson::Document& doc) const { ApplyDefaults(doc, doc.GetAllocator()); }

  // schema returns the parsed schema (e.g. to serve it from an admin API).
  const rapidjson::Value& schema() const;

 private:
  struct Impl;
  // FirstViolation is RapidJSON's first failure; nullopt when `doc` is valid.
  std::optional<SchemaViolation> FirstViolation(const rapidjson::Value& doc) const;
  explicit SchemaValidator(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

  std::shared_ptr<Impl> impl_;
};

}  // namespace portico::core

#endif  // PORTICO_CORE_COMMON_JSON_SCHEMA_H_
