#include "controller/ctl/gen_certs.h"

#include <fcntl.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>
#include <set>
#include <system_error>

namespace portico::ctl {
namespace {

namespace fs = std::filesystem;

template <auto kFree>
struct FreeWith {
  template <typename T>
  void operator()(T* p) const {
    kFree(p);
  }
};
using PKeyPtr = std::unique_ptr<EVP_PKEY, FreeWith<EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, FreeWith<X509_free>>;
using BioPtr = std::unique_ptr<BIO, FreeWith<BIO_free_all>>;
using BignumPtr = std::unique_ptr<BIGNUM, FreeWith<BN_free>>;
using ExtPtr = std::unique_ptr<X509_EXTENSION, FreeWith<X509_EXTENSION_free>>;
using GeneralNamesPtr = std::unique_ptr<GENERAL_NAMES, FreeWith<GENERAL_NAMES_free>>;
using GeneralNamePtr = std::unique_ptr<GENERAL_NAME, FreeWith<GENERAL_NAME_free>>;
using OctetsPtr = std::unique_ptr<ASN1_OCTET_STRING, FreeWith<ASN1_OCTET_STRING_free>>;
using Ia5Ptr = std::unique_ptr<ASN1_IA5STRING, FreeWith<ASN1_IA5STRING_free>>;

constexpr int kMaxDays = 36500;
constexpr long kBackdateSeconds = 300;  // tolerate clocks a few minutes behind ours

// OpenSslError drains OpenSSL's error queue into one line.
std::string OpenSslError() {
  std::string out;
  while (unsigned long code = ERR_get_error()) {
    std::array<char, 256> buf{};
    ERR_error_string_n(code, buf.data(), buf.size());
    if (!out.empty()) out += "; ";
    out += buf.data();
  }
  return out.empty() ? "unknown OpenSSL error" : out;
}

Status SslFailure(std::string_view what) {
  return InternalError("gen-certs: " + std::string(what) + ": " + OpenSslError());
}

bool ValidCertName(std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.size() > 128) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// ValidDnsName accepts RFC 1123 host names, optionally with one leading "*." wildcard label.
bool ValidDnsName(std::string_view name) {
  if (name.substr(0, 2) == "*.") name.remove_prefix(2);
  if (name.empty() || name.size() > 253) return false;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('.', start);
    if (end == std::string_view::npos) end = name.size();
    std::string_view label = name.substr(start, end - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') {
      return false;
    }
    for (char c : label) {
      bool ok =
          (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
      if (!ok) return false;
    }
    start = end + 1;
  }
  return true;
}

// SubjectAltName is one server SAN: an IP address (binary form) or a DNS name.
struct SubjectAltName {
  bool is_ip = false;
  std::string value;  // the DNS name, or the address bytes
  std::string text;   // as written, for messages
};

StatusOr<SubjectAltName> ParseHost(std::string_view host) {
  std::string text(host);
  std::string ip_text = text;
  if (ip_text.size() > 2 && ip_text.front() == '[' && ip_text.back() == ']') {
    ip_text = ip_text.substr(1, ip_text.size() - 2);
  }
  if (OctetsPtr ip{a2i_IPADDRESS(ip_text.c_str())}) {
    SubjectAltName san{true,
                       std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(ip.get())),
                                   ASN1_STRING_length(ip.get())),
                       ip_text};
    return san;
  }
  ERR_clear_error();
  if (!ValidDnsName(text)) {
    return InvalidArgumentError("gen-certs: --host \"" + text +
                                "\" is neither an IP address nor a DNS name");
  }
  std::string lower = text;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return SubjectAltName{false, lower, text};
}

StatusOr<std::vector<SubjectAltName>> ServerNames(const std::vector<std::string>& hosts) {
  std::vector<std::string> all = {"localhost", "127.0.0.1", "::1"};
  all.insert(all.end(), hosts.begin(), hosts.end());
  std::vector<SubjectAltName> names;
  std::set<std::pair<bool, std::string>> seen;
  for (const std::string& host : all) {
    PORTICO_ASSIGN_OR_RETURN(SubjectAltName san, ParseHost(host));
    if (seen.insert({san.is_ip, san.value}).second) names.push_back(std::move(san));
  }
  return names;
}

StatusOr<PKeyPtr> NewKey() {
  PKeyPtr key{EVP_EC_gen("P-256")};
  if (key == nullptr) return SslFailure("generating an EC P-256 key");
  return key;
}

