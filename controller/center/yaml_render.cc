#include "controller/center/yaml_render.h"

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <yaml-cpp/yaml.h>

#include <string_view>

#include "controller/center/yaml_to_json.h"
#include "portico/sdk/json.h"

namespace portico::controller {
namespace {

// NeedsQuotes: strings a plain scalar would not carry as strings, here or in YAML 1.1 readers
// (kubectl's): typed words and numbers, anything starting like a number, and anything holding
// a control character (a raw CR or other break would be folded away when read back: found by
// tests/fuzz/yaml_documents_fuzz; the double-quoted style escapes them).
bool NeedsQuotes(std::string_view s) {
  if (s.empty() || !PlainScalarIsString(s)) return true;
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;
  }
  char first = s.front();
  if ((first >= '0' && first <= '9') || first == '.' || first == '+' || first == '-') return true;
  static constexpr std::string_view kYaml11Words[] = {"y",  "Y",   "yes", "Yes", "YES", "n",
                                                      "N",  "no",  "No",  "NO",  "on",  "On",
                                                      "ON", "off", "Off", "OFF", "=",   "<<"};
  for (std::string_view word : kYaml11Words) {
    if (s == word) return true;
  }
  return false;
}

void EmitString(YAML::Emitter& out, const rapidjson::Value& value) {
  std::string s(value.GetString(), value.GetStringLength());
  if (NeedsQuotes(s)) out << YAML::DoubleQuoted;
  out << s;
}

void Emit(YAML::Emitter& out, const rapidjson::Value& value) {
  switch (value.GetType()) {
    case rapidjson::kNullType:
      out << YAML::Null;
      break;
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      out << value.GetBool();
      break;
    case rapidjson::kNumberType:
      // JSON's spelling (2.0, 1e+100) reads back as the same number; a std::string is emitted
      // plain because it is a valid plain scalar.
      out << json::Serialize(value);
      break;
    case rapidjson::kStringType:
      EmitString(out, value);
      break;
    case rapidjson::kArrayType:
      out << YAML::BeginSeq;
      for (const auto& item : value.GetArray()) Emit(out, item);
      out << YAML::EndSeq;
      break;
    case rapidjson::kObjectType:
      out << YAML::BeginMap;
      for (const auto& member : value.GetObject()) {
        out << YAML::Key;
        EmitString(out, member.name);
        out << YAML::Value;
        Emit(out, member.value);
      }
      out << YAML::EndMap;
      break;
  }
}

}  // namespace

StatusOr<std::string> RenderYaml(const rapidjson::Value& value) {
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetSeqFormat(YAML::Block);
  out.SetMapFormat(YAML::Block);
  Emit(out, value);
  if (!out.good()) return InvalidArgumentError("cannot render as YAML: " + out.GetLastError());
  std::string text(out.c_str(), out.size());
  // A document's text parses back to the same JSON, or the rendering is not used.
  auto back = ParseYamlDocuments(text, "rendered");
  if (!back.ok() || back->size() != 1 ||
      json::Serialize((*back)[0].json) != json::Serialize(value)) {
    return InternalError("YAML rendering does not read back as the same document");
  }
  text += '\n';
  return text;
}

std::string RenderJson(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> writer(buffer);
  writer.SetIndent(' ', 2);
  value.Accept(writer);
  std::string text(buffer.GetString(), buffer.GetSize());
  text += '\n';
  return text;
}

}  // namespace portico::controller
