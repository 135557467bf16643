// worker.h: Worker, one data-plane thread: its EventLoop, the acceptors of its own listening
// sockets, its client connections, upstream pool, balancing state, pinned snapshots and
// access-log buffer (data_plane.h describes the whole).
//
// Snapshot pinning: the worker holds the snapshots still used by its requests in a list whose
// last element is current; a request takes a Pin (a plain counter increment) and drops it when
// it ends; a non-current pin whose count falls to zero is released. So a request keeps its
// route table and backends without touching a shared reference count.
//
// Thread-safety: everything but Start, Stop, Wake and the relaxed counters runs on the worker's
// thread. Ownership: owned by the DataPlane; owns its connections.
#ifndef PORTICO_GATEWAY_SERVER_WORKER_H_
#define PORTICO_GATEWAY_SERVER_WORKER_H_

#include <atomic>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/runtime/routing/backend_table.h"
#include "core/runtime/routing/route_types.h"
#include "gateway/net/event_loop.h"
#include "gateway/server/access_log.h"
#include "gateway/server/proxy_settings.h"
#include "gateway/server/reject_counters.h"
#include "gateway/upstream/http_client.h"
#include "gateway/upstream/upstream_pool.h"

namespace portico::gateway::net {
class ListenerSocket;
}  // namespace portico::gateway::net

namespace portico::gateway::server {

class ClientConnection;
class DataPlane;
struct DataPlaneSnapshot;

// Pin is one snapshot a worker serves from, with the number of its requests using it.
struct Pin {
  std::shared_ptr<const DataPlaneSnapshot> snapshot;
  uint64_t requests = 0;
};

// WorkerCounters are written by the worker (relaxed stores) and read by Stats.
struct WorkerCounters {
  std::atomic<uint64_t> generation{0};
  std::atomic<uint64_t> connections_accepted{0};
  std::atomic<uint64_t> connections_open{0};
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> retries{0};         // attempts retried by route retry policies
  std::atomic<uint64_t> responses[6] = {};  // by status class (DataPlaneStats::responses)
  std::atomic<uint64_t> upstream_connects{0};
  std::atomic<uint64_t> upstream_reuses{0};
  std::atomic<uint64_t> upstream_open{0};
  std::atomic<uint64_t> mirror_requests{0};         // HttpClient mirror sent
  std::atomic<uint64_t> mirror_failures{0};         // HttpClient mirror failed
  std::atomic<uint64_t> mirror_connects{0};         // HttpClient mirror connects
  std::atomic<uint64_t> mirror_in_flight{0};        // HttpClient mirror in_flight
  std::atomic<uint64_t> filter_calls{0};            // filters' outbound calls answered
  std::atomic<uint64_t> filter_call_failures{0};    // ... refused, reset or timed out
  std::atomic<uint64_t> filter_calls_cancelled{0};  // ... ended by their request first
  std::atomic<uint64_t> filter_calls_in_flight{0};
  std::atomic<uint64_t> tls_failures{0};
  std::atomic<uint64_t> connections_shed{0};     // idle ones closed at the cap for a new one
  std::atomic<uint64_t> connections_refused{0};  // new ones closed at the cap (none idle)
  std::atomic<uint64_t> accept_failures{0};      // accept(2) out of descriptors or memory
  RejectCounters rejected;                       // by status and reason (reject_counters.h)
};

class Worker {
 public:
  Worker(DataPlane* plane, int index);
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;
  ~Worker();

  Status Start();
  void Stop();
  void Wake();
  // Drain makes the worker stop accepting without dropping what is queued on its listening
  // sockets (listener_socket.h, "Hand-over") and end every connection gracefully
  // (ClientConnection::Drain). Any thread; Drained() turns true once the worker has closed its
  // listening sockets and has no connection left, reported to the DataPlane in the same loop
  // iteration that closed the last one.
  void Drain();
  bool Drained() const { return drained_.load(std::memory_order_acquire); }

  // Worker-thread API for connections.
  int index() const { return index_; }
  net::EventLoop& loop() { return *loop_; }
  const ProxySettings& settings() const { return settings_; }
  upstream::UpstreamPool& pool() { return *pool_; }
  AccessLogBuffer* access_log() { return access_log_.get(); }
  upstream::HttpClient& http_client() { return *http_client_; }
  // Roll says whether a request is taken at `percent` (0-100, fractional allowed).
  bool Roll(double percent);
  WorkerCounters& counters() const { return counters_; }

  // AcquirePin returns the current pin with one more request on it; ReleasePin drops one.
  Pin* AcquirePin();
  void ReleasePin(Pin* pin);

