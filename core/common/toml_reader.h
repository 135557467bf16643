// toml_reader.h: TomlReader, how both binaries read one table of their TOML configuration
// (portico-controller.toml, portico-gateway.toml): typed getters that leave a setting untouched
// when its key is absent, resolve relative paths against the file's directory, and refuse keys
// nobody asked for (Finish). Every error is INVALID_ARGUMENT naming "file:line: prefix.key".
// Also IsLogLevel, the spdlog level names both accept.
//
// Thread-safety: a TomlReader belongs to one parse on one thread. Ownership: it refers to the
// file path and the table it reads; both must outlive it.
#ifndef PORTICO_CORE_COMMON_TOML_READER_H_
#define PORTICO_CORE_COMMON_TOML_READER_H_

#include <toml++/toml.h>

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "portico/sdk/status.h"

namespace portico::core {

// IsLogLevel: trace, debug, info, warn, error, critical or off.
bool IsLogLevel(std::string_view level);

class TomlReader {
 public:
  // `prefix` names the table in messages ("" for the root, "admin." for [admin]).
  TomlReader(const std::filesystem::path& file, const toml::table& table, std::string prefix)
      : file_(file), table_(table), prefix_(std::move(prefix)) {}

  Status String(std::string_view key, std::string* out);
  Status StringList(std::string_view key, std::vector<std::string>* out);
  // Path reads a string and resolves it against the file's directory when relative.
  Status Path(std::string_view key, std::string* out);
  Status Int(std::string_view key, int64_t min, int64_t max, int64_t* out);
  Status Port(std::string_view key, uint16_t* out);  // 0..65535
  Status Bool(std::string_view key, bool* out);
  // Table returns the sub-table at `key` (nullptr when absent; *status set when not a table).
  const toml::table* Table(std::string_view key, Status* status);

  // Finish reports the first key nobody asked for.
  Status Finish() const;
  // ErrorAt is an error about `key` at its line (the file when the key is absent).
  Status ErrorAt(std::string_view key, const std::string& message) const;

  // Where renders "file:line" of a node.
  static std::string Where(const std::filesystem::path& file, const toml::node& node);

 private:
  const toml::node* Take(std::string_view key);
  Status TypeError(std::string_view key, const toml::node& node, std::string_view want) const;

  const std::filesystem::path& file_;
  const toml::table& table_;
  std::string prefix_;
  std::set<std::string> taken_;
};

}  // namespace portico::core

#endif  // PORTICO_CORE_COMMON_TOML_READER_H_
