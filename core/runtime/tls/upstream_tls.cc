// upstream_tls.cc: see upstream_tls.h.
#include "core/runtime/tls/upstream_tls.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "core/common/sha256.h"
#include "core/runtime/tls/certificate_store.h"
#include "core/runtime/tls/openssl_util.h"
#include "portico/sdk/abi.h"
#include "portico/sdk/json.h"

namespace portico::core::tls {

namespace {

constexpr unsigned char kHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};

// CheckLeaf adds the name check to OpenSSL's chain verification (depth 0, chain accepted).
int CheckLeaf(int ok, X509_STORE_CTX* store) {
  if (ok != 1 || X509_STORE_CTX_get_error_depth(store) != 0) return ok;
  auto* ssl =
      static_cast<SSL*>(X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
  const auto* self =
      ssl != nullptr ? static_cast<const UpstreamTls*>(SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)))
                     : nullptr;
  if (self != nullptr && self->AcceptsLeaf(X509_STORE_CTX_get_current_cert(store))) return 1;
  X509_STORE_CTX_set_error(store, X509_V_ERR_HOSTNAME_MISMATCH);
  return 0;
}

}  // namespace

StatusOr<std::shared_ptr<const UpstreamTls>> UpstreamTls::Build(const Settings& settings,
                                                                std::string id) {
  const std::string what = "BackendTLSPolicy " + settings.policy;
  ERR_clear_error();
  std::shared_ptr<UpstreamTls> out(new UpstreamTls());
  out->settings_ = settings;
  out->settings_.client_certificate = nullptr;
  out->id_ = std::move(id);
  out->ctx_ = SSL_CTX_new(TLS_client_method());
  if (out->ctx_ == nullptr) return InternalError(what + ": " + OpenSslErrors());
  SSL_CTX* ctx = out->ctx_;
  SSL_CTX_set_app_data(ctx, out.get());
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ENABLE_PARTIAL_WRITE |
                            SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (SSL_CTX_set_cipher_list(ctx, kDefaultCiphers) != 1 ||
      SSL_CTX_set1_groups_list(ctx, kDefaultGroups) != 1 ||
      SSL_CTX_set_alpn_protos(ctx, kHttp11, sizeof(kHttp11)) != 0) {
    return InternalError(what + ": default cipher, group or ALPN list refused: " + OpenSslErrors());
  }
  SSL_CTX_set_read_ahead(ctx, 1);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, &CheckLeaf);
  if (settings.system_roots) {
    if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
      return InvalidArgumentError(what +
                                  ": the system CA store cannot be read: " + OpenSslErrors());
    }
  }
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  for (const auto& [name, pem] : settings.ca_bundles) {
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    int count = 0;
    while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
      X509_STORE_add_cert(store, cert);  // takes its own reference
      X509_free(cert);
      ++count;
    }
    BIO_free(bio);
    ERR_clear_error();
    if (count == 0) {
      return InvalidArgumentError(what + ": CA certificates of " + name + ": no PEM certificate");
    }
  }
  if (settings.client_certificate != nullptr) {
    StatusOr<KeyPairInfo> pair = UseKeyPair(ctx, *settings.client_certificate);
    if (!pair.ok()) return pair.status();
  }
  return std::shared_ptr<const UpstreamTls>(std::move(out));
}

std::shared_ptr<const UpstreamTls> UpstreamTls::Unusable(std::string policy, std::string id,
                                                         std::string why) {
  std::shared_ptr<UpstreamTls> out(new UpstreamTls());
  out->settings_.policy = std::move(policy);
  out->id_ = std::move(id);
  out->failure_ = std::move(why);
  return out;
}

UpstreamTls::~UpstreamTls() { SSL_CTX_free(ctx_); }

SSL* UpstreamTls::NewSession() const {
  if (ctx_ == nullptr) return nullptr;
  SSL* ssl = SSL_new(ctx_);
  if (ssl == nullptr) return nullptr;
  SSL_set_connect_state(ssl);
  if (!settings_.hostname.empty() &&
      SSL_set_tlsext_host_name(ssl, settings_.hostname.c_str()) != 1) {
    SSL_free(ssl);
    return nullptr;
  }
  return ssl;
}

