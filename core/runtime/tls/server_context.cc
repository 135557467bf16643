// server_context.cc: see server_context.h.
#include "core/runtime/tls/server_context.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <cstring>
#include <ctime>

#include "core/runtime/tls/openssl_util.h"
#include "core/runtime/tls/ticket_keys.h"

namespace portico::core::tls {

namespace {

constexpr unsigned char kHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};

int SelectorIndex() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

const SniSelector* SelectorOf(SSL* ssl) {
  return static_cast<const SniSelector*>(SSL_get_ex_data(ssl, SelectorIndex()));
}

// ServerName reads the host_name of a ClientHello's server_name extension (RFC 6066 §3); false
// when the extension is malformed.
bool ServerName(SSL* ssl, std::string_view* name) {
  const unsigned char* p = nullptr;
  size_t length = 0;
  *name = {};
  if (SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_server_name, &p, &length) != 1) return true;
  if (length < 5) return false;
  const size_t list = (static_cast<size_t>(p[0]) << 8) | p[1];
  const size_t size = (static_cast<size_t>(p[3]) << 8) | p[4];
  if (list + 2 != length || p[2] != TLSEXT_NAMETYPE_host_name || size + 5 > length || size == 0) {
    return false;
  }
  *name = std::string_view(reinterpret_cast<const char*>(p + 5), size);
  return true;
}

int OnClientHello(SSL* ssl, int* alert, void*) {
  const SniSelector* selector = SelectorOf(ssl);
  std::string_view name;
  if (!ServerName(ssl, &name)) {
    *alert = SSL_AD_DECODE_ERROR;
    return SSL_CLIENT_HELLO_ERROR;
  }
  if (selector == nullptr || !selector->OnClientHello(ssl, name)) {
    *alert = SSL_AD_UNRECOGNIZED_NAME;
    return SSL_CLIENT_HELLO_ERROR;
  }
  return SSL_CLIENT_HELLO_SUCCESS;
}

// OnAlpn picks http/1.1 when offered and allowed; otherwise the client gets no ALPN answer
// (and speaks HTTP/1.1, the only protocol served).
int OnAlpn(SSL* ssl, const unsigned char** out, unsigned char* out_len, const unsigned char* in,
           unsigned int in_len, void*) {
  const SniSelector* selector = SelectorOf(ssl);
  if (selector != nullptr && !selector->AllowsAlpn(ssl, "http/1.1")) return SSL_TLSEXT_ERR_NOACK;
  unsigned char* selected = nullptr;
  if (SSL_select_next_proto(&selected, out_len, kHttp11, sizeof(kHttp11), in, in_len) ==
      OPENSSL_NPN_NEGOTIATED) {
    *out = selected;
    return SSL_TLSEXT_ERR_OK;
  }
  return SSL_TLSEXT_ERR_NOACK;
}

}  // namespace

void AttachSelector(SSL* ssl, const SniSelector* selector) {
  SSL_set_ex_data(ssl, SelectorIndex(), const_cast<SniSelector*>(selector));
}

StatusOr<std::shared_ptr<const ServerContext>> ServerContext::Build(
    const CertificateMaterial& material) {
  auto fail = [&](std::string what) {
    ERR_clear_error();
    return InvalidArgumentError("certificate of Secret " + material.secret + ": " + what);
  };
  ERR_clear_error();
  std::shared_ptr<ServerContext> out(new ServerContext());
  out->secret_ = material.secret;
  out->sha256_ = material.sha256;
  out->ctx_ = SSL_CTX_new(TLS_server_method());
  if (out->ctx_ == nullptr) return fail(OpenSslErrors());
  SSL_CTX* ctx = out->ctx_;
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE |
                               SSL_OP_NO_COMPRESSION | SSL_OP_IGNORE_UNEXPECTED_EOF);
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ENABLE_PARTIAL_WRITE |
                            SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (SSL_CTX_set_cipher_list(ctx, kDefaultCiphers) != 1 ||
      SSL_CTX_set1_groups_list(ctx, kDefaultGroups) != 1) {
    return fail("default cipher or group list refused: " + OpenSslErrors());
  }
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
  SSL_CTX_sess_set_cache_size(ctx, kSessionCacheSize);
  const auto* sid = reinterpret_cast<const unsigned char*>(material.sha256.data());
  SSL_CTX_set_session_id_context(
      ctx, sid, static_cast<unsigned int>(std::min<size_t>(material.sha256.size(), 32)));
  SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, &TicketKeys::Callback);
  SSL_CTX_set_num_tickets(ctx, 1);  // OpenSSL's 2 cost a second ticket per handshake
  SSL_CTX_set_read_ahead(ctx, 1);   // a whole socket buffer per recv, not a record header first
  SSL_CTX_set_client_hello_cb(ctx, &OnClientHello, nullptr);
  SSL_CTX_set_alpn_select_cb(ctx, &OnAlpn, nullptr);

  StatusOr<KeyPairInfo> pair = UseKeyPair(ctx, material);
  if (!pair.ok()) return pair.status();
  out->not_after_unix_ms_ = pair->not_after_unix_ms;
  out->dns_names_ = std::move(pair->dns_names);
  return std::shared_ptr<const ServerContext>(std::move(out));
}

ServerContext::~ServerContext() { SSL_CTX_free(ctx_); }

bool ServerContext::CoversExactly(std::string_view host) const {
  for (const std::string& name : dns_names_) {
    if (name == host) return true;
  }
  return false;
}

bool ServerContext::CoversByWildcard(std::string_view host) const {
  const size_t dot = host.find('.');
  if (dot == std::string_view::npos || dot == 0) return false;
  const std::string_view parent = host.substr(dot);  // ".example.com"
  for (const std::string& name : dns_names_) {
    if (name.size() > 2 && name[0] == '*' && name[1] == '.' &&
        std::string_view(name).substr(1) == parent) {
      return true;
    }
  }
  return false;
}

}  // namespace portico::core::tls
