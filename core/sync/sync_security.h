// sync_security.h: ConfigSync mutual TLS (DESIGN.md §5), shared by the controller (server) and
// the gateway (client): the `conf_sync_security` table of portico-controller.toml and
// portico-gateway.toml, and the gRPC credentials made from it.
//
//   [conf_sync_security]
//   active = "prod"                      # which set below is used
//   [[conf_sync_security.certs]]
//   name        = "prod"
//   ca_file     = "certs/prod/ca.crt"    # relative: to the TOML file's directory
//   cert_file   = "certs/prod/server.crt"  # client.crt on a gateway
//   key_file    = "certs/prod/server.key"
//   server_name = "localhost"            # gateway only, optional: expected controller name
//
//   [conf_sync_security.tls]             # the older single-set form, still accepted
//   ca_file = ...  cert_file = ...  key_file = ...  (server_name = ...)
//
// No table: plaintext. `portico-ctl gen-certs` writes matching files and prints both sections.
//
// Refusals are logged on both sides. The server requires a client certificate and verifies it
// against ca_file during the TLS handshake; gRPC reports a refused handshake only through its
// own log, so MakeServerCredentials and MakeChannelCredentials route gRPC's log lines to spdlog
// (RouteGrpcLogsToSpdlog) and turn a failed handshake into one warning naming the reason and
// this side's conf_sync_security, e.g. on the controller
//   ConfigSync TLS: refused a peer: certificate verify failed (gateways need a valid client
//   certificate (clientAuth) signed by ca_file=/etc/portico/prod/ca.crt of conf_sync_security
//   "prod") [SSL_ERROR_SSL: error:0A000086:SSL routines::certificate verify failed]
// ("peer did not return a certificate" for a gateway without one, "wrong version number" for a
// plaintext one). In a process that is both server and client (tests) gRPC does not say which
// side failed, and the line says "refused a peer or was refused".
// gRPC does not tell which address a refused peer had. A client whose certificate the server
// refused (TLS 1.3) only sees the connection closed: DescribeSyncFailure turns that RPC status
// into a line the gateway logs. Accepted client certificates are logged at debug level.
//
// Thread-safety: ParseSyncSecurity, ChannelArgsFor and DescribeSyncFailure are pure; the Make*
// functions read the files and may run on any thread; the credentials they return are shared
// and immutable (gRPC owns them through the shared_ptr).
#ifndef PORTICO_CORE_SYNC_SYNC_SECURITY_H_
#define PORTICO_CORE_SYNC_SYNC_SECURITY_H_

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/support/channel_arguments.h>
#include <grpcpp/support/status.h>

#include <toml++/toml.h>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "portico/sdk/status.h"

namespace portico::core {

// SyncTlsFiles: one named set of PEM files.
struct SyncTlsFiles {
  std::string name;  // "" for the legacy [conf_sync_security.tls] form
  std::filesystem::path ca_file, cert_file, key_file;
  std::string
      server_name;  // client only: expected server name (TLS target name override); "" = none
};

// SyncSecurity: the active set, or disabled (plaintext) when the table is absent.
struct SyncSecurity {
  bool enabled = false;
  SyncTlsFiles active;
};

// ParseSyncSecurity reads a `conf_sync_security` TOML table (nullptr: disabled). Forms:
//   [conf_sync_security] active = "prod"  + [[conf_sync_security.certs]] name=.., ca_file=..,
//   cert_file=.., key_file=.., server_name=..
//   legacy: [conf_sync_security.tls] ca_file=.., cert_file=.., key_file=..
// Relative paths resolve against base_dir. Errors are INVALID_ARGUMENT naming `source` (the
// file, with the line when known), the field path (e.g. "conf_sync_security.active: no certs
// entry named \"x\"") and what is wrong: unknown keys, wrong types, a missing or duplicate name,
// both forms at once, an empty table. The active set's files must exist (a missing file is an
// error naming the file); other sets' files are not looked at, so a set may be staged before
// its files are deployed.
StatusOr<SyncSecurity> ParseSyncSecurity(const toml::table* conf_sync_security,
                                         const std::filesystem::path& base_dir,
                                         std::string_view source);

// MakeServerCredentials: insecure when !enabled; else TLS server credentials (gRPC's
// TlsServerCredentials) that REQUIRE and VERIFY a client certificate signed by ca_file, serving
// cert_file/key_file. The PEM files are read and checked now (a certificate in each of ca_file
// and cert_file, key_file matching cert_file): INVALID_ARGUMENT naming the file otherwise.
StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const SyncSecurity& security);

// MakeChannelCredentials: insecure when !enabled; else SSL channel credentials with the client
// cert/key and ca_file as roots (the same checks as MakeServerCredentials).
StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const SyncSecurity& security);

// ChannelArgsFor: grpc channel arguments for the client (sets GRPC_SSL_TARGET_NAME_OVERRIDE_ARG
// when server_name is set).
grpc::ChannelArguments ChannelArgsFor(const SyncSecurity& security);

// DescribeSyncFailure renders a failed ConfigSync RPC for the log. When the status looks like a
// TLS failure it says so and points at this side's settings:
//   ConfigSync TLS handshake with 127.0.0.1:5810 failed: the controller closed the connection
//   during the handshake (it refused our client certificate, or ...): check conf_sync_security
//   "prod" (ca_file=..., cert_file=...)
// otherwise "ConfigSync call to <target> failed: UNAVAILABLE: <message>". `target` is the
// controller address; when empty it is taken from the status message if present there.
std::string DescribeSyncFailure(const grpc::Status& status, const SyncSecurity& security,
                                std::string_view target = {});

// RouteGrpcLogsToSpdlog makes gRPC write its log lines through spdlog ("grpc: <message>
// [file:line]" at error, info or debug as gRPC graded them) and logs a failed TLS handshake as
// the "ConfigSync TLS: ..." warning described above. Idempotent; process-wide (it replaces
// gRPC's log function with gpr_set_log_function). The Make* functions call it; a main may call
// it earlier to route gRPC's start-up lines too.
void RouteGrpcLogsToSpdlog();

}  // namespace portico::core

#endif  // PORTICO_CORE_SYNC_SYNC_SECURITY_H_
