// object_limits.h: ObjectLimits, the bounds a config source puts on one object and one file
// (issue 15), with the Kubernetes API server's defaults: an object of at most 1.5 MiB and
// annotations of at most 256 KiB in total. A source refuses an object over a limit with an error
// naming the file, the object and the limit, and keeps the object's last good version.
//
// Thread-safety: value types and pure functions.
#ifndef PORTICO_CONTROLLER_CENTER_OBJECT_LIMITS_H_
#define PORTICO_CONTROLLER_CENTER_OBJECT_LIMITS_H_

#include <cstddef>

#include "portico/sdk/json.h"
#include "portico/sdk/status.h"

namespace portico::controller {

struct ObjectLimits {
  // The document as compact JSON (what travels on and is stored), like etcd's request limit
  // behind the API server.
  size_t max_object_bytes = 1536u * 1024;
  // Keys and values of metadata.annotations together (TotalAnnotationSizeLimitB).
  size_t max_annotation_bytes = 256u * 1024;
  // Documents (objects) in one file; more and the whole file is refused.
  size_t max_objects_per_file = 10'000;
};

// SerializedSize is the length of `value` as compact JSON, computed without building the text.
size_t SerializedSize(const rapidjson::Value& value);

// CheckObjectLimits checks one document; INVALID_ARGUMENT naming the field and the limit, e.g.
// "metadata.annotations: keys and values hold 52428817 bytes, more than the limit of 262144
// (limits.max_annotation_bytes)". The caller names the file and the object.
Status CheckObjectLimits(const rapidjson::Value& doc, const ObjectLimits& limits);

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_CENTER_OBJECT_LIMITS_H_
