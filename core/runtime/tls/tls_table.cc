// tls_table.cc: see tls_table.h.
#include "core/runtime/tls/tls_table.h"

#include "core/runtime/tls/certificate_store.h"
#include "core/runtime/tls/openssl_util.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "portico/sdk/abi.h"
#include "portico/sdk/json.h"

namespace portico::core::tls {

namespace {

int PolicyIndex() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

}  // namespace

SSL* ServerTlsSet::NewSession() const {
  if (distinct_.empty()) return nullptr;
  SSL* ssl = SSL_new(distinct_.front()->ctx());
  if (ssl == nullptr) return nullptr;
  SSL_set_accept_state(ssl);
  AttachSelector(ssl, this);
  return ssl;
}

bool ServerTlsSet::OnClientHello(SSL* ssl, std::string_view server_name) const {
  std::string why;
  const Selection chosen = Choose(AsciiLower(server_name), &why);
  if (chosen.context == nullptr) {
    // At most one line per second per set: refused handshakes cost a client nothing.
    const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::steady_clock::now().time_since_epoch())
                               .count();
    int64_t last = last_log_ms_.load(std::memory_order_relaxed);
    if (now_ms - last >= 1000 &&
        last_log_ms_.compare_exchange_strong(last, now_ms, std::memory_order_relaxed)) {
      const uint64_t quiet = suppressed_.exchange(0, std::memory_order_relaxed);
      spdlog::info("TLS handshake on {}:{} refused: {}{}", address_.empty() ? "*" : address_, port_,
                   why,
                   quiet == 0 ? "" : " (" + std::to_string(quiet) + " more since the last line)");
    } else {
      suppressed_.fetch_add(1, std::memory_order_relaxed);
    }
    return false;
  }
  if (chosen.context->ctx() != SSL_get_SSL_CTX(ssl)) SSL_set_SSL_CTX(ssl, chosen.context->ctx());
  // The set's client validation, then the policy's settings over it.
  if (validation_ != nullptr) validation_->Apply(ssl);
  if (chosen.policy != nullptr) chosen.policy->Apply(ssl);
  SSL_set_ex_data(ssl, PolicyIndex(), const_cast<TlsPolicy*>(chosen.policy));
  return true;
}

bool ServerTlsSet::AllowsAlpn(SSL* ssl, std::string_view protocol) const {
  const auto* policy = static_cast<const TlsPolicy*>(SSL_get_ex_data(ssl, PolicyIndex()));
  return policy == nullptr || policy->AllowsAlpn(protocol);
}

ServerTlsSet::Selection ServerTlsSet::Choose(std::string_view server_name, std::string* why) const {
  Selection out;
  if (server_name.empty()) {
    if (distinct_.size() != 1) {
      *why = "the client sent no server name (SNI) and the port serves " +
             std::to_string(distinct_.size()) + " certificates";
      return out;
    }
    out.context = distinct_.front().get();
    for (const auto& policy : policies_) {
      if (policy->hostnames.empty() && (out.policy == nullptr || policy->Wins(*out.policy))) {
        out.policy = policy.get();
      }
    }
    return out;
  }
  const routing::ListenerInfo* listener = routes_->SelectListener(address_, port_, server_name);
  if (listener == nullptr) {
    *why = "no listener takes server name \"" + std::string(server_name) + "\"";
    return out;
  }
  // The listener's certificate and the level it covers the name at.
  CoverLevel cert_level = CoverLevel::kNone;
  for (const std::string& name : listener->names) {
    auto found = by_listener_.find(name);
    if (found == by_listener_.end()) continue;
    for (const auto& context : found->second) {
      CoverLevel level = context->CoversExactly(server_name)      ? CoverLevel::kExact
                         : context->CoversByWildcard(server_name) ? CoverLevel::kWildcard
                                                                  : CoverLevel::kDefault;
      if (level > cert_level) {
        cert_level = level;
        out.context = context.get();
      }
    }
  }
  // The winning policy among those targeting the listener.
  CoverLevel policy_level = CoverLevel::kNone;
  for (const auto& policy : policies_) {
    bool targets = false;
    for (const std::string& name : listener->names) targets = targets || policy->Targets(name);
    if (!targets) continue;
    const CoverLevel level = policy->Covers(server_name);
    if (level == CoverLevel::kNone) continue;
    if (level > policy_level || (level == policy_level && policy->Wins(*out.policy))) {
      policy_level = level;
      out.policy = policy.get();
    }
  }
  if (out.policy != nullptr && out.policy->certificate != nullptr && policy_level >= cert_level) {
    out.context = out.policy->certificate.get();
  }
  if (out.context == nullptr) {
    *why = "listener " + (listener->names.empty() ? std::string("?") : listener->names.front()) +
           " taking server name \"" + std::string(server_name) + "\" has no usable certificate";
  }
  return out;
}

