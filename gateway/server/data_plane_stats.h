// data_plane_stats.h: DataPlaneStats, the data plane's traffic counters summed over its workers
// (DataPlane::Stats), shown by the gateway admin API (/api/v1/dataplane, /metrics).
//
// Thread-safety: a value type.
#ifndef PORTICO_GATEWAY_SERVER_DATA_PLANE_STATS_H_
#define PORTICO_GATEWAY_SERVER_DATA_PLANE_STATS_H_

#include <array>
#include <cstdint>

#include "gateway/server/reject_counters.h"

namespace portico::gateway::server {

struct DataPlaneStats {
  uint64_t generation = 0;  // of the configuration the workers serve
  uint64_t workers = 0;
  uint64_t connections_accepted = 0;
  uint64_t connections_open = 0;
  uint64_t requests = 0;
  uint64_t retries = 0;  // upstream attempts retried by route retry policies
  // Responses by status class: [1] 1xx ... [5] 5xx (499, a client gone before the answer, is
  // a 4xx). [0] is unused.
  std::array<uint64_t, 6> responses{};
  uint64_t upstream_connects = 0;  // new upstream connections
  uint64_t upstream_reuses = 0;    // requests sent on a pooled connection
  uint64_t upstream_open = 0;      // upstream connections open (idle or in use)
  uint64_t mirror_requests = 0;    // RequestMirror copies written in full
  uint64_t mirror_failures = 0;    // copies dropped, refused, reset or timed out
  uint64_t mirror_connects = 0;    // connections opened to mirrors (the rest are reused)
  uint64_t mirror_in_flight = 0;   // copies sent or being sent, their answer not read yet
  uint64_t filter_calls = 0;       // filters' outbound calls (http_call) answered
  uint64_t filter_call_failures = 0;    // ... refused, reset or timed out
  uint64_t filter_calls_cancelled = 0;  // ... abandoned because their request ended first
  uint64_t filter_calls_in_flight = 0;
  uint64_t tls_failures = 0;  // TLS sessions that failed (handshake refused, bad record)
  uint64_t connections_shed = 0;     // idle connections closed at the cap for a new one
  uint64_t connections_refused = 0;  // new connections closed at the cap, none idle
  uint64_t accept_failures = 0;      // accept(2) out of descriptors or memory
  // Requests answered locally with status >= 400 (or ended after their response began), by
  // status and reason (reject_counters.h).
  RejectTotals rejected;
};

}  // namespace portico::gateway::server

#endif  // PORTICO_GATEWAY_SERVER_DATA_PLANE_STATS_H_