bool UpstreamTls::AcceptsLeaf(X509* leaf) const {
  if (leaf == nullptr) return false;
  if (settings_.sans.empty()) {
    return X509_check_host(leaf, settings_.hostname.data(), settings_.hostname.size(), 0,
                           nullptr) == 1;
  }
  std::vector<std::string> uris;
  bool uris_read = false;
  for (const std::string& san : settings_.sans) {
    if (san.rfind("DNS:", 0) == 0) {
      if (X509_check_host(leaf, san.data() + 4, san.size() - 4, 0, nullptr) == 1) return true;
    } else if (san.rfind("URI:", 0) == 0) {
      if (!uris_read) {
        uris = SubjectAltNames(leaf);
        uris_read = true;
      }
      if (std::find(uris.begin(), uris.end(), san) != uris.end()) return true;
    }
  }
  return false;
}

namespace {

// PolicyEntry is one backend.v1 "tls" entry as parsed.
struct PolicyEntry {
  std::string id;     // the entry id
  std::string owner;  // the BackendTLSPolicy's object key
  std::string digest;
  UpstreamTls::Settings settings;
  std::vector<std::string> ca_shas;
  std::string invalid;  // the controller's reason when it marked the entry unusable
};

std::string RefName(const rapidjson::Value* ref) {
  if (ref == nullptr || !ref->IsObject()) return "?";
  return json::GetString(*ref, "namespace") + "/" + json::GetString(*ref, "name");
}

StatusOr<PolicyEntry> ParseEntry(const std::string& id, const RuntimeEntry& entry) {
  StatusOr<rapidjson::Document> doc = json::Parse(*entry.json, "backend.v1 " + id);
  if (!doc.ok()) return doc.status();
  PolicyEntry p;
  p.id = id;
  p.owner = entry.owner;
  p.digest = Sha256Hex(*entry.json);
  p.settings.policy = RefName(json::Find(*doc, "policy"));
  p.settings.hostname = AsciiLower(json::GetString(*doc, "hostname"));
  p.invalid = json::GetString(*doc, "invalid");
  p.settings.system_roots = json::GetString(*doc, "wellKnownCACertificates") == "System";
  if (const rapidjson::Value* cas = json::Find(*doc, "caCertificates"); cas && cas->IsArray()) {
    for (const rapidjson::Value& ca : cas->GetArray()) {
      p.ca_shas.push_back(json::GetString(ca, "sha256"));
    }
  }
  if (const rapidjson::Value* sans = json::Find(*doc, "subjectAltNames"); sans && sans->IsArray()) {
    for (const rapidjson::Value& san : sans->GetArray()) {
      const std::string type = json::GetString(san, "type");
      if (type == "Hostname") p.settings.sans.push_back("DNS:" + json::GetString(san, "hostname"));
      if (type == "URI") p.settings.sans.push_back("URI:" + json::GetString(san, "uri"));
    }
  }
  if (p.invalid.empty() && p.settings.hostname.empty()) p.invalid = "no hostname";
  if (p.invalid.empty() && p.ca_shas.empty() && !p.settings.system_roots) {
    p.invalid = "neither caCertificates nor wellKnownCACertificates";
  }
  return p;
}

}  // namespace

