// certificates.cc: see certificates.h.
#include "certificates.h"

namespace portico::plugins::gateway {
namespace {

sdk::Condition Invalid(const std::string& reason, const std::string& message) {
  return {"ResolvedRefs", "False", reason, message};
}

}  // namespace

std::optional<ResolvedCertificate> ResolveCertificateRef(
    const CertificateRef& ref, const std::string& field, const std::string& invalid_reason,
    const sdk::ObjectRef& gateway, sdk::ProcessContext& ctx, std::optional<sdk::Condition>* failure,
    bool* kept) {
  auto fail = [&](const std::string& reason, const std::string& message) {
    if (!*failure) *failure = Invalid(reason, field + ": " + message);
    return std::nullopt;
  };
  std::string ns = ref.ns.empty() ? gateway.ns : ref.ns;
  std::string secret = "Secret " + ns + "/" + ref.name;
  if (!ref.group.empty() || ref.kind != "Secret") {
    return fail(invalid_reason, ref.kind + (ref.group.empty() ? "" : "." + ref.group) + " " + ns +
                                    "/" + ref.name + " is not supported; only core Secrets are");
  }
  if (ns != gateway.ns &&
      !ctx.ReferenceAllowed(kGroup, "Gateway", gateway.ns, {"", "Secret", ns, ref.name})) {
    return fail("RefNotPermitted", secret +
                                       " is in another namespace and no ReferenceGrant there "
                                       "allows Gateways from " +
                                       gateway.ns + " to reference it");
  }
  std::optional<std::string> exported = ctx.GetExport({"", "Secret", ns, ref.name});
  if (!exported) return fail(invalid_reason, secret + " does not exist");
  auto doc = json::Parse(*exported, secret);
  if (!doc.ok() || json::GetString(*doc, "type") != "kubernetes.io/tls") {
    return fail(invalid_reason, secret + " is of type \"" +
                                    (doc.ok() ? json::GetString(*doc, "type") : "") +
                                    "\", not kubernetes.io/tls");
  }
  const rapidjson::Value* valid = json::Find(*doc, "tlsValid");
  const rapidjson::Value* material = &*doc;
  if (valid == nullptr || !valid->IsBool() || !valid->GetBool()) {
    const std::string message =
        secret + ": " + json::GetString(*doc, "message", "its material is not usable");
    const rapidjson::Value* serving = json::Find(*doc, "serving");
    if (serving == nullptr || !serving->IsObject() || json::GetString(*serving, "sha256").empty()) {
      return fail(invalid_reason, message);
    }
    // The Secret plugin still syncs its previous material: report, and keep serving it.
    fail(invalid_reason, message + "; the previous certificate keeps serving");
    if (kept != nullptr) *kept = true;
    material = serving;
  }
  ResolvedCertificate cert{ns, ref.name, json::GetString(*material, "sha256"), {}};
  if (const rapidjson::Value* sans = json::Find(*material, "sans"); sans && sans->IsArray()) {
    for (const auto& san : sans->GetArray()) {
      if (san.IsString()) cert.sans.emplace_back(san.GetString(), san.GetStringLength());
    }
  }
  return cert;
}

CertificateResolution ResolveCertificates(const Listener& listener, const sdk::ObjectRef& gateway,
                                          sdk::ProcessContext& ctx) {
  CertificateResolution out;
  for (size_t i = 0; i < listener.certificate_refs.size(); ++i) {
    bool kept = false;
    std::optional<ResolvedCertificate> cert = ResolveCertificateRef(
        listener.certificate_refs[i], "tls.certificateRefs[" + std::to_string(i) + "]",
        "InvalidCertificateRef", gateway, ctx, &out.failure, &kept);
    if (!cert) out.only_kept = false;
    if (cert) out.certificates.push_back(std::move(*cert));
  }
  return out;
}

}  // namespace portico::plugins::gateway
