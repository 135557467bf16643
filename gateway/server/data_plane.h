// data_plane.h: DataPlane, the gateway's HTTP/1.1 reverse proxy (DESIGN.md §4, §7) and the
// core::RuntimeConsumer of its GatewayRuntime; DataPlaneSnapshot, what its workers serve from.
//
// Configuration flow (sync thread): Prepare(next RuntimeSnapshot) builds the route table and
// the backend table (sharing what did not change with the current ones), keeps the listening
// sockets whose (address, port, protocol) key is unchanged (their connections are untouched),
// binds the new ones (a failure nacks every owning Gateway; the runtime rolls them back and
// prepares again) and refuses the owners the route table could not use. Commit publishes one
// immutable DataPlaneSnapshot and bumps a generation counter; sockets no longer named are
// closed once every worker has let go of them.
//
// Request flow (workers): `workers` threads, each with its own epoll loop (edge-triggered), its
// own SO_REUSEPORT socket per listener key, timer wheel, upstream keep-alive pools, balancing
// state and access-log buffer; nothing is shared between workers on the request path. A worker
// compares the generation with its own once per loop iteration (one relaxed load) and, when it
// moved, pins the new snapshot for the requests it starts from then on; a request keeps the
// snapshot it started with (counted per worker, without atomics).
//
// Backends whose endpoints are DNS names (ExternalName Services, FQDN slices) are resolved by the
// data plane's DnsCache: Prepare prefetches the names of a changed backend table (waiting at most
// kDnsPrefetchWait), workers look them up per request.
//
// Filter bindings (filter_binding.v1: plugin filter instances that route rules name) are created
// at Prepare from the registry's filter types, never on the request path; one a type refuses, or
// whose type no loaded plugin provides, nacks its owner and is left out (its rules answer 500).
//
// TLS (core::tls::TlsTable, built at Prepare beside the route table): one SSL context per
// distinct certificate, shared with the previous snapshot; a worker's acceptor takes the
// certificates of the snapshot it pinned last, so a rotated Secret serves new connections at
// once and leaves open ones untouched. TLS to backends (core::tls::UpstreamTlsTable, from the
// BackendTLSPolicies' backend.v1 "tls" entries): one client context per policy and client
// certificate, shared with the previous snapshot by configuration id.
//
// Listener sets with address "" bind `default_address`. Protocols "HTTP" and "HTTPS" are
// served; an HTTPS socket without any certificate that reached the gateway, and a listener of
// any other protocol (TLS, TCP, UDP: not implemented), nack their owners with the reason, so
// their Gateways never show Programmed=True for a port nothing serves.
//
// Thread-safety: Prepare, Abort and Commit come from the runtime's thread (one at a time);
// Start and Stop from the owner's thread; Current, Generation, Listeners and Stats from any
// thread. Ownership: owns its workers and sockets; outlives the GatewayRuntime it serves.
#ifndef PORTICO_GATEWAY_SERVER_DATA_PLANE_H_
#define PORTICO_GATEWAY_SERVER_DATA_PLANE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/plugin/kind_registry.h"
#include "core/runtime/filter/filter_bindings.h"
#include "core/runtime/routing/backend_table.h"
#include "core/runtime/routing/route_table.h"
#include "core/runtime/runtime_consumer.h"
#include "core/runtime/tls/tls_table.h"
#include "core/runtime/tls/upstream_tls.h"
#include "gateway/net/listener_socket.h"
#include "gateway/server/access_log.h"
#include "gateway/server/data_plane_stats.h"
#include "gateway/server/proxy_settings.h"
#include "gateway/upstream/dns_cache.h"

namespace portico::gateway::server {

class Worker;

// DataPlaneSnapshot is one committed configuration of the data plane. Immutable.
struct DataPlaneSnapshot {
  uint64_t generation = 0;                                      // the RuntimeSnapshot's
  std::shared_ptr<const core::routing::RouteTable> routes;      // never null
  std::shared_ptr<const core::routing::BackendTable> backends;  // never null
  std::shared_ptr<const core::filter::FilterBindings> bindings;  // never null
  std::shared_ptr<const core::tls::TlsTable> tls;                // never null
  std::shared_ptr<const core::tls::UpstreamTlsTable> upstream_tls;  // never null
  // The bound sockets by ListenerSocket::key().
  std::map<std::string, std::shared_ptr<net::ListenerSocket>> listeners;
};

// DataPlaneOptions configure a DataPlane.
struct DataPlaneOptions {
  int workers = 0;                          // 0: one per CPU core
  std::string default_address = "0.0.0.0";  // bound for listener sets with address ""
  ProxySettings settings;
  std::shared_ptr<AccessLogSink> access_log;  // null: no access log
  upstream::DnsCache::Resolver resolver;      // null: getaddrinfo
  // Whether the kernel migrates a closing listener's queued connections (listener_socket.h,
  // "Hand-over"); unset: net.ipv4.tcp_migrate_req, read when the drain begins.
  std::optional<bool> kernel_migrates;
  // The filter types plugins registered (filter_binding.v1 entries are instantiated from them);
  // null: none, every binding is refused. Must outlive the DataPlane.
  const core::KindRegistry* registry = nullptr;
};

// BoundListener describes a listening socket (admin, tests).
struct BoundListener {
  std::string address;  // as the route table names it ("" = default)
  uint16_t port = 0;
  std::string protocol;
  std::string bind_address;
  uint16_t bound_port = 0;
};

class DataPlane final : public core::RuntimeConsumer {
 public:
  explicit DataPlane(DataPlaneOptions options);
  DataPlane(const DataPlane&) = delete;
  DataPlane& operator=(const DataPlane&) = delete;
  ~DataPlane() override;

