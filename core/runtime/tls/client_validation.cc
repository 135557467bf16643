// client_validation.cc: see client_validation.h.
#include "core/runtime/tls/client_validation.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/runtime/tls/openssl_util.h"

namespace portico::core::tls {

namespace {

int ValidationIndex() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

// AcceptAnyway keeps the handshake going whatever the verification found (insecure fallback);
// SSL_get_verify_result still reports it.
int AcceptAnyway(int, X509_STORE_CTX*) { return 1; }

// CheckLeaf adds the allowed-SAN check to OpenSSL's verdict, at the leaf.
int CheckLeaf(int ok, X509_STORE_CTX* store) {
  if (ok != 1 || X509_STORE_CTX_get_error_depth(store) != 0) return ok;
  auto* ssl =
      static_cast<SSL*>(X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
  const auto* self =
      ssl != nullptr ? static_cast<const ClientValidation*>(SSL_get_ex_data(ssl, ValidationIndex()))
                     : nullptr;
  if (self == nullptr || self->AllowsLeaf(X509_STORE_CTX_get_current_cert(store))) return 1;
  X509_STORE_CTX_set_error(store, X509_V_ERR_SUBJECT_ISSUER_MISMATCH);
  return 0;
}

}  // namespace

StatusOr<std::shared_ptr<const ClientValidation>> ClientValidation::Build(
    Mode mode, const std::vector<std::pair<std::string, std::string>>& bundles,
    const std::string& id, int verify_depth, std::vector<std::string> allowed_sans) {
  std::shared_ptr<ClientValidation> out(new ClientValidation());
  out->mode_ = mode;
  out->id_ = id;
  out->verify_depth_ = verify_depth;
  out->allowed_sans_ = std::move(allowed_sans);
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

bool ClientValidation::AllowsLeaf(X509* leaf) const {
  if (allowed_sans_.empty()) return true;
  if (leaf == nullptr) return false;
  const std::vector<std::string> sans = SubjectAltNames(leaf);
  for (const std::string& allowed : allowed_sans_) {
    // An entry with ':' is a URI (exact); any other a DNS name (any case).
    const bool uri = allowed.find(':') != std::string::npos;
    const std::string_view prefix = uri ? "URI:" : "DNS:";
    const std::string want = uri ? allowed : AsciiLower(allowed);
    for (const std::string& san : sans) {
      if (san.rfind(prefix, 0) != 0) continue;
      const std::string value = san.substr(prefix.size());
      if ((uri ? value : AsciiLower(value)) == want) return true;
    }
  }
  return false;
}

void ClientValidation::Apply(SSL* ssl) const {
  SSL_set_ex_data(ssl, ValidationIndex(), const_cast<ClientValidation*>(this));
  switch (mode_) {
    case Mode::kRequireValid:
      SSL_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, &CheckLeaf);
      break;
    case Mode::kOptionalValid:
      SSL_set_verify(ssl, SSL_VERIFY_PEER, &CheckLeaf);
      break;
    case Mode::kInsecureFallback:
      SSL_set_verify(ssl, SSL_VERIFY_PEER, &AcceptAnyway);
      break;
  }
  if (verify_depth_ > 0) SSL_set_verify_depth(ssl, verify_depth_);
  SSL_set1_verify_cert_store(ssl, store_);
  SSL_set_client_CA_list(ssl, SSL_dup_CA_list(names_));
  SSL_set_session_id_context(ssl, sid_, sizeof(sid_));
}

}  // namespace portico::core::tls
