#include "controller/center/testing/etcd_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "controller/center/etcd_client.h"

namespace portico::controller::testing {
namespace {

using Clock = std::chrono::steady_clock;

std::string Which(const char* name) {
  for (const char* dir : {"/usr/bin/", "/usr/local/bin/", "/usr/sbin/"}) {
    std::string path = std::string(dir) + name;
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

pid_t Spawn(const std::vector<std::string>& argv, const std::string& log) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (fd >= 0) {
    dup2(fd, 1);
    dup2(fd, 2);
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execv(args[0], args.data());
  _exit(127);
}

std::string Tail(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  return text.size() > 2000 ? text.substr(text.size() - 2000) : text;
}

}  // namespace

std::string EtcdBinary() { return Which("etcd"); }
std::string EtcdctlBinary() { return Which("etcdctl"); }

uint16_t FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  uint16_t port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    socklen_t len = sizeof(addr);
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

EtcdProcess::~EtcdProcess() {
  Kill();
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

Status EtcdProcess::Start(std::vector<std::string> extra_flags,
                          std::chrono::milliseconds deadline) {
  if (EtcdBinary().empty()) return NotFoundError("no etcd binary installed");
  std::string templ = (std::filesystem::temp_directory_path() / "portico-etcd-XXXXXX").string();
  if (mkdtemp(templ.data()) == nullptr) return InternalError("mkdtemp failed");
  dir_ = templ;
  extra_flags_ = std::move(extra_flags);
  Status last;
  for (int attempt = 0; attempt < 5; ++attempt) {
    client_port_ = FreeLoopbackPort();
    peer_port_ = FreeLoopbackPort();
    if (client_port_ == peer_port_) continue;
    last = Launch(deadline);
    if (last.ok()) return last;
    Kill();
    std::error_code ec;
    std::filesystem::remove_all(dir_ / "data", ec);
  }
  return last;
}

Status EtcdProcess::Launch(std::chrono::milliseconds deadline) {
  std::string client =
      (tls_ ? "https://127.0.0.1:" : "http://127.0.0.1:") + std::to_string(client_port_);
  std::string peer = "http://127.0.0.1:" + std::to_string(peer_port_);
  std::vector<std::string> argv = {EtcdBinary(),
                                   "--name=portico-test",
                                   "--data-dir=" + (dir_ / "data").string(),
                                   "--listen-client-urls=" + client,
                                   "--advertise-client-urls=" + client,
                                   "--listen-peer-urls=" + peer,
                                   "--initial-advertise-peer-urls=" + peer,
                                   "--initial-cluster=portico-test=" + peer,
                                   "--log-level=warn",
                                   "--logger=zap"};
  if (tls_) {
    argv.push_back("--cert-file=" + tls_->cert_file);
    argv.push_back("--key-file=" + tls_->key_file);
    argv.push_back("--trusted-ca-file=" + tls_->ca_file);
    argv.push_back("--client-cert-auth");
  }
  for (const std::string& f : extra_flags_) argv.push_back(f);
  pid_ = Spawn(argv, (dir_ / "etcd.log").string());
  if (pid_ < 0) return InternalError("fork failed");
  return WaitHealthy(deadline);
}

Status EtcdProcess::WaitHealthy(std::chrono::milliseconds deadline) {
  EtcdClientOptions options;
  options.endpoints = {Endpoint()};
  options.call_timeout = std::chrono::milliseconds(500);
  if (tls_) {
    options.ca_file = tls_->ca_file;
    options.cert_file = tls_->client_cert_file;
    options.key_file = tls_->client_key_file;
  }
  StatusOr<std::unique_ptr<EtcdClient>> client = EtcdClient::Create(options);
  if (!client.ok()) return client.status();
  auto until = Clock::now() + deadline;
  Status last;
  while (Clock::now() < until) {
    int wstatus = 0;
    if (waitpid(pid_, &wstatus, WNOHANG) == pid_) {
      pid_ = -1;
      return UnavailableError("etcd exited during start-up: " + Tail(dir_ / "etcd.log"));
    }
    etcdserverpb::RangeRequest probe;
    probe.set_key("health");
    StatusOr<etcdserverpb::RangeResponse> r = (*client)->Range(probe);
    // An answer, even "user name is empty" with auth enabled, means etcd serves.
    if (r.ok() || r.status().code() == StatusCode::kInvalidArgument ||
        r.status().code() == StatusCode::kPermissionDenied) {
      return OkStatus();
    }
    last = r.status();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling interval
  }
  return UnavailableError("etcd did not answer within the deadline: " + last.message() + "\n" +
                          Tail(dir_ / "etcd.log"));
}

void EtcdProcess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  int wstatus = 0;
  waitpid(pid_, &wstatus, 0);
  pid_ = -1;
}

Status EtcdProcess::Restart(std::chrono::milliseconds deadline) {
  Kill();
  return Launch(deadline);
}

StatusOr<std::string> EtcdProcess::Etcdctl(const std::vector<std::string>& args) const {
  if (EtcdctlBinary().empty()) return NotFoundError("no etcdctl installed");
  std::string cmd = "ETCDCTL_API=3 " + EtcdctlBinary() + " --endpoints=" + Endpoint();
  for (const std::string& a : args) cmd += " '" + a + "'";
  cmd += " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return InternalError("popen failed");
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  int rc = pclose(pipe);
  if (rc != 0) return InternalError("etcdctl " + (args.empty() ? "" : args[0]) + ": " + out);
  return out;
}

}  // namespace portico::controller::testing
