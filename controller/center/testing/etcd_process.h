// etcd_process.h: EtcdProcess, a real etcd server (/usr/bin/etcd) for tests: loopback ports,
// a temporary data directory, started and waited for (a Range answered) with a deadline, and
// killed and restarted on the same ports and data to test reconnection.
//
// Ports: etcd cannot report a port-0 bind, so a free port is found by binding port 0, reading
// it and closing the socket; if etcd then fails to start (someone took the port), new ports are
// picked and it is tried again.
//
// Thread-safety: one thread at a time. Ownership: the destructor kills the process (SIGKILL)
// and removes the data directory.
#ifndef PORTICO_CONTROLLER_CENTER_TESTING_ETCD_PROCESS_H_
#define PORTICO_CONTROLLER_CENTER_TESTING_ETCD_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "portico/sdk/status.h"

namespace portico::controller::testing {

// EtcdBinary is the etcd server to run ("" when none is installed: tests skip).
std::string EtcdBinary();
// EtcdctlBinary is etcdctl ("" when none is installed).
std::string EtcdctlBinary();
// FreeLoopbackPort binds 127.0.0.1:0, reads the port and closes the socket.
uint16_t FreeLoopbackPort();

// EtcdTlsFiles: serve clients over TLS with this certificate, requiring client certificates
// signed by `ca_file` (etcd's --client-cert-auth).
struct EtcdTlsFiles {
  std::string ca_file, cert_file, key_file;       // server side
  std::string client_cert_file, client_key_file;  // what the health check presents
};

class EtcdProcess {
 public:
  // UseTls makes Start() serve https (call before Start()).
  void UseTls(EtcdTlsFiles tls) { tls_ = std::move(tls); }
  EtcdProcess() = default;
  ~EtcdProcess();
  EtcdProcess(const EtcdProcess&) = delete;
  EtcdProcess& operator=(const EtcdProcess&) = delete;

  // Start launches etcd (extra flags appended) and waits until it answers, up to `deadline`.
  Status Start(std::vector<std::string> extra_flags = {},
               std::chrono::milliseconds deadline = std::chrono::seconds(30));
  // Kill stops it with SIGKILL and reaps it (data kept).
  void Kill();
  // Restart starts it again on the same ports and data directory.
  Status Restart(std::chrono::milliseconds deadline = std::chrono::seconds(30));

  // Endpoint: "127.0.0.1:PORT" (client URL without the scheme; "https://..." with TLS).
  std::string Endpoint() const {
    return (tls_ ? "https://127.0.0.1:" : "127.0.0.1:") + std::to_string(client_port_);
  }
  // Etcdctl runs etcdctl against this server with `args`; returns its stdout, or an error with
  // its output when it exits non-zero.
  StatusOr<std::string> Etcdctl(const std::vector<std::string>& args) const;

 private:
  Status Launch(std::chrono::milliseconds deadline);
  Status WaitHealthy(std::chrono::milliseconds deadline);

  std::filesystem::path dir_;
  uint16_t client_port_ = 0, peer_port_ = 0;
  std::vector<std::string> extra_flags_;
  std::optional<EtcdTlsFiles> tls_;
  pid_t pid_ = -1;
};

}  // namespace portico::controller::testing

#endif  // PORTICO_CONTROLLER_CENTER_TESTING_ETCD_PROCESS_H_
