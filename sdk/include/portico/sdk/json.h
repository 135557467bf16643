// json.h: small RapidJSON helpers shared by the SDK, plugins and the host.
//
// Header-only. Thread-safety: free functions over caller-owned values.
#ifndef PORTICO_SDK_JSON_H_
#define PORTICO_SDK_JSON_H_

#ifndef RAPIDJSON_HAS_STDSTRING
#define RAPIDJSON_HAS_STDSTRING 1
#endif

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <optional>
#include <string>
#include <string_view>

#include "portico/sdk/status.h"

namespace portico::json {

// Parse parses `text` into a document; the error names `what` and the byte offset.
inline StatusOr<rapidjson::Document> Parse(std::string_view text, std::string_view what = "JSON") {
  rapidjson::Document doc;
  doc.Parse(text.data(), text.size());
  if (doc.HasParseError()) {
    return InvalidArgumentError(std::string(what) + ": invalid JSON at offset " +
                                std::to_string(doc.GetErrorOffset()) + ": " +
                                rapidjson::GetParseError_En(doc.GetParseError()));
  }
  return doc;
}

// Serialize writes a value as compact JSON.
inline std::string Serialize(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

// Find returns the member `name` of object `v`, or nullptr.
inline const rapidjson::Value* Find(const rapidjson::Value& v, std::string_view name) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(rapidjson::Value(rapidjson::StringRef(name.data(), name.size())));
  return it == v.MemberEnd() ? nullptr : &it->value;
}

// FindPath follows a dotted path ("metadata.name") through nested objects; nullptr on a miss.
inline const rapidjson::Value* FindPath(const rapidjson::Value& v, std::string_view path) {
  const rapidjson::Value* cur = &v;
  while (cur != nullptr) {
    size_t dot = path.find('.');
    cur = Find(*cur, path.substr(0, dot));
    if (dot == std::string_view::npos) break;
    path.remove_prefix(dot + 1);
  }
  return cur;
}

// GetString returns the string at `path`, or `fallback` when absent or not a string.
inline std::string GetString(const rapidjson::Value& v, std::string_view path,
                             std::string_view fallback = "") {
  const rapidjson::Value* found = FindPath(v, path);
  if (found == nullptr || !found->IsString()) return std::string(fallback);
  return std::string(found->GetString(), found->GetStringLength());
}

// GetInt returns the integer at `path`, or nullopt.
inline std::optional<int64_t> GetInt(const rapidjson::Value& v, std::string_view path) {
  const rapidjson::Value* found = FindPath(v, path);
  if (found == nullptr || !found->IsInt64()) return std::nullopt;
  return found->GetInt64();
}

// Str makes a non-owning RapidJSON string reference to a std::string_view.
inline rapidjson::GenericStringRef<char> Str(std::string_view s) {
  return rapidjson::StringRef(s.data(), s.size());
}

}  // namespace portico::json

#endif  // PORTICO_SDK_JSON_H_
