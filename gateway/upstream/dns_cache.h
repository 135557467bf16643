// dns_cache.h: DnsCache, the addresses of the DNS names backends point at (ExternalName
// Services, FQDN EndpointSlices), resolved off the request path by one resolver thread.
//
// The data plane prefetches the names of each configuration it prepares (waiting a bounded time,
// so a new ExternalName backend serves from its first request) and forgets the names it no
// longer uses; workers then only look names up. A name is re-resolved every `refresh` in the
// background and keeps its last good addresses meanwhile (a failed refresh does not drop them), as
// Envoy's STRICT_DNS clusters do. A name that never resolved has no addresses: its requests answer
// 503, and a lookup queues another try.
//
// Thread-safety: every method may be called from any thread (one mutex; lookups copy a
// shared_ptr). Ownership: owns its thread; the destructor joins it, or detaches it when it is
// still inside a resolution after 200 ms (the thread then exits when that returns, touching
// only the state it shares, never the DnsCache).
#ifndef PORTICO_GATEWAY_UPSTREAM_DNS_CACHE_H_
#define PORTICO_GATEWAY_UPSTREAM_DNS_CACHE_H_

#include <sys/socket.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace portico::gateway::upstream {

class DnsCache {
 public:
  // ResolvedAddress is one address of a name (port 0: the backend's port is set per use).
  struct ResolvedAddress {
    sockaddr_storage address{};
    socklen_t length = 0;
    std::string text;  // the IP as text ("10.0.0.7", "2001:db8::1")
  };
  using Addresses = std::vector<ResolvedAddress>;
  // Resolver turns a name into addresses; empty when it does not resolve.
  using Resolver = std::function<Addresses(const std::string& name)>;

  // `resolver` null: SystemResolve.
  explicit DnsCache(Resolver resolver = nullptr,
                    std::chrono::milliseconds refresh = std::chrono::seconds(30));
  DnsCache(const DnsCache&) = delete;
  DnsCache& operator=(const DnsCache&) = delete;
  ~DnsCache();

  // Prefetch queues the names not known yet and waits until each has been tried once, or
  // until `wait` passes.
  void Prefetch(const std::vector<std::string>& names, std::chrono::milliseconds wait);
  // Retain forgets every name not in `names` (the names of the configuration just prepared),
  // so names of removed backends are no longer refreshed nor held. A forgotten name that is
  // looked up again is resolved again; one whose resolution is in flight drops the answer.
  void Retain(const std::vector<std::string>& names);
  // Lookup returns the addresses of `name`, or null when it has none (yet); an unknown name, or
  // one that failed, is queued for resolution.
  std::shared_ptr<const Addresses> Lookup(const std::string& name);

  // SystemResolve is getaddrinfo (TCP), IPv4 preferred as Envoy's V4_PREFERRED (the IPv6
  // addresses only when there is no IPv4 one), in getaddrinfo's order, duplicates dropped.
  static Addresses SystemResolve(const std::string& name);

 private:
  struct Entry {
    std::shared_ptr<const Addresses> addresses;  // null until a resolution succeeded
    std::chrono::steady_clock::time_point tried_at{};
    bool tried = false;
    bool queued = false;
  };
  // State is what the resolver thread uses, shared with it so that the destructor need not
  // wait long for a resolution in progress (getaddrinfo cannot be interrupted).
  struct State {
    State(Resolver r, std::chrono::milliseconds refresh)
        : resolver(std::move(r)), refresh(refresh) {}
    void QueueLocked(const std::string& name, Entry& entry);
    void Run();

    const Resolver resolver;
    const std::chrono::milliseconds refresh;
    std::mutex mu;
    std::condition_variable work_cv;  // the resolver thread waits for names
    std::condition_variable done_cv;  // Prefetch waits for results
    std::unordered_map<std::string, Entry> entries;
    std::deque<std::string> queue;
    bool stop = false;
    bool resolving = false;  // the thread is inside `resolver`, without the lock
  };

  std::shared_ptr<State> state_;
  std::thread thread_;
};

}  // namespace portico::gateway::upstream

#endif  // PORTICO_GATEWAY_UPSTREAM_DNS_CACHE_H_