std::shared_ptr<const UpstreamTlsTable> UpstreamTlsTable::Build(
    const RuntimeSnapshot& snapshot, const routing::BackendTable& backends,
    const UpstreamTlsTable* previous, std::vector<routing::Refusal>* refusals) {
  auto table = std::make_shared<UpstreamTlsTable>();
  const FormatEntries* entries = snapshot.Entries(PORTICO_FORMAT_BACKEND);
  // The policies by (ns/svc, sectionName).
  std::map<std::pair<std::string, std::string>, PolicyEntry> policies;
  for (auto it = entries != nullptr ? entries->lower_bound("tls/")
                                    : FormatEntries::const_iterator();
       entries != nullptr && it != entries->end() && it->first.rfind("tls/", 0) == 0; ++it) {
    StatusOr<PolicyEntry> parsed = ParseEntry(it->first, it->second);
    if (!parsed.ok()) {
      refusals->push_back({it->second.owner, std::string(parsed.status().message())});
      continue;
    }
    StatusOr<rapidjson::Document> doc = json::Parse(*it->second.json);
    const std::string service =
        json::GetString(*doc, "namespace") + "/" + json::GetString(*doc, "service");
    policies.emplace(std::make_pair(service, json::GetString(*doc, "sectionName")),
                     std::move(*parsed));
  }
  if (policies.empty()) return table;

  CertificateStore store = CertificateStore::Read(snapshot);
  // The listener sets' client certificates ("" for none).
  std::set<std::string> client_shas = {""};
  if (const FormatEntries* sets = snapshot.Entries(PORTICO_FORMAT_LISTENER_SET)) {
    for (const auto& [id, entry] : *sets) {
      StatusOr<rapidjson::Document> doc = json::Parse(*entry.json, "listener_set.v1 " + id);
      if (!doc.ok() || json::GetString(*doc, "entry") != "listeners") continue;
      const rapidjson::Value* client = json::Find(*doc, "backendClientCertificate");
      if (client == nullptr || !client->IsObject()) continue;
      const std::string sha = json::GetString(*client, "sha256");
      if (store.key_pairs.count(sha) == 0) {
        refusals->push_back({entry.owner, "backendClientCertificate of Secret " +
                                              RefName(json::Find(*client, "secretRef")) +
                                              " has not reached the gateway"});
        continue;
      }
      auto key = std::make_pair(json::GetString(*doc, "address"),
                                static_cast<uint16_t>(json::GetInt(*doc, "port").value_or(0)));
      table->client_by_set_.emplace(key, sha);  // the first Gateway of a shared port wins
      client_shas.insert(sha);
    }
  }

  auto context_for = [&](const PolicyEntry& p,
                         const std::string& client_sha) -> std::shared_ptr<const UpstreamTls> {
    const std::string id = p.id + "|" + p.digest + "|" + client_sha;
    if (auto it = table->contexts_.find(id); it != table->contexts_.end()) return it->second;
    std::shared_ptr<const UpstreamTls> tls;
    if (previous != nullptr) {
      if (auto it = previous->contexts_.find(id); it != previous->contexts_.end()) {
        tls = it->second;
      }
    }
    if (tls == nullptr && !p.invalid.empty())
      tls = UpstreamTls::Unusable(p.settings.policy, id, p.invalid);
    if (tls == nullptr) {
      UpstreamTls::Settings settings = p.settings;
      std::string missing;
      for (const std::string& sha : p.ca_shas) {
        auto ca = store.cas.find(sha);
        if (ca == store.cas.end()) {
          missing = "CA certificate " + sha.substr(0, 12) + " has not reached the gateway";
          break;
        }
        settings.ca_bundles.push_back(ca->second);
      }
      if (!client_sha.empty()) settings.client_certificate = &store.key_pairs.at(client_sha);
      if (!missing.empty()) {
        tls = UpstreamTls::Unusable(p.settings.policy, id, missing);
      } else {
        StatusOr<std::shared_ptr<const UpstreamTls>> built = UpstreamTls::Build(settings, id);
        tls = built.ok() ? *built
                         : UpstreamTls::Unusable(p.settings.policy, id,
                                                 std::string(built.status().message()));
      }
      if (!tls->usable()) {
        spdlog::warn("BackendTLSPolicy {}: requests to its backends answer 502: {}",
                     p.settings.policy, tls->failure());
      }
    }
    table->contexts_.emplace(id, tls);
    return tls;
  };

  table->slots_.resize(backends.index_limit());
  for (const routing::Backend* backend : backends.All()) {
    const std::string service = backend->key.substr(0, backend->key.rfind(':'));
    auto p = policies.find({service, backend->port_name});
    if (p == policies.end()) p = policies.find({service, ""});
    if (p == policies.end()) continue;
    Slot& slot = table->slots_[backend->index];
    slot.tls = true;
    for (const std::string& sha : client_shas) {
      std::shared_ptr<const UpstreamTls> tls = context_for(p->second, sha);
      if (sha.empty()) {
        slot.plain_client = std::move(tls);
      } else {
        slot.by_client.emplace(sha, std::move(tls));
      }
    }
  }
  return table;
}

const std::shared_ptr<const UpstreamTls>* UpstreamTlsTable::Find(const routing::Backend& backend,
                                                                 std::string_view address,
                                                                 uint16_t port) const {
  if (backend.index >= slots_.size() || !slots_[backend.index].tls) return nullptr;
  const Slot& slot = slots_[backend.index];
  if (!client_by_set_.empty()) {
    auto client = client_by_set_.find({std::string(address), port});
    if (client != client_by_set_.end()) {
      auto it = slot.by_client.find(client->second);
      if (it != slot.by_client.end()) return &it->second;
    }
  }
  return &slot.plain_client;
}

}  // namespace portico::core::tls
