// backend_table.h: BackendTable, the backends of the gateway data plane (DESIGN.md §4) built from
// a RuntimeSnapshot's backend.v1 entries: each Service port joined with the Service's
// EndpointSlices the way Kubernetes joins them (docs/contributions.md, backend.v1):
//   backend "ns/svc:P" -> the `ports` entry's port with port == P (none: no backend, 500) -> every
//   `endpoints` entry of (ns, svc) -> the slice port whose name equals the Service port's name
//   (a slice port without a number means the Service port's numeric targetPort) -> each ready
//   endpoint address x that port (none: an empty backend, 503).
// ExternalName Services resolve to their DNS name: one endpoint {externalName, P} per listed
// port, and for a port the Service does not list, a per-Service backend whose endpoint port is 0
// (use the key's port).
//
// Thread-safety: a built table is immutable; Find and the accessors may be called from any
// number of threads at once, lock-free and allocation-free. Build runs on one thread.
// Ownership: a Backend pointer lives as long as the table.
#ifndef PORTICO_CORE_RUNTIME_ROUTING_BACKEND_TABLE_H_
#define PORTICO_CORE_RUNTIME_ROUTING_BACKEND_TABLE_H_

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/runtime/routing/flat_index.h"
#include "core/runtime/runtime_types.h"

namespace portico::core::routing {

// Endpoint is one ready address x port of a backend.
struct Endpoint {
  std::string address;  // an IPv4/IPv6 literal, or a DNS name (FQDN slices, ExternalName)
  uint16_t port = 0;    // 0: an ExternalName fallback backend; use the backend key's port
  // The parsed socket address of an IP literal; sockaddr_len 0 for a DNS name (resolve it).
  sockaddr_storage sockaddr{};
  socklen_t sockaddr_len = 0;
};

// Backend is one {namespace, service, port}.
struct Backend {
  std::string key;  // "<namespace>/<service>:<port>" ("<namespace>/<service>" for the
                    // ExternalName fallback of unlisted ports)
  // A dense index (< BackendTable::index_limit()) for per-worker arrays (round-robin cursors,
  // keep-alive pools). Stable across rebuilds for the same key when Build is given `previous`;
  // the index of a removed key may be reused by a later new key.
  uint32_t index = 0;
  std::vector<Endpoint> endpoints;  // ready ones, sorted by (address, port), no duplicates
  std::string app_protocol;         // the Service port's appProtocol, "" when unset
  std::string port_name;            // the Service port's name, "" when unnamed
  std::string external_name;        // an ExternalName Service's DNS name (trailing dot removed)
};

class BackendTable : public std::enable_shared_from_this<BackendTable> {
 public:
  // Build joins the backend.v1 entries of `snapshot`. `previous` (may be null) keeps indexes
  // stable and shares Backends of Services whose entries did not change; when the backend.v1
  // map is the one `previous` was built from, `previous` itself is returned. Entries it cannot
  // read are skipped.
  static std::shared_ptr<const BackendTable> Build(const RuntimeSnapshot& snapshot,
                                                   const BackendTable* previous = nullptr);

  BackendTable(const BackendTable&) = delete;
  BackendTable& operator=(const BackendTable&) = delete;

  // Find resolves "ns/svc:port": nullptr when the backend does not exist (answer 500); a backend
  // without endpoints answers 503.
  const Backend* Find(std::string_view key) const;

  size_t size() const { return backends_.size(); }
  // index_limit bounds every Backend::index (size per-worker arrays with it).
  uint32_t index_limit() const { return index_limit_; }
  // All lists every backend, sorted by key (admin, tests).
  std::vector<const Backend*> All() const;

 private:
  struct Token {};

 public:
  explicit BackendTable(Token) {}

 private:
  // ServiceGroup is what one Service contributes: its entries (compared by JSON pointer on
  // rebuild) and the backends built from them.
  struct ServiceGroup {
    std::string service;                                      // "ns/svc"
    std::vector<std::shared_ptr<const std::string>> sources;  // ports entry first, then slices
    std::vector<std::shared_ptr<const Backend>> backends;
  };

  std::shared_ptr<const FormatEntries> source_;
  std::vector<ServiceGroup> groups_;                      // sorted by service
  std::vector<std::shared_ptr<const Backend>> backends_;  // sorted by key
  FlatIndex index_;                                       // key -> position in backends_
  uint32_t index_limit_ = 0;
};

}  // namespace portico::core::routing

#endif  // PORTICO_CORE_RUNTIME_ROUTING_BACKEND_TABLE_H_
