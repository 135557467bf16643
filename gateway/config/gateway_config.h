// gateway_config.h: GatewayConfig, every setting of portico-gateway (DESIGN.md §7), read from
// portico-gateway.toml and from flags (config_flags.h); a flag given on the command line
// overrides the file, the file overrides the defaults, and the defaults work: a bare
// `portico-gateway` connects to 127.0.0.1:5810 as its host name.
//
// portico-gateway.toml (every key optional; unknown keys are errors naming file and line):
//   controller    = "127.0.0.1:5810"        # ConfigSync address of portico-controller; several
//                                           #   (failover): ["a:5810", "b:5810"] or "a:5810,b:5810"
//   name          = "edge-1"                # default: the host name
//   addresses     = ["127.0.0.1"]           # where this gateway serves traffic (Hello.addresses)
//   plugin_dir    = "/usr/lib/portico/plugins"
//   snapshot_path = "/var/lib/portico/gateway.snapshot"  # "" (default): no snapshot file
//   spool_dir     = "/var/lib/portico"      # scratch file of held object bodies (unlinked);
//                                           #   "" (default): $TMPDIR, else /tmp
//   workers       = 0                       # data-plane threads; 0: one per CPU core
//   log_level     = "info"
//   access_log    = "stderr"                # one JSON line per request: "stderr", "stdout",
//                                           #   a file path (appended), or "off"
//   listen_address = ""                     # bound for Gateways without spec.addresses;
//                                           #   "": the first of `addresses`
//   busy_poll_us  = 50                      # after traffic a worker polls this long (µs)
//                                           #   before it sleeps; 0: sleep at once
//   escaped_slashes = "UnescapeAndRedirect" # a path with %2F/%5C: "KeepUnchanged",
//                                           #   "RejectRequest" (400), "UnescapeAndForward",
//                                           #   "UnescapeAndRedirect" (307 to the decoded path)
//   [serve]                                 # what this gateway serves (one or both)
//   gateways      = ["default/web"]         # "namespace/name" ("name": namespace default)
//   gateway_class = "portico"
//   [admin]
//   address   = "127.0.0.1"
//   port      = 5900                        # 0: any free port
//   port_file = ""                          # write the bound port here (tests)
//   token_file = ""                         # bearer token (file mode 0600); required when the
//                                           #   address is not loopback (core/admin/admin_auth.h)
//   [timeouts]                              # data plane, in milliseconds
//   header_read_ms   = 10000                # a whole request head (absolute; then 408)
//   idle_ms          = 60000                # a client connection between requests
//   body_read_ms     = 60000                # no byte of a request body the gateway waits for
//                                           #   (then 408; nginx's client_body_timeout)
//   connect_ms       = 1000                 # an upstream connect (then 503)
//   upstream_ms      = 60000                # no byte moved on a proxied exchange (then 504)
//   upstream_idle_ms = 60000                # a pooled idle upstream connection
//   drain_ms         = 5000                 # SIGINT/SIGTERM: stop listening, let requests in
//                                           #   flight finish this long (0: close at once)
//   drain_idle_ms    = 1000                 # while draining, close a connection idle this long
//                                           #   (a request before that is answered, with close)
//   [limits]
//   max_request_line   = 8192               # longer: 414
//   max_header_line    = 16384              # a longer field line: 431 (nginx: 8 KiB)
//   max_header_bytes   = 65536              # a longer head: 431
//   max_headers        = 100                # more fields: 431
//   max_body_bytes     = 0                  # request bodies; 0: unlimited (else 413)
//   upstream_keepalive = 256                # idle upstream connections per endpoint and worker
//   max_connections    = 0                  # client connections, shared out over the workers;
//                                           #   at the cap the longest-idle connection is
//                                           #   closed for a new one (else it is refused);
//                                           #   0: half the open-file limit less 64
//   max_requests_per_connection = 0         # then "Connection: close"; 0: unlimited (as
//                                           #   Envoy; nginx's keepalive_requests is 1000)
//   [sync]                                  # the ConfigSync channel, in milliseconds
//   keepalive_ms         = 5000             # HTTP/2 ping after this long without a frame
//                                           #   (>= 1000: the controller refuses more often)
//   keepalive_timeout_ms = 5000             # no ping ack within this: the link is dead, reconnect
//                                           #   (a black-holed link is found in about the sum)
//   [conf_sync_security]                    # mutual TLS to the controller (core/sync/
//   ...                                     #   sync_security.h); absent: plaintext
// Relative paths are relative to the file.
//
// Thread-safety: value types and pure functions.
#ifndef PORTICO_GATEWAY_CONFIG_GATEWAY_CONFIG_H_
#define PORTICO_GATEWAY_CONFIG_GATEWAY_CONFIG_H_

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/sync/sync_security.h"
#include "portico/sdk/status.h"

namespace portico::gateway {

// GatewayRef is one served Gateway ("namespace/name").
struct GatewayRef {
  std::string ns;
  std::string name;