Status AddExtension(X509* cert, X509V3_CTX* ctx, int nid, const char* value) {
  ExtPtr ext{X509V3_EXT_nconf_nid(nullptr, ctx, nid, value)};
  if (ext == nullptr || X509_add_ext(cert, ext.get(), -1) != 1) {
    return SslFailure(std::string("adding extension ") + OBJ_nid2sn(nid) + "=" + value);
  }
  return OkStatus();
}

Status AddSubjectAltNames(X509* cert, const std::vector<SubjectAltName>& names) {
  GeneralNamesPtr gens{sk_GENERAL_NAME_new_null()};
  if (gens == nullptr) return SslFailure("allocating subjectAltName");
  for (const SubjectAltName& san : names) {
    GeneralNamePtr gen{GENERAL_NAME_new()};
    if (gen == nullptr) return SslFailure("allocating subjectAltName");
    if (san.is_ip) {
      OctetsPtr ip{ASN1_OCTET_STRING_new()};
      if (ip == nullptr ||
          ASN1_OCTET_STRING_set(ip.get(), reinterpret_cast<const unsigned char*>(san.value.data()),
                                static_cast<int>(san.value.size())) != 1) {
        return SslFailure("encoding IP " + san.text);
      }
      GENERAL_NAME_set0_value(gen.get(), GEN_IPADD, ip.release());
    } else {
      Ia5Ptr dns{ASN1_IA5STRING_new()};
      if (dns == nullptr ||
          ASN1_STRING_set(dns.get(), san.value.data(), static_cast<int>(san.value.size())) != 1) {
        return SslFailure("encoding DNS name " + san.text);
      }
      GENERAL_NAME_set0_value(gen.get(), GEN_DNS, dns.release());
    }
    if (sk_GENERAL_NAME_push(gens.get(), gen.get()) == 0) return SslFailure("subjectAltName");
    gen.release();  // owned by gens now
  }
  if (X509_add1_ext_i2d(cert, NID_subject_alt_name, gens.get(), 0, X509V3_ADD_DEFAULT) != 1) {
    return SslFailure("adding subjectAltName");
  }
  return OkStatus();
}

enum class CertRole { kCa, kServer, kClient };

struct Issuer {
  X509* cert;  // nullptr: self-signed
  EVP_PKEY* key;
};

StatusOr<X509Ptr> NewCert(CertRole role, const std::string& common_name, EVP_PKEY* key,
                          const Issuer& issuer, int days,
                          const std::vector<SubjectAltName>& names) {
  X509Ptr cert{X509_new()};
  if (cert == nullptr || X509_set_version(cert.get(), X509_VERSION_3) != 1) {
    return SslFailure("allocating a certificate");
  }
  // A random positive 127-bit serial: unique per certificate, as RFC 5280 asks.
  std::array<unsigned char, 16> serial{};
  if (RAND_bytes(serial.data(), static_cast<int>(serial.size())) != 1) {
    return SslFailure("drawing a serial number");
  }
  serial[0] = static_cast<unsigned char>((serial[0] & 0x7f) | 0x01);
  BignumPtr bn{BN_bin2bn(serial.data(), static_cast<int>(serial.size()), nullptr)};
  if (bn == nullptr || BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert.get())) == nullptr) {
    return SslFailure("setting the serial number");
  }
  if (X509_gmtime_adj(X509_getm_notBefore(cert.get()), -kBackdateSeconds) == nullptr ||
      X509_time_adj_ex(X509_getm_notAfter(cert.get()), days, 0, nullptr) == nullptr) {
    return SslFailure("setting the validity period");
  }
  if (X509_set_pubkey(cert.get(), key) != 1) return SslFailure("setting the public key");
  X509_NAME* subject = X509_get_subject_name(cert.get());
  auto add_name = [&](const char* field, const std::string& value) {
    return X509_NAME_add_entry_by_txt(subject, field, MBSTRING_UTF8,
                                      reinterpret_cast<const unsigned char*>(value.c_str()), -1, -1,
                                      0) == 1;
  };
  if (!add_name("O", "Portico") || !add_name("CN", common_name)) {
    return SslFailure("setting the subject name");
  }
  X509* issuer_cert = issuer.cert == nullptr ? cert.get() : issuer.cert;
  if (X509_set_issuer_name(cert.get(), X509_get_subject_name(issuer_cert)) != 1) {
    return SslFailure("setting the issuer name");
  }

  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer_cert, cert.get(), nullptr, nullptr, 0);
  PORTICO_RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_subject_key_identifier, "hash"));
  switch (role) {
    case CertRole::kCa:
      PORTICO_RETURN_IF_ERROR(
          AddExtension(cert.get(), &ctx, NID_basic_constraints, "critical,CA:TRUE,pathlen:0"));
      PORTICO_RETURN_IF_ERROR(
          AddExtension(cert.get(), &ctx, NID_key_usage, "critical,keyCertSign,cRLSign"));
      break;
    case CertRole::kServer:
    case CertRole::kClient:
      PORTICO_RETURN_IF_ERROR(
          AddExtension(cert.get(), &ctx, NID_authority_key_identifier, "keyid:always"));
      PORTICO_RETURN_IF_ERROR(
          AddExtension(cert.get(), &ctx, NID_basic_constraints, "critical,CA:FALSE"));
      PORTICO_RETURN_IF_ERROR(
          AddExtension(cert.get(), &ctx, NID_key_usage, "critical,digitalSignature"));
      PORTICO_RETURN_IF_ERROR(
          AddExtension(cert.get(), &ctx, NID_ext_key_usage,
                       role == CertRole::kServer ? "serverAuth" : "clientAuth"));
      break;
  }
  if (role == CertRole::kServer) PORTICO_RETURN_IF_ERROR(AddSubjectAltNames(cert.get(), names));
  if (X509_sign(cert.get(), issuer.key, EVP_sha256()) <= 0) {
    return SslFailure("signing the " + common_name + " certificate");
  }
  return cert;
}

