// gen_certs_command.h: `portico-ctl gen-certs`, certificates for ConfigSync mutual TLS.
//
//   portico-ctl gen-certs --cert-name NAME --out DIR [--days N] [--host H ...] [--force]
//
// Writes DIR/NAME/{ca.crt,ca.key,server.crt,server.key,client.crt,client.key} (GenerateSyncCerts
// in gen_certs.h; keys mode 0600), then prints the files written and the conf_sync_security
// sections to paste into portico-controller.toml and portico-gateway.toml. --host adds a name
// or address to the server certificate (repeatable, or comma-separated); localhost, 127.0.0.1
// and ::1 are always there. Existing files are left alone unless --force. Exit status 0, or 1
// with "error: ..." on stderr.
//
// Thread-safety: runs on the main thread.
#ifndef PORTICO_CONTROLLER_CTL_GEN_CERTS_COMMAND_H_
#define PORTICO_CONTROLLER_CTL_GEN_CERTS_COMMAND_H_

#include <CLI/CLI.hpp>
#include <ostream>

#include "controller/ctl/gen_certs.h"

namespace portico::ctl {

// AddGenCertsCommand registers `gen-certs`; `exit_code` must outlive app.parse().
void AddGenCertsCommand(CLI::App& app, int* exit_code);

// RunGenCerts generates the certificates and prints what it wrote to `out`, errors to `err`.
int RunGenCerts(const GenCertsOptions& options, std::ostream& out, std::ostream& err);

}  // namespace portico::ctl

#endif  // PORTICO_CONTROLLER_CTL_GEN_CERTS_COMMAND_H_