  friend bool operator==(const GatewayRef&, const GatewayRef&) = default;
  std::string ToString() const { return ns + "/" + name; }
};

struct GatewayConfig {
  std::string controller = "127.0.0.1:5810";  // one host:port, or several comma-separated
  std::string name;                   // empty: DefaultGatewayName() (ResolveConfig fills it in)
  std::vector<std::string> gateways;  // "namespace/name" or "name" (ParseGatewayRef)
  std::string gateway_class;
  std::vector<std::string> addresses = {"127.0.0.1"};
  std::string plugin_dir;     // empty: core::DefaultPluginDir()
  std::string snapshot_path;  // empty: no snapshot file
  std::string spool_dir;      // empty: the system temporary directory
  std::string admin_address = "127.0.0.1";
  uint16_t admin_port = 5900;
  std::string admin_port_file;
  std::string admin_token_file;  // empty: no token (then the address must be loopback)
  int workers = 0;  // 0: one per CPU core
  std::string log_level = "info";
  std::string access_log = "stderr";  // "stderr", "stdout", a file path, or "off"
  std::string listen_address;         // "": addresses.front() (or 0.0.0.0 when none)
  int64_t busy_poll_us = 50;          // EventLoop busy polling (0: off)
  std::string escaped_slashes = "UnescapeAndRedirect";  // http::ParseEscapedSlashes names
  // [timeouts] (milliseconds)
  int64_t header_read_timeout_ms = 10'000;
  int64_t idle_timeout_ms = 60'000;
  int64_t body_read_timeout_ms = 60'000;
  int64_t connect_timeout_ms = 1'000;
  int64_t upstream_timeout_ms = 60'000;
  int64_t upstream_idle_timeout_ms = 60'000;
  int64_t tunnel_idle_timeout_ms = 300'000;  // an upgraded connection (WebSocket) with no traffic
  int64_t drain_timeout_ms = 5'000;  // SIGTERM: requests in flight may finish for this long
  int64_t drain_idle_timeout_ms = 1'000;  // while draining: an idle connection closes after this
  // [limits]
  int64_t max_request_line = 8 * 1024;
  int64_t max_header_line = 16 * 1024;
  int64_t max_header_bytes = 64 * 1024;
  int64_t max_headers = 100;
  int64_t max_body_bytes = 0;  // 0: unlimited
  int64_t upstream_keepalive = 256;
  int64_t max_connections = 0;              // 0: derived from RLIMIT_NOFILE (DefaultMaxConnections)
  int64_t max_requests_per_connection = 0;  // 0: unlimited (Envoy's default; nginx: 1000)
  // [sync] (milliseconds): gRPC keepalive of the ConfigSync channel
  int64_t sync_keepalive_ms = 5'000;
  int64_t sync_keepalive_timeout_ms = 5'000;
  core::SyncSecurity sync_security;  // [conf_sync_security]; disabled when absent
  // The TOML file the settings came from ("" when none); informational.
  std::string config_file;

  // Validate checks values: a "host:port" controller, gateway references, workers in [0, 256],
  // a known log level, a non-empty admin address and access_log, positive timeouts and limits.
  Status Validate() const;
  // Controllers splits `controller` at commas (blanks trimmed, empty parts dropped).
  std::vector<std::string> Controllers() const;
  // ListenAddress is listen_address, else the first of addresses, else "0.0.0.0".
  std::string ListenAddress() const;
  // ServedGateways parses `gateways` (Validate must have passed).
  std::vector<GatewayRef> ServedGateways() const;
};

// ParseGatewayRef reads "namespace/name" or "name" (namespace "default"). INVALID_ARGUMENT for
// empty parts or more than one '/'.
StatusOr<GatewayRef> ParseGatewayRef(std::string_view text);

// DefaultMaxConnections is the client-connection cap when max_connections is 0: half of the
// soft RLIMIT_NOFILE less 64 descriptors (each proxied connection may hold an upstream one;
// plugins, gRPC, epoll and logs need some), at least 16.
int64_t DefaultMaxConnections();

// DefaultGatewayName is the host name ("portico-gateway" when it cannot be read).
std::string DefaultGatewayName();

// ParseConfigToml applies the settings of TOML `text` on top of `config`. `file` names the file
// in errors ("portico-gateway.toml:3: workers: expected an integer") and is the base of relative
// paths. INVALID_ARGUMENT on a syntax error, a wrong type, an out-of-range value, an unknown key
// or a bad [conf_sync_security] table (as core::ParseSyncSecurity reports it).
Status ParseConfigToml(std::string_view text, const std::filesystem::path& file,
                       GatewayConfig* config);

// LoadConfigFile reads `file` and applies it (ParseConfigToml). NOT_FOUND when it cannot be read.
Status LoadConfigFile(const std::filesystem::path& file, GatewayConfig* config);

}  // namespace portico::gateway

#endif  // PORTICO_GATEWAY_CONFIG_GATEWAY_CONFIG_H_
