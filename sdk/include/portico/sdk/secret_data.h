// secret_data.h: SecretData, a core Secret's data as hosts serve it through get_secret (data
// values as written, base64; stringData values encoded and winning, as the Kubernetes API server
// merges them), and Base64Encode.
//
// Header-only. Thread-safety: pure functions.
#ifndef PORTICO_SDK_SECRET_DATA_H_
#define PORTICO_SDK_SECRET_DATA_H_

#include <cstdint>
#include <map>
#include <optional>
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

// Base64Decode decodes standard, padded base64 (Kubernetes Secret data); nullopt when
// malformed.
inline std::optional<std::string> Base64Decode(std::string_view in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (in.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(in.size() / 4 * 3);
  for (size_t i = 0; i < in.size(); i += 4) {
    int v[4];
    int padding = 0;
    for (int j = 0; j < 4; ++j) {
      char c = in[i + j];
      if (c == '=' && i + 4 == in.size() && j >= 2) {
        v[j] = 0;
        ++padding;
        continue;
      }
      if (padding > 0) return std::nullopt;  // data after padding
      v[j] = value(c);
      if (v[j] < 0) return std::nullopt;
    }
    uint32_t n = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out += static_cast<char>((n >> 16) & 0xff);
    if (padding < 2) out += static_cast<char>((n >> 8) & 0xff);
    if (padding < 1) out += static_cast<char>(n & 0xff);
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