  // Start starts the workers (they serve the current snapshot, possibly empty).
  Status Start();
  // Stop stops the workers and closes every connection (idempotent).
  void Stop();
  // BeginDrain starts the graceful part of a shutdown and returns at once: every worker stops
  // taking new connections without dropping those queued on its listening sockets
  // (listener_socket.h, "Hand-over"), closes its idle connections once what sits in their
  // sockets is answered, and ends each request in flight with "Connection: close"
  // (ClientConnection::Drain). From then on Prepare binds no new socket. Idempotent.
  void BeginDrain();
  // WaitDrained waits until no worker has a connection or a listening socket left (true), or
  // `timeout` passes first (false; Stop then closes the rest).
  bool WaitDrained(std::chrono::milliseconds timeout);
  // Drain is BeginDrain, then WaitDrained. Call these from the owner's thread, before Stop.
  bool Drain(std::chrono::milliseconds timeout);
  // MigratesOnClose: net.ipv4.tcp_migrate_req was on when the drain began (workers read it).
  bool MigratesOnClose() const { return migrates_on_close_.load(std::memory_order_relaxed); }

  // KeepsCompiled: route_rules.v1 (the route table keeps compiled routes, keyed by digest).
  bool KeepsCompiled(const std::string& format) const override;
  std::vector<core::SyncNack> Prepare(const core::RuntimeSnapshot& next) override;
  void Abort() override;
  void Commit(std::shared_ptr<const core::RuntimeSnapshot> snapshot) override;

  std::shared_ptr<const DataPlaneSnapshot> Current() const;
  uint64_t Generation() const { return generation_.load(std::memory_order_relaxed); }
  // Generation as seen by the slowest worker (tests wait for every worker to have pinned).
  uint64_t MinWorkerGeneration() const;
  std::vector<BoundListener> Listeners() const;
  DataPlaneStats Stats() const;
  int workers() const { return static_cast<int>(workers_.size()); }
  const DataPlaneOptions& options() const { return options_; }
  upstream::DnsCache& dns() { return *dns_; }

  static constexpr std::chrono::milliseconds kDnsPrefetchWait{2000};

 private:
  friend class Worker;
  // OnWorkerDrained is called by a worker that has drained (its thread).
  void OnWorkerDrained();
  // Prepared is what the last Prepare readied.
  struct Prepared {
    std::shared_ptr<const core::routing::RouteTable> routes;
    std::shared_ptr<const core::routing::BackendTable> backends;
    std::shared_ptr<const core::filter::FilterBindings> bindings;
    std::shared_ptr<const core::tls::TlsTable> tls;
    std::shared_ptr<const core::tls::UpstreamTlsTable> upstream_tls;
    std::map<std::string, std::shared_ptr<net::ListenerSocket>> listeners;
  };

  DataPlaneOptions options_;
  std::unique_ptr<upstream::DnsCache> dns_;
  int worker_count_;
  std::vector<std::unique_ptr<Worker>> workers_;

  std::unique_ptr<Prepared> prepared_;  // runtime thread only

  mutable std::mutex mu_;
  std::shared_ptr<const DataPlaneSnapshot> current_;  // guarded by mu_
  std::atomic<uint64_t> generation_{0};

  std::mutex drain_mu_;
  std::condition_variable drain_cv_;  // notified by workers that drained
  std::atomic<bool> draining_{false};           // BeginDrain ran (Prepare binds nothing new)
  std::atomic<bool> migrates_on_close_{false};  // set before the workers are told to drain
};

}  // namespace portico::gateway::server

#endif  // PORTICO_GATEWAY_SERVER_DATA_PLANE_H_
