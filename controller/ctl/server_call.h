// server_call.h: how portico-ctl talks to a controller's admin API: the global --server flag
// (env PORTICO_SERVER, default http://127.0.0.1:5800), --token-file (env
// PORTICO_ADMIN_TOKEN_FILE: the bearer token sent to every admin API it calls) and CallServer,
// which sends one request and turns a non-2xx answer into kubectl's "Error from server (NotFound):
// ..." message.
//
// Thread-safety: runs on the main thread.
#ifndef PORTICO_CONTROLLER_CTL_SERVER_CALL_H_
#define PORTICO_CONTROLLER_CTL_SERVER_CALL_H_

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "portico/sdk/json.h"
#include "portico/sdk/status.h"

namespace portico::ctl {

inline constexpr char kDefaultServer[] = "http://127.0.0.1:5800";

// ServerOptions are the global flags naming the controller and the admin token.
struct ServerOptions {
  std::string server = kDefaultServer;
  std::string token_file;  // empty: send no Authorization header

  // At is these options for another admin API (a gateway's), with the same token.
  ServerOptions At(std::string url) const { return ServerOptions{std::move(url), token_file}; }
};

// AddServerOption registers --server (env PORTICO_SERVER) and --token-file (env
// PORTICO_ADMIN_TOKEN_FILE) on the top-level app; `options` must outlive app.parse().
void AddServerOption(CLI::App& app, ServerOptions* options);

// CallServer sends `method target` with `body` and parses the JSON answer. A non-2xx answer is
// an error with the server's message ("Error from server (NotFound): ..."), its code mapped
// from the HTTP status; an unreachable server is UNAVAILABLE naming it.
StatusOr<rapidjson::Document> CallServer(const ServerOptions& options, std::string_view method,
                                         std::string_view target, std::string_view body = {},
                                         std::string_view content_type = "application/json");

// ObjectsPath is the admin API path of one object, or of a kind's list when `name` is empty:
// "/api/v1/objects/httproutes/web?namespace=default". An empty `ns` adds no namespace (for a
// cluster-scoped kind, or every namespace for a list).
std::string ObjectsPath(std::string_view kind, std::string_view name, std::string_view ns);

}  // namespace portico::ctl

#endif  // PORTICO_CONTROLLER_CTL_SERVER_CALL_H_
