#include "controller/center/object_limits.h"

#include <rapidjson/writer.h>

#include <string>

namespace portico::controller {
namespace {

// CountingStream is a RapidJSON output stream that only counts.
struct CountingStream {
  using Ch = char;
  size_t count = 0;
  void Put(Ch) { ++count; }
  void Flush() {}
};

std::string TooBig(std::string_view what, size_t size, size_t limit, std::string_view setting) {
  return std::string(what) + std::to_string(size) + " bytes, more than the limit of " +
         std::to_string(limit) + " (limits." + std::string(setting) + ")";
}

}  // namespace

size_t SerializedSize(const rapidjson::Value& value) {
  CountingStream stream;
  rapidjson::Writer<CountingStream> writer(stream);
  value.Accept(writer);
  return stream.count;
}

Status CheckObjectLimits(const rapidjson::Value& doc, const ObjectLimits& limits) {
  const rapidjson::Value* annotations = json::FindPath(doc, "metadata.annotations");
  if (annotations != nullptr && annotations->IsObject()) {
    size_t total = 0;
    for (const auto& m : annotations->GetObject()) {
      total += m.name.GetStringLength();
      // Values that are not strings count as their JSON text (the API server would refuse them).
      total += m.value.IsString() ? m.value.GetStringLength() : SerializedSize(m.value);
    }
    if (total > limits.max_annotation_bytes) {
      return InvalidArgumentError(TooBig("metadata.annotations: keys and values hold ", total,
                                         limits.max_annotation_bytes, "max_annotation_bytes"));
    }
  }
  size_t size = SerializedSize(doc);
  if (size > limits.max_object_bytes) {
    return InvalidArgumentError(
        TooBig("the object is, as JSON, ", size, limits.max_object_bytes, "max_object_bytes"));
  }
  return OkStatus();
}

}  // namespace portico::controller
