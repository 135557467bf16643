// file_documents.h: reading one config file into the objects it defines and the problems it has
// (the unit FileConfigCenter re-reads after an event), and checking a document's identity.
//
// A document must be a map with apiVersion, kind and metadata.name; the ObjectIdentifier then
// computes its ObjectRef (or rejects it, e.g. an unknown kind). A document failing either is
// reported as a ConfigError naming the file, line and problem; the file's other documents still
// count. A document missing one of those fields is "incomplete" (often one being typed or
// written); see SourceRegistry for what that keeps.
//
// Thread-safety: pure functions over the file system; `identifier` must be safe to call from
// several threads.
#ifndef PORTICO_CONTROLLER_CENTER_FILE_DOCUMENTS_H_
#define PORTICO_CONTROLLER_CENTER_FILE_DOCUMENTS_H_

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "controller/center/config_center.h"
#include "controller/center/object_limits.h"
#include "controller/center/yaml_to_json.h"
#include "portico/sdk/json.h"
#include "portico/sdk/status.h"
#include "portico/sdk/types.h"

namespace portico::controller {

// ParsedDocument is one document with a valid identity. Its parts are immutable and shared with
// the ConfigChanges delivered for it.
struct ParsedDocument {
  sdk::ObjectRef ref;
  int line = 0;  // 1-based line the document starts on
  std::shared_ptr<const rapidjson::Document> doc;
  std::shared_ptr<const std::string> json;  // compact JSON of `doc`, to detect real changes
};

// FileDocuments is what one read of a config file found.
struct FileDocuments {
  enum class State {
    kParsed,      // `objects` and per-document `errors`
    kEmpty,       // zero bytes: possibly being written (see SourceRegistry)
    kUnparsable,  // one error in `errors` (syntax, limits, unreadable, too big)
    kGone,        // the file does not exist (or is no longer a regular file)
  };
  State state = State::kGone;
  std::vector<ParsedDocument> objects;  // in document order
  std::vector<ConfigError> errors;
  bool incomplete = false;  // a document lacks apiVersion, kind or metadata.name
  // Objects whose document was refused by ObjectLimits: the object and the index of its error
  // in `errors` (SourceRegistry keeps the version the file produced before).
  std::vector<std::pair<sdk::ObjectRef, size_t>> refused;
};

// FileReadOptions bound and identify what ReadFileDocuments() reads.
struct FileReadOptions {
  YamlLimits limits;
  size_t max_file_bytes = 64u << 20;
  ObjectLimits objects;
  const ObjectIdentifier* identifier = nullptr;  // required
};

// ReadFileDocuments reads `root`/`rel` (`rel` names the file in errors and sources).
FileDocuments ReadFileDocuments(const std::filesystem::path& root, const std::string& rel,
                                const FileReadOptions& options);

// IdentifyDocument checks the fields every object needs, then asks `identifier`. The error
// names the problem ("document has no metadata.name", "Unknown default/x: unknown kind");
// `incomplete` (optional) tells whether a required field was missing.
StatusOr<sdk::ObjectRef> IdentifyDocument(const rapidjson::Value& doc,
                                          const ObjectIdentifier& identifier,
                                          bool* incomplete = nullptr);

// DescribeDocument names a document from its own fields, for messages: "HTTPRoute default/web",
// "HTTPRoute web" when it has no namespace, "" when it has no kind.
std::string DescribeDocument(const rapidjson::Value& doc);

// ReadFileText reads a whole file; NotFound when it does not exist, ResourceExhausted when it is
// larger than `max_bytes`.
StatusOr<std::string> ReadFileText(const std::filesystem::path& path, size_t max_bytes);

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_CENTER_FILE_DOCUMENTS_H_
