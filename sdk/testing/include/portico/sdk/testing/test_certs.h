// test_certs.h: MakeTestCertificate, self-signed certificates and keys generated with OpenSSL
// for unit tests of plugins and of the core (Secrets of type kubernetes.io/tls, TLS contexts),
// valid around a given time so they agree with the fake host's clock. Header-only; link
// OpenSSL::Crypto.
// Threading: pure functions.
#ifndef PORTICO_SDK_TESTING_TEST_CERTS_H_
#define PORTICO_SDK_TESTING_TEST_CERTS_H_

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace portico::sdk::testing {

// TestCertificate is a PEM certificate and its PEM private key.
struct TestCertificate {
  std::string cert_pem;
  std::string key_pem;
};

// CertificateOptions: what MakeTestCertificate generates.
struct CertificateOptions {
  std::vector<std::string> dns_names;  // subjectAltName DNS entries
  int64_t not_before_unix_ms = 0;
  int64_t not_after_unix_ms = 0;
  bool rsa = false;  // RSA 2048 with a PKCS#1 ("RSA PRIVATE KEY") key; else EC P-256
  std::string common_name = "default";
  std::vector<std::string> uris;  // subjectAltName URI entries
};

namespace detail {
inline std::string BioString(BIO* bio) {
  char* data = nullptr;
  long size = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(size));
}
}  // namespace detail

// MakeTestCertificate returns a self-signed certificate; empty strings when OpenSSL fails.
inline TestCertificate MakeTestCertificate(const CertificateOptions& options) {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      options.rsa ? EVP_RSA_gen(2048) : EVP_EC_gen("P-256"), &EVP_PKEY_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(X509_new(), &X509_free);
  if (!key || !cert) return {};
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
  time_t not_before = static_cast<time_t>(options.not_before_unix_ms / 1000);
  time_t not_after = static_cast<time_t>(options.not_after_unix_ms / 1000);
  X509_time_adj_ex(X509_getm_notBefore(cert.get()), 0, 0, &not_before);
  X509_time_adj_ex(X509_getm_notAfter(cert.get()), 0, 0, &not_after);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(options.common_name.c_str()),
                             -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  if (!options.dns_names.empty() || !options.uris.empty()) {
    std::string san;
    for (const std::string& dns : options.dns_names) san += (san.empty() ? "DNS:" : ",DNS:") + dns;
    for (const std::string& uri : options.uris) san += (san.empty() ? "URI:" : ",URI:") + uri;
    X509V3_CTX v3;
    X509V3_set_ctx_nodb(&v3);
    X509V3_set_ctx(&v3, cert.get(), cert.get(), nullptr, nullptr, 0);
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &v3, NID_subject_alt_name, san.c_str());
    if (ext != nullptr) {
      X509_add_ext(cert.get(), ext, -1);
      X509_EXTENSION_free(ext);
    }
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return {};
  std::unique_ptr<BIO, decltype(&BIO_free)> cert_bio(BIO_new(BIO_s_mem()), &BIO_free);
  std::unique_ptr<BIO, decltype(&BIO_free)> key_bio(BIO_new(BIO_s_mem()), &BIO_free);
  PEM_write_bio_X509(cert_bio.get(), cert.get());
  if (options.rsa) {
    PEM_write_bio_PrivateKey_traditional(key_bio.get(), key.get(), nullptr, nullptr, 0, nullptr,
                                         nullptr);
  } else {
    PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  }
  return {detail::BioString(cert_bio.get()), detail::BioString(key_bio.get())};
}

}  // namespace portico::sdk::testing

#endif  // PORTICO_SDK_TESTING_TEST_CERTS_H_
