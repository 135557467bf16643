// field_lines.h: FieldLines, where in a config file the fields of a refused object are written,
// so that /api/v1/errors can say "routes.yaml:14: spec.rules[0].matches[0].path.type: ...".
// The file is parsed again (with yaml-cpp's node API, which keeps every node's position) only
// when an error report asks, and only files below a size bound.
//
// Thread-safety: pure function over the file system.
#ifndef PORTICO_CONTROLLER_CENTER_FIELD_LINES_H_
#define PORTICO_CONTROLLER_CENTER_FIELD_LINES_H_

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace portico::controller {

// FieldLines returns, for each of `fields` (paths as SchemaValidator writes them: "spec.a[0]",
// `labels["a.b/c"]`; "" for the document itself), the 1-based line of that field in the
// document of `file` that starts on `document_line`; `document_line` for a field not found
// (the nearest ancestor written is used), all `document_line` when the file is missing, larger
// than `max_bytes` or does not parse.
std::vector<int> FieldLines(const std::filesystem::path& file, int document_line,
                            const std::vector<std::string>& fields, size_t max_bytes);

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_CENTER_FIELD_LINES_H_
