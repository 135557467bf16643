// time_format.h: FormatRfc3339, the timestamps the reconciler writes into objects
// (metadata.creationTimestamp, conditions' lastTransitionTime), Kubernetes style:
// "2026-11-30T12:00:00Z" (UTC, whole seconds).
//
// Thread-safety: a pure function.
#ifndef PORTICO_CONTROLLER_RECONCILE_TIME_FORMAT_H_
#define PORTICO_CONTROLLER_RECONCILE_TIME_FORMAT_H_

#include <cstdint>
#include <string>

namespace portico::controller {

// FormatRfc3339 renders Unix milliseconds as RFC 3339 UTC with whole seconds (rounded down).
std::string FormatRfc3339(int64_t unix_ms);

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_RECONCILE_TIME_FORMAT_H_