StatusOr<std::string> BioText(BIO* bio) {
  char* data = nullptr;
  long size = BIO_get_mem_data(bio, &data);
  if (size < 0) return SslFailure("reading PEM");
  return std::string(data, static_cast<size_t>(size));
}

StatusOr<std::string> CertPem(X509* cert) {
  BioPtr bio{BIO_new(BIO_s_mem())};
  if (bio == nullptr || PEM_write_bio_X509(bio.get(), cert) != 1) {
    return SslFailure("encoding a certificate");
  }
  return BioText(bio.get());
}

StatusOr<std::string> KeyPem(EVP_PKEY* key) {
  BioPtr bio{BIO_new(BIO_s_mem())};
  if (bio == nullptr ||
      PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return SslFailure("encoding a private key");
  }
  return BioText(bio.get());
}

Status Errno(const std::string& what, const fs::path& path, int err) {
  return InternalError("gen-certs: " + what + " " + path.string() + ": " + std::strerror(err));
}

// WriteNewFile creates `path` with `mode` (never following a symlink there) and writes `data`.
// With `replace`, an existing file (or symlink) is removed first.
Status WriteNewFile(const fs::path& path, const std::string& data, mode_t mode, bool replace) {
  if (replace && ::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return Errno("cannot remove", path, errno);
  }
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) {
    if (errno == EEXIST) {
      return AlreadyExistsError("gen-certs: " + path.string() +
                                " already exists (use --force to overwrite)");
    }
    return Errno("cannot create", path, errno);
  }
  Status status;
  if (::fchmod(fd, mode) != 0) status = Errno("cannot chmod", path, errno);
  size_t done = 0;
  while (status.ok() && done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      status = Errno("cannot write", path, errno);
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 && status.ok()) status = Errno("cannot write", path, errno);
  return status;
}

