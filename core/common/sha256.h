// sha256.h: content hashes (hex SHA-256), used for synced views, plugin files and certificates.
// Thread-safety: pure functions.
#ifndef PORTICO_CORE_COMMON_SHA256_H_
#define PORTICO_CORE_COMMON_SHA256_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace portico::core {

// Sha256Hex returns the lower-case hex SHA-256 of `data`.
std::string Sha256Hex(std::string_view data);

// Digest128 is the first 128 bits of a SHA-256: the identity of a body that is kept only as its
// hash (e.g. a runtime entry whose JSON the data plane has compiled). Zero means "not computed".
struct Digest128 {
  uint64_t hi = 0;
  uint64_t lo = 0;
  friend bool operator==(const Digest128& a, const Digest128& b) {
    return a.hi == b.hi && a.lo == b.lo;
  }
  friend bool operator!=(const Digest128& a, const Digest128& b) { return !(a == b); }
};

// Digest128Hash hashes a Digest128 for unordered containers (its bits are already uniform).
struct Digest128Hash {
  size_t operator()(const Digest128& d) const noexcept { return static_cast<size_t>(d.lo); }
};

// Sha256Digest128 returns the Digest128 of `data`.
Digest128 Sha256Digest128(std::string_view data);

}  // namespace portico::core

#endif  // PORTICO_CORE_COMMON_SHA256_H_
