// ca_bundle.cc: see ca_bundle.h.
#include "ca_bundle.h"

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>

namespace portico::plugins::x509 {
namespace {

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

// OpenSslError returns the oldest queued OpenSSL error as text and clears the queue.
std::string OpenSslError() {
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown error";
  char buffer[256];
  ERR_error_string_n(code, buffer, sizeof(buffer));
  return buffer;
}

// PemBlock owns what PEM_read_bio allocates.
struct PemBlock {
  char* name = nullptr;
  char* header = nullptr;
  unsigned char* data = nullptr;
  long length = 0;
  ~PemBlock() {
    OPENSSL_free(name);
    OPENSSL_free(header);
    OPENSSL_free(data);
  }
};

CaBundle Invalid(CaBundle b, std::string message) {
  b.valid = false;
  b.message = std::move(message);
  return b;
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

CaBundle CheckCaBundle(std::string_view pem) {
  CaBundle out;
  out.sha256 = Sha256(pem);
  ERR_clear_error();
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  if (!bio) return Invalid(std::move(out), "out of memory");
  for (int block = 1;; ++block) {
    PemBlock b;
    if (PEM_read_bio(bio.get(), &b.name, &b.header, &b.data, &b.length) != 1) {
      unsigned long code = ERR_peek_last_error();
      bool end = ERR_GET_LIB(code) == ERR_LIB_PEM && ERR_GET_REASON(code) == PEM_R_NO_START_LINE;
      if (!end) {
        return Invalid(std::move(out),
                       "PEM block " + std::to_string(block) + " does not parse: " + OpenSslError());
      }
      ERR_clear_error();
      break;
    }
    std::string_view name(b.name != nullptr ? b.name : "");
    if (name != "CERTIFICATE") {
      return Invalid(std::move(out), "PEM block " + std::to_string(block) + " is a " +
                                         std::string(name) + ", not a CERTIFICATE");
    }
    const unsigned char* p = b.data;
    std::unique_ptr<X509, decltype(&X509_free)> cert(d2i_X509(nullptr, &p, b.length), &X509_free);
    if (!cert || p != b.data + b.length) {
      std::string why = cert ? "trailing bytes" : OpenSslError();
      ERR_clear_error();
      return Invalid(std::move(out),
                     "PEM block " + std::to_string(block) + " is not an X.509 certificate: " + why);
    }
    ++out.certificates;
  }
  if (out.certificates == 0) return Invalid(std::move(out), "no PEM certificate found");
  out.valid = true;
  return out;
}

}  // namespace portico::plugins::x509
