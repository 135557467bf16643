// proxy_test_util.cc: see proxy_test_util.h.
#include "gateway/server/proxy_test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gateway/http/chunked_decoder.h"
#include "gateway/http/request_parser.h"
#include "gateway/http/response_parser.h"
#include "gateway/server/data_plane.h"

namespace portico::gateway::server::testing {

namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = http::AsciiLower(c);
  return out;
}

bool SendAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// ReadMore appends what the socket gives; false on EOF, error or timeout.
bool ReadMore(int fd, std::string* buffer) {
  char chunk[65536];
  ssize_t n;
  do {
    n = recv(fd, chunk, sizeof(chunk), 0);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  buffer->append(chunk, static_cast<size_t>(n));
  return true;
}

void SetTimeout(int fd, int seconds) {
  timeval tv{seconds, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

void AddHeader(std::map<std::string, std::string>* headers, std::string_view name,
               std::string_view value) {
  std::string& slot = (*headers)[Lower(name)];
  if (!slot.empty()) slot += ", ";
  slot += value;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// TestUpstream.

int ListenLoopback(uint16_t* port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  listen(fd, 128);
  socklen_t length = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length);
  *port = ntohs(addr.sin_port);
  return fd;
}

TestUpstream::TestUpstream(std::string name) : name_(std::move(name)) {
  listen_fd_ = ListenLoopback(&port_);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

TestUpstream::~TestUpstream() {
  stop_ = true;
  shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  close(listen_fd_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : open_fds_) shutdown(fd, SHUT_RDWR);
  }
  for (std::thread& t : threads_) t.join();
}

size_t TestUpstream::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return received_.size();
}

std::vector<ReceivedRequest> TestUpstream::received() const {
  std::lock_guard<std::mutex> lock(mu_);
  return received_;
}

ReceivedRequest TestUpstream::last() const {
  std::lock_guard<std::mutex> lock(mu_);
  return received_.empty() ? ReceivedRequest{} : received_.back();
}

void TestUpstream::AcceptLoop() {
  while (!stop_) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      return;
    }
    ++connections_;
    std::lock_guard<std::mutex> lock(mu_);
    open_fds_.push_back(fd);
    threads_.emplace_back([this, fd] { Serve(fd); });
  }
}

