// yaml_render.h: writing a JSON document back as YAML (or indented JSON) for the files Apply()
// writes, such that ParseYamlDocuments() reads back byte-equal JSON.
//
// Strings that would read back as something else (true, 12, null, 1e3) or that other YAML 1.1
// readers would misread (yes, off, 0x1F, 012) are double-quoted; numbers are written as JSON
// writes them (2.0 stays 2.0). Thread-safety: pure functions.
#ifndef PORTICO_CONTROLLER_CENTER_YAML_RENDER_H_
#define PORTICO_CONTROLLER_CENTER_YAML_RENDER_H_

#include <rapidjson/document.h>

#include <string>

#include "portico/sdk/status.h"

namespace portico::controller {

// RenderYaml renders `value` as one block-style YAML document (no "---"), ending in a newline.
// Fails on what YAML cannot carry (invalid UTF-8).
StatusOr<std::string> RenderYaml(const rapidjson::Value& value);

// RenderJson renders `value` as indented JSON ending in a newline.
std::string RenderJson(const rapidjson::Value& value);

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_CENTER_YAML_RENDER_H_
