#include "controller/admin/apply_documents.h"

#include "controller/center/file_documents.h"

#include <functional>
#include <set>

namespace portico::controller::admin {

uint64_t ContentHash(const rapidjson::Value& doc) {
  const rapidjson::Value* meta = json::Find(doc, "metadata");
  if (meta == nullptr || !meta->IsObject() ||
      (!meta->HasMember("resourceVersion") && !meta->HasMember("creationTimestamp"))) {
    return std::hash<std::string>{}(json::Serialize(doc));
  }
  // The stamps a config source adds (etcd: the mod revision, the first sighting) are not content.
  rapidjson::Document copy;
  copy.CopyFrom(doc, copy.GetAllocator());
  copy["metadata"].RemoveMember("resourceVersion");
  copy["metadata"].RemoveMember("creationTimestamp");
  return std::hash<std::string>{}(json::Serialize(copy));
}

StatusOr<std::vector<PreparedObject>> PrepareApply(std::string_view body,
                                                   const ObjectValidator& validator,
                                                   const YamlLimits& limits,
                                                   const ObjectLimits& objects) {
  PORTICO_ASSIGN_OR_RETURN(std::vector<YamlDocument> docs,
                           ParseYamlDocuments(body, "request body", limits));
  if (docs.empty()) return InvalidArgumentError("apply: the request body holds no document");
  std::vector<PreparedObject> out;
  std::string errors;
  bool all_unknown_kind = true;
  std::set<sdk::ObjectRef> seen;
  for (size_t i = 0; i < docs.size(); ++i) {
    YamlDocument& doc = docs[i];
    std::string where =
        "document " + std::to_string(i + 1) + " (line " + std::to_string(doc.line) + ")";
    if (!doc.json.IsObject()) {
      errors += (errors.empty() ? "" : "\n") + where + ": not an object";
      all_unknown_kind = false;
      continue;
    }
    PreparedObject prepared;
    prepared.line = doc.line;
    prepared.api_version = json::GetString(doc.json, "apiVersion");
    prepared.content_hash = ContentHash(doc.json);
    if (Status within = CheckObjectLimits(doc.json, objects); !within.ok()) {
      std::string name = DescribeDocument(doc.json);
      errors += (errors.empty() ? "" : "\n") + where + ": " + (name.empty() ? "" : name + ": ") +
                within.message();
      all_unknown_kind = false;
      continue;
    }
    std::vector<FieldViolation> violations;  // every one in the message, not only the first
    StatusOr<ValidatedObject> validated = validator.Validate(doc.json, &violations);
    if (!validated.ok()) {
      errors += (errors.empty() ? "" : "\n") + where + ": " + validated.status().message();
      if (validated.status().code() != StatusCode::kNotFound) all_unknown_kind = false;
      continue;
    }
    all_unknown_kind = false;
    if (!seen.insert(validated->ref).second) {
      errors += (errors.empty() ? "" : "\n") + where + ": " + validated->ref.Display() +
                " appears more than once in the request";
      continue;
    }
    prepared.validated = std::move(validated).value();
    out.push_back(std::move(prepared));
  }
  if (!errors.empty()) {
    return Status(all_unknown_kind ? StatusCode::kNotFound : StatusCode::kInvalidArgument,
                  "apply refused, nothing was written:\n" + errors);
  }
  return out;
}

}  // namespace portico::controller::admin
