// ca_reference.h: LookUpCaCertificate, the resolution of a reference to a CA bundle (a
// "ca.crt" key of a core ConfigMap or Secret) against the ConfigMap and Secret plugins'
// exports (never the material: both export "ca": {valid, message, sha256, certificates}). Shared
// by the kinds that validate peers against CA references (a Gateway's spec.tls.frontend, a
// BackendTLSPolicy's validation.caCertificateRefs); each maps the problem to its own API's
// reason. Whether a cross-namespace reference is permitted is the caller's question (the rules
// differ per kind).
// Threading: stateless; reads go through the caller's ProcessContext (recorded by the host), and
// the result owns its strings.
#ifndef PORTICO_PLUGINS_X509_CA_REFERENCE_H_
#define PORTICO_PLUGINS_X509_CA_REFERENCE_H_

#include <optional>
#include <string>

#include "portico/sdk/processor.h"

namespace portico::plugins::x509 {

// CaReference names a CA bundle object; `ns` is already defaulted by the caller.
struct CaReference {
  std::string group;
  std::string kind;
  std::string ns;
  std::string name;

  // Display: "ConfigMap infra/ca", "Foo.example.com infra/ca".
  std::string Display() const {
    return kind + (group.empty() ? "" : "." + group) + " " + ns + "/" + name;
  }
};

// CaProblem is why a reference is unusable.
enum class CaProblem {
  kNone,
  kUnsupportedKind,  // not a core ConfigMap or Secret
  kNotFound,         // the object does not exist
  kUnusable,         // it exists but has no usable "ca.crt" bundle
};

// CaLookup is the outcome: the bundle's SHA-256 (its certificate.v1 "ca" entry's) when usable,
// otherwise the problem and a message naming the object and what is wrong with it.
struct CaLookup {
  CaProblem problem = CaProblem::kNone;
  std::string message;
  std::string sha256;

  bool ok() const { return problem == CaProblem::kNone; }
};

CaLookup LookUpCaCertificate(const CaReference& ref, sdk::ProcessContext& ctx);

}  // namespace portico::plugins::x509

#endif  // PORTICO_PLUGINS_X509_CA_REFERENCE_H_
