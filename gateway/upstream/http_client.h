// http_client.h: HttpClient, one worker's outbound HTTP/1.1 client, for every call the gateway
// makes besides proxying: request mirrors (the Gateway API RequestMirror filter: a copy of the
// request as forwarded, its answer read through its framing and dropped) and filters' calls
// (http_call: a Webhook's request, whose status, headers and body go back to the filter).
//
// TLS: a call given an UpstreamTls (the BackendTLSPolicy of the target's backend) speaks TLS
// with it (SNI, trust and name checks as for proxied requests); such connections are parked
// apart from clear-text ones, and a policy that is not usable fails the call at once.
//
// Connections are kept alive: after a complete response that allows it, the connection is
// parked (per worker, per address, at most kMaxIdlePerAddress, for at most kIdleMs) and the next
// call to that address takes it, after checking it is still open. A call whose reused
// connection closes before any response byte is sent again once on a fresh connection.
//
// Bounds: a worker keeps at most kMaxInFlight calls in flight and at most kMaxPerAddress to one
// address (more are refused and counted), a request holds at most kMaxBytes, a captured
// response body at most kMaxResponseBody (a longer one fails the call), so a slow target cannot
// eat the worker's memory. A call ends with its response, on an error, or after its timeout.
// No call ever blocks the worker: connects are non-blocking and progress comes from the loop.
//
// Completion: a call with a Done is completed exactly once, on the worker's thread, after the
// call left the client (so Done may start another call), unless Cancel came first.
//
// Thread-safety: none; owned and driven by one Worker. Ownership: owns its calls and idle
// connections; a Done must outlive its call (or Cancel it).
#ifndef PORTICO_GATEWAY_UPSTREAM_HTTP_CLIENT_H_
#define PORTICO_GATEWAY_UPSTREAM_HTTP_CLIENT_H_

#include <sys/socket.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/runtime/tls/upstream_tls.h"
#include "gateway/net/event_loop.h"
#include "gateway/net/transport.h"

namespace portico::gateway::upstream {

// HttpResult is a call's outcome: status 0 when it failed (`error` says why).
struct HttpResult {
  int status = 0;
  std::string error;  // "connect_failed", "timeout", "closed", "bad_response", "too_large", ...
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

class HttpClient {
 public:
  static constexpr size_t kMaxBytes = 1 << 20;
  static constexpr size_t kMaxResponseBody = 1 << 20;
  static constexpr size_t kMaxInFlight = 1024;
  static constexpr size_t kMaxPerAddress = 256;
  // As many idle connections as calls in flight to one address: a webhook called by every
  // request keeps one connection per concurrent call instead of reconnecting (bench: 0.3
  // connects per request with 50 clients and 32 idle).
  static constexpr size_t kMaxIdlePerAddress = kMaxPerAddress;
  static constexpr uint64_t kIdleMs = 30'000;

  // Purpose names what a call is for (counted apart).
  enum class Purpose : uint8_t { kMirror = 0, kFilter = 1 };
  struct Counters {
    uint64_t sent = 0;       // calls written in full (and, on a reused connection, answered)
    uint64_t failed = 0;     // refused, reset, timed out or dropped before being sent
    uint64_t connects = 0;   // connections opened
    uint64_t cancelled = 0;  // ended by Cancel
    size_t in_flight = 0;
  };

  // Done receives a call's result.
  class Done {
   public:
    virtual void OnHttpDone(HttpResult result) = 0;

   protected:
    ~Done() = default;
  };
  class Call;

  explicit HttpClient(net::EventLoop* loop);
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;
  ~HttpClient();

  // Start sends `request` (a whole HTTP/1.1 message) to `address`, ending after `timeout_ms`
  // at the latest. With `done`, the response (head and body) is captured and delivered; without,
  // it is read and dropped. Returns the call, or nullptr when it could not start (too many in
  // flight, connect failed at once): then `done` is not called and the failure is counted.
  // `tls` (null: clear text) is how the target is reached.
  Call* Start(Purpose purpose, const sockaddr_storage& address, socklen_t length,
              std::string request, uint64_t timeout_ms, Done* done,
              std::shared_ptr<const core::tls::UpstreamTls> tls = nullptr);
  // Cancel ends `call` without completing it (its Done is not called). `call` must be live.
  void Cancel(Call* call);
  // CountDropped counts a call given up before Start (body too large, backend gone).
  void CountDropped(Purpose purpose) { ++counters_[static_cast<int>(purpose)].failed; }

  const Counters& counters(Purpose purpose) const { return counters_[static_cast<int>(purpose)]; }

 private:
  // Link is one connection: its socket, and TLS over it or not. Closed when destroyed.
  struct Link {
    std::unique_ptr<net::PlainTransport> socket;
    std::unique_ptr<net::Transport> tls;  // declared after the socket: destroyed first
    int fd() const { return socket != nullptr ? socket->fd() : -1; }
    net::Transport* io() const {
      return tls != nullptr ? tls.get() : static_cast<net::Transport*>(socket.get());
    }
    std::string_view failure() const;  // why the TLS session failed ("" otherwise)
  };
  struct Idle {
    Link link;
    uint64_t since_ms;
  };
  // Connect starts a non-blocking connect (TLS ready to handshake with `tls`); fd() -1 when it
  // fails at once.
  Link Connect(const sockaddr_storage& address, socklen_t length,
               const std::shared_ptr<const core::tls::UpstreamTls>& tls, Purpose purpose);
  // TakeIdle returns a parked connection to `key` that is still open (fd() -1 when none).
  Link TakeIdle(const std::string& key);
  void Park(const std::string& key, Link link);
  // Finish ends `call`; `reusable`: its connection is parked instead of closed.
  void Finish(Call* call, bool reusable);

  net::EventLoop* loop_;
  Counters counters_[2];
  std::unordered_map<Call*, std::unique_ptr<Call>> calls_;
  std::unordered_map<std::string, size_t> per_address_;      // key: the sockaddr's bytes
  std::unordered_map<std::string, std::vector<Idle>> idle_;  // key: the sockaddr's bytes
};

}  // namespace portico::gateway::upstream

#endif  // PORTICO_GATEWAY_UPSTREAM_HTTP_CLIENT_H_
