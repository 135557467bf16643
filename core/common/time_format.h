// time_format.h: FormatRfc3339, the timestamps Portico writes (metadata.creationTimestamp,
// conditions' lastTransitionTime, admin APIs), Kubernetes style:
// "2026-11-30T12:00:00Z" (UTC, whole seconds).
//
// Also NowUnixMs, the wall clock those timestamps come from.
//
// Thread-safety: pure functions (NowUnixMs reads the system clock).
#ifndef PORTICO_CORE_COMMON_TIME_FORMAT_H_
#define PORTICO_CORE_COMMON_TIME_FORMAT_H_

#include <cstdint>
#include <string>

namespace portico::core {

// FormatRfc3339 renders Unix milliseconds as RFC 3339 UTC with whole seconds (rounded down).
std::string FormatRfc3339(int64_t unix_ms);
// NowUnixMs is the system clock in Unix milliseconds.
int64_t NowUnixMs();

}  // namespace portico::core

#endif  // PORTICO_CORE_COMMON_TIME_FORMAT_H_
