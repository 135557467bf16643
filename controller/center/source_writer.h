// source_writer.h: EditConfigFile, how Apply() and Delete() change one config file: replace,
// append or remove documents by object identity, keep the file's other documents as written
// (comments included, see document_splice.h) and write the result atomically (atomic_write.h).
//
// The file is re-read and re-parsed from disk at the time of the edit, so an edit made by hand
// since the center's last scan is not lost. Documents are rendered as YAML (yaml_render.h), or
// as indented JSON in a .json file. The result is re-parsed and compared document by document
// with what was intended; if the text splice did not give exactly that, the file is rewritten
// from its documents instead (comments lost, content exact).
//
// Thread-safety: pure function over the file system; callers serialise edits of one file.
#ifndef PORTICO_CONTROLLER_CENTER_SOURCE_WRITER_H_
#define PORTICO_CONTROLLER_CENTER_SOURCE_WRITER_H_

#include <filesystem>
#include <string>
#include <vector>

#include "controller/center/config_center.h"
#include "controller/center/yaml_to_json.h"
#include "portico/sdk/json.h"
#include "portico/sdk/status.h"
#include "portico/sdk/types.h"

namespace portico::controller {

// DocumentEdit sets (doc != nullptr) or removes (doc == nullptr) the object `ref`.
struct DocumentEdit {
  sdk::ObjectRef ref;
  const rapidjson::Value* doc = nullptr;  // not owned; outlives the call
};

struct EditOptions {
  const ObjectIdentifier* identifier = nullptr;  // required
  YamlLimits limits;
  size_t max_file_bytes = 64u << 20;
  // Objects set but not in the file are appended (a missing file is created); otherwise they
  // are returned as `missing`.
  bool append_missing = false;
};

struct EditResult {
  std::vector<sdk::ObjectRef> missing;  // edits whose object the file does not define
  bool written = false;                 // the file was rewritten
  bool removed = false;                 // the file was removed (no document left)
};

// EditConfigFile applies `edits` to the file at `path` (`display` names it in errors). A set
// replaces the first document defining the object; a removal removes every document defining
// it; a file left without documents is removed. FailedPrecondition when the file does not
// parse (it is not rewritten behind its author's back).
StatusOr<EditResult> EditConfigFile(const std::filesystem::path& path, const std::string& display,
                                    const std::vector<DocumentEdit>& edits,
                                    const EditOptions& options);

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_CENTER_SOURCE_WRITER_H_
