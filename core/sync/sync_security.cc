#include "core/sync/sync_security.h"
#include "portico/sdk/fields.h"

#include <grpc/support/log.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <vector>

namespace portico::core {
namespace {

using ::portico::sdk::Quoted;
namespace fs = std::filesystem;

constexpr std::string_view kTable = "conf_sync_security";

// ---------------------------------------------------------------------------------------------
// Parsing

std::string Where(std::string_view source, const toml::node* node) {
  std::string out(source);
  if (node != nullptr && node->source().begin.line > 0) {
    out += ":" + std::to_string(node->source().begin.line);
  }
  return out;
}

Status FieldError(std::string_view source, const toml::node* node, std::string_view field,
                  std::string_view what) {
  return InvalidArgumentError(Where(source, node) + ": " + std::string(field) + ": " +
                              std::string(what));
}

// CheckKeys refuses keys outside `allowed`.
Status CheckKeys(const toml::table& table, std::string_view prefix,
                 std::initializer_list<std::string_view> allowed, std::string_view source) {
  for (const auto& [key, node] : table) {
    bool known = false;
    for (std::string_view a : allowed) known = known || key.str() == a;
    if (!known) {
      std::string list;
      for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      return FieldError(source, &node, std::string(prefix) + "." + std::string(key.str()),
                        "unknown setting (expected one of " + list + ")");
    }
  }
  return OkStatus();
}

// ReadString reads an optional string key; `*present` says whether it was there.
Status ReadString(const toml::table& table, std::string_view key, std::string_view prefix,
                  std::string_view source, std::string* out, bool* present = nullptr) {
  const toml::node* node = table.get(key);
  if (present != nullptr) *present = node != nullptr;
  if (node == nullptr) return OkStatus();
  if (!node->is_string()) {
    return FieldError(source, node, std::string(prefix) + "." + std::string(key),
                      "expected a string");
  }
  *out = node->as_string()->get();
  return OkStatus();
}

fs::path Resolve(const std::string& value, const fs::path& base_dir) {
  fs::path path(value);
  if (path.is_relative() && !base_dir.empty()) path = base_dir / path;
  return path.lexically_normal();
}

// ReadFiles reads one set: an entry of certs (`named`) or the legacy tls table.
StatusOr<SyncTlsFiles> ReadFiles(const toml::table& table, std::string_view prefix, bool named,
                                 const fs::path& base_dir, std::string_view source) {
  if (named) {
    PORTICO_RETURN_IF_ERROR(CheckKeys(
        table, prefix, {"name", "ca_file", "cert_file", "key_file", "server_name"}, source));
  } else {
    PORTICO_RETURN_IF_ERROR(
        CheckKeys(table, prefix, {"ca_file", "cert_file", "key_file", "server_name"}, source));
  }
  SyncTlsFiles files;
  if (named) {
    PORTICO_RETURN_IF_ERROR(ReadString(table, "name", prefix, source, &files.name));
    if (files.name.empty()) {
      return FieldError(source, table.get("name") ? table.get("name") : &table,
                        std::string(prefix) + ".name", "required, a non-empty string");
    }
  }
  struct PathField {
    std::string_view key;
    fs::path* out;
  };
  for (const PathField& field :
       {PathField{"ca_file", &files.ca_file}, PathField{"cert_file", &files.cert_file},
        PathField{"key_file", &files.key_file}}) {
    std::string value;
    PORTICO_RETURN_IF_ERROR(ReadString(table, field.key, prefix, source, &value));
    if (value.empty()) {
      const toml::node* node = table.get(field.key);
      return FieldError(source, node != nullptr ? node : &table,
                        std::string(prefix) + "." + std::string(field.key),
                        "required, the path of a PEM file");
    }
    *field.out = Resolve(value, base_dir);
  }
  PORTICO_RETURN_IF_ERROR(ReadString(table, "server_name", prefix, source, &files.server_name));
  return files;
}

// CheckFile: the file exists, is not a directory and can be read.
Status CheckFile(const toml::table& table, std::string_view key, const fs::path& path,
                 std::string_view prefix, std::string_view source) {
  std::string field = std::string(prefix) + "." + std::string(key);
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) {
    return FieldError(source, table.get(key), field, path.string() + ": no such file");
  }
  if (fs::is_directory(status)) {
    return FieldError(source, table.get(key), field, path.string() + ": is a directory");
  }
  if (::access(path.c_str(), R_OK) != 0) {
    return FieldError(source, table.get(key), field,
                      path.string() + ": cannot be read: " + std::strerror(errno));
  }
  return OkStatus();
}

Status CheckFiles(const toml::table& table, const SyncTlsFiles& files, std::string_view prefix,
                  std::string_view source) {
  PORTICO_RETURN_IF_ERROR(CheckFile(table, "ca_file", files.ca_file, prefix, source));
  PORTICO_RETURN_IF_ERROR(CheckFile(table, "cert_file", files.cert_file, prefix, source));
  return CheckFile(table, "key_file", files.key_file, prefix, source);
}

// ---------------------------------------------------------------------------------------------
// PEM material

template <auto kFree>
struct FreeWith {
  template <typename T>
  void operator()(T* p) const {
    kFree(p);
  }
};
using BioPtr = std::unique_ptr<BIO, FreeWith<BIO_free_all>>;
using X509Ptr = std::unique_ptr<X509, FreeWith<X509_free>>;
using PKeyPtr = std::unique_ptr<EVP_PKEY, FreeWith<EVP_PKEY_free>>;

struct PemSet {
  std::string ca, cert, key;
};

std::string SetLabel(const SyncTlsFiles& files) {
  return files.name.empty() ? std::string(kTable) + ".tls"
                            : std::string(kTable) + " " + Quoted(files.name);
}

StatusOr<std::string> ReadPemFile(const SyncTlsFiles& files, std::string_view field,
                                  const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return InvalidArgumentError(SetLabel(files) + ": " + std::string(field) + " " + path.string() +
                                ": cannot be read: " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// NoPassword keeps OpenSSL from prompting on the terminal for an encrypted key.
int NoPassword(char*, int, int, void*) { return -1; }

void WarnIfExpired(X509* cert, const SyncTlsFiles& files, std::string_view field,
                   const fs::path& path) {
  if (X509_cmp_current_time(X509_get0_notAfter(cert)) < 0) {
    spdlog::warn("ConfigSync TLS: {} {} {} has expired: peers will refuse it", SetLabel(files),
                 field, path.string());
  } else if (X509_cmp_current_time(X509_get0_notBefore(cert)) > 0) {
    spdlog::warn("ConfigSync TLS: {} {} {} is not valid yet: peers will refuse it", SetLabel(files),
                 field, path.string());
  }
}

// LoadPem reads the three files and checks that they hold what gRPC needs, so a mistake is
// reported now, naming the file, rather than as a failed handshake later.
StatusOr<PemSet> LoadPem(const SyncTlsFiles& files) {
  PemSet pem;
  PORTICO_ASSIGN_OR_RETURN(pem.ca, ReadPemFile(files, "ca_file", files.ca_file));
  PORTICO_ASSIGN_OR_RETURN(pem.cert, ReadPemFile(files, "cert_file", files.cert_file));
  PORTICO_ASSIGN_OR_RETURN(pem.key, ReadPemFile(files, "key_file", files.key_file));
  auto bad = [&](std::string_view field, const fs::path& path, std::string_view what) {
    ERR_clear_error();
    return InvalidArgumentError(SetLabel(files) + ": " + std::string(field) + " " + path.string() +
                                ": " + std::string(what));
  };

  BioPtr ca_bio{BIO_new_mem_buf(pem.ca.data(), static_cast<int>(pem.ca.size()))};
  X509Ptr ca{PEM_read_bio_X509(ca_bio.get(), nullptr, NoPassword, nullptr)};
  if (ca == nullptr) return bad("ca_file", files.ca_file, "holds no PEM certificate");
  WarnIfExpired(ca.get(), files, "ca_file", files.ca_file);

  BioPtr cert_bio{BIO_new_mem_buf(pem.cert.data(), static_cast<int>(pem.cert.size()))};
  X509Ptr cert{PEM_read_bio_X509(cert_bio.get(), nullptr, NoPassword, nullptr)};
  if (cert == nullptr) return bad("cert_file", files.cert_file, "holds no PEM certificate");
  WarnIfExpired(cert.get(), files, "cert_file", files.cert_file);

  BioPtr key_bio{BIO_new_mem_buf(pem.key.data(), static_cast<int>(pem.key.size()))};
  PKeyPtr key{PEM_read_bio_PrivateKey(key_bio.get(), nullptr, NoPassword, nullptr)};
  if (key == nullptr) {
    return bad("key_file", files.key_file, "holds no unencrypted PEM private key");
  }
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    return bad("key_file", files.key_file,
               "does not match the certificate in cert_file " + files.cert_file.string());
  }
  ERR_clear_error();
  return pem;
}

// ---------------------------------------------------------------------------------------------
// Logging

// Registered sides, for the hint in a handshake failure line. Leaked: gRPC threads may log
// while static destructors run.
struct LogState {
  std::mutex mu;
  std::optional<SyncTlsFiles> server;
  std::optional<SyncTlsFiles> client;
};

LogState& State() {
  static LogState* state = new LogState;
  return *state;
}

// ShortReason keeps what follows OpenSSL 3's "error:0A0000C7:SSL routines::".
std::string_view ShortReason(std::string_view reason) {
  size_t colons = reason.rfind("::");
  if (colons != std::string_view::npos && colons + 2 < reason.size()) {
    return reason.substr(colons + 2);
  }
  return reason;
}

void LogHandshakeFailure(std::string_view detail) {
  while (!detail.empty() && (detail.back() == '.' || detail.back() == ' ')) {
    detail.remove_suffix(1);
  }
  std::string reason(ShortReason(detail));
  std::optional<SyncTlsFiles> server;
  std::optional<SyncTlsFiles> client;
  {
    std::lock_guard<std::mutex> lock(State().mu);
    server = State().server;
    client = State().client;
  }
  if (server && !client) {
    std::string hint =
        reason.find("wrong version number") != std::string::npos
            ? "the peer does not speak TLS: set conf_sync_security on the gateway"
            : "gateways need a valid client certificate (clientAuth) signed by ca_file=" +
                  server->ca_file.string() + " of " + SetLabel(*server);
    spdlog::warn("ConfigSync TLS: refused a peer: {} ({}) [{}]", reason, hint, detail);
  } else if (client && !server) {
    spdlog::warn(
        "ConfigSync TLS: handshake with the controller failed: {}: check {} (ca_file={}, "
        "cert_file={}{}) [{}]",
        reason, SetLabel(*client), client->ca_file.string(), client->cert_file.string(),
        client->server_name.empty() ? "" : ", server_name=" + client->server_name, detail);
  } else if (server && client) {
    spdlog::warn(
        "ConfigSync TLS: refused a peer or was refused: {} (server {} ca_file={}; client {} "
        "ca_file={}, cert_file={}) [{}]",
        reason, SetLabel(*server), server->ca_file.string(), SetLabel(*client),
        client->ca_file.string(), client->cert_file.string(), detail);
  } else {
    spdlog::warn("TLS handshake failed: {}", detail);
  }
}

// Set at exit: static destructors (spdlog's registry among them) may run while gRPC threads
// still log.
std::atomic<bool> g_exiting{false};

void GrpcLog(gpr_log_func_args* args) {
  std::string_view message = args->message == nullptr ? "" : args->message;
  if (g_exiting.load()) {
    std::fprintf(stderr, "grpc: %.*s\n", static_cast<int>(message.size()), message.data());
    return;
  }
  constexpr std::string_view kHandshakeFailed = "Handshake failed with fatal error ";
  if (message.substr(0, kHandshakeFailed.size()) == kHandshakeFailed) {
    LogHandshakeFailure(message.substr(kHandshakeFailed.size()));
    return;
  }
  spdlog::level::level_enum level = spdlog::level::debug;
  if (args->severity == GPR_LOG_SEVERITY_ERROR) level = spdlog::level::err;
  if (args->severity == GPR_LOG_SEVERITY_INFO) level = spdlog::level::info;
  std::string_view file = args->file == nullptr ? "" : args->file;
  size_t slash = file.rfind('/');
  if (slash != std::string_view::npos) file.remove_prefix(slash + 1);
  spdlog::log(level, "grpc: {} [{}:{}]", message, file, args->line);
}

// AcceptLogger is the server's certificate verifier. gRPC calls it only after OpenSSL verified
// the client's chain against ca_file (REQUIRE_..._AND_VERIFY): it adds no check, it records who
// connected. Refusals never reach it; they are logged from gRPC's log line (GrpcLog).
class AcceptLogger : public grpc::experimental::ExternalCertificateVerifier {
 public:
  explicit AcceptLogger(std::string label) : label_(std::move(label)) {}

  bool Verify(grpc::experimental::TlsCustomVerificationCheckRequest* request,
              std::function<void(grpc::Status)> /*callback*/, grpc::Status* sync_status) override {
    grpc::string_ref cn = request->common_name();
    spdlog::debug("ConfigSync TLS: accepted client certificate CN=\"{}\" ({})",
                  std::string_view(cn.data(), cn.size()), label_);
    *sync_status = grpc::Status::OK;
    return true;  // synchronous
  }

  void Cancel(grpc::experimental::TlsCustomVerificationCheckRequest* /*request*/) override {}

 private:
  std::string label_;
};

// ---------------------------------------------------------------------------------------------
// DescribeSyncFailure helpers

bool Contains(std::string_view text, std::string_view needle) {
  return text.find(needle) != std::string_view::npos;
}

// AddressIn finds "ipv4:1.2.3.4:5810" / "ipv6:%5B::1%5D:5810" in a gRPC error message.
std::string AddressIn(std::string_view message) {
  for (std::string_view scheme : {"ipv4:", "ipv6:"}) {
    size_t at = message.find(scheme);
    if (at == std::string_view::npos) continue;
    std::string_view rest = message.substr(at + scheme.size());
    size_t end = rest.find(": ");
    std::string address(rest.substr(0, end));
    for (auto [from, to] : {std::pair{"%5B", "["}, std::pair{"%5D", "]"}}) {
      for (size_t p = address.find(from); p != std::string::npos; p = address.find(from)) {
        address.replace(p, 3, to);
      }
    }
    return address;
  }
  return "";
}

std::string_view CodeName(grpc::StatusCode code) {
  return StatusCodeName(static_cast<StatusCode>(static_cast<int>(code)));
}

std::string SettingsHint(const SyncSecurity& security) {
  const SyncTlsFiles& files = security.active;
  std::string out = "check " + SetLabel(files) + " (ca_file=" + files.ca_file.string() +
                    ", cert_file=" + files.cert_file.string();
  if (!files.server_name.empty()) out += ", server_name=" + files.server_name;
  return out + ")";
}

}  // namespace

StatusOr<SyncSecurity> ParseSyncSecurity(const toml::table* conf_sync_security,
                                         const fs::path& base_dir, std::string_view source) {
  SyncSecurity security;
  if (conf_sync_security == nullptr) return security;
  const toml::table& table = *conf_sync_security;
  PORTICO_RETURN_IF_ERROR(CheckKeys(table, kTable, {"active", "certs", "tls"}, source));

  std::string active;
  bool has_active = false;
  PORTICO_RETURN_IF_ERROR(ReadString(table, "active", kTable, source, &active, &has_active));
  const toml::node* certs_node = table.get("certs");
  const toml::node* tls_node = table.get("tls");

  if (tls_node != nullptr) {
    if (has_active || certs_node != nullptr) {
      return FieldError(source, tls_node, std::string(kTable) + ".tls",
                        "use either active + [[conf_sync_security.certs]] or the older "
                        "[conf_sync_security.tls], not both");
    }
    if (!tls_node->is_table()) {
      return FieldError(source, tls_node, std::string(kTable) + ".tls", "expected a table");
    }
    const std::string prefix = std::string(kTable) + ".tls";
    const toml::table& tls = *tls_node->as_table();
    PORTICO_ASSIGN_OR_RETURN(security.active, ReadFiles(tls, prefix, false, base_dir, source));
    PORTICO_RETURN_IF_ERROR(CheckFiles(tls, security.active, prefix, source));
    security.enabled = true;
    return security;
  }

  if (!has_active && certs_node == nullptr) {
    return FieldError(source, &table, std::string(kTable),
                      "empty table: give active + [[conf_sync_security.certs]] or "
                      "[conf_sync_security.tls] (remove the table for plaintext)");
  }
  std::vector<SyncTlsFiles> sets;
  std::vector<const toml::table*> set_tables;
  std::map<std::string, size_t> index_of;
  if (certs_node != nullptr) {
    const toml::array* certs = certs_node->as_array();
    if (certs == nullptr) {
      return FieldError(source, certs_node, std::string(kTable) + ".certs",
                        "expected an array of tables ([[conf_sync_security.certs]])");
    }
    for (size_t i = 0; i < certs->size(); ++i) {
      const std::string prefix = std::string(kTable) + ".certs[" + std::to_string(i) + "]";
      const toml::table* entry = certs->get(i)->as_table();
      if (entry == nullptr) {
        return FieldError(source, certs->get(i), prefix, "expected a table");
      }
      PORTICO_ASSIGN_OR_RETURN(SyncTlsFiles files,
                               ReadFiles(*entry, prefix, true, base_dir, source));
      auto [it, inserted] = index_of.emplace(files.name, i);
      if (!inserted) {
        return FieldError(source, entry->get("name"), prefix + ".name",
                          "duplicate name " + Quoted(files.name) + " (also certs[" +
                              std::to_string(it->second) + "])");
      }
      sets.push_back(std::move(files));
      set_tables.push_back(entry);
    }
  }
  std::string names;
  for (const SyncTlsFiles& files : sets) names += (names.empty() ? "" : ", ") + Quoted(files.name);
  const std::string active_field = std::string(kTable) + ".active";
  if (!has_active) {
    return FieldError(source, &table, active_field,
                      "missing: name the [[conf_sync_security.certs]] entry to use" +
                          (names.empty() ? std::string() : " (one of " + names + ")"));
  }
  auto found = index_of.find(active);
  if (found == index_of.end()) {
    return FieldError(source, table.get("active"), active_field,
                      "no certs entry named " + Quoted(active) +
                          (names.empty() ? " (there are no [[conf_sync_security.certs]] entries)"
                                         : " (have " + names + ")"));
  }
  security.active = sets[found->second];
  PORTICO_RETURN_IF_ERROR(
      CheckFiles(*set_tables[found->second], security.active,
                 std::string(kTable) + ".certs[" + std::to_string(found->second) + "]", source));
  security.enabled = true;
  return security;
}

StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const SyncSecurity& security) {
  RouteGrpcLogsToSpdlog();
  if (!security.enabled) return grpc::InsecureServerCredentials();
  PORTICO_ASSIGN_OR_RETURN(PemSet pem, LoadPem(security.active));
  auto provider = std::make_shared<grpc::experimental::StaticDataCertificateProvider>(
      pem.ca, std::vector<grpc::experimental::IdentityKeyCertPair>{{pem.key, pem.cert}});
  grpc::experimental::TlsServerCredentialsOptions options(provider);
  options.watch_root_certs();
  options.watch_identity_key_cert_pairs();
  options.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.set_certificate_verifier(
      grpc::experimental::ExternalCertificateVerifier::Create<AcceptLogger>(
          SetLabel(security.active)));
  std::shared_ptr<grpc::ServerCredentials> credentials =
      grpc::experimental::TlsServerCredentials(options);
  if (credentials == nullptr) {
    return InternalError(SetLabel(security.active) + ": gRPC refused the TLS server options");
  }
  std::lock_guard<std::mutex> lock(State().mu);
  State().server = security.active;
  return credentials;
}

StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const SyncSecurity& security) {
  RouteGrpcLogsToSpdlog();
  if (!security.enabled) return grpc::InsecureChannelCredentials();
  PORTICO_ASSIGN_OR_RETURN(PemSet pem, LoadPem(security.active));
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = pem.ca;
  options.pem_private_key = pem.key;
  options.pem_cert_chain = pem.cert;
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::SslCredentials(options);
  if (credentials == nullptr) {
    return InternalError(SetLabel(security.active) + ": gRPC refused the TLS channel options");
  }
  std::lock_guard<std::mutex> lock(State().mu);
  State().client = security.active;
  return credentials;
}

grpc::ChannelArguments ChannelArgsFor(const SyncSecurity& security) {
  grpc::ChannelArguments args;
  if (security.enabled && !security.active.server_name.empty()) {
    args.SetSslTargetNameOverride(security.active.server_name);
  }
  return args;
}

std::string DescribeSyncFailure(const grpc::Status& status, const SyncSecurity& security,
                                std::string_view target) {
  const std::string& message = status.error_message();
  std::string address(target);
  if (address.empty()) address = AddressIn(message);
  if (address.empty()) address = "the controller";
  if (status.ok()) return "ConfigSync call to " + address + " succeeded";
  const std::string plain = "ConfigSync call to " + address +
                            " failed: " + std::string(CodeName(status.error_code())) + ": " +
                            message;

  // A connection that never became ready reads "failed to connect to all addresses; last error:
  // ..."; a stream broken later (a controller restart) does not, and is not a TLS problem.
  const bool connecting = Contains(message, "failed to connect to all addresses");
  const bool closed = Contains(message, "Socket closed") || Contains(message, "Connection reset") ||
                      Contains(message, "End of TCP stream");
  const bool tls_error =
      Contains(message, "andshake failed") || Contains(message, "SSL_ERROR") ||
      (connecting && (Contains(message, "Peer name") || Contains(message, "certificate")));
  const grpc::StatusCode code = status.error_code();
  const bool transport = code == grpc::StatusCode::UNAVAILABLE ||
                         code == grpc::StatusCode::UNKNOWN || code == grpc::StatusCode::INTERNAL;
  if (!transport) return plain;

  if (!security.enabled) {
    if (connecting && closed) {
      return plain +
             " (the controller closed the connection while connecting: if it requires mutual "
             "TLS, set conf_sync_security here)";
    }
    return plain;
  }
  const std::string head = "ConfigSync TLS handshake with " + address + " failed: ";
  if (tls_error) {
    std::string reason(ShortReason(message));
    if (Contains(message, "certificate verify failed")) {
      reason =
          "the controller's certificate is not signed by our ca_file (or has expired): " + reason;
    } else if (Contains(message, "Peer name")) {
      size_t at = message.find("Peer name");
      reason = message.substr(at) +
               ": set server_name to a name in the controller's certificate, or regenerate it "
               "with --host";
    } else if (Contains(message, "wrong version number")) {
      reason = "the controller does not speak TLS (is conf_sync_security set there?): " + reason;
    }
    return head + reason + ": " + SettingsHint(security);
  }
  if (connecting && closed) {
    return head +
           "the controller closed the connection during the handshake (it refused our client "
           "certificate, or does not speak TLS): " +
           SettingsHint(security) + ", and the controller's log";
  }
  return plain;
}

void RouteGrpcLogsToSpdlog() {
  static std::once_flag once;
  std::call_once(once, [] {
    // spdlog's registry is built before the exit handler is registered, so it is destroyed
    // after the handler ran: from then on gRPC's late lines go to stderr, never to a destroyed
    // logger.
    spdlog::default_logger_raw();
    std::atexit([] { g_exiting.store(true); });
    gpr_set_log_function(GrpcLog);
  });
}

}  // namespace portico::core
