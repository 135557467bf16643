#include <utility>  // Boost 1.74's asio needs it first with GCC 12 and C++20 (DESIGN.md §9)

#include "core/admin/admin_server.h"

#include <spdlog/spdlog.h>

#include <array>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/version.hpp>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "core/admin/admin_auth.h"

namespace portico::core::admin {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

// How long a connection that is being refused (413, 400) may keep sending before it is cut, so
// the client reads our answer instead of a reset.
constexpr auto kLingerTime = std::chrono::seconds(2);

// Shared is what every session needs; it outlives them all (held by shared_ptr).
struct Shared {
  AdminServerOptions options;
  AdminHandler handler;
  net::thread_pool pool;

  Shared(AdminServerOptions o, AdminHandler h)
      : options(std::move(o)), handler(std::move(h)), pool(options.handler_threads) {}

  AdminResponse Invoke(const AdminRequest& request) {
    try {
      return handler(request);
    } catch (const std::exception& e) {
      spdlog::error("admin: {} {}: handler threw: {}", request.method, request.path, e.what());
      return ErrorResponse(500, std::string("internal error: ") + e.what());
    } catch (...) {
      spdlog::error("admin: {} {}: handler threw", request.method, request.path);
      return ErrorResponse(500, "internal error");
    }
  }
};

// Session is one client connection; it owns itself through the handlers in flight.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<Shared> shared)
      : stream_(std::move(socket)), shared_(std::move(shared)) {}

  void Run() {
    net::dispatch(stream_.get_executor(),
                  beast::bind_front_handler(&Session::ReadHeader, shared_from_this()));
  }

 private:
  void ReadHeader() {
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(shared_->options.max_header_bytes));
    parser_->body_limit(shared_->options.max_body_bytes);
    stream_.expires_after(shared_->options.read_timeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            beast::bind_front_handler(&Session::OnHeader, shared_from_this()));
  }

  void OnHeader(beast::error_code ec, size_t) {
    if (ec) return Fail(ec);
    const auto& request = parser_->get();
    version_ = request.version();
    boost::optional<uint64_t> length = parser_->content_length();
    if (length && *length > shared_->options.max_body_bytes) {
      return Reject(413, "request body of " + std::to_string(*length) +
                             " bytes exceeds the limit of " +
                             std::to_string(shared_->options.max_body_bytes) + " bytes");
    }
    if (beast::iequals(request[http::field::expect], "100-continue")) {
      auto interim = std::make_shared<http::response<http::empty_body>>(http::status::continue_,
                                                                        request.version());
      http::async_write(stream_, *interim,
                        [self = shared_from_this(), interim](beast::error_code ec, size_t) {
                          if (ec) return self->Close();
                          self->ReadBody();
                        });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&Session::OnRead, shared_from_this()));
  }

  void OnRead(beast::error_code ec, size_t) {
    if (ec == http::error::body_limit) {
      return Reject(413, "request body exceeds the limit of " +
                             std::to_string(shared_->options.max_body_bytes) + " bytes");
    }
    if (ec) return Fail(ec);
    stream_.expires_never();
    http::request<http::string_body> request = parser_->release();
    keep_alive_ = request.keep_alive();
    AdminRequest admin;
    admin.method = std::string(request.method_string());
    beast::string_view target = request.target();
    Status parsed =
        ParseTarget(std::string_view(target.data(), target.size()), &admin.path, &admin.query);
    if (!parsed.ok()) return Reject(400, parsed.message());
    beast::string_view authorization = request[http::field::authorization];
    if (!IsOpenAdminPath(admin.path) &&
        !BearerTokenMatches(std::string_view(authorization.data(), authorization.size()),
                            shared_->options.bearer_token)) {
      spdlog::warn("admin: {} {} refused: {} bearer token", admin.method, admin.path,
                   authorization.empty() ? "no" : "a wrong");
      AdminResponse refused =
          ErrorResponse(401,
                        "this admin API requires \"Authorization: Bearer <token>\" (portico-ctl: "
                        "--token-file or PORTICO_ADMIN_TOKEN_FILE)");
      refused.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"portico-admin\"");
      return Write(refused);
    }
    admin.content_type = std::string(request[http::field::content_type]);
    admin.body = std::move(request.body());
    net::post(shared_->pool, [self = shared_from_this(), admin = std::move(admin)]() mutable {
      AdminResponse response = self->shared_->Invoke(admin);
      net::post(self->stream_.get_executor(),
                [self, response = std::move(response)]() mutable { self->Write(response); });
    });
  }

  void Fail(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == http::error::partial_message) return Close();
    if (ec == http::error::header_limit) return Reject(431, "request header too large");
    if (ec == http::error::body_limit) {  // the parser checks Content-Length with the header
      return Reject(413, "request body exceeds the limit of " +
                             std::to_string(shared_->options.max_body_bytes) + " bytes");
    }
    if (&ec.category() == &http::make_error_code(http::error::bad_target).category()) {
      return Reject(400, "malformed request: " + ec.message());
    }
    Close();  // timeouts, resets, aborts: nothing to answer
  }

  // Reject answers with an error and closes the connection after a lingering drain.
  void Reject(int status, const std::string& message) {
    keep_alive_ = false;
    lingering_ = true;
    AdminResponse response = ErrorResponse(status, message);
    Write(response);
  }

  void Write(const AdminResponse& response) {
    auto res = std::make_shared<http::response<http::string_body>>();
    res->version(version_ == 0 ? 11 : version_);
    res->result(static_cast<unsigned>(response.status));
    res->set(http::field::server, shared_->options.server_name);
    res->set(http::field::content_type, response.content_type);
    for (const auto& [name, value] : response.headers) res->set(name, value);
    res->body() = response.body;
    res->keep_alive(keep_alive_);
    res->prepare_payload();
    stream_.expires_after(shared_->options.read_timeout);
    http::async_write(stream_, *res,
                      [self = shared_from_this(), res](beast::error_code ec, size_t) {
                        if (ec) return self->Close();
                        if (self->lingering_) return self->Linger();
                        if (!self->keep_alive_) return self->Close();
                        self->ReadHeader();
                      });
  }

  // Linger half-closes and discards what the client still sends, for a short while.
  void Linger() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(kLingerTime);
    stream_.async_read_some(net::buffer(discard_),
                            [self = shared_from_this()](beast::error_code ec, size_t) {
                              if (ec) return self->Close();
                              self->Linger();
                            });
  }

  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  std::shared_ptr<Shared> shared_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  unsigned version_ = 11;
  bool keep_alive_ = true;
  bool lingering_ = false;
  std::array<char, 16384> discard_;
};

}  // namespace

