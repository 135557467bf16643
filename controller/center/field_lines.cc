#include "controller/center/field_lines.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <optional>
#include <string_view>

#include "controller/center/file_documents.h"
#include "portico/sdk/json.h"

namespace portico::controller {
namespace {

// Token is one step of a field path: a map key or a sequence index.
struct Token {
  std::string key;
  std::optional<size_t> index;
};

// ParsePath splits "spec.rules[0].labels["a.b/c"]"; nullopt when it cannot.
std::optional<std::vector<Token>> ParsePath(std::string_view path) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '.') {
      ++i;
      continue;
    }
    if (path[i] != '[') {
      size_t end = path.find_first_of(".[", i);
      if (end == std::string_view::npos) end = path.size();
      out.push_back({std::string(path.substr(i, end - i)), std::nullopt});
      i = end;
      continue;
    }
    if (i + 1 < path.size() && path[i + 1] == '"') {
      // A JSON string, as SchemaValidator quotes keys.
      size_t j = i + 2;
      while (j < path.size() && path[j] != '"') j += path[j] == '\\' ? 2 : 1;
      if (j >= path.size()) return std::nullopt;
      auto key = json::Parse(path.substr(i + 1, j - i));
      if (!key.ok() || !key->IsString()) return std::nullopt;
      out.push_back({std::string(key->GetString(), key->GetStringLength()), std::nullopt});
      i = j + 2;  // past '"]'
      continue;
    }
    size_t end = path.find(']', i);
    if (end == std::string_view::npos) return std::nullopt;
    size_t index = 0;
    for (size_t k = i + 1; k < end; ++k) {
      if (!std::isdigit(static_cast<unsigned char>(path[k]))) return std::nullopt;
      index = index * 10 + static_cast<size_t>(path[k] - '0');
    }
    out.push_back({"", index});
    i = end + 1;
  }
  return out;
}

int LineOf(const YAML::Node& node, int fallback) {
  return node.Mark().is_null() ? fallback : node.Mark().line + 1;
}

}  // namespace

std::vector<int> FieldLines(const std::filesystem::path& file, int document_line,
                            const std::vector<std::string>& fields, size_t max_bytes) {
  std::vector<int> lines(fields.size(), document_line);
  StatusOr<std::string> text = ReadFileText(file, max_bytes);
  if (!text.ok()) return lines;
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(*text);
  } catch (const YAML::Exception&) {
    return lines;
  }
  // The document is the one whose first node starts on `document_line`, or the last one
  // starting before it (a "---" line or comments may come first).
  const YAML::Node* doc = nullptr;
  for (const YAML::Node& d : docs) {
    if (LineOf(d, 0) <= document_line || doc == nullptr) doc = &d;
    if (LineOf(d, 0) >= document_line) break;
  }
  if (doc == nullptr) return lines;
  for (size_t f = 0; f < fields.size(); ++f) {
    std::optional<std::vector<Token>> tokens = ParsePath(fields[f]);
    if (!tokens.has_value()) continue;
    YAML::Node node(*doc);  // a handle (copies share the node); moved on with reset()
    int line = LineOf(node, document_line);
    try {
      for (const Token& token : *tokens) {
        const YAML::Node& here = node;  // const: a lookup never inserts
        std::optional<YAML::Node> key;
        std::optional<YAML::Node> value;
        if (token.index.has_value() && here.IsSequence() && *token.index < here.size()) {
          value.emplace(here[*token.index]);
        } else if (!token.index.has_value() && here.IsMap()) {
          for (const auto& member : here) {
            if (member.first.IsScalar() && member.first.Scalar() == token.key) {
              key.emplace(member.first);  // the key's line: where the field is written
              value.emplace(member.second);
              break;
            }
          }
        }
        if (!value.has_value()) break;
        line = LineOf(key.has_value() ? *key : *value, line);
        node.reset(*value);
      }
    } catch (const YAML::Exception&) {
      // The nearest line found so far stands.
    }
    lines[f] = line;
  }
  return lines;
}

}  // namespace portico::controller
