// certificate_store.cc: see certificate_store.h.
#include "core/runtime/tls/certificate_store.h"

#include "portico/sdk/abi.h"
#include "portico/sdk/json.h"

namespace portico::core::tls {

std::string SecretRefName(const rapidjson::Value& entry) {
  const rapidjson::Value* ref = json::Find(entry, "secretRef");
  if (ref == nullptr || !ref->IsObject()) return "?";
  return json::GetString(*ref, "namespace") + "/" + json::GetString(*ref, "name");
}

CertificateStore CertificateStore::Read(const RuntimeSnapshot& snapshot) {
  CertificateStore store;
  const FormatEntries* entries = snapshot.Entries(PORTICO_FORMAT_CERTIFICATE);
  if (entries == nullptr) return store;
  for (const auto& [id, entry] : *entries) {
    StatusOr<rapidjson::Document> doc = json::Parse(*entry.json, "certificate.v1 " + id);
    if (!doc.ok()) continue;
    const std::string kind = json::GetString(*doc, "entry");
    const std::string sha = json::GetString(*doc, "sha256");
    if (sha.empty()) continue;
    if (kind == "ca") {
      store.cas.emplace(sha, std::make_pair(id, json::GetString(*doc, "caPem")));
    } else if (kind == "keyPair") {
      CertificateMaterial m;
      m.secret = SecretRefName(*doc);
      m.sha256 = sha;
      m.chain_pem = json::GetString(*doc, "chainPem");
      m.key_pem = json::GetString(*doc, "keyPem");
      store.key_pairs.emplace(sha, std::move(m));
    }
  }
  return store;
}

}  // namespace portico::core::tls
