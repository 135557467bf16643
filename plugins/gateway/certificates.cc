// certificates.cc: see certificates.h.
#include "certificates.h"

namespace portico::plugins::gateway {
namespace {

sdk::Condition Invalid(const std::string& reason, const std::string& message) {
  return {"ResolvedRefs", "False", reason, message};
}

}  // namespace

CertificateResolution ResolveCertificates(const Listener& listener, const sdk::ObjectRef& gateway,
                                          sdk::ProcessContext& ctx) {
  CertificateResolution out;
  auto fail = [&](sdk::Condition c, bool kept = false) {
    if (!out.failure) out.failure = std::move(c);
    if (!kept) out.only_kept = false;
  };
  for (size_t i = 0; i < listener.certificate_refs.size(); ++i) {
    const CertificateRef& ref = listener.certificate_refs[i];
    std::string ns = ref.ns.empty() ? gateway.ns : ref.ns;
    std::string what = "tls.certificateRefs[" + std::to_string(i) + "]: ";
    std::string secret = "Secret " + ns + "/" + ref.name;
    if (!ref.group.empty() || ref.kind != "Secret") {
      fail(Invalid("InvalidCertificateRef",
                   what + ref.kind + (ref.group.empty() ? "" : "." + ref.group) + " " + ns + "/" +
                       ref.name + " is not supported; only core Secrets are"));
      continue;
    }
    if (ns != gateway.ns &&
        !ctx.ReferenceAllowed(kGroup, "Gateway", gateway.ns, {"", "Secret", ns, ref.name})) {
      fail(Invalid("RefNotPermitted", what + secret +
                                          " is in another namespace and no ReferenceGrant there "
                                          "allows Gateways from " +
                                          gateway.ns + " to reference it"));
      continue;
    }
    std::optional<std::string> exported = ctx.GetExport({"", "Secret", ns, ref.name});
    if (!exported) {
      fail(Invalid("InvalidCertificateRef", what + secret + " does not exist"));
      continue;
    }
    auto doc = json::Parse(*exported, secret);
    if (!doc.ok() || json::GetString(*doc, "type") != "kubernetes.io/tls") {
      fail(Invalid("InvalidCertificateRef", what + secret + " is of type \"" +
                                                (doc.ok() ? json::GetString(*doc, "type") : "") +
                                                "\", not kubernetes.io/tls"));
      continue;
    }
    const rapidjson::Value* valid = json::Find(*doc, "tlsValid");
    const rapidjson::Value* material = &*doc;
    if (valid == nullptr || !valid->IsBool() || !valid->GetBool()) {
      std::string message =
          what + secret + ": " + json::GetString(*doc, "message", "its material is not usable");
      const rapidjson::Value* serving = json::Find(*doc, "serving");
      if (serving == nullptr || !serving->IsObject() ||
          json::GetString(*serving, "sha256").empty()) {
        fail(Invalid("InvalidCertificateRef", message));
        continue;
      }
      fail(Invalid("InvalidCertificateRef", message + "; the previous certificate keeps serving"),
           /*kept=*/true);
      material = serving;
    }
    ResolvedCertificate cert{ns, ref.name, json::GetString(*material, "sha256"), {}};
    if (const rapidjson::Value* sans = json::Find(*material, "sans"); sans && sans->IsArray()) {
      for (const auto& san : sans->GetArray()) {
        if (san.IsString()) cert.sans.emplace_back(san.GetString(), san.GetStringLength());
      }
    }
    out.certificates.push_back(std::move(cert));
  }
  return out;
}

}  // namespace portico::plugins::gateway