void TestUpstream::Serve(int fd) {
  SetTimeout(fd, 10);
  std::string buffer;
  http::RequestParser parser;
  auto read = [&] {
    size_t before = buffer.size();
    bool ok = ReadMore(fd, &buffer);
    bytes_received_ += buffer.size() - before;
    return ok;
  };
  while (!stop_) {
    // Head.
    http::ParseResult r;
    while ((r = parser.Parse(buffer)) == http::ParseResult::kNeedMore) {
      if (!read()) break;
    }
    if (r != http::ParseResult::kComplete) break;
    const http::RequestHead& head = parser.head();
    ReceivedRequest request;
    request.method = std::string(head.method);
    request.target = std::string(head.target);
    request.head = buffer.substr(0, parser.consumed());
    for (const http::HeaderField& f : head.headers) AddHeader(&request.headers, f.name, f.value);
    const http::BodyFraming framing = head.framing;
    const uint64_t length = head.content_length;
    buffer.erase(0, parser.consumed());
    parser.Reset();
    // Body.
    bool ok = true;
    if (framing == http::BodyFraming::kContentLength) {
      while (buffer.size() < length && (ok = read())) {
      }
      if (!ok) break;
      request.body = buffer.substr(0, length);
      buffer.erase(0, length);
    } else if (framing == http::BodyFraming::kChunked) {
      request.chunked = true;
      http::ChunkedDecoder decoder;
      for (;;) {
        http::ChunkedStep step = decoder.Decode(buffer);
        request.body.append(step.data);
        buffer.erase(0, step.consumed);
        if (step.result == http::ParseResult::kComplete) break;
        if (step.result == http::ParseResult::kError || (buffer.empty() && !read())) {
          ok = false;
          break;
        }
      }
      if (!ok) break;
    }
    const std::string target = request.target;
    std::string echo = request.headers.count("x-echo") ? request.headers["x-echo"] : "";
    const std::string body_in = request.body;
    const std::map<std::string, std::string> seen = request.headers;
    {
      std::lock_guard<std::mutex> lock(mu_);
      received_.push_back(std::move(request));
    }
    std::string response;
    if (target.rfind("/bad", 0) == 0) {
      response = "HTTP/1.1 abc\r\n\r\n";
    } else if (target.rfind("/close", 0) == 0) {
      break;
    } else if (target.rfind("/slow", 0) == 0) {
      pollfd p{fd, POLLIN, 0};
      poll(&p, 1, 3000);  // until the proxy gives up (EOF) or 3 s
      response = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nslow";
    } else if (target.rfind("/status/", 0) == 0) {  // "/status/503": that status, no body
      response = "HTTP/1.1 " + target.substr(8, 3) + " Status\r\nContent-Length: 0\r\n\r\n";
    } else if (target.rfind("/delay/", 0) == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::stoi(target.substr(7))));
      response = "HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\ndelayed";
    } else if (target.rfind("/chunked", 0) == 0) {
      response = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Upstream: " + name_ +
                 "\r\n\r\n7\r\nchunk-1\r\n7;ext=1\r\nchunk-2\r\n";
      if (!body_in.empty()) {
        char size[32];
        std::snprintf(size, sizeof(size), "%zx\r\n", body_in.size());
        response += size + body_in + "\r\n";
      }
      response += "0\r\nX-Trailer: t\r\n\r\n";
    } else if (target.rfind("/upgrade", 0) == 0 &&
               (seen.count("upgrade") != 0 || target.rfind("/upgrade-always", 0) == 0)) {
      // Switches protocols, then echoes every byte until the proxy half-closes, then "bye".
      auto protocol = seen.find("upgrade");
      response = "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " +
                 (protocol == seen.end() ? std::string("websocket") : protocol->second) +
                 "\r\nX-Upstream: " + name_ + "\r\n\r\n" + buffer;
      buffer.clear();
      if (!SendAll(fd, response)) break;
      char chunk[4096];
      ssize_t n;
      while ((n = recv(fd, chunk, sizeof(chunk), 0)) > 0) {
        bytes_received_ += static_cast<size_t>(n);
        if (!SendAll(fd, std::string(chunk, static_cast<size_t>(n)))) break;
      }
      SendAll(fd, "bye\n");
      break;
    } else if (target.rfind("/big/", 0) == 0) {
      size_t n = std::stoul(target.substr(5));
      response = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(n) + "\r\n\r\n" +
                 std::string(n, 'x');
    } else {
      std::string body = "upstream=" + name_ + " target=" + target + "\n" + body_in;
      response = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Upstream: " + name_ + "\r\n";
      size_t pos = 0;
      while (!echo.empty() && pos <= echo.size()) {
        size_t comma = echo.find(',', pos);
        if (comma == std::string::npos) comma = echo.size();
        std::string name = Lower(echo.substr(pos, comma - pos));
        while (!name.empty() && name.front() == ' ') name.erase(0, 1);
        auto it = seen.find(name);
        response += "X-Seen-" + name + ": " + (it == seen.end() ? "<none>" : it->second) + "\r\n";
        pos = comma + 1;
      }
      response += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    }
    if (!SendAll(fd, response)) break;
    if (seen.count("x-close-after") != 0) break;  // answered as keep-alive, then closed
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = open_fds_.begin(); it != open_fds_.end(); ++it) {
    if (*it == fd) {
      open_fds_.erase(it);
      break;
    }
  }
  close(fd);
}

// ---------------------------------------------------------------------------------------------
// TestClient.

TestClient::TestClient(uint16_t port, std::string_view address) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  inet_pton(AF_INET, std::string(address).c_str(), &addr.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return;
  }
  SetTimeout(fd, 5);
  fd_ = fd;
}

TestClient::~TestClient() {
  if (fd_ >= 0) close(fd_);
}

bool TestClient::Send(std::string_view bytes) { return fd_ >= 0 && SendAll(fd_, bytes); }

