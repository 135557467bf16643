// document_splice.h: editing one document of a multi-document YAML/JSON file in its text, so
// that the file's other documents keep their comments and formatting when Apply() or Delete()
// rewrites it.
//
// A document's text runs from the line it starts on (YamlDocument::line) to the next "---"
// marker or the next document's first line. Replacing it swaps those lines for the rendering
// (comments above the document stay); removing it also drops its "---" marker and the comments
// between that marker and the document. Callers re-parse the result to check it (see
// source_writer.h), since text surgery cannot know every corner of YAML.
//
// Thread-safety: pure functions.
#ifndef PORTICO_CONTROLLER_CENTER_DOCUMENT_SPLICE_H_
#define PORTICO_CONTROLLER_CENTER_DOCUMENT_SPLICE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "portico/sdk/status.h"

namespace portico::controller {

// DocumentPatch edits the document with index `index` (in file order).
struct DocumentPatch {
  size_t index = 0;
  std::optional<std::string> replacement;  // rendered document ending in '\n'; nullopt removes
};

// SpliceDocuments applies `patches` (at most one per document) to `text`, whose documents
// start on `document_lines` (1-based, in order).
StatusOr<std::string> SpliceDocuments(std::string_view text, const std::vector<int>& document_lines,
                                      std::vector<DocumentPatch> patches);

// AppendDocument adds a rendered document at the end of `text`, after a "---" marker when the
// text already holds documents (`has_documents`).
std::string AppendDocument(std::string_view text, bool has_documents, std::string_view rendered);

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_CENTER_DOCUMENT_SPLICE_H_
