// fake_util.h: small helpers of the fake host: JSON string quoting, a fake content hash,
// base64, object names as messages print them, JSON pointers as field paths, labels and
// apiVersion parsing. Part of the SDK's testing package; header-only.
// Threading: pure functions.
#ifndef PORTICO_SDK_TESTING_FAKE_UTIL_H_
#define PORTICO_SDK_TESTING_FAKE_UTIL_H_

#include <rapidjson/pointer.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "portico/sdk/json.h"

namespace portico::sdk::testing::detail {

inline std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          static const char* kHex = "0123456789abcdef";
          out += "\\u00";
          out += kHex[(c >> 4) & 0xf];
          out += kHex[c & 0xf];
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

inline std::string Fnv1aHex(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  static const char* kHex = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[i] = kHex[h & 0xf];
  return out;
}

// Name renders "ns/name", or "name" for cluster-scoped objects.
inline std::string Name(std::string_view ns, std::string_view name) {
  return ns.empty() ? std::string(name) : std::string(ns) + "/" + std::string(name);
}

// PointerPath renders a JSON pointer as "spec.listeners[0].port".
inline std::string PointerPath(const rapidjson::Pointer& pointer) {
  std::string out;
  for (size_t i = 0; i < pointer.GetTokenCount(); ++i) {
    const auto& token = pointer.GetTokens()[i];
    if (token.index != rapidjson::kPointerInvalidIndex) {
      out += "[" + std::to_string(token.index) + "]";
    } else {
      if (!out.empty()) out += ".";
      out.append(token.name, token.length);
    }
  }
  return out.empty() ? "(root)" : out;
}

// LabelsOf reads metadata.labels (string values only).
inline std::map<std::string, std::string> LabelsOf(const rapidjson::Value& object) {
  std::map<std::string, std::string> labels;
  const rapidjson::Value* l = json::FindPath(object, "metadata.labels");
  if (l != nullptr && l->IsObject()) {
    for (const auto& m : l->GetObject()) {
      if (m.value.IsString()) labels[m.name.GetString()] = m.value.GetString();
    }
  }
  return labels;
}

// SplitApiVersion turns "gateway.networking.k8s.io/v1" into (group, version); "v1" is core.
inline std::pair<std::string, std::string> SplitApiVersion(std::string_view api_version) {
  size_t slash = api_version.rfind('/');
  if (slash == std::string_view::npos) return {"", std::string(api_version)};
  return {std::string(api_version.substr(0, slash)), std::string(api_version.substr(slash + 1))};
}

}  // namespace portico::sdk::testing::detail

#endif  // PORTICO_SDK_TESTING_FAKE_UTIL_H_
