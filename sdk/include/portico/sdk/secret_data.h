// secret_data.h: SecretData, a core Secret's data as hosts serve it through get_secret (data
// values as written, base64; stringData values encoded and winning, as the Kubernetes API server
// merges them), and Base64Encode.
//
// Header-only. Thread-safety: pure functions.
#ifndef PORTICO_SDK_SECRET_DATA_H_
#define PORTICO_SDK_SECRET_DATA_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "portico/sdk/json.h"

namespace portico::sdk {

// Base64Encode encodes with the standard alphabet and padding.
inline std::string Base64Encode(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t n = (static_cast<uint8_t>(bytes[i]) << 16) |
                 (static_cast<uint8_t>(bytes[i + 1]) << 8) | static_cast<uint8_t>(bytes[i + 2]);
    for (int shift = 18; shift >= 0; shift -= 6) out += kAlphabet[(n >> shift) & 63];
  }
  if (i < bytes.size()) {
    uint32_t n = static_cast<uint8_t>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) n |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// SecretData returns a Secret document's data: key -> base64 value.
inline std::map<std::string, std::string> SecretData(const rapidjson::Value& doc) {
  std::map<std::string, std::string> data;
  if (const rapidjson::Value* d = json::Find(doc, "data"); d != nullptr && d->IsObject()) {
    for (const auto& m : d->GetObject()) {
      if (m.value.IsString()) data[m.name.GetString()] = m.value.GetString();
    }
  }
  if (const rapidjson::Value* d = json::Find(doc, "stringData"); d != nullptr && d->IsObject()) {
    for (const auto& m : d->GetObject()) {
      if (m.value.IsString()) {
        data[m.name.GetString()] =
            Base64Encode(std::string_view(m.value.GetString(), m.value.GetStringLength()));
      }
    }
  }
  return data;
}

}  // namespace portico::sdk

#endif  // PORTICO_SDK_SECRET_DATA_H_
