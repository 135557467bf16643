// json_to_yaml.h: JsonToYaml, how `portico-ctl get -o yaml` prints objects: RapidJSON values
// rendered as block YAML with yaml-cpp's Emitter, keys in document order, strings that would
// read back as another type ("true", "8080", "null", "") double-quoted, multi-line strings as
// literal blocks.
//
// Thread-safety: pure function.
#ifndef PORTICO_CONTROLLER_CTL_JSON_TO_YAML_H_
#define PORTICO_CONTROLLER_CTL_JSON_TO_YAML_H_

#include <string>
#include <string_view>

#include "portico/sdk/json.h"

namespace portico::ctl {

// JsonToYaml renders `value` as a YAML document (no "---", ends with a newline).
std::string JsonToYaml(const rapidjson::Value& value);

// NeedsQuotes: a plain scalar `s` would not read back as the string `s`.
bool NeedsQuotes(std::string_view s);

}  // namespace portico::ctl

#endif  // PORTICO_CONTROLLER_CTL_JSON_TO_YAML_H_
