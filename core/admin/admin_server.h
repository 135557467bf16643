// admin_server.h: AdminServer, the admin API's HTTP/1.1 server on Boost.Beast (DESIGN.md §6):
// keep-alive, bounded headers and bodies (413 past max_body_bytes, decided from Content-Length
// before the body is read), "Expect: 100-continue", idle and read timeouts. It knows nothing of
// the binary serving it (controller or gateway): every complete request goes to an AdminHandler
// (controller/admin/admin_router.h, gateway/admin/gateway_admin.h).
//
// Threading: one I/O thread runs all sockets; handlers run on a small pool so a slow one (an
// apply that waits for processing) never stalls /healthz. A connection handles one request at
// a time. Ownership: the handler must stay callable until Stop() returns; Stop() (also run by
// the destructor) closes the listener, drops open connections and waits for running handlers.
#ifndef PORTICO_CORE_ADMIN_ADMIN_SERVER_H_
#define PORTICO_CORE_ADMIN_ADMIN_SERVER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/admin/admin_http.h"
#include "portico/sdk/status.h"

namespace portico::core::admin {

struct AdminServerOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 5800;  // 0: any free port (see AdminServer::port())
  size_t max_body_bytes = size_t{16} << 20;
  size_t max_header_bytes = size_t{64} << 10;
  size_t handler_threads = 4;
  // Time allowed to receive a whole request, and to wait for the next one on an idle
  // keep-alive connection.
  std::chrono::milliseconds read_timeout = std::chrono::seconds(30);
  std::string server_name = "portico-controller";  // the Server header
  // When set, every path but /healthz and /readyz answers 401 unless the request carries
  // "Authorization: Bearer <bearer_token>" (core/admin/admin_auth.h).
  std::string bearer_token;
};

// AdminServerOptionsFor is how both binaries configure their admin API: address, port, server
// name, and the bearer token read from `token_file` when it is set (LoadAdminToken's errors
// name the "admin.token_file" setting).
StatusOr<AdminServerOptions> AdminServerOptionsFor(std::string address, uint16_t port,
                                                   const std::string& token_file,
                                                   std::string server_name);

// AdminHandler answers one request; it may block. Exceptions become a 500.
using AdminHandler = std::function<AdminResponse(const AdminRequest&)>;

class AdminServer {
 public:
  AdminServer(AdminServerOptions options, AdminHandler handler);
  ~AdminServer();
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  // Start binds and listens, then serves from its own thread. UNAVAILABLE naming the address
  // when the bind fails (port in use, bad address).
  Status Start();
  // Stop: see the file comment. Idempotent.
  void Stop();

  // port is the bound port (the real one when options.port was 0); 0 before Start().
  uint16_t port() const;
  // Endpoint renders "127.0.0.1:5800" (brackets around IPv6 addresses).
  std::string Endpoint() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace portico::core::admin

#endif  // PORTICO_CORE_ADMIN_ADMIN_SERVER_H_
