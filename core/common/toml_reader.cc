#include "core/common/toml_reader.h"

#include <array>

namespace portico::core {

namespace fs = std::filesystem;

bool IsLogLevel(std::string_view level) {
  static constexpr std::array<std::string_view, 7> kLevels = {"trace", "debug",    "info", "warn",
                                                              "error", "critical", "off"};
  for (std::string_view l : kLevels) {
    if (l == level) return true;
  }
  return false;
}

std::string TomlReader::Where(const fs::path& file, const toml::node& node) {
  return file.string() + ":" + std::to_string(node.source().begin.line);
}

Status TomlReader::String(std::string_view key, std::string* out) {
  const toml::node* node = Take(key);
  if (node == nullptr) return OkStatus();
  if (!node->is_string()) return TypeError(key, *node, "a string");
  *out = node->as_string()->get();
  return OkStatus();
}

Status TomlReader::StringList(std::string_view key, std::vector<std::string>* out) {
  const toml::node* node = Take(key);
  if (node == nullptr) return OkStatus();
  if (!node->is_array()) return TypeError(key, *node, "an array of strings");
  std::vector<std::string> values;
  for (const toml::node& item : *node->as_array()) {
    if (!item.is_string()) return TypeError(key, item, "an array of strings");
    values.push_back(item.as_string()->get());
  }
  *out = std::move(values);
  return OkStatus();
}

Status TomlReader::Path(std::string_view key, std::string* out) {
  std::string value;
  const toml::node* node = table_.get(key);
  PORTICO_RETURN_IF_ERROR(String(key, &value));
  if (node == nullptr) return OkStatus();
  fs::path path(value);
  if (!value.empty() && path.is_relative()) path = file_.parent_path() / path;
  *out = value.empty() ? value : path.lexically_normal().string();
  return OkStatus();
}

Status TomlReader::Int(std::string_view key, int64_t min, int64_t max, int64_t* out) {
  const toml::node* node = Take(key);
  if (node == nullptr) return OkStatus();
  if (!node->is_integer()) return TypeError(key, *node, "an integer");
  int64_t value = node->as_integer()->get();
  if (value < min || value > max) {
    return InvalidArgumentError(Where(file_, *node) + ": " + prefix_ + std::string(key) + ": " +
                                std::to_string(value) + " is out of range [" + std::to_string(min) +
                                ", " + std::to_string(max) + "]");
  }
  *out = value;
  return OkStatus();
}

Status TomlReader::Port(std::string_view key, uint16_t* out) {
  int64_t value = *out;
  PORTICO_RETURN_IF_ERROR(Int(key, 0, 65535, &value));
  *out = static_cast<uint16_t>(value);
  return OkStatus();
}

Status TomlReader::Bool(std::string_view key, bool* out) {
  const toml::node* node = Take(key);
  if (node == nullptr) return OkStatus();
  if (!node->is_boolean()) return TypeError(key, *node, "true or false");
  *out = node->as_boolean()->get();
  return OkStatus();
}

const toml::table* TomlReader::Table(std::string_view key, Status* status) {
  const toml::node* node = Take(key);
  if (node == nullptr) return nullptr;
  if (!node->is_table()) {
    *status = TypeError(key, *node, "a table");
    return nullptr;
  }
  return node->as_table();
}

Status TomlReader::Finish() const {
  for (const auto& [key, node] : table_) {
    if (taken_.count(std::string(key.str())) == 0) {
      return InvalidArgumentError(Where(file_, node) + ": unknown setting \"" + prefix_ +
                                  std::string(key.str()) + "\"");
    }
  }
  return OkStatus();
}

Status TomlReader::ErrorAt(std::string_view key, const std::string& message) const {
  const toml::node* node = table_.get(key);
  std::string where = node != nullptr ? Where(file_, *node) : file_.string();
  return InvalidArgumentError(where + ": " + prefix_ + std::string(key) + ": " + message);
}

const toml::node* TomlReader::Take(std::string_view key) {
  taken_.insert(std::string(key));
  return table_.get(key);
}

Status TomlReader::TypeError(std::string_view key, const toml::node& node,
                             std::string_view want) const {
  return InvalidArgumentError(Where(file_, node) + ": " + prefix_ + std::string(key) +
                              ": expected " + std::string(want));
}

}  // namespace portico::core
