// certificates.h: resolution of an HTTPS listener's tls.certificateRefs against the Secret
// plugin's exports (never the material): each reference must be a core Secret, permitted by a
// ReferenceGrant when it crosses namespaces, exist, be of type kubernetes.io/tls and carry usable
// material (the Secret plugin checked it with OpenSSL). The reasons are the Gateway API's:
// RefNotPermitted for a forbidden cross-namespace reference, InvalidCertificateRef otherwise.
// A Secret whose new material is unusable but whose previous material still serves (its
// export's "serving") is reported (InvalidCertificateRef, saying the previous certificate keeps
// serving) and keeps its place with the previous material's sha256, so the listener stays
// programmed with the certificate it served.
// Threading: stateless; reads go through the caller's ProcessContext (recorded by the host).
#ifndef PORTICO_PLUGINS_GATEWAY_CERTIFICATES_H_
#define PORTICO_PLUGINS_GATEWAY_CERTIFICATES_H_

#include <optional>
#include <string>
#include <vector>

#include "portico/sdk/json_writer.h"
#include "portico/sdk/processor.h"
#include "validate.h"

namespace portico::plugins::gateway {

// ResolvedCertificate is what a gateway needs to select a certificate: the Secret and the
// SHA-256 of its material (the material itself travels as certificate.v1).
struct ResolvedCertificate {
  std::string ns;
  std::string name;
  std::string sha256;
  std::vector<std::string> sans;
};

// CertificateResolution is the outcome for one listener: every usable certificate, and the
// ResolvedRefs=False condition of the first unusable reference, if any.
struct CertificateResolution {
  std::vector<ResolvedCertificate> certificates;
  std::optional<sdk::Condition> failure;
  // only_kept: every failure is a Secret whose previous material keeps serving (the listener can
  // still be programmed).
  bool only_kept = true;
};

// ResolveCertificateRef resolves one reference, named `field` in messages; nullopt, with
// `*failure` set unless it already was, when it is unusable: reason RefNotPermitted for a
// forbidden cross-namespace reference, `invalid_reason` for every other problem. Also used for
// a Gateway's spec.tls.backend.clientCertificateRef (InvalidClientCertificateRef). A Secret whose
// previous material keeps serving returns that material with `*failure` set and `*kept` true.
std::optional<ResolvedCertificate> ResolveCertificateRef(
    const CertificateRef& ref, const std::string& field, const std::string& invalid_reason,
    const sdk::ObjectRef& gateway, sdk::ProcessContext& ctx, std::optional<sdk::Condition>* failure,
    bool* kept = nullptr);

CertificateResolution ResolveCertificates(const Listener& listener, const sdk::ObjectRef& gateway,
                                          sdk::ProcessContext& ctx);

}  // namespace portico::plugins::gateway

#endif  // PORTICO_PLUGINS_GATEWAY_CERTIFICATES_H_
