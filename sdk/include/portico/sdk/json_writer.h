// json_writer.h: JsonWriter, a chaining compact-JSON writer over RapidJSON, and the Kubernetes
// condition shape, for plugins' synced views, exports and status.
//
// Threading: a JsonWriter is owned by one caller.
#ifndef PORTICO_SDK_JSON_WRITER_H_
#define PORTICO_SDK_JSON_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "portico/sdk/json.h"

namespace portico::sdk {

// JsonWriter writes one JSON document; Take() returns it.
class JsonWriter {
 public:
  JsonWriter() : writer_(buffer_) {}

  JsonWriter& Key(std::string_view key) {
    writer_.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
    return *this;
  }
  JsonWriter& String(std::string_view value) {
    writer_.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
    return *this;
  }
  JsonWriter& Int(int64_t value) {
    writer_.Int64(value);
    return *this;
  }
  JsonWriter& Bool(bool value) {
    writer_.Bool(value);
    return *this;
  }
  JsonWriter& Null() {
    writer_.Null();
    return *this;
  }
  JsonWriter& Value(const rapidjson::Value& value) {
    value.Accept(writer_);
    return *this;
  }
  JsonWriter& BeginObject() {
    writer_.StartObject();
    return *this;
  }
  JsonWriter& EndObject() {
    writer_.EndObject();
    return *this;
  }
  JsonWriter& BeginArray() {
    writer_.StartArray();
    return *this;
  }
  JsonWriter& EndArray() {
    writer_.EndArray();
    return *this;
  }
  // Field writes "key": "value".
  JsonWriter& Field(std::string_view key, std::string_view value) { return Key(key).String(value); }
  JsonWriter& Field(std::string_view key, int64_t value) { return Key(key).Int(value); }

  std::string Take() { return std::string(buffer_.GetString(), buffer_.GetSize()); }

 private:
  rapidjson::StringBuffer buffer_;
  rapidjson::Writer<rapidjson::StringBuffer> writer_;
};

// Condition is one Kubernetes status condition (lastTransitionTime is stamped by the host,
// which knows when a condition last changed).
struct Condition {
  std::string type;
  std::string status;  // "True", "False" or "Unknown"
  std::string reason;
  std::string message;
};

inline void WriteCondition(JsonWriter& w, const Condition& c, int64_t generation) {
  w.BeginObject()
      .Field("type", c.type)
      .Field("status", c.status)
      .Field("reason", c.reason)
      .Field("message", c.message)
      .Field("observedGeneration", generation)
      .EndObject();
}

inline void WriteConditions(JsonWriter& w, const std::vector<Condition>& conditions,
                            int64_t generation) {
  w.Key("conditions").BeginArray();
  for (const Condition& c : conditions) WriteCondition(w, c, generation);
  w.EndArray();
}

}  // namespace portico::sdk

#endif  // PORTICO_SDK_JSON_WRITER_H_