Response TestClient::Read(bool head_request) {
  Response response;
  if (fd_ < 0) {
    response.error = "not connected";
    return response;
  }
  http::ResponseParser parser;
  http::ParseResult r;
  while ((r = parser.Parse(buffer_, head_request)) == http::ParseResult::kNeedMore) {
    if (!ReadMore(fd_, &buffer_)) {
      response.error = buffer_.empty() ? "closed without a response" : "truncated head";
      return response;
    }
  }
  if (r == http::ParseResult::kError) {
    response.error = "bad response: " + std::string(parser.error().reason);
    return response;
  }
  const http::ResponseHead& head = parser.head();
  response.status = head.status;
  response.version_minor = head.version_minor;
  for (const http::HeaderField& f : head.headers) AddHeader(&response.headers, f.name, f.value);
  const http::BodyFraming framing = head.framing;
  const uint64_t length = head.content_length;
  buffer_.erase(0, parser.consumed());
  if (framing == http::BodyFraming::kContentLength) {
    while (buffer_.size() < length) {
      if (!ReadMore(fd_, &buffer_)) {
        response.error = "truncated body";
        return response;
      }
    }
    response.body = buffer_.substr(0, length);
    buffer_.erase(0, length);
  } else if (framing == http::BodyFraming::kChunked) {
    response.chunked = true;
    http::ChunkedDecoder decoder;
    for (;;) {
      http::ChunkedStep step = decoder.Decode(buffer_);
      response.body.append(step.data);
      buffer_.erase(0, step.consumed);
      if (step.result == http::ParseResult::kComplete) {
        for (const http::HeaderField& f : decoder.trailers()) {
          AddHeader(&response.headers, "trailer-" + std::string(f.name), f.value);
        }
        break;
      }
      if (step.result == http::ParseResult::kError) {
        response.error = "bad chunked body";
        return response;
      }
      if (buffer_.empty() && !ReadMore(fd_, &buffer_)) {
        response.error = "truncated chunked body";
        return response;
      }
    }
  } else if (framing == http::BodyFraming::kUntilClose) {
    while (ReadMore(fd_, &buffer_)) {
    }
    response.body = std::move(buffer_);
    buffer_.clear();
  }
  return response;
}

Response TestClient::Get(std::string_view path, std::string_view host,
                         std::string_view extra_headers) {
  std::string request = "GET " + std::string(path) + " HTTP/1.1\r\nHost: " + std::string(host) +
                        "\r\n" + std::string(extra_headers) + "\r\n";
  if (!Send(request)) {
    Response r;
    r.error = "send failed";
    return r;
  }
  return Read();
}

bool TestClient::ReadUntilClose(std::string* out) {
  out->append(buffer_);
  buffer_.clear();
  char chunk[4096];
  for (;;) {
    ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
    if (n == 0) return true;
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno == ECONNRESET;
    }
    out->append(chunk, static_cast<size_t>(n));
  }
}

// ---------------------------------------------------------------------------------------------
// ReservedPort.

ReservedPort::ReservedPort(std::string_view address) {
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  setsockopt(fd_, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  inet_pton(AF_INET, std::string(address).c_str(), &addr.sin_addr);
  bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t length = sizeof(addr);
  getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &length);
  port_ = ntohs(addr.sin_port);
}

ReservedPort::~ReservedPort() { close(fd_); }

// ---------------------------------------------------------------------------------------------
// Entries.

std::string ListenerSetEntry(std::string_view gateway_ns, std::string_view gateway,
                             std::string_view address, uint16_t port,
                             std::string_view listeners_json) {
  return R"({"entry":"listeners","gateway":{"namespace":")" + std::string(gateway_ns) +
         R"(","name":")" + std::string(gateway) + R"("},"address":")" + std::string(address) +
         R"(","port":)" + std::to_string(port) + R"(,"listeners":[)" + std::string(listeners_json) +
         "]}";
}

std::string HttpListener(std::string_view name, std::string_view hostname) {
  std::string out = R"({"name":")" + std::string(name) + R"(","protocol":"HTTP")";
  if (!hostname.empty()) out += R"(,"hostname":")" + std::string(hostname) + "\"";
  return out + R"(,"routeKinds":[{"group":"gateway.networking.k8s.io","kind":"HTTPRoute"}]})";
}

std::string RouteEntry(std::string_view ns, std::string_view name, std::string_view gateway_ns,
                       std::string_view gateway, std::string_view listener,
                       const std::vector<std::string>& rules, std::string_view hostnames_json) {
  std::string out = R"({"route":{"group":"gateway.networking.k8s.io","kind":"HTTPRoute",)"
                    R"("namespace":")" +
                    std::string(ns) + R"(","name":")" + std::string(name) +
                    R"("},"parents":[{"gateway":{"namespace":")" + std::string(gateway_ns) +
                    R"(","name":")" + std::string(gateway) + R"("},"listener":")" +
                    std::string(listener) + R"(","hostnames":)" + std::string(hostnames_json) +
                    R"(}],"rules":[)";
  for (size_t i = 0; i < rules.size(); ++i) {
    if (i > 0) out += ",";
    out += rules[i];
  }
  return out + "]}";
}

