#include "controller/ctl/gen_certs_command.h"

#include <iostream>
#include <memory>
#include <string>

namespace portico::ctl {

int RunGenCerts(const GenCertsOptions& options, std::ostream& out, std::ostream& err) {
  Status status = GenerateSyncCerts(options);
  if (!status.ok()) {
    err << "error: " << status.message() << '\n';
    return 1;
  }
  const std::filesystem::path dir = CertSetDir(options);
  out << "Generated ConfigSync certificates \"" << options.cert_name << "\" (valid " << options.days
      << " days, EC P-256):\n";
  for (std::string_view file : {kCaCertFile, kCaKeyFile, kServerCertFile, kServerKeyFile,
                                kClientCertFile, kClientKeyFile}) {
    out << "  " << (dir / file).string() << '\n';
  }
  out << "Server certificate names: localhost, 127.0.0.1, ::1";
  for (const std::string& host : options.hosts) out << ", " << host;
  out << "\nKeep ca.key offline; the controller needs ca.crt + server.*, each gateway ca.crt + "
         "client.*.\n\n";
  out << SyncSecurityTomlSnippet(options, /*for_gateway=*/false) << '\n';
  out << SyncSecurityTomlSnippet(options, /*for_gateway=*/true);
  return 0;
}

void AddGenCertsCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<GenCertsOptions>();
  CLI::App* cmd = app.add_subcommand(
      "gen-certs", "Generate a CA, a server and a client certificate for ConfigSync mutual TLS");
  cmd->add_option("--cert-name", options->cert_name,
                  "Name of the certificate set (the conf_sync_security.certs entry)")
      ->required();
  cmd->add_option("--out", options->out_dir, "Directory to write NAME/ into")->required();
  cmd->add_option("--days", options->days, "Validity of the certificates in days")
      ->check(CLI::Range(1, 36500))
      ->capture_default_str();
  cmd->add_option("--host", options->hosts,
                  "Extra server certificate name or IP address (repeatable)")
      ->delimiter(',');
  cmd->add_flag("--force", options->force, "Overwrite existing files");
  cmd->callback([options, exit_code] { *exit_code = RunGenCerts(*options, std::cout, std::cerr); });
}

}  // namespace portico::ctl