struct AdminServer::Impl {
  AdminServerOptions options;
  AdminHandler handler;
  net::io_context ioc{1};
  tcp::acceptor acceptor{ioc};
  std::shared_ptr<Shared> shared;
  std::thread io_thread;
  std::mutex mu;  // guards started/stopped
  bool started = false;
  bool stopped = false;
  uint16_t port = 0;
  std::string address;

  void Accept() {
    acceptor.async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
      if (ec == net::error::operation_aborted || !acceptor.is_open()) return;
      if (!ec) {
        std::make_shared<Session>(std::move(socket), shared)->Run();
      } else {
        spdlog::warn("admin: accept failed: {}", ec.message());
      }
      Accept();
    });
  }
};

StatusOr<AdminServerOptions> AdminServerOptionsFor(std::string address, uint16_t port,
                                                   const std::string& token_file,
                                                   std::string server_name) {
  AdminServerOptions options;
  options.address = std::move(address);
  options.port = port;
  options.server_name = std::move(server_name);
  if (!token_file.empty()) {
    PORTICO_ASSIGN_OR_RETURN(options.bearer_token, LoadAdminToken(token_file, "admin.token_file"));
  }
  return options;
}

AdminServer::AdminServer(AdminServerOptions options, AdminHandler handler)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->handler = std::move(handler);
}

AdminServer::~AdminServer() { Stop(); }

Status AdminServer::Start() {
  std::lock_guard lock(impl_->mu);
  if (impl_->started) return FailedPreconditionError("admin server already started");
  const AdminServerOptions& o = impl_->options;
  std::string where = o.address + ":" + std::to_string(o.port);
  beast::error_code ec;
  net::ip::address address = net::ip::make_address(o.address, ec);
  if (ec) return InvalidArgumentError("admin address \"" + o.address + "\": " + ec.message());
  tcp::endpoint endpoint(address, o.port);
  tcp::acceptor& acceptor = impl_->acceptor;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    beast::error_code ignored;
    acceptor.close(ignored);
    return UnavailableError("admin API cannot listen on " + where + ": " + ec.message());
  }
  impl_->port = acceptor.local_endpoint().port();
  impl_->address = address.is_v6() ? "[" + o.address + "]" : o.address;
  impl_->shared = std::make_shared<Shared>(o, impl_->handler);
  impl_->Accept();
  impl_->started = true;
  impl_->io_thread = std::thread([this] { impl_->ioc.run(); });
  return OkStatus();
}

void AdminServer::Stop() {
  std::lock_guard lock(impl_->mu);
  if (!impl_->started || impl_->stopped) return;
  impl_->stopped = true;
  net::post(impl_->ioc, [this] {
    beast::error_code ignored;
    impl_->acceptor.close(ignored);
  });
  impl_->ioc.stop();
  impl_->io_thread.join();
  // Handlers still running finish (their replies are dropped with the connections).
  impl_->shared->pool.join();
  beast::error_code ignored;
  impl_->acceptor.close(ignored);
}

uint16_t AdminServer::port() const { return impl_->port; }

std::string AdminServer::Endpoint() const {
  return impl_->address + ":" + std::to_string(impl_->port);
}

}  // namespace portico::core::admin
