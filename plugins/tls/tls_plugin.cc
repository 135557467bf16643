// tls_plugin: the TLSPolicy kind (portico.io/v1alpha1): certificates, TLS versions, ciphers and
// client certificate validation for Gateway listeners and hostnames, synced to every gateway.
// See process.h for what is resolved so far.
// Threading: stateless.
#include "portico/sdk/plugin.h"
#include "process.h"
#include "validate.h"

namespace portico::plugins::tls {
namespace {

void Setup(sdk::Plugin& p) { p.Kind(kGroup, "TLSPolicy").Process(&ProcessTlsPolicy); }

}  // namespace
}  // namespace portico::plugins::tls

PORTICO_PLUGIN(portico::plugins::tls::Setup)
