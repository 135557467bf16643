#include <utility>  // Boost 1.74's asio needs it first with GCC 12 and C++20 (DESIGN.md §9)

#include "controller/ctl/http_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <charconv>

namespace portico::ctl {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

constexpr size_t kMaxResponseBody = size_t{256} << 20;

}  // namespace

StatusOr<HttpClient> HttpClient::Create(std::string_view server_url,
                                        std::chrono::milliseconds timeout) {
  std::string_view rest = server_url;
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else if (rest.find("://") != std::string_view::npos) {
    return InvalidArgumentError("server " + std::string(server_url) +
                                ": only http:// is supported");
  }
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.find('/') != std::string_view::npos) {
    return InvalidArgumentError("server " + std::string(server_url) +
                                ": expected http://HOST:PORT");
  }
  std::string host;
  std::string port = "80";
  if (rest.starts_with('[')) {  // [::1]:5800
    size_t close = rest.find(']');
    if (close == std::string_view::npos) {
      return InvalidArgumentError("server " + std::string(server_url) + ": unclosed '['");
    }
    host = std::string(rest.substr(1, close - 1));
    rest.remove_prefix(close + 1);
    if (rest.starts_with(':')) port = std::string(rest.substr(1));
  } else {
    size_t colon = rest.rfind(':');
    host = std::string(rest.substr(0, colon));
    if (colon != std::string_view::npos) port = std::string(rest.substr(colon + 1));
  }
  int number = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
  if (host.empty() || ec != std::errc() || end != port.data() + port.size() || number <= 0 ||
      number > 65535) {
    return InvalidArgumentError("server " + std::string(server_url) +
                                ": expected http://HOST:PORT");
  }
  return HttpClient(std::move(host), std::move(port), timeout);
}

StatusOr<HttpResponse> HttpClient::Do(std::string_view method, std::string_view target,
                                      std::string_view body, std::string_view content_type) const {
  net::io_context ioc;
  beast::tcp_stream stream(ioc);
  beast::error_code ec;
  const std::string server = Server();

  // Each step runs the context until its one operation completed (or timed out).
  auto run = [&ioc] {
    ioc.run();
    ioc.restart();
  };

  tcp::resolver resolver(ioc);
  auto endpoints = resolver.resolve(host_, port_, ec);
  if (ec) return UnavailableError("cannot resolve " + server + ": " + ec.message());

  stream.expires_after(timeout_);
  stream.async_connect(endpoints, [&ec](beast::error_code e, const tcp::endpoint&) { ec = e; });
  run();
  if (ec == beast::error::timeout) {
    return Status(StatusCode::kDeadlineExceeded, "timed out connecting to " + server);
  }
  if (ec) {
    return UnavailableError("The connection to the server " + server + " was refused (" +
                            ec.message() + ") - is portico-controller running?");
  }

  http::request<http::string_body> request;
  request.method_string(beast::string_view(method.data(), method.size()));
  request.target(beast::string_view(target.data(), target.size()));
  request.version(11);
  request.set(http::field::host, server);
  request.set(http::field::user_agent, "portico-ctl");
  request.set(http::field::accept, "application/json");
  request.keep_alive(false);
  if (!bearer_token_.empty()) request.set(http::field::authorization, "Bearer " + bearer_token_);
  if (!body.empty() || method == "POST" || method == "PUT") {
    request.set(http::field::content_type,
                beast::string_view(content_type.data(), content_type.size()));
    request.body() = std::string(body);
  }
  request.prepare_payload();

  stream.expires_after(timeout_);
  http::async_write(stream, request, [&ec](beast::error_code e, size_t) { ec = e; });
  run();
  if (ec == beast::error::timeout)
    return Status(StatusCode::kDeadlineExceeded, "timed out writing to " + server);
  if (ec) return UnavailableError("writing to " + server + ": " + ec.message());

  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxResponseBody);
  stream.expires_after(timeout_);
  http::async_read(stream, buffer, parser, [&ec](beast::error_code e, size_t) { ec = e; });
  run();
  if (ec == beast::error::timeout) {
    return Status(StatusCode::kDeadlineExceeded, "timed out waiting for " + server + " to answer " +
                                                     std::string(method) + " " +
                                                     std::string(target));
  }
  if (ec == http::error::body_limit) {
    return ResourceExhaustedError("response from " + server + " exceeds 256 MiB");
  }
  if (ec) return UnavailableError("reading from " + server + ": " + ec.message());

  http::response<http::string_body> response = parser.release();
  HttpResponse out;
  out.status = static_cast<int>(response.result_int());
  out.content_type = std::string(response[http::field::content_type]);
  for (const auto& field : response) {
    out.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  out.body = std::move(response.body());
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  return out;
}

}  // namespace portico::ctl
