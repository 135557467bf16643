// ca_reference.cc: see ca_reference.h.
#include "x509/ca_reference.h"

namespace portico::plugins::x509 {

CaLookup LookUpCaCertificate(const CaReference& ref, sdk::ProcessContext& ctx) {
  const std::string object = ref.Display();
  if (!ref.group.empty() || (ref.kind != "ConfigMap" && ref.kind != "Secret")) {
    return {CaProblem::kUnsupportedKind,
            object + " is not supported; only core ConfigMaps and Secrets are", ""};
  }
  std::optional<std::string> exported = ctx.GetExport({"", ref.kind, ref.ns, ref.name});
  if (!exported) return {CaProblem::kNotFound, object + " does not exist", ""};
  auto doc = json::Parse(*exported, object);
  const rapidjson::Value* ca = doc.ok() ? json::Find(*doc, "ca") : nullptr;
  if (ca == nullptr || !ca->IsObject()) {
    return {CaProblem::kUnusable, object + " has no ca.crt", ""};
  }
  const rapidjson::Value* valid = json::Find(*ca, "valid");
  std::string sha256 = json::GetString(*ca, "sha256");
  if (valid == nullptr || !valid->IsBool() || !valid->GetBool() || sha256.empty()) {
    return {CaProblem::kUnusable,
            object + ": " + json::GetString(*ca, "message", "its CA certificate is not usable"),
            ""};
  }
  return {CaProblem::kNone, "", std::move(sha256)};
}

}  // namespace portico::plugins::x509