std::string RuleEntry(int index, std::string_view path_type, std::string_view path_value,
                      std::string_view action_json) {
  // Precedence: Exact before Prefix, longer prefixes first (docs/contributions.md).
  char precedence[128];
  std::snprintf(precedence, sizeof(precedence), "p:%d:%04d/m:1/h:99/q:99/t:00000000000000/r:%04d",
                path_type == "Exact" ? 0 : (path_type == "Regex" ? 1 : 2),
                9999 - static_cast<int>(path_value.size()), index);
  return R"({"id":")" + std::to_string(index) + R"(.0","precedence":")" + precedence +
         R"(","match":{"path":{"type":")" + std::string(path_type) + R"(","value":")" +
         std::string(path_value) + R"("},"headers":[],"query":[]},"action":)" +
         std::string(action_json) + "}";
}

std::string BackendsAction(const std::vector<std::pair<std::string, int>>& backends,
                           std::string_view filters_json, int64_t request_ms, int64_t backend_ms) {
  std::string out = R"({"backends":[)";
  for (size_t i = 0; i < backends.size(); ++i) {
    if (i > 0) out += ",";
    out += R"({"key":")" + backends[i].first + R"(","weight":)" +
           std::to_string(backends[i].second) + R"(,"filters":[]})";
  }
  return out + R"(],"redirect":null,"filters":)" + std::string(filters_json) +
         R"(,"timeouts":{"requestMs":)" + std::to_string(request_ms) + R"(,"backendRequestMs":)" +
         std::to_string(backend_ms) + "}}";
}

std::string ServicePortsEntry(std::string_view ns, std::string_view service, int port,
                              int target_port) {
  return R"({"entry":"ports","namespace":")" + std::string(ns) + R"(","service":")" +
         std::string(service) +
         R"(","serviceType":"ClusterIP","headless":false,"ports":[{"name":"http","port":)" +
         std::to_string(port) + R"(,"protocol":"TCP","targetPort":)" + std::to_string(target_port) +
         "}]}";
}

std::string EndpointsEntry(std::string_view ns, std::string_view service, std::string_view slice,
                           int port, const std::vector<std::string>& addresses) {
  std::string out = R"({"entry":"endpoints","namespace":")" + std::string(ns) + R"(","service":")" +
                    std::string(service) + R"(","slice":")" + std::string(slice) +
                    R"(","addressType":"IPv4","ports":[{"name":"http","port":)" +
                    std::to_string(port) + R"(,"protocol":"TCP"}],"endpoints":[)";
  for (size_t i = 0; i < addresses.size(); ++i) {
    if (i > 0) out += ",";
    out += R"({"addresses":[")" + addresses[i] +
           R"("],"ready":true,"serving":true,"terminating":false})";
  }
  return out + "]}";
}

SnapshotBuilder& SnapshotBuilder::Put(const std::string& format, const std::string& id,
                                      const std::string& owner, std::string json) {
  formats_[format][id] =
      core::RuntimeEntry{owner, std::make_shared<const std::string>(std::move(json))};
  return *this;
}

core::RuntimeSnapshot SnapshotBuilder::Build(uint64_t generation) const {
  core::RuntimeSnapshot snapshot;
  snapshot.generation = generation;
  snapshot.version = generation;
  for (const auto& [format, entries] : formats_) {
    snapshot.formats[format] = std::make_shared<const core::FormatEntries>(entries);
  }
  return snapshot;
}

void AddService(SnapshotBuilder* b, const std::string& name, uint16_t port) {
  b->Put("backend.v1", "ports/infra/" + name, "/Service/infra/" + name,
         ServicePortsEntry("infra", name, 80, port));
  b->Put("backend.v1", "endpoints/infra/" + name + "-1",
         "discovery.k8s.io/EndpointSlice/infra/" + name + "-1",
         EndpointsEntry("infra", name, name + "-1", port, {"127.0.0.1"}));
}

std::vector<core::SyncNack> ApplySnapshot(DataPlane* plane, const SnapshotBuilder& builder,
                                          uint64_t generation) {
  core::RuntimeSnapshot snapshot = builder.Build(generation);
  std::vector<core::SyncNack> nacks = plane->Prepare(snapshot);
  plane->Commit(std::make_shared<core::RuntimeSnapshot>(std::move(snapshot)));
  WaitFor([&] { return plane->MinWorkerGeneration() == generation; });
  return nacks;
}

bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace portico::gateway::server::testing