std::string TomlString(const std::string& value) {
  std::string out = "\"";
  for (char c : value) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          static constexpr char kHex[] = "0123456789ABCDEF";
          out += "\\u00";
          out += kHex[(c >> 4) & 0xf];
          out += kHex[c & 0xf];
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace

fs::path CertSetDir(const GenCertsOptions& options) {
  std::error_code ec;
  fs::path dir = fs::absolute(options.out_dir / options.cert_name, ec);
  if (ec) dir = options.out_dir / options.cert_name;
  return dir.lexically_normal();
}

Status GenerateSyncCerts(const GenCertsOptions& options) {
  if (!ValidCertName(options.cert_name)) {
    return InvalidArgumentError("gen-certs: --cert-name \"" + options.cert_name +
                                "\": use 1 to 128 letters, digits, '.', '_' or '-'");
  }
  if (options.out_dir.empty()) return InvalidArgumentError("gen-certs: --out: empty directory");
  if (options.days < 1 || options.days > kMaxDays) {
    return InvalidArgumentError("gen-certs: --days " + std::to_string(options.days) +
                                " is out of range [1, " + std::to_string(kMaxDays) + "]");
  }
  PORTICO_ASSIGN_OR_RETURN(std::vector<SubjectAltName> names, ServerNames(options.hosts));

  const fs::path dir = CertSetDir(options);
  const std::array<std::string_view, 6> files = {kCaCertFile,    kCaKeyFile,      kServerCertFile,
                                                 kServerKeyFile, kClientCertFile, kClientKeyFile};
  if (!options.force) {
    for (std::string_view file : files) {
      std::error_code ec;
      if (fs::exists(fs::symlink_status(dir / file, ec))) {
        return AlreadyExistsError("gen-certs: " + (dir / file).string() +
                                  " already exists (use --force to overwrite)");
      }
    }
  }

  ERR_clear_error();
  PORTICO_ASSIGN_OR_RETURN(PKeyPtr ca_key, NewKey());
  PORTICO_ASSIGN_OR_RETURN(PKeyPtr server_key, NewKey());
  PORTICO_ASSIGN_OR_RETURN(PKeyPtr client_key, NewKey());
  const std::string& name = options.cert_name;
  PORTICO_ASSIGN_OR_RETURN(X509Ptr ca,
                           NewCert(CertRole::kCa, "Portico ConfigSync CA " + name, ca_key.get(),
                                   Issuer{nullptr, ca_key.get()}, options.days, {}));
  Issuer by_ca{ca.get(), ca_key.get()};
  PORTICO_ASSIGN_OR_RETURN(X509Ptr server,
                           NewCert(CertRole::kServer, "Portico ConfigSync server " + name,
                                   server_key.get(), by_ca, options.days, names));
  PORTICO_ASSIGN_OR_RETURN(X509Ptr client,
                           NewCert(CertRole::kClient, "Portico ConfigSync client " + name,
                                   client_key.get(), by_ca, options.days, {}));

  struct Output {
    std::string_view file;
    std::string data;
    mode_t mode;
  };
  std::vector<Output> outputs;
  PORTICO_ASSIGN_OR_RETURN(std::string ca_pem, CertPem(ca.get()));
  PORTICO_ASSIGN_OR_RETURN(std::string ca_key_pem, KeyPem(ca_key.get()));
  PORTICO_ASSIGN_OR_RETURN(std::string server_pem, CertPem(server.get()));
  PORTICO_ASSIGN_OR_RETURN(std::string server_key_pem, KeyPem(server_key.get()));
  PORTICO_ASSIGN_OR_RETURN(std::string client_pem, CertPem(client.get()));
  PORTICO_ASSIGN_OR_RETURN(std::string client_key_pem, KeyPem(client_key.get()));
  outputs.push_back({kCaCertFile, std::move(ca_pem), 0644});
  outputs.push_back({kCaKeyFile, std::move(ca_key_pem), 0600});
  outputs.push_back({kServerCertFile, std::move(server_pem), 0644});
  outputs.push_back({kServerKeyFile, std::move(server_key_pem), 0600});
  outputs.push_back({kClientCertFile, std::move(client_pem), 0644});
  outputs.push_back({kClientKeyFile, std::move(client_key_pem), 0600});

  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return InternalError("gen-certs: cannot create directory " + dir.string() + ": " +
                         ec.message());
  }
  for (const Output& output : outputs) {
    PORTICO_RETURN_IF_ERROR(
        WriteNewFile(dir / output.file, output.data, output.mode, options.force));
  }
  return OkStatus();
}

std::string SyncSecurityTomlSnippet(const GenCertsOptions& options, bool for_gateway) {
  const fs::path dir = CertSetDir(options);
  const std::string& name = options.cert_name;
  std::string out;
  out += for_gateway ? "# portico-gateway.toml\n" : "# portico-controller.toml\n";
  out += "[conf_sync_security]\n";
  out += "active = " + TomlString(name) + "\n\n";
  out += "[[conf_sync_security.certs]]\n";
  out += "name      = " + TomlString(name) + "\n";
  out += "ca_file   = " + TomlString((dir / kCaCertFile).string()) + "\n";
  out += "cert_file = " +
         TomlString((dir / (for_gateway ? kClientCertFile : kServerCertFile)).string()) + "\n";
  out += "key_file  = " +
         TomlString((dir / (for_gateway ? kClientKeyFile : kServerKeyFile)).string()) + "\n";
  if (for_gateway) {
    out +=
        "# server_name = \"localhost\"  # when the controller address is not among the server "
        "certificate's names\n";
  }
  return out;
}

}  // namespace portico::ctl