std::shared_ptr<const TlsTable> TlsTable::Build(const RuntimeSnapshot& snapshot,
                                                std::shared_ptr<const routing::RouteTable> routes,
                                                const TlsTable* previous,
                                                std::vector<routing::Refusal>* refusals) {
  auto table = std::make_shared<TlsTable>();
  std::vector<routing::Refusal> ignored;
  if (refusals == nullptr) refusals = &ignored;

  // Material by sha256: key pairs, and CA bundles ("what", PEM).
  CertificateStore store = CertificateStore::Read(snapshot);
  const std::map<std::string, CertificateMaterial>& material = store.key_pairs;
  const std::map<std::string, std::pair<std::string, std::string>>& cas = store.cas;

  // Contexts built (or shared) on demand; a refused one is remembered with its reason.
  std::map<std::string, std::string> broken;  // sha256 -> reason
  auto context_for = [&](const std::string& sha) -> std::shared_ptr<const ServerContext> {
    if (auto it = table->contexts_.find(sha); it != table->contexts_.end()) return it->second;
    if (broken.count(sha) != 0) return nullptr;
    if (previous != nullptr) {
      if (auto it = previous->contexts_.find(sha); it != previous->contexts_.end()) {
        table->contexts_.emplace(sha, it->second);
        return it->second;
      }
    }
    auto m = material.find(sha);
    if (m == material.end()) return nullptr;
    StatusOr<std::shared_ptr<const ServerContext>> built = ServerContext::Build(m->second);
    if (!built.ok()) {
      broken.emplace(sha, std::string(built.status().message()));
      return nullptr;
    }
    table->contexts_.emplace(sha, *built);
    return *built;
  };

  // Client validations by id (mode and CA digests), shared by the sets asking for the same.
  std::map<std::string, std::shared_ptr<const ClientValidation>> validations;
  auto validation_for = [&](const rapidjson::Value& fv, std::string* id,
                            std::shared_ptr<const ClientValidation>* out) -> Status {
    const std::string mode = json::GetString(fv, "mode", "AllowValidOnly");
    if (mode != "AllowValidOnly" && mode != "AllowInsecureFallback") {
      return InvalidArgumentError("frontendValidation.mode \"" + mode + "\" is unknown");
    }
    std::vector<std::pair<std::string, std::string>> bundles;
    *id = mode;
    const rapidjson::Value* refs = json::Find(fv, "caCertificates");
    if (refs == nullptr || !refs->IsArray() || refs->Empty()) {
      return InvalidArgumentError("frontendValidation.caCertificates: at least one is required");
    }
    for (const rapidjson::Value& ref : refs->GetArray()) {
      const std::string sha = json::GetString(ref, "sha256");
      const std::string what = json::GetString(ref, "ref.kind") + " " +
                               json::GetString(ref, "ref.namespace") + "/" +
                               json::GetString(ref, "ref.name");
      auto found = cas.find(sha);
      if (found == cas.end()) {
        return UnavailableError("the CA certificates of " + what + " (sha256 " + sha +
                                ") have not reached this gateway");
      }
      bundles.emplace_back(what, found->second.second);
      *id += ":" + sha;
    }
    if (auto known = validations.find(*id); known != validations.end()) {
      *out = known->second;
      return OkStatus();
    }
    StatusOr<std::shared_ptr<const ClientValidation>> built = ClientValidation::Build(
        mode == "AllowValidOnly" ? ClientValidation::Mode::kRequireValid
                                 : ClientValidation::Mode::kInsecureFallback,
        bundles, *id);
    if (!built.ok()) return built.status();
    validations.emplace(*id, *built);
    *out = *built;
    return OkStatus();
  };

  const FormatEntries* listener_entries = snapshot.Entries(PORTICO_FORMAT_LISTENER_SET);
  if (listener_entries == nullptr) return table;
  std::map<std::pair<std::string, uint16_t>, std::shared_ptr<ServerTlsSet>> sets;
  // The validation id each set's first HTTPS entry asked for ("" for none), and its owner.
  std::map<std::pair<std::string, uint16_t>, std::pair<std::string, std::string>> claimed;
  for (const auto& [id, entry] : *listener_entries) {
    StatusOr<rapidjson::Document> doc = json::Parse(*entry.json, "listener_set.v1 " + id);
    if (!doc.ok() || json::GetString(*doc, "entry") != "listeners") continue;  // routing refuses
    std::optional<int64_t> port = json::GetInt(*doc, "port");
    const rapidjson::Value* gateway = json::Find(*doc, "gateway");
    const rapidjson::Value* listeners = json::Find(*doc, "listeners");
    if (!port || *port < 1 || *port > 65535 || gateway == nullptr || !gateway->IsObject() ||
        listeners == nullptr || !listeners->IsArray()) {
      continue;  // the route table refuses the entry with the reason
    }
    const std::string gw =
        json::GetString(*gateway, "namespace") + "/" + json::GetString(*gateway, "name");
    const std::string address = json::GetString(*doc, "address");
    const std::pair<std::string, uint16_t> set_key{address, static_cast<uint16_t>(*port)};
    std::string validation_id;
    std::shared_ptr<const ClientValidation> validation;
    if (const rapidjson::Value* fv = json::Find(*doc, "frontendValidation");
        fv != nullptr && fv->IsObject()) {
      Status made = validation_for(*fv, &validation_id, &validation);
      if (!made.ok()) {
        refusals->push_back({entry.owner, "client certificate validation of port " +
                                              std::to_string(*port) + ": " +
                                              std::string(made.message())});
        continue;
      }
    }
    bool https = false;
    for (const rapidjson::Value& l : listeners->GetArray()) {
      https = https || json::GetString(l, "protocol") == "HTTPS";
    }
    if (https) {
      auto [claim, first] = claimed.emplace(set_key, std::make_pair(validation_id, entry.owner));
      if (!first && claim->second.first != validation_id) {
        refusals->push_back({entry.owner, "port " + std::to_string(*port) +
                                              " asks for other client certificate validation "
                                              "than " +
                                              claim->second.second + " on it"});
        continue;
      }
    }
    for (const rapidjson::Value& l : listeners->GetArray()) {
      if (json::GetString(l, "protocol") != "HTTPS") continue;
      const rapidjson::Value* certs = json::FindPath(l, "tls.certificates");
      if (certs == nullptr || !certs->IsArray()) continue;
      const std::string name = gw + "/" + json::GetString(l, "name");
      std::vector<std::shared_ptr<const ServerContext>> contexts;
      for (const rapidjson::Value& c : certs->GetArray()) {
        const std::string sha = json::GetString(c, "sha256");
        std::shared_ptr<const ServerContext> context = context_for(sha);
        if (context != nullptr) {
          contexts.push_back(std::move(context));
        } else if (auto bad = broken.find(sha); bad != broken.end()) {
          refusals->push_back({entry.owner, "listener " + name + ": " + bad->second});
        } else {
          spdlog::warn(
              "listener {}: the material of Secret {} (sha256 {}) has not reached this "
              "gateway; the listener is served without it",
              name, SecretRefName(c), sha);
        }
      }
      if (contexts.empty()) continue;
      auto& set = sets[set_key];
      if (set == nullptr) {
        set = std::make_shared<ServerTlsSet>(routes, address, static_cast<uint16_t>(*port));
        set->validation_ = validation;
      }
      for (const auto& context : contexts) {
        if (std::find(set->distinct_.begin(), set->distinct_.end(), context) ==
            set->distinct_.end()) {
          set->distinct_.push_back(context);
        }
      }
      auto& mine = set->by_listener_[name];
      mine.insert(mine.end(), contexts.begin(), contexts.end());
    }
  }
  // TLSPolicies: parsed once, attached to every set with a listener they target.
  TlsPolicyResolver resolver;
  resolver.context = [&](const std::string& sha, std::string* why) {
    std::shared_ptr<const ServerContext> context = context_for(sha);
    if (context == nullptr) {
      auto bad = broken.find(sha);
      *why = bad != broken.end() ? bad->second
                                 : "the material (sha256 " + sha + ") has not reached this gateway";
    }
    return context;
  };
  resolver.ca_pem = [&](const std::string& sha) -> std::optional<std::string> {
    auto found = cas.find(sha);
    if (found == cas.end()) return std::nullopt;
    return found->second.second;
  };
  for (const auto& [id, entry] : *listener_entries) {
    StatusOr<rapidjson::Document> doc = json::Parse(*entry.json, "listener_set.v1 " + id);
    if (!doc.ok() || json::GetString(*doc, "entry") != "tlsPolicy") continue;
    StatusOr<std::shared_ptr<const TlsPolicy>> policy = ParseTlsPolicy(*doc, entry.owner, resolver);
    if (!policy.ok()) {
      refusals->push_back({entry.owner, "TLSPolicy " + id.substr(id.find('/') + 1) + ": " +
                                            std::string(policy.status().message())});
      continue;
    }
    for (auto& [key, set] : sets) {
      bool targets = false;
      for (const auto& [name, contexts] : set->by_listener_) {
        targets = targets || (*policy)->Targets(name);
      }
      if (!targets) continue;
      set->policies_.push_back(*policy);
    }
  }
  for (auto& [key, set] : sets) table->sets_.emplace(key, std::move(set));
  return table;
}

std::shared_ptr<const ServerTlsSet> TlsTable::Find(std::string_view address, uint16_t port) const {
  auto found = sets_.find({std::string(address), port});
  return found == sets_.end() ? nullptr : found->second;
}

}  // namespace portico::core::tls
