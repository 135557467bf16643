// tls_plugin: the TLSPolicy kind (portico.io/v1alpha1): certificates, TLS versions, ciphers,
// ALPN and client certificate validation for Gateway listeners and hostnames, synced to the
// gateways holding its target Gateways ("attached"). process.h resolves it on the controller;
// stage.h turns it into a listener_set.v1 "tlsPolicy" entry on the gateway.
// Threading: stateless.
#include "portico/sdk/plugin.h"
#include "process.h"
#include "stage.h"
#include "validate.h"

namespace portico::plugins::tls {
namespace {

void Setup(sdk::Plugin& p) {
  p.Kind(kGroup, "TLSPolicy").Process(&ProcessTlsPolicy).Stage(&StageTlsPolicy);
}

}  // namespace
}  // namespace portico::plugins::tls

PORTICO_PLUGIN(portico::plugins::tls::Setup)
