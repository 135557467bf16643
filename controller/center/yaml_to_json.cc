#include "controller/center/yaml_to_json.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

namespace portico::controller {
namespace {

std::string Where(std::string_view file, const YAML::Mark& mark) {
  return std::string(file) + ":" + std::to_string(mark.line + 1) + ":" +
         std::to_string(mark.column + 1);
}

// Converter walks one yaml-cpp node tree, counting expanded nodes to stop alias bombs.
class Converter {
 public:
  Converter(std::string_view file, const YamlLimits& limits,
            rapidjson::Document::AllocatorType& alloc)
      : file_(file), limits_(limits), alloc_(alloc) {}

  Status Convert(const YAML::Node& node, rapidjson::Value& out, size_t depth) {
    if (++nodes_ > limits_.max_nodes) {
      return InvalidArgumentError(Where(file_, node.Mark()) + ": document expands to more than " +
                                  std::to_string(limits_.max_nodes) +
                                  " nodes (alias bomb?); refusing it");
    }
    if (depth > limits_.max_depth) {
      return InvalidArgumentError(Where(file_, node.Mark()) + ": nesting deeper than " +
                                  std::to_string(limits_.max_depth) + " levels; refusing it");
    }
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        out.SetNull();
        return OkStatus();
      case YAML::NodeType::Scalar:
        ConvertScalar(node, out);
        return OkStatus();
      case YAML::NodeType::Sequence: {
        out.SetArray();
        for (const auto& item : node) {
          rapidjson::Value v;
          PORTICO_RETURN_IF_ERROR(Convert(item, v, depth + 1));
          out.PushBack(v, alloc_);
        }
        return OkStatus();
      }
      case YAML::NodeType::Map: {
        out.SetObject();
        for (const auto& kv : node) {
          if (!kv.first.IsScalar()) {
            return InvalidArgumentError(Where(file_, kv.first.Mark()) +
                                        ": map keys must be scalars");
          }
          const std::string& key = kv.first.Scalar();
          if (out.HasMember(key.c_str())) {
            return InvalidArgumentError(Where(file_, kv.first.Mark()) + ": duplicate key \"" + key +
                                        "\"");
          }
          rapidjson::Value v;
          PORTICO_RETURN_IF_ERROR(Convert(kv.second, v, depth + 1));
          out.AddMember(
              rapidjson::Value(key.c_str(), static_cast<rapidjson::SizeType>(key.size()), alloc_),
              v, alloc_);
        }
        return OkStatus();
      }
    }
    return OkStatus();
  }

 private:
  void ConvertScalar(const YAML::Node& node, rapidjson::Value& out) {
    const std::string& s = node.Scalar();
    // yaml-cpp tags plain scalars "?" and quoted ones "!"; only plain scalars are typed.
    if (node.Tag() == "?") {
      if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") {
        out.SetNull();
        return;
      }
      if (s == "true" || s == "True" || s == "TRUE") {
        out.SetBool(true);
        return;
      }
      if (s == "false" || s == "False" || s == "FALSE") {
        out.SetBool(false);
        return;
      }
      if (ParseInteger(s, out) || ParseFloat(s, out)) return;
    }
    out.SetString(s.c_str(), static_cast<rapidjson::SizeType>(s.size()), alloc_);
  }

  static bool ParseInteger(const std::string& s, rapidjson::Value& out) {
    size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
    if (i == s.size()) return false;
    for (size_t j = i; j < s.size(); ++j) {
      if (s[j] < '0' || s[j] > '9') return false;
    }
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(s.c_str(), &end, 10);
    if (errno == ERANGE) return false;
    out.SetInt64(v);
    return true;
  }

  static bool ParseFloat(const std::string& s, rapidjson::Value& out) {
    bool has_digit = false;
    for (char c : s) {
      if (c >= '0' && c <= '9')
        has_digit = true;
      else if (c != '.' && c != 'e' && c != 'E' && c != '-' && c != '+')
        return false;
    }
    if (!has_digit) return false;
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || !std::isfinite(v)) return false;
    out.SetDouble(v);
    return true;
  }

  std::string_view file_;
  const YamlLimits& limits_;
  rapidjson::Document::AllocatorType& alloc_;
  size_t nodes_ = 0;
};

}  // namespace

StatusOr<std::vector<YamlDocument>> ParseYamlDocuments(std::string_view text, std::string_view file,
                                                       const YamlLimits& limits) {
  std::vector<YAML::Node> nodes;
  try {
    nodes = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(Where(file, e.mark) + ": " + e.msg);
  }
  std::vector<YamlDocument> out;
  size_t total_nodes = 0;
  for (const auto& node : nodes) {
    if (node.IsNull()) continue;
    YamlDocument doc;
    doc.line = node.Mark().line + 1;
    YamlLimits remaining = limits;
    remaining.max_nodes = limits.max_nodes > total_nodes ? limits.max_nodes - total_nodes : 0;
    Converter converter(file, remaining, doc.json.GetAllocator());
    PORTICO_RETURN_IF_ERROR(converter.Convert(node, doc.json, 0));
    total_nodes += 1;
    out.push_back(std::move(doc));
  }
  return out;
}

}  // namespace portico::controller
