// tls_table.h: TlsTable, the certificates the data plane serves, built from a RuntimeSnapshot's
// certificate.v1 keyPair entries and the HTTPS listeners of its listener_set.v1 entries
// (docs/contributions.md), beside the route table of the same snapshot; ServerTlsSet, the
// certificates of one listener set (address, port) and the SNI selection over them.
//
// Selection (ServerTlsSet::Choose, run from OpenSSL's ClientHello callback): the listener of the
// set that takes the server name, as the route table selects listeners for a Host (exact
// hostname, then the most specific wildcard, then the listener without hostname); among that
// listener's certificates (several Gateways' listeners may merge into one), the first whose DNS
// names cover the name exactly, then by wildcard, then the listener's first (its default). The
// TLSPolicies targeting that listener compete too (tls_policy.h: exact, wildcard, then
// hostname-less; the oldest within a level): the winner's settings apply, and its certificate
// replaces the listener's when it covers the name at the same level or a better one (within a
// level a TLSPolicy wins over a listener certificate). A handshake without SNI gets the set's
// certificate when the set has exactly one, with the oldest hostname-less policy of the set;
// otherwise it fails, as one with a name no listener takes does, and the log says why.
//
// Client certificates: a listeners entry's "frontendValidation" (mode, CA certificates by
// sha256) becomes the set's ClientValidation; CA material that has not reached the gateway, or
// that does not parse, refuses the entry's owner (a port that must check clients never serves
// without the check), as does a second entry on the set asking for another validation.
//
// Build shares with the previous table every ServerContext whose sha256 it still uses (one SSL
// context per distinct material, its session cache kept). A certificate a listener names whose
// material has not reached the gateway is left out with a warning; material OpenSSL refuses (key
// not matching, expired, unparsable) refuses the listener set entries using it (their owners
// are nacked, so they keep their last good version and the certificate it served).
//
// Thread-safety: a built table is immutable; Find and Select from any thread. Ownership: sets
// are shared (shared_ptr) by the table and the connections handshaking with them; each set
// holds the route table it selects listeners with.
#ifndef PORTICO_CORE_RUNTIME_TLS_TLS_TABLE_H_
#define PORTICO_CORE_RUNTIME_TLS_TLS_TABLE_H_

#include <openssl/ssl.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/runtime/routing/route_table.h"
#include "core/runtime/routing/route_types.h"
#include "core/runtime/runtime_types.h"
#include "core/runtime/tls/client_validation.h"
#include "core/runtime/tls/server_context.h"
#include "core/runtime/tls/tls_policy.h"

namespace portico::core::tls {

class ServerTlsSet final : public SniSelector {
 public:
  ServerTlsSet(std::shared_ptr<const routing::RouteTable> routes, std::string address,
               uint16_t port)
      : routes_(std::move(routes)), address_(std::move(address)), port_(port) {}

  // NewSession returns a server-side SSL (without BIO: the caller attaches its socket) that
  // selects its certificate through this set (which must outlive it), or nullptr when OpenSSL
  // cannot make one.
  SSL* NewSession() const;

  bool OnClientHello(SSL* ssl, std::string_view server_name) const override;
  bool AllowsAlpn(SSL* ssl, std::string_view protocol) const override;
  // validation is how the set checks client certificates (null: it asks for none).
  const ClientValidation* validation() const { return validation_.get(); }

  // Selection is what a server name gets: the context, and the TLSPolicy that won (or null).
  struct Selection {
    const ServerContext* context = nullptr;
    const TlsPolicy* policy = nullptr;
  };
  // Choose decides for `server_name` (lower case); context null with the reason in `why`.
  Selection Choose(std::string_view server_name, std::string* why) const;
  const std::vector<std::shared_ptr<const TlsPolicy>>& policies() const { return policies_; }

  const std::string& address() const { return address_; }
  uint16_t port() const { return port_; }
  // Distinct contexts of the set, in listener order.
  const std::vector<std::shared_ptr<const ServerContext>>& contexts() const { return distinct_; }

 private:
  friend class TlsTable;
  std::shared_ptr<const routing::RouteTable> routes_;
  std::string address_;
  uint16_t port_;
  // listener name ("<ns>/<gateway>/<listener>") -> its certificates in written order
  std::map<std::string, std::vector<std::shared_ptr<const ServerContext>>, std::less<>>
      by_listener_;
  std::vector<std::shared_ptr<const ServerContext>> distinct_;
  std::shared_ptr<const ClientValidation> validation_;
  std::vector<std::shared_ptr<const TlsPolicy>> policies_;  // targeting a listener of the set
  // Refusal log rate limit (OnClientHello, any worker).
  mutable std::atomic<int64_t> last_log_ms_{-1000000};
  mutable std::atomic<uint64_t> suppressed_{0};
};

class TlsTable {
 public:
  // Build indexes `snapshot` for `routes` (the route table built from the same snapshot).
  // `previous` (may be null) lends its contexts. Owners whose certificates cannot be served are
  // appended to `refusals`.
  static std::shared_ptr<const TlsTable> Build(const RuntimeSnapshot& snapshot,
                                               std::shared_ptr<const routing::RouteTable> routes,
                                               const TlsTable* previous,
                                               std::vector<routing::Refusal>* refusals);

  // Find returns the set of listener set (address, port), or nullptr when it has no
  // certificate.
  std::shared_ptr<const ServerTlsSet> Find(std::string_view address, uint16_t port) const;
  // ContextCount is the number of distinct SSL contexts (admin, tests).
  size_t ContextCount() const { return contexts_.size(); }

 private:
  std::map<std::pair<std::string, uint16_t>, std::shared_ptr<const ServerTlsSet>> sets_;
  std::map<std::string, std::shared_ptr<const ServerContext>> contexts_;  // by sha256
};

}  // namespace portico::core::tls

#endif  // PORTICO_CORE_RUNTIME_TLS_TLS_TABLE_H_
