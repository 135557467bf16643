// proxy_test_util.h: helpers for the data-plane tests: an in-test HTTP/1.1 upstream on
// 127.0.0.1:0 (TestUpstream), a blocking HTTP/1.1 client on real sockets (TestClient), port
// reservation, contribution entries in the shapes of docs/contributions.md, and waiting with a
// deadline.
//
// Thread-safety: TestUpstream serves each connection on its own thread; its accessors lock.
// TestClient and the builders are for the test thread.
#ifndef PORTICO_GATEWAY_SERVER_PROXY_TEST_UTIL_H_
#define PORTICO_GATEWAY_SERVER_PROXY_TEST_UTIL_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/runtime/runtime_consumer.h"
#include "core/runtime/runtime_types.h"

namespace portico::gateway::server {
class DataPlane;
}  // namespace portico::gateway::server

namespace portico::gateway::server::testing {

// ReceivedRequest is what the upstream got.
struct ReceivedRequest {
  std::string method;
  std::string target;
  std::string head;                            // the raw head as received
  std::map<std::string, std::string> headers;  // lower-case names; repeated ones joined ", "
  std::string body;                            // decoded
  bool chunked = false;
};

// TestUpstream answers by path:
//   /bad...         "HTTP/1.1 abc" (a malformed status line)
//   /close...       closes without answering
//   /slow...        answers after 3 s (or when the proxy closes the connection)
//   /delay/<ms>     answers "delayed" after <ms> milliseconds
//   /chunked...     200 with a chunked body "chunk-1chunk-2<echoed request body>"
//   /big/<n>        200 with an n-byte Content-Length body of 'x'
//   /upgrade...     with an Upgrade field (any, for /upgrade-always): 101 with the same Upgrade,
//                   then echoes every byte it receives until EOF, answers "bye\n" and closes
//   anything else   200 "upstream=<name> target=<target>" plus the request body, with
//                   "X-Upstream: <name>" and "X-Seen-<header>: <value>" echoed for each header
//                   named in the request's "X-Echo" field (comma-separated).
// A request carrying "X-Close-After" gets its answer (no "Connection: close"), then the
// connection closes.
class TestUpstream {
 public:
  explicit TestUpstream(std::string name);
  ~TestUpstream();

  uint16_t port() const { return port_; }
  const std::string& name() const { return name_; }
  size_t connections() const { return connections_.load(); }
  size_t requests() const;
  size_t bytes_received() const { return bytes_received_.load(); }
  std::vector<ReceivedRequest> received() const;
  ReceivedRequest last() const;

 private:
  void AcceptLoop();
  void Serve(int fd);

  std::string name_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<size_t> connections_{0};
  std::atomic<size_t> bytes_received_{0};
  mutable std::mutex mu_;
  std::vector<ReceivedRequest> received_;
  std::vector<int> open_fds_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

// Response is what TestClient read.
struct Response {
  int status = 0;
  int version_minor = 1;
  std::map<std::string, std::string> headers;  // lower-case names; repeated ones joined ", "
  std::string body;
  bool chunked = false;
  std::string error;  // non-empty when no complete response arrived
};

// TestClient is one client connection (blocking, 5 s receive timeout).
class TestClient {
 public:
  explicit TestClient(uint16_t port, std::string_view address = "127.0.0.1");
  ~TestClient();
  bool connected() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  bool Send(std::string_view bytes);
  // Read reads one response (HEAD: pass head_request).
  Response Read(bool head_request = false);
  // Get sends a GET with Host `host` and reads the answer.
  Response Get(std::string_view path, std::string_view host = "example.com",
               std::string_view extra_headers = "");
  // ReadUntilClose reads everything until EOF (or timeout); true when EOF was seen.
  bool ReadUntilClose(std::string* out);

 private:
  int fd_ = -1;
  std::string buffer_;
};

// ReservePort binds a non-listening SO_REUSEPORT socket to (address, 0) and keeps it open, so
// the port stays ours while the data plane binds it with SO_REUSEPORT too.
class ReservedPort {
 public:
  explicit ReservedPort(std::string_view address = "127.0.0.1");
  ~ReservedPort();
  uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

// Contribution entries (docs/contributions.md).
std::string ListenerSetEntry(std::string_view gateway_ns, std::string_view gateway,
                             std::string_view address, uint16_t port,
                             std::string_view listeners_json);
std::string HttpListener(std::string_view name, std::string_view hostname = "");
// A route entry with one parent (gateway ns/name, listener) and the given rules.
std::string RouteEntry(std::string_view ns, std::string_view name, std::string_view gateway_ns,
                       std::string_view gateway, std::string_view listener,
                       const std::vector<std::string>& rules,
                       std::string_view hostnames_json = "[]");
// A rule: path match (type, value) and action JSON.
std::string RuleEntry(int index, std::string_view path_type, std::string_view path_value,
                      std::string_view action_json);
// An action forwarding to weighted backends: {"key": .., "weight": ..}.
std::string BackendsAction(const std::vector<std::pair<std::string, int>>& backends,
                           std::string_view filters_json = "[]", int64_t request_ms = 0,
                           int64_t backend_ms = 0);
std::string ServicePortsEntry(std::string_view ns, std::string_view service, int port,
                              int target_port);
std::string EndpointsEntry(std::string_view ns, std::string_view service, std::string_view slice,
                           int port, const std::vector<std::string>& addresses);

// SnapshotBuilder assembles a RuntimeSnapshot by hand.
class SnapshotBuilder {
 public:
  SnapshotBuilder& Put(const std::string& format, const std::string& id, const std::string& owner,
                       std::string json);
  core::RuntimeSnapshot Build(uint64_t generation) const;

 private:
  std::map<std::string, core::FormatEntries> formats_;
};

// AddService puts Service infra/<name> (port 80) with one EndpointSlice: 127.0.0.1:<port>.
void AddService(SnapshotBuilder* b, const std::string& name, uint16_t port);

// ApplySnapshot prepares and commits `builder` as generation `generation` like GatewayRuntime
// does, waits until every worker of `plane` serves it, and returns Prepare's nacks.
std::vector<core::SyncNack> ApplySnapshot(DataPlane* plane, const SnapshotBuilder& builder,
                                          uint64_t generation);

// ListenLoopback returns a socket listening on 127.0.0.1 at a port the kernel chose (`*port`).
int ListenLoopback(uint16_t* port);

// WaitFor polls `condition` until it holds or `timeout` passes.
bool WaitFor(const std::function<bool()>& condition,
             std::chrono::milliseconds timeout = std::chrono::seconds(5));

}  // namespace portico::gateway::server::testing

#endif  // PORTICO_GATEWAY_SERVER_PROXY_TEST_UTIL_H_
