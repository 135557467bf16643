// client_validation.cc: see client_validation.h.
#include "core/runtime/tls/client_validation.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

namespace portico::core::tls {

namespace {

// AcceptAnyway keeps the handshake going whatever the verification found (insecure fallback);
// SSL_get_verify_result still reports it.
int AcceptAnyway(int, X509_STORE_CTX*) { return 1; }

}  // namespace

StatusOr<std::shared_ptr<const ClientValidation>> ClientValidation::Build(
    Mode mode, const std::vector<std::pair<std::string, std::string>>& bundles,
    const std::string& id) {
  std::shared_ptr<ClientValidation> out(new ClientValidation());
  out->mode_ = mode;
  out->id_ = id;
  out->store_ = X509_STORE_new();
  out->names_ = sk_X509_NAME_new_null();
  if (out->store_ == nullptr || out->names_ == nullptr) {
    return InternalError("client validation: out of memory");
  }
  for (const auto& [what, pem] : bundles) {
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    int count = 0;
    while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
      X509_STORE_add_cert(out->store_, cert);  // takes its own reference
      if (X509_NAME* name = X509_NAME_dup(X509_get_subject_name(cert))) {
        sk_X509_NAME_push(out->names_, name);
      }
      X509_free(cert);
      ++count;
    }
    BIO_free(bio);
    ERR_clear_error();
    if (count == 0) {
      return InvalidArgumentError("CA certificates of " + what + ": no PEM certificate");
    }
  }
  unsigned int length = 0;
  EVP_Digest(id.data(), id.size(), out->sid_, &length, EVP_sha256(), nullptr);
  return std::shared_ptr<const ClientValidation>(std::move(out));
}

ClientValidation::~ClientValidation() {
  X509_STORE_free(store_);
  sk_X509_NAME_pop_free(names_, X509_NAME_free);
}

void ClientValidation::Apply(SSL* ssl) const {
  if (mode_ == Mode::kRequireValid) {
    SSL_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  } else {
    SSL_set_verify(ssl, SSL_VERIFY_PEER, &AcceptAnyway);
  }
  SSL_set1_verify_cert_store(ssl, store_);
  SSL_set_client_CA_list(ssl, SSL_dup_CA_list(names_));
  SSL_set_session_id_context(ssl, sid_, sizeof(sid_));
}

}  // namespace portico::core::tls
