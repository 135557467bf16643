#include "controller/reconcile/object_validator.h"

#include <algorithm>

namespace portico::controller {

StatusOr<ObjectValidator> ObjectValidator::Create(const core::KindRegistry& registry) {
  ObjectValidator validator(&registry);
  for (const core::KindInfo* kind : registry.Kinds()) {
    if (kind->schema.empty()) continue;
    auto compiled = core::SchemaValidator::Compile(
        kind->schema, "schema of " + kind->id.ToString() + " (plugin " + kind->plugin_name + ")");
    if (!compiled.ok()) return compiled.status();
    validator.schemas_.emplace(kind->id, std::move(compiled).value());
  }
  return validator;
}

StatusOr<ValidatedObject> ObjectValidator::Validate(rapidjson::Document& doc,
                                                    std::vector<FieldViolation>* violations) const {
  if (!doc.IsObject()) return InvalidArgumentError("document is not an object");
  std::string api_version = json::GetString(doc, "apiVersion");
  std::string kind_name = json::GetString(doc, "kind");
  if (api_version.empty()) return InvalidArgumentError("apiVersion: missing required field");
  if (kind_name.empty()) return InvalidArgumentError("kind: missing required field");
  size_t slash = api_version.rfind('/');
  std::string group = slash == std::string::npos ? "" : api_version.substr(0, slash);
  std::string version = slash == std::string::npos ? api_version : api_version.substr(slash + 1);

  ValidatedObject out;
  out.version = version;
  out.ref.group = group;
  out.ref.kind = kind_name;
  out.ref.name = json::GetString(doc, "metadata.name");
  out.ref.ns = json::GetString(doc, "metadata.namespace");

  out.kind = registry_->Find(group, kind_name);
  if (out.kind == nullptr) {
    return NotFoundError("unknown kind " + kind_name + " in apiVersion " + api_version +
                         ": no loaded plugin provides it (see portico-ctl list-plugins)");
  }
  const auto& versions = out.kind->versions;
  if (!versions.empty() && std::find(versions.begin(), versions.end(), version) == versions.end()) {
    std::string served;
    for (const auto& v : versions) served += (served.empty() ? "" : ", ") + v;
    return InvalidArgumentError(kind_name + ": apiVersion " + api_version +
                                " is not served (served versions: " + served + ")");
  }
  if (out.ref.name.empty()) {
    return InvalidArgumentError(kind_name + ": metadata.name: missing required field");
  }
  if (out.kind->scope == PORTICO_SCOPE_NAMESPACED && out.ref.ns.empty()) {
    // Kubernetes puts namespaced objects without a namespace into "default".
    out.ref.ns = "default";
    rapidjson::Value* metadata = &doc["metadata"];
    metadata->AddMember("namespace", "default", doc.GetAllocator());
  } else if (out.kind->scope == PORTICO_SCOPE_CLUSTER && !out.ref.ns.empty()) {
    return InvalidArgumentError(out.ref.Display() + ": metadata.namespace: " + kind_name +
                                " is cluster-scoped and takes no namespace");
  }
  auto schema = schemas_.find(out.kind->id);
  if (schema != schemas_.end()) {
    schema->second.ApplyDefaults(doc);
    if (violations == nullptr) {
      PORTICO_RETURN_IF_ERROR(schema->second.Validate(doc, out.ref.Display()));
    } else {
      std::string message;
      for (core::SchemaViolation& v : schema->second.Violations(doc)) {
        message += (message.empty() ? "" : "; ") +
                   (v.field.empty() ? v.reason : v.field + ": " + v.reason);
        violations->push_back({std::move(v.field), std::move(v.reason)});
      }
      if (!message.empty()) return InvalidArgumentError(out.ref.Display() + ": " + message);
    }
  }
  return out;
}

}  // namespace portico::controller
