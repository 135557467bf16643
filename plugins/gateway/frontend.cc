// frontend.cc: see frontend.h.
#include "frontend.h"

#include <algorithm>

#include "x509/ca_reference.h"

namespace portico::plugins::gateway {
namespace {

sdk::Condition Invalid(const std::string& reason, const std::string& message) {
  return {"ResolvedRefs", "False", reason, message};
}

}  // namespace

FrontendResolution ResolveFrontendValidation(const FrontendValidation& validation,
                                             const sdk::ObjectRef& gateway,
                                             sdk::ProcessContext& ctx) {
  FrontendResolution out{validation.field, validation.mode, {}, std::nullopt};
  auto fail = [&](sdk::Condition c) {
    if (!out.failure) out.failure = std::move(c);
  };
  for (size_t i = 0; i < validation.ca_refs.size(); ++i) {
    const CaCertificateRef& ref = validation.ca_refs[i];
    std::string ns = ref.ns.empty() ? gateway.ns : ref.ns;
    std::string what = validation.field + ".caCertificateRefs[" + std::to_string(i) + "]: ";
    std::string object =
        ref.kind + (ref.group.empty() ? "" : "." + ref.group) + " " + ns + "/" + ref.name;
    if (!ref.group.empty() || (ref.kind != "ConfigMap" && ref.kind != "Secret")) {
      fail(Invalid("InvalidCACertificateKind",
                   what + object + " is not supported; only core ConfigMaps and Secrets are"));
      continue;
    }
    sdk::ObjectRef target{"", ref.kind, ns, ref.name};
    if (ns != gateway.ns && !ctx.ReferenceAllowed(kGroup, "Gateway", gateway.ns, target)) {
      fail(Invalid("RefNotPermitted", what + object +
                                          " is in another namespace and no ReferenceGrant there "
                                          "allows Gateways from " +
                                          gateway.ns + " to reference it"));
      continue;
    }
    x509::CaLookup found = x509::LookUpCaCertificate({"", ref.kind, ns, ref.name}, ctx);
    if (!found.ok()) {
      fail(Invalid("InvalidCACertificateRef", what + found.message));
      continue;
    }
    std::string sha256 = std::move(found.sha256);
    bool seen = std::any_of(out.ca_certificates.begin(), out.ca_certificates.end(),
                            [&](const ResolvedCaCertificate& c) {
                              return c.kind == ref.kind && c.ns == ns && c.name == ref.name;
                            });
    if (!seen) out.ca_certificates.push_back({ref.kind, ns, ref.name, std::move(sha256)});
  }
  return out;
}

}  // namespace portico::plugins::gateway
