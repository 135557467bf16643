// tls_policy.cc: see tls_policy.h.
#include "core/runtime/tls/tls_policy.h"

#include "core/runtime/tls/openssl_util.h"

#include <openssl/err.h>

#include <tuple>

namespace portico::core::tls {

namespace {

StatusOr<int> Version(const std::string& text, const std::string& field) {
  if (text.empty()) return 0;
  if (text == "TLSv1.2") return TLS1_2_VERSION;
  if (text == "TLSv1.3") return TLS1_3_VERSION;
  return InvalidArgumentError(field + ": \"" + text + "\" is not TLSv1.2 or TLSv1.3");
}

// CheckCiphers makes sure OpenSSL knows every name (a list it half-understands would silently
// narrow to what it does).
Status CheckCiphers(const std::string& list, const std::string& suites) {
  SSL_CTX* probe = SSL_CTX_new(TLS_server_method());
  if (probe == nullptr) return InternalError("ciphers: out of memory");
  std::string bad;
  auto check_each = [&](const std::string& joined, bool tls13) {
    size_t start = 0;
    while (start < joined.size()) {
      size_t end = joined.find(':', start);
      if (end == std::string::npos) end = joined.size();
      const std::string one = joined.substr(start, end - start);
      const int ok = tls13 ? SSL_CTX_set_ciphersuites(probe, one.c_str())
                           : SSL_CTX_set_cipher_list(probe, one.c_str());
      if (ok != 1 && bad.empty()) bad = one;
      start = end + 1;
    }
  };
  check_each(list, false);
  check_each(suites, true);
  SSL_CTX_free(probe);
  ERR_clear_error();
  if (!bad.empty()) return InvalidArgumentError("ciphers: OpenSSL knows no cipher \"" + bad + "\"");
  return OkStatus();
}

}  // namespace

bool TlsPolicy::Targets(std::string_view listener) const {
  const size_t slash = listener.rfind('/');
  if (slash == std::string_view::npos) return false;
  const std::string_view gateway = listener.substr(0, slash);
  const std::string_view section = listener.substr(slash + 1);
  for (const auto& [g, l] : targets) {
    if (g == gateway && (l.empty() || l == section)) return true;
  }
  return false;
}

CoverLevel TlsPolicy::Covers(std::string_view server_name) const {
  if (hostnames.empty()) return CoverLevel::kDefault;
  CoverLevel best = CoverLevel::kNone;
  for (const std::string& h : hostnames) {
    if (h == server_name) return CoverLevel::kExact;
    if (h.size() > 2 && h[0] == '*' && h[1] == '.') {
      const size_t dot = server_name.find('.');
      if (dot != std::string_view::npos && dot > 0 &&
          server_name.substr(dot) == std::string_view(h).substr(1)) {
        best = CoverLevel::kWildcard;
      }
    }
  }
  return best;
}

bool TlsPolicy::Wins(const TlsPolicy& other) const {
  return std::tie(created_ms, name) < std::tie(other.created_ms, other.name);
}

void TlsPolicy::Apply(SSL* ssl) const {
  if (min_version != 0) SSL_set_min_proto_version(ssl, min_version);
  if (max_version != 0) SSL_set_max_proto_version(ssl, max_version);
  if (!cipher_list.empty()) SSL_set_cipher_list(ssl, cipher_list.c_str());
  if (!cipher_suites.empty()) SSL_set_ciphersuites(ssl, cipher_suites.c_str());
  if (client != nullptr) {
    client->Apply(ssl);
  } else if (client_none) {
    SSL_set_verify(ssl, SSL_VERIFY_NONE, nullptr);
  }
}

bool TlsPolicy::AllowsAlpn(std::string_view protocol) const {
  if (!alpn) return true;
  for (const std::string& p : *alpn) {
    if (p == protocol) return true;
  }
  return false;
}

StatusOr<std::shared_ptr<const TlsPolicy>> ParseTlsPolicy(const rapidjson::Value& entry,
                                                          const std::string& owner,
                                                          const TlsPolicyResolver& resolver) {
  auto policy = std::make_shared<TlsPolicy>();
  policy->owner = owner;
  policy->name =
      json::GetString(entry, "policy.namespace") + "/" + json::GetString(entry, "policy.name");
  policy->created_ms = json::GetInt(entry, "createdUnixMs").value_or(0);
  const rapidjson::Value* targets = json::Find(entry, "targets");
  if (targets == nullptr || !targets->IsArray() || targets->Empty()) {
    return InvalidArgumentError("targets: at least one is required");
  }
  for (const rapidjson::Value& t : targets->GetArray()) {
    policy->targets.emplace_back(
        json::GetString(t, "gateway.namespace") + "/" + json::GetString(t, "gateway.name"),
        json::GetString(t, "listener"));
  }
  if (const rapidjson::Value* hosts = json::Find(entry, "hostnames"); hosts && hosts->IsArray()) {
    for (const rapidjson::Value& h : hosts->GetArray()) {
      if (h.IsString()) policy->hostnames.push_back(AsciiLower(h.GetString()));
    }
  }
  if (const rapidjson::Value* cert = json::Find(entry, "certificate"); cert && cert->IsObject()) {
    std::string why;
    policy->certificate = resolver.context(json::GetString(*cert, "sha256"), &why);
    if (policy->certificate == nullptr) return UnavailableError("certificate: " + why);
  }
  StatusOr<int> min = Version(json::GetString(entry, "minVersion"), "minVersion");
  StatusOr<int> max = Version(json::GetString(entry, "maxVersion"), "maxVersion");
  if (!min.ok()) return min.status();
  if (!max.ok()) return max.status();
  policy->min_version = *min;
  policy->max_version = *max;
  if (*min != 0 && *max != 0 && *min > *max) {
    return InvalidArgumentError("minVersion is above maxVersion");
  }
  if (const rapidjson::Value* ciphers = json::Find(entry, "ciphers");
      ciphers && ciphers->IsArray()) {
    for (const rapidjson::Value& c : ciphers->GetArray()) {
      if (!c.IsString()) continue;
      std::string name = c.GetString();
      if (name.rfind("TLS_", 0) == 0) {
        // An IANA name: OpenSSL's own for a TLS 1.2 suite; TLS 1.3 suites keep theirs.
        const char* openssl = OPENSSL_cipher_name(name.c_str());
        if (openssl == nullptr || std::string_view(openssl) == "(NONE)") {
          return InvalidArgumentError("ciphers: OpenSSL knows no cipher \"" + name + "\"");
        }
        name = openssl;
      }
      std::string& into = name.rfind("TLS_", 0) == 0 ? policy->cipher_suites : policy->cipher_list;
      if (!into.empty()) into += ':';
      into += name;
    }
    Status known = CheckCiphers(policy->cipher_list, policy->cipher_suites);
    if (!known.ok()) return known;
  }
  if (const rapidjson::Value* alpn = json::Find(entry, "alpn"); alpn && alpn->IsArray()) {
    policy->alpn.emplace();
    for (const rapidjson::Value& a : alpn->GetArray()) {
      if (a.IsString()) policy->alpn->push_back(a.GetString());
    }
  }
  if (const rapidjson::Value* client = json::Find(entry, "clientCertificate");
      client && client->IsObject()) {
    const std::string mode = json::GetString(*client, "mode", "Require");
    if (mode == "None") {
      policy->client_none = true;
    } else if (mode == "Require" || mode == "Optional") {
      std::vector<std::pair<std::string, std::string>> bundles;
      std::string id = "policy " + policy->name + ":" + mode;
      const rapidjson::Value* cas = json::Find(*client, "caCertificates");
      if (cas == nullptr || !cas->IsArray() || cas->Empty()) {
        return InvalidArgumentError("clientCertificate.caCertificates: at least one is required");
      }
      for (const rapidjson::Value& ca : cas->GetArray()) {
        const std::string sha = json::GetString(ca, "sha256");
        const std::string what = "Secret " + json::GetString(ca, "secretRef.namespace") + "/" +
                                 json::GetString(ca, "secretRef.name");
        std::optional<std::string> pem = resolver.ca_pem(sha);
        if (!pem) {
          return UnavailableError("clientCertificate: the CA certificates of " + what +
                                  " (sha256 " + sha + ") have not reached this gateway");
        }
        bundles.emplace_back(what, *pem);
        id += ":" + sha;
      }
      std::vector<std::string> sans;
      if (const rapidjson::Value* allowed = json::Find(*client, "allowedSans");
          allowed && allowed->IsArray()) {
        for (const rapidjson::Value& s : allowed->GetArray()) {
          if (s.IsString()) {
            sans.push_back(s.GetString());
            id += ":" + sans.back();
          }
        }
      }
      const int depth = static_cast<int>(json::GetInt(*client, "verifyDepth").value_or(0));
      id += ":" + std::to_string(depth);
      StatusOr<std::shared_ptr<const ClientValidation>> built =
          ClientValidation::Build(mode == "Require" ? ClientValidation::Mode::kRequireValid
                                                    : ClientValidation::Mode::kOptionalValid,
                                  bundles, id, depth, std::move(sans));
      if (!built.ok()) return built.status();
      policy->client = *built;
    } else {
      return InvalidArgumentError("clientCertificate.mode \"" + mode + "\" is unknown");
    }
  }
  return std::shared_ptr<const TlsPolicy>(std::move(policy));
}

}  // namespace portico::core::tls
