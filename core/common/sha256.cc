#include "core/common/sha256.h"

#include <openssl/evp.h>

namespace portico::core {

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0xf];
  }
  return out;
}

Digest128 Sha256Digest128(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha256(), nullptr);
  Digest128 out;
  for (int i = 0; i < 8; ++i) {
    out.hi = out.hi << 8 | digest[i];
    out.lo = out.lo << 8 | digest[8 + i];
  }
  return out;
}

}  // namespace portico::core
