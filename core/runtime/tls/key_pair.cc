// key_pair.cc: see key_pair.h.
#include "core/runtime/tls/key_pair.h"

#include <openssl/err.h>
#include <openssl/pem.h>

#include <ctime>

#include "core/runtime/tls/openssl_util.h"

namespace portico::core::tls {

StatusOr<KeyPairInfo> UseKeyPair(SSL_CTX* ctx, const CertificateMaterial& material) {
  auto fail = [&](std::string what) {
    ERR_clear_error();
    return InvalidArgumentError("certificate of Secret " + material.secret + ": " + what);
  };
  KeyPairInfo info;
  BIO* chain =
      BIO_new_mem_buf(material.chain_pem.data(), static_cast<int>(material.chain_pem.size()));
  X509* leaf = PEM_read_bio_X509(chain, nullptr, nullptr, nullptr);
  if (leaf == nullptr) {
    BIO_free(chain);
    return fail("tls.crt holds no PEM certificate");
  }
  const bool used = SSL_CTX_use_certificate(ctx, leaf) == 1;
  while (X509* extra = PEM_read_bio_X509(chain, nullptr, nullptr, nullptr)) {
    SSL_CTX_add0_chain_cert(ctx, extra);  // takes ownership
  }
  ERR_clear_error();  // the loop ends on "no start line"
  BIO_free(chain);
  if (!used) {
    X509_free(leaf);
    return fail("tls.crt: " + OpenSslErrors());
  }
  if (const ASN1_TIME* not_after = X509_get0_notAfter(leaf)) {
    std::tm tm{};
    if (ASN1_TIME_to_tm(not_after, &tm) == 1) {
      info.not_after_unix_ms = static_cast<int64_t>(timegm(&tm)) * 1000;
    }
    if (X509_cmp_current_time(not_after) < 0) {
      X509_free(leaf);
      return fail("the certificate expired (notAfter " +
                  std::to_string(info.not_after_unix_ms / 1000) + " Unix seconds)");
    }
  }
  for (const std::string& san : SubjectAltNames(leaf)) {
    if (san.rfind("DNS:", 0) == 0) info.dns_names.push_back(AsciiLower(san.substr(4)));
  }

  BIO* key_bio =
      BIO_new_mem_buf(material.key_pem.data(), static_cast<int>(material.key_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
  BIO_free(key_bio);
  const bool matches = key != nullptr && X509_check_private_key(leaf, key) == 1;
  X509_free(leaf);
  if (key == nullptr) return fail("tls.key holds no PEM private key");
  if (!matches) {
    EVP_PKEY_free(key);
    return fail("tls.key does not belong to the certificate in tls.crt");
  }
  const bool key_used = SSL_CTX_use_PrivateKey(ctx, key) == 1;
  EVP_PKEY_free(key);
  if (!key_used) return fail("tls.key: " + OpenSslErrors());
  return info;
}

}  // namespace portico::core::tls
