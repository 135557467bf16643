// object_json.h: document-level helpers of the reconciler: spec comparison (generation), labels,
// metadata stamps, and Secret handling (the get_secret payload, redaction of views and errors).
//
// Secrets are recognised by identity (core group, kind "Secret"): the controller promises that
// Secret material never leaves it through views or logs (DESIGN.md §6), whatever plugin provides
// the kind.
//
// Thread-safety: pure functions over caller-owned values.
#ifndef PORTICO_CONTROLLER_RECONCILE_OBJECT_JSON_H_
#define PORTICO_CONTROLLER_RECONCILE_OBJECT_JSON_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "portico/sdk/json.h"
#include "portico/sdk/types.h"

namespace portico::controller {

// kRedacted replaces every Secret value in what the controller shows.
inline constexpr char kRedacted[] = "REDACTED";

// SpecEqual compares two documents ignoring "metadata" and "status": what Kubernetes counts as a
// spec change for metadata.generation (any other top-level field, e.g. a Secret's "data",
// counts). Member order does not matter.
bool SpecEqual(const rapidjson::Value& a, const rapidjson::Value& b);

// LabelsOf returns metadata.labels (string values only).
std::map<std::string, std::string> LabelsOf(const rapidjson::Value& doc);

// SetMetadataStamps sets metadata.generation and metadata.creationTimestamp (creating metadata
// when missing); `allocator` must own `doc`.
void SetMetadataStamps(rapidjson::Value& doc, rapidjson::Value::AllocatorType& allocator,
                       int64_t generation, std::string_view creation_timestamp);

// AddNamespaceNameLabel gives a core-group Namespace the label kubernetes.io/metadata.name =
// its name in metadata.labels, as the Kubernetes API server does for every Namespace (so label
// selectors on namespaces, e.g. a listener's allowedRoutes, can name one). No-op for other kinds.
void AddNamespaceNameLabel(const sdk::ObjectRef& ref, rapidjson::Value& doc,
                           rapidjson::Value::AllocatorType& allocator);

// IsSecret reports whether `ref` names a core-group Secret.
bool IsSecret(const sdk::ObjectRef& ref);

// SecretPayload is what get_secret returns for a Secret document: {"type":..,"data":{key:
// base64}} with "data" as given and "stringData" base64-encoded over it (as the API server
// merges them); type defaults to "Opaque".
std::string SecretPayload(const rapidjson::Value& doc);

// RedactSecret replaces every value of "data" and "stringData", and the
// kubectl.kubernetes.io/last-applied-configuration annotation (which holds them too), with
// kRedacted.
void RedactSecret(rapidjson::Value& doc, rapidjson::Value::AllocatorType& allocator);

// RedactSecretText removes Secret material from a message about the Secret `doc`: every
// "(got ...)" quotation of a schema error is cut and every data/stringData value is replaced.
std::string RedactSecretText(std::string message, const rapidjson::Value& doc);

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_RECONCILE_OBJECT_JSON_H_
