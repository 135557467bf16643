// proxy_settings.h: ProxySettings, the data plane's timeouts and limits (portico-gateway.toml
// [timeouts] and [limits], gateway/config), fixed for the life of the process.
//
// Thread-safety: a value type, read by every worker.
#ifndef PORTICO_GATEWAY_SERVER_PROXY_SETTINGS_H_
#define PORTICO_GATEWAY_SERVER_PROXY_SETTINGS_H_

#include <cstddef>
#include <cstdint>

#include "gateway/http/message.h"
#include "gateway/http/path_normalize.h"

namespace portico::gateway::server {

struct ProxySettings {
  // Timeouts, in milliseconds.
  uint64_t header_read_timeout_ms = 10'000;  // a request head must arrive within this (absolute)
  uint64_t idle_timeout_ms = 60'000;         // a client connection between requests
  // A request body the gateway waits for gets no byte for this long: 408 (or the connection
  // closes when the response began); nginx's client_body_timeout.
  uint64_t body_read_timeout_ms = 60'000;
  uint64_t connect_timeout_ms = 1'000;       // an upstream connect (then 503)
  // No byte moved in either direction of a proxied exchange for this long: 504 before the
  // response head, else the connections close (nginx's proxy_read/send_timeout). Routes'
  // timeouts.request / timeouts.backendRequest apply on top.
  uint64_t upstream_timeout_ms = 60'000;
  uint64_t upstream_idle_timeout_ms = 60'000;  // an idle pooled upstream connection
  // An upgraded connection (a 101 to a WebSocket or other Upgrade request) with no byte moved
  // either way for this long is closed (Envoy's stream idle timeout, 5 minutes).
  uint64_t tunnel_idle_timeout_ms = 300'000;
  // While draining (shutdown, hand-over), a client connection idle between requests is closed
  // once idle this long (at once when it already was); a request arriving before that is
  // answered with "Connection: close" instead of meeting a closed connection.
  uint64_t drain_idle_timeout_ms = 1'000;

  // Limits.
  http::HeadLimits request_limits;              // 414 / 431
  http::HeadLimits response_limits;             // 502
  uint64_t max_body_bytes = 0;                  // request bodies; 0: unlimited (else 413)
  size_t max_idle_upstream_per_endpoint = 256;  // per worker
  size_t buffer_bytes = 16 * 1024;              // initial per-connection read buffer
  // Client connections, all workers (each admits its share, rounded up); at its share a worker
  // closes its longest-idle connection (between requests, nothing buffered, or accepted and
  // silent) for a new one, and refuses the new one when none is idle. 0: unlimited.
  size_t max_connections = 0;
  // Requests served on one connection; the last is answered with "Connection: close". 0: no cap.
  uint64_t max_requests_per_connection = 0;

  // After traffic, a worker keeps polling this long (microseconds) before it sleeps (EventLoop
  // busy polling); 0: it sleeps at once.
  uint64_t busy_poll_us = 50;

  // A request path holding %2F or %5C (Envoy Gateway's default: a 307 to the decoded path).
  http::EscapedSlashes escaped_slashes = http::EscapedSlashes::kUnescapeAndRedirect;
};

}  // namespace portico::gateway::server

#endif  // PORTICO_GATEWAY_SERVER_PROXY_SETTINGS_H_
