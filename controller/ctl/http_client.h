// http_client.h: HttpClient, portico-ctl's small blocking HTTP/1.1 client for the admin APIs
// of controllers and gateways (Boost.Beast; one connection per request; plain http only).
//
// Thread-safety: a client may be used by one thread at a time; each call has its own
// connection and I/O context. Ownership: value type.
#ifndef PORTICO_CONTROLLER_CTL_HTTP_CLIENT_H_
#define PORTICO_CONTROLLER_CTL_HTTP_CLIENT_H_

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "portico/sdk/status.h"

namespace portico::ctl {

// HttpResponse is a complete response.
struct HttpResponse {
  int status = 0;
  std::string content_type;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

class HttpClient {
 public:
  // Create parses "http://host:port" (port defaults to 80; a trailing '/' is ignored; a bare
  // "host:port" is taken as http). INVALID_ARGUMENT for other schemes or a bad port.
  static StatusOr<HttpClient> Create(std::string_view server_url,
                                     std::chrono::milliseconds timeout = std::chrono::seconds(60));

  // Do sends one request and reads the whole response. `target` is the path and query, already
  // percent-encoded. UNAVAILABLE when the server cannot be reached (naming it),
  // DEADLINE_EXCEEDED after the timeout, RESOURCE_EXHAUSTED past 256 MiB of response body.
  StatusOr<HttpResponse> Do(std::string_view method, std::string_view target,
                            std::string_view body = {},
                            std::string_view content_type = "application/json") const;
  StatusOr<HttpResponse> Get(std::string_view target) const { return Do("GET", target); }

  // set_bearer_token: every request carries "Authorization: Bearer <token>" (empty: none).
  void set_bearer_token(std::string token) { bearer_token_ = std::move(token); }

  const std::string& host() const { return host_; }
  const std::string& port() const { return port_; }
  // Server renders "host:port".
  std::string Server() const { return host_ + ":" + port_; }

 private:
  HttpClient(std::string host, std::string port, std::chrono::milliseconds timeout)
      : host_(std::move(host)), port_(std::move(port)), timeout_(timeout) {}

  std::string host_;
  std::string port_;
  std::chrono::milliseconds timeout_;
  std::string bearer_token_;
};

}  // namespace portico::ctl

#endif  // PORTICO_CONTROLLER_CTL_HTTP_CLIENT_H_
