// time_format.h: FormatRfc3339, the timestamps Portico writes (metadata.creationTimestamp,
// conditions' lastTransitionTime, admin APIs), Kubernetes style:
// "2026-11-30T12:00:00Z" (UTC, whole seconds).
//
// Thread-safety: a pure function.
#ifndef PORTICO_CORE_COMMON_TIME_FORMAT_H_
#define PORTICO_CORE_COMMON_TIME_FORMAT_H_

#include <cstdint>
#include <string>

namespace portico::core {

// FormatRfc3339 renders Unix milliseconds as RFC 3339 UTC with whole seconds (rounded down).
std::string FormatRfc3339(int64_t unix_ms);

}  // namespace portico::core

#endif  // PORTICO_CORE_COMMON_TIME_FORMAT_H_
