// sha256.h: content hashes (hex SHA-256), used for synced views, plugin files and certificates.
// Thread-safety: pure functions.
#ifndef PORTICO_CORE_COMMON_SHA256_H_
#define PORTICO_CORE_COMMON_SHA256_H_

#include <string>
#include <string_view>

namespace portico::core {

// Sha256Hex returns the lower-case hex SHA-256 of `data`.
std::string Sha256Hex(std::string_view data);

}  // namespace portico::core

#endif  // PORTICO_CORE_COMMON_SHA256_H_
