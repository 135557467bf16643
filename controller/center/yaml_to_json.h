// yaml_to_json.h: turns a YAML (or JSON) file's documents into RapidJSON documents, refusing
// deep nesting and alias bombs with a clear error instead of hanging. Built from yaml-cpp's parse
// events (no node tree); an alias is expanded only after its size was checked against the file's
// node budget, so a bomb is refused before it grows, and duplicate keys are found in O(1) in
// large maps.
//
// Scalars follow the YAML 1.2 core schema for plain scalars (null, booleans, integers, floats);
// quoted scalars stay strings. Thread-safety: pure functions.
#ifndef PORTICO_CONTROLLER_CENTER_YAML_TO_JSON_H_
#define PORTICO_CONTROLLER_CENTER_YAML_TO_JSON_H_

#include <rapidjson/document.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "portico/sdk/status.h"

namespace portico::controller {

// YamlLimits bounds what one file may expand to.
struct YamlLimits {
  size_t max_depth = 64;         // nesting of maps and sequences
  size_t max_nodes = 1'000'000;  // nodes after alias expansion, per file
};

// YamlDocument is one document of a file, with the line it starts on (1-based).
struct YamlDocument {
  rapidjson::Document json;
  int line = 1;
};

// ParseYamlDocuments parses every document of `text`; `file` names the file in errors, which
// carry "file:line:column". Empty documents (a lone "---") are skipped.
StatusOr<std::vector<YamlDocument>> ParseYamlDocuments(std::string_view text, std::string_view file,
                                                       const YamlLimits& limits = {});

// PlainScalarIsString tells whether `text`, written as a plain (unquoted) scalar, reads back as
// a string; when not (null, true, 12, 1.5e3) a writer must quote it (yaml_render.h does).
bool PlainScalarIsString(std::string_view text);

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_CENTER_YAML_TO_JSON_H_
