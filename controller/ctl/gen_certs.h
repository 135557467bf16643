// gen_certs.h: GenerateSyncCerts, the certificates for ConfigSync mutual TLS (DESIGN.md §5):
// a CA, a server certificate for the controller and a client certificate for gateways, all
// EC P-256 keys signed with SHA-256, made with the OpenSSL 3 API (nothing is shelled out).
//
//   DIR/NAME/ca.crt      CA:TRUE (pathlen 0), keyCertSign + cRLSign
//   DIR/NAME/ca.key      mode 0600
//   DIR/NAME/server.crt  extendedKeyUsage serverAuth; SANs DNS:localhost, IP:127.0.0.1, IP:::1
//                        and each extra host (an IP address or a DNS name, "*." allowed)
//   DIR/NAME/server.key  mode 0600
//   DIR/NAME/client.crt  extendedKeyUsage clientAuth
//   DIR/NAME/client.key  mode 0600
//
// Kept out of portico_ctl_lib (in portico_gen_certs) so tests elsewhere (core/sync) can make
// certificates without linking the whole ctl.
// Thread-safety: GenerateSyncCerts may run on any thread; it touches only the files it writes.
#ifndef PORTICO_CONTROLLER_CTL_GEN_CERTS_H_
#define PORTICO_CONTROLLER_CTL_GEN_CERTS_H_

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "portico/sdk/status.h"

namespace portico::ctl {

struct GenCertsOptions {
  std::string cert_name;           // NAME: letters, digits, '.', '_' and '-'; not "." or ".."
  std::filesystem::path out_dir;   // DIR: created when missing
  int days = 365;                  // validity of every certificate, 1..36500
  std::vector<std::string> hosts;  // extra server SANs: IP addresses or DNS names
  bool force = false;              // overwrite existing files
};

// The file names GenerateSyncCerts writes under out_dir / cert_name.
inline constexpr std::string_view kCaCertFile = "ca.crt";
inline constexpr std::string_view kCaKeyFile = "ca.key";
inline constexpr std::string_view kServerCertFile = "server.crt";
inline constexpr std::string_view kServerKeyFile = "server.key";
inline constexpr std::string_view kClientCertFile = "client.crt";
inline constexpr std::string_view kClientKeyFile = "client.key";

// CertSetDir is out_dir / cert_name, made absolute.
std::filesystem::path CertSetDir(const GenCertsOptions& options);

// GenerateSyncCerts writes the six files. INVALID_ARGUMENT for a bad name, host or day count;
// ALREADY_EXISTS naming the first existing file when !force (nothing is written then);
// INTERNAL with OpenSSL's reason, or the file and errno, when generating or writing fails.
Status GenerateSyncCerts(const GenCertsOptions& options);

// SyncSecurityTomlSnippet is the conf_sync_security section for one side, with absolute paths
// into CertSetDir(options): `for_gateway` false gives the controller's (server certificate),
// true the gateway's (client certificate).
std::string SyncSecurityTomlSnippet(const GenCertsOptions& options, bool for_gateway);

}  // namespace portico::ctl

#endif  // PORTICO_CONTROLLER_CTL_GEN_CERTS_H_
