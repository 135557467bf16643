// certificate_store.h: CertificateStore, the TLS material of a RuntimeSnapshot by sha256: the
// certificate.v1 keyPair entries (chains and keys) and ca entries (CA bundles), read once per
// build by the tables that use them (tls_table.h for listeners, upstream_tls.h for backends).
//
// Threading: Read runs on the building thread; the result is a plain value.
#ifndef PORTICO_CORE_RUNTIME_TLS_CERTIFICATE_STORE_H_
#define PORTICO_CORE_RUNTIME_TLS_CERTIFICATE_STORE_H_

#include <map>
#include <string>
#include <utility>

#include "core/runtime/runtime_types.h"
#include "core/runtime/tls/key_pair.h"
#include "portico/sdk/json.h"

namespace portico::core::tls {

// SecretRefName is the "namespace/name" of an entry's "secretRef" ("?" without one).
std::string SecretRefName(const rapidjson::Value& entry);

struct CertificateStore {
  std::map<std::string, CertificateMaterial> key_pairs;            // by sha256
  std::map<std::string, std::pair<std::string, std::string>> cas;  // sha256 -> (entry id, PEM)

  // Read indexes the certificate.v1 entries of `snapshot`; entries that do not parse, or that
  // carry no sha256, are left out.
  static CertificateStore Read(const RuntimeSnapshot& snapshot);
};

}  // namespace portico::core::tls

#endif  // PORTICO_CORE_RUNTIME_TLS_CERTIFICATE_STORE_H_
