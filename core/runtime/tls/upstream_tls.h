// upstream_tls.h: UpstreamTls, the client side of TLS from the gateway to a backend (Gateway API
// BackendTLSPolicy, staged as backend.v1 "tls" entries; docs/contributions.md), and
// UpstreamTlsTable, which backends of a snapshot speak TLS and with what.
//
// UpstreamTls is one OpenSSL client context: TLS 1.2 and 1.3, the gateway's cipher and group
// defaults, ALPN "http/1.1"; trust in the policy's CA bundles (certificate.v1 "ca" entries by
// sha256) or in the system's roots (wellKnownCACertificates: System); SNI = the policy's
// hostname; the server certificate must chain to the trust and carry the hostname, or, when the
// policy lists subjectAltNames, one of them (Hostname: a DNS name matched as RFC 6125 says,
// wildcards included; URI: compared exactly). With a client certificate (the Gateway's
// spec.tls.backend.clientCertificateRef, staged as the listener_set.v1 entry's
// "backendClientCertificate"), it is presented when the backend asks. A policy whose material
// cannot be used (its CA bundle has not reached the gateway or does not parse, or it arrives
// marked "invalid" by the controller) becomes an UpstreamTls that is not usable(): requests to
// its backends answer 502 and are never sent in clear text.
//
// UpstreamTlsTable joins each backend ("ns/svc:port") with the entry for its Service port's
// name (sectionName) or, failing that, the Service-wide one; a listener set (address, port)
// selects the client certificate. Contexts are built at prepare time, shared across commits by
// configuration id (so client session state and the SSL_CTX survive unrelated changes).
//
// Thread-safety: both are immutable once built; NewSession and Find from any worker at once.
// Ownership: an UpstreamTls owns its SSL_CTX reference (each SSL holds its own); connections
// keep the UpstreamTls they handshake with alive through the shared_ptr their pool holds.
#ifndef PORTICO_CORE_RUNTIME_TLS_UPSTREAM_TLS_H_
#define PORTICO_CORE_RUNTIME_TLS_UPSTREAM_TLS_H_

#include <openssl/ssl.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/runtime/routing/backend_table.h"
#include "core/runtime/routing/route_types.h"
#include "core/runtime/runtime_types.h"
#include "core/runtime/tls/key_pair.h"
#include "portico/sdk/status.h"

namespace portico::core::tls {

class UpstreamTls {
 public:
  struct Settings {
    std::string policy;    // "namespace/name" of the BackendTLSPolicy, for messages
    std::string hostname;  // the SNI; the name the certificate must carry when `sans` is empty
    std::vector<std::string> sans;  // "DNS:a.test" or "URI:spiffe://x"; the leaf needs one
    bool system_roots = false;      // trust the system's CA store
    std::vector<std::pair<std::string, std::string>> ca_bundles;  // (what, PEM)
    const CertificateMaterial* client_certificate = nullptr;      // presented when asked
  };

  // Build makes the context. `id` names this configuration (pool keys). A bundle without a
  // certificate, or a client certificate that does not load, is INVALID_ARGUMENT naming it.
  static StatusOr<std::shared_ptr<const UpstreamTls>> Build(const Settings& settings,
                                                            std::string id);
  // Unusable is the stand-in for a policy that cannot be applied: no context; `why` says why.
  static std::shared_ptr<const UpstreamTls> Unusable(std::string policy, std::string id,
                                                     std::string why);

  UpstreamTls(const UpstreamTls&) = delete;
  UpstreamTls& operator=(const UpstreamTls&) = delete;
  ~UpstreamTls();

  // NewSession returns a client SSL (without BIO: the caller attaches its socket) with SNI and
  // verification set, or nullptr when OpenSSL cannot make one or the policy is not usable.
  SSL* NewSession() const;
  bool usable() const { return ctx_ != nullptr; }
  const std::string& failure() const { return failure_; }  // why not usable
  const std::string& id() const { return id_; }
  const std::string& policy() const { return settings_.policy; }
  const std::string& hostname() const { return settings_.hostname; }
  // AcceptsLeaf: `leaf` carries the hostname, or one of the subjectAltNames when listed.
  bool AcceptsLeaf(X509* leaf) const;

 private:
  UpstreamTls() = default;

  Settings settings_;  // client_certificate cleared after Build
  std::string id_;
  std::string failure_;
  SSL_CTX* ctx_ = nullptr;
};

class UpstreamTlsTable {
 public:
  // Build reads the backend.v1 "tls" entries and listener_set.v1 client certificates of
  // `snapshot` for the backends of `backends` (built from the same snapshot). `previous` (may
  // be null) lends contexts whose id is unchanged. The owners of entries whose client
  // certificate cannot be loaded are appended to `refusals` (so they keep their last good
  // version); a policy whose CA material is missing or broken becomes Unusable.
  static std::shared_ptr<const UpstreamTlsTable> Build(const RuntimeSnapshot& snapshot,
                                                       const routing::BackendTable& backends,
                                                       const UpstreamTlsTable* previous,
                                                       std::vector<routing::Refusal>* refusals);

  // Find returns how requests arriving on listener set (address, port) reach `backend`: null
  // for clear text, else its TLS (check usable()). Cheap for a backend without TLS.
  const std::shared_ptr<const UpstreamTls>* Find(const routing::Backend& backend,
                                                 std::string_view address, uint16_t port) const;
  size_t size() const { return contexts_.size(); }  // distinct contexts (admin, tests)

 private:
  struct Slot {
    bool tls = false;
    std::shared_ptr<const UpstreamTls> plain_client;                      // no client certificate
    std::map<std::string, std::shared_ptr<const UpstreamTls>> by_client;  // client sha256 ->
  };
  std::vector<Slot> slots_;                                                // by Backend::index
  std::map<std::pair<std::string, uint16_t>, std::string> client_by_set_;  // -> sha256
  std::map<std::string, std::shared_ptr<const UpstreamTls>> contexts_;     // by id
};

}  // namespace portico::core::tls

#endif  // PORTICO_CORE_RUNTIME_TLS_UPSTREAM_TLS_H_