  // PickBackend chooses one of `action`'s backends by smooth weighted round robin (per worker,
  // per rule); nullptr when the total weight is 0.
  const core::routing::BackendRef* PickBackend(const core::routing::RouteAction& action);
  // PickEndpoint chooses an endpoint of `backend` round robin and returns its pool (nullptr for
  // a DNS name without addresses yet). `ref_key` is the "ns/svc:port" the route asked for: its
  // port serves an ExternalName Service's unlisted ports. `backend` must have endpoints and
  // belong to the current pin's snapshot. `tls` (null: clear text) is how the request reaches
  // it (UpstreamTlsTable::Find): pools are per endpoint and TLS configuration.
  upstream::EndpointPool* PickEndpoint(
      const core::routing::Backend& backend, std::string_view ref_key,
      const std::shared_ptr<const core::tls::UpstreamTls>* tls = nullptr);
  // ResolveEndpoint is the pool of DNS name `name` at `port` (the data plane's DnsCache; its
  // addresses round robin); nullptr while the name has no address.
  upstream::EndpointPool* ResolveEndpoint(
      const std::string& name, uint16_t port,
      const std::shared_ptr<const core::tls::UpstreamTls>* tls = nullptr);

  // OnClosed is called by a connection that closed (it is freed after the current batch).
  void OnClosed(ClientConnection* connection);
  // SetIdle records whether `connection` is idle (between requests with nothing buffered, or
  // accepted and silent): at the connection cap the longest-idle one makes room for a new one.
  // Cheap when nothing changes (connections call it after every Drive).
  void SetIdle(ClientConnection* connection, bool idle);
  // Counts the last flush of the access log and the upstream counters into counters_.
  void PublishCounters();

 private:
  class Acceptor;
  struct SwrrState {
    std::vector<int64_t> current;
  };

  void Run();
  void Repin();
  void SyncListeners(const DataPlaneSnapshot& snapshot);
  void Accept(Acceptor* acceptor);
  void CloseAll();
  void BeginDrain();
  // CloseListeners accepts what is left and stops listening on every socket (the end of the
  // handshake grace, or at once when the kernel migrates queued connections).
  void CloseListeners();
  // MaybeReportDrained marks the worker drained (once) when it drains and has no connection
  // left; true when it did so just now.
  bool MaybeReportDrained();
  // AdmitConnection makes room for one more connection under the cap (closing the longest-idle
  // one) and says whether the new one may stay.
  bool AdmitConnection();
  // AcceptFailed: accept(2) ran out of descriptors (or memory): retried when a connection
  // closes, and at the latest after kAcceptRetryMs (an edge-triggered listener raises no new
  // edge for connections already queued).
  void AcceptFailed(const Acceptor* acceptor, int error);
  void RetryAccept();

  DataPlane* const plane_;
  const int index_;
  const ProxySettings settings_;
  std::unique_ptr<net::EventLoop> loop_;
  std::unique_ptr<upstream::UpstreamPool> pool_;
  std::unique_ptr<upstream::HttpClient> http_client_;
  uint64_t rng_;  // Roll's state (seeded per worker: workers must not draw the same sequence)
  std::unique_ptr<AccessLogBuffer> access_log_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> drain_{false};    // asked to drain (any thread)
  std::atomic<bool> drained_{false};  // draining, and no connection left
  bool draining_ = false;             // worker thread: BeginDrain ran
  uint64_t close_listeners_at_ms_ = 0;  // worker thread: the handshake grace's end (0: none)
  mutable WorkerCounters counters_;   // written by the worker, read by DataPlane::Stats

  std::list<Pin> pins_;  // back(): current
  uint64_t pinned_generation_ = UINT64_MAX;
  std::map<std::string, std::unique_ptr<Acceptor>> acceptors_;  // by ListenerSocket::key()
  std::unordered_map<ClientConnection*, std::unique_ptr<ClientConnection>> connections_;
  size_t open_connections_ = 0;  // not closed (connections_ also holds closed ones until freed)
  size_t connection_share_ = 0;  // this worker's part of max_connections (0: no cap)
  // Idle connections, most recently idle first (intrusive: ClientConnection::idle_prev_/next_).
  ClientConnection* idle_head_ = nullptr;
  ClientConnection* idle_tail_ = nullptr;
  uint64_t accept_retry_at_ms_ = 0;  // accept(2) failed: retry then (0: not waiting)
  bool accept_blocked_ = false;      // accept(2) failed since the last success (logging)

  // Balancing state of the current pin (cleared when it changes).
  std::unordered_map<const core::routing::RouteAction*, SwrrState> swrr_;
  std::vector<uint32_t> endpoint_cursor_;  // by Backend::index
  uint32_t dns_cursor_ = 0;                // round robin over a DNS name's addresses
  // Endpoint pools by Backend::index, then by endpoint position (filled lazily).
  std::vector<std::vector<upstream::EndpointPool*>> endpoint_pools_;
  std::vector<const core::tls::UpstreamTls*> endpoint_tls_;  // what endpoint_pools_[i] speak
};

}  // namespace portico::gateway::server

#endif  // PORTICO_GATEWAY_SERVER_WORKER_H_
