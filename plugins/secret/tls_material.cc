// tls_material.cc: see tls_material.h.
#include "tls_material.h"

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <memory>

namespace portico::plugins::secret {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct NamesFree {
  void operator()(GENERAL_NAMES* n) const { GENERAL_NAMES_free(n); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using KeyPtr = std::unique_ptr<EVP_PKEY, KeyFree>;

BioPtr MemoryBio(std::string_view data) {
  return BioPtr(BIO_new_mem_buf(data.data(), static_cast<int>(data.size())));
}

// NoPassword refuses encrypted keys instead of letting OpenSSL prompt on a terminal.
int NoPassword(char*, int, int, void*) { return 0; }

// OpenSslError returns the oldest queued OpenSSL error as text and clears the queue.
std::string OpenSslError() {
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "no PEM data found";
  char buffer[256];
  ERR_error_string_n(code, buffer, sizeof(buffer));
  return buffer;
}

std::optional<int64_t> UnixMs(const ASN1_TIME* t) {
  struct tm tm {};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) return std::nullopt;
  return static_cast<int64_t>(timegm(&tm)) * 1000;
}

std::string Hex(const unsigned char* bytes, size_t n) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 0xf];
  }
  return out;
}

std::vector<std::string> SubjectAltNames(X509* cert) {
  std::vector<std::string> out;
  std::unique_ptr<GENERAL_NAMES, NamesFree> names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  if (!names) return out;
  for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), i);
    if (name->type == GEN_DNS) {
      const ASN1_STRING* s = name->d.dNSName;
      out.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                       static_cast<size_t>(ASN1_STRING_length(s)));
    } else if (name->type == GEN_IPADD) {
      const ASN1_OCTET_STRING* s = name->d.iPAddress;
      int len = ASN1_STRING_length(s);
      char text[INET6_ADDRSTRLEN] = {};
      int family = len == 4 ? AF_INET : len == 16 ? AF_INET6 : 0;
      if (family != 0 && inet_ntop(family, ASN1_STRING_get0_data(s), text, sizeof(text))) {
        out.emplace_back(text);
      }
    }
  }
  return out;
}

// ReadRestOfChain reads the PEM certificates left in `bio`; false (with OpenSSL's error in
// `error`) when one does not parse. `count` gets how many were read.
bool ReadRestOfChain(BIO* bio, int* count, std::string* error) {
  while (true) {
    X509Ptr next(PEM_read_bio_X509(bio, nullptr, &NoPassword, nullptr));
    if (next) {
      ++*count;
      continue;
    }
    unsigned long code = ERR_peek_last_error();
    bool end = ERR_GET_LIB(code) == ERR_LIB_PEM && ERR_GET_REASON(code) == PEM_R_NO_START_LINE;
    if (!end && code != 0) {
      *error = OpenSslError();
      return false;
    }
    ERR_clear_error();
    return true;
  }
}

TlsMaterial Invalid(TlsMaterial m, std::string reason, std::string message) {
  m.valid = false;
  m.reason = std::move(reason);
  m.message = std::move(message);
  return m;
}

}  // namespace

std::string Sha256(std::string_view a, std::string_view b) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1 ||
      EVP_DigestUpdate(ctx.get(), a.data(), a.size()) != 1 ||
      EVP_DigestUpdate(ctx.get(), b.data(), b.size()) != 1 ||
      EVP_DigestFinal_ex(ctx.get(), digest, &size) != 1) {
    return "";
  }
  return Hex(digest, size);
}

CaBundle CheckCaBundle(std::string_view ca_pem) {
  CaBundle out;
  out.sha256 = Sha256(ca_pem);
  ERR_clear_error();
  BioPtr bio = MemoryBio(ca_pem);
  X509Ptr first(bio ? PEM_read_bio_X509(bio.get(), nullptr, &NoPassword, nullptr) : nullptr);
  std::string error;
  if (!first) {
    error = OpenSslError();
  } else {
    out.certificates = 1;
    if (ReadRestOfChain(bio.get(), &out.certificates, &error)) {
      out.valid = true;
      return out;
    }
  }
  out.reason = "InvalidCACertificate";
  out.message = out.certificates == 0
                    ? "ca.crt is not a PEM certificate bundle: " + error
                    : "ca.crt: certificate " + std::to_string(out.certificates + 1) +
                          " does not parse: " + error;
  return out;
}

TlsMaterial CheckTlsMaterial(std::string_view cert_pem, std::string_view key_pem,
                             int64_t now_unix_ms) {
  TlsMaterial m;
  m.sha256 = Sha256(cert_pem, key_pem);
  ERR_clear_error();
  BioPtr cert_bio = MemoryBio(cert_pem);
  X509Ptr leaf(cert_bio ? PEM_read_bio_X509(cert_bio.get(), nullptr, &NoPassword, nullptr)
                        : nullptr);
  if (!leaf) {
    return Invalid(std::move(m), "InvalidCertificate",
                   "tls.crt is not a PEM certificate: " + OpenSslError());
  }
  // The rest of tls.crt is the chain; each entry must parse too.
  int chain = 0;
  std::string error;
  if (!ReadRestOfChain(cert_bio.get(), &chain, &error)) {
    return Invalid(std::move(m), "InvalidCertificate",
                   "tls.crt: a chain certificate does not parse: " + error);
  }
  m.sans = SubjectAltNames(leaf.get());
  m.not_before_unix_ms = UnixMs(X509_get0_notBefore(leaf.get())).value_or(0);
  std::optional<int64_t> not_after = UnixMs(X509_get0_notAfter(leaf.get()));
  m.not_after_unix_ms = not_after.value_or(0);

  BioPtr key_bio = MemoryBio(key_pem);
  KeyPtr key(key_bio ? PEM_read_bio_PrivateKey(key_bio.get(), nullptr, &NoPassword, nullptr)
                     : nullptr);
  if (!key) {
    return Invalid(std::move(m), "InvalidKey",
                   "tls.key is not an unencrypted PEM private key: " + OpenSslError());
  }
  if (X509_check_private_key(leaf.get(), key.get()) != 1) {
    ERR_clear_error();
    return Invalid(std::move(m), "KeyMismatch",
                   "tls.key does not match the certificate in tls.crt");
  }
  if (!not_after || *not_after <= now_unix_ms) {
    return Invalid(std::move(m), "Expired", "the certificate in tls.crt has expired");
  }
  m.valid = true;
  return m;
}

}  // namespace portico::plugins::secret
