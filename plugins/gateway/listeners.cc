// listeners.cc: see listeners.h.
#include "listeners.h"

#include <map>
#include <set>
#include <tuple>

#include "portico/sdk/hostname.h"

namespace portico::plugins::gateway {
namespace {

bool ProtocolSupported(const Listener& l) {
  return l.protocol == "HTTP" || (l.protocol == "HTTPS" && l.tls_mode == "Terminate");
}

// ResolveKinds fills supportedKinds and the InvalidRouteKinds condition.
void ResolveKinds(const Listener& l, ListenerResult& r) {
  bool http = ProtocolSupported(l);
  if (!l.kinds_given || l.kinds.empty()) {
    // The protocol decides; Portico serves HTTPRoute on HTTP and HTTPS, nothing elsewhere.
    if (http) r.supported_kinds.push_back({kGroup, "HTTPRoute"});
    return;
  }
  std::string invalid;
  for (const GroupKind& k : l.kinds) {
    bool ok = http && k.group == kGroup && k.kind == "HTTPRoute";
    if (ok) {
      bool seen = false;
      for (const GroupKind& s : r.supported_kinds) {
        seen = seen || (s.group == k.group && s.kind == k.kind);
      }
      if (!seen) r.supported_kinds.push_back(k);
    } else {
      invalid += (invalid.empty() ? "" : ", ") + k.kind + (k.group.empty() ? "" : "." + k.group);
    }
  }
  if (!invalid.empty()) {
    r.resolved = {"ResolvedRefs", "False", "InvalidRouteKinds",
                  "route kinds not supported on a " + l.protocol + " listener: " + invalid};
  }
}

void MarkConflicts(const GatewaySpec& spec, std::vector<ListenerResult>& results) {
  std::map<int64_t, std::set<std::string>> protocols;  // port -> protocols of supported listeners
  std::map<std::tuple<int64_t, std::string, std::string>, std::vector<size_t>> same;
  for (size_t i = 0; i < spec.listeners.size(); ++i) {
    const Listener& l = spec.listeners[i];
    if (!ProtocolSupported(l)) continue;
    protocols[l.port].insert(l.protocol);
    same[{l.port, l.protocol, l.hostname}].push_back(i);
  }
  for (size_t i = 0; i < spec.listeners.size(); ++i) {
    const Listener& l = spec.listeners[i];
    if (!ProtocolSupported(l)) continue;
    ListenerResult& r = results[i];
    const std::set<std::string>& on_port = protocols[l.port];
    std::string message;
    std::string reason;
    if (on_port.size() > 1) {
      reason = "ProtocolConflict";
      std::string list;
      for (const std::string& p : on_port) list += (list.empty() ? "" : ", ") + p;
      message = "port " + std::to_string(l.port) + " is used with several protocols (" + list + ")";
    } else if (const auto& others = same[{l.port, l.protocol, l.hostname}]; others.size() > 1) {
      reason = "HostnameConflict";
      message = "another listener uses port " + std::to_string(l.port) + ", protocol " +
                l.protocol + " and hostname \"" + l.hostname + "\"";
    }
    if (reason.empty()) continue;
    r.conflicted = {"Conflicted", "True", reason, message};
    r.accepted = {"Accepted", "False", reason, message};
  }
}

void MarkOverlappingTls(const GatewaySpec& spec, std::vector<ListenerResult>& results) {
  for (size_t i = 0; i < spec.listeners.size(); ++i) {
    const Listener& a = spec.listeners[i];
    if (a.protocol != "HTTPS" || !results[i].Valid()) continue;
    std::string with;
    for (size_t j = 0; j < spec.listeners.size(); ++j) {
      const Listener& b = spec.listeners[j];
      if (i == j || b.protocol != "HTTPS" || b.port != a.port || !results[j].Valid()) continue;
      if (!sdk::hostname::Overlap(a.hostname, b.hostname)) continue;
      with += (with.empty() ? "" : ", ") + b.name + " (" + b.hostname + ")";
    }
    if (!with.empty()) {
      results[i].overlapping =
          sdk::Condition{"OverlappingTLSConfig", "True", "OverlappingHostnames",
                         "hostname " + a.hostname + " overlaps listeners on port " +
                             std::to_string(a.port) + ": " + with};
    }
  }
}

}  // namespace

sdk::Condition ListenerResult::Programmed() const {
  if (!Valid()) return {"Programmed", "False", "Invalid", "the listener is not accepted"};
  if (!certificates_usable) {
    return {"Programmed", "False", "Invalid", "the listener has no usable certificate"};
  }
  if (!frontend_usable) {
    return {"Programmed", "False", "Invalid",
            "the listener's client-certificate validation (spec.tls.frontend) is not resolved"};
  }
  return {"Programmed", "Unknown", "Pending", "waiting for a gateway to apply it"};
}

std::vector<sdk::Condition> ListenerResult::Conditions() const {
  std::vector<sdk::Condition> out{accepted, resolved, conflicted, Programmed()};
  if (overlapping) out.push_back(*overlapping);
  return out;
}

std::vector<ListenerResult> ResolveListeners(const GatewaySpec& spec, const sdk::ObjectRef& gateway,
                                             sdk::ProcessContext* ctx) {
  std::vector<ListenerResult> results(spec.listeners.size());
  std::map<int64_t, FrontendResolution> frontends;  // by port: resolved once, shared
  for (size_t i = 0; i < spec.listeners.size(); ++i) {
    const Listener& l = spec.listeners[i];
    ListenerResult& r = results[i];
    ResolveKinds(l, r);
    if (!ProtocolSupported(l)) {
      std::string what = "protocol " + l.protocol;
      if (l.has_tls) what += " with tls mode " + l.tls_mode;
      r.accepted = {"Accepted", "False", "UnsupportedProtocol",
                    what + " is not supported (supported: HTTP, HTTPS with tls mode Terminate)"};
      continue;
    }
    if (l.frontend_validation) {
      // The pre-v1.4 listener field; Gateway API v1.4 moved it to spec.tls.frontend.
      r.accepted = {"Accepted", "False", "UnsupportedValue",
                    "tls.frontendValidation is not supported; use spec.tls.frontend or a "
                    "TLSPolicy for client certificates"};
    }
    if (l.protocol == "HTTPS" && ctx != nullptr) {
      CertificateResolution certs = ResolveCertificates(l, gateway, *ctx);
      r.certificates = std::move(certs.certificates);
      if (certs.failure) {
        r.resolved = *certs.failure;  // a certificate problem outweighs a route kind problem
        // Previous material that keeps serving keeps the listener programmed.
        r.certificates_usable = certs.only_kept && !r.certificates.empty();
      } else if (r.certificates.empty()) {
        // tls.options without certificateRefs: nothing Portico can serve with.
        r.resolved = {"ResolvedRefs", "False", "InvalidCertificateRef",
                      "the listener references no certificate"};
        r.certificates_usable = false;
      }
      if (const FrontendValidation* v = FrontendValidationFor(spec, l.port)) {
        auto it = frontends.find(l.port);
        if (it == frontends.end()) {
          it = frontends.emplace(l.port, ResolveFrontendValidation(*v, gateway, *ctx)).first;
        }
        const FrontendResolution& f = it->second;
        r.frontend = f;
        if (f.failure) {
          if (r.certificates_usable) r.resolved = *f.failure;
          r.frontend_usable = false;
          if (f.ca_certificates.empty() && r.Valid()) {
            r.accepted = {"Accepted", "False", "NoValidCACertificate",
                          "no CA certificate of " + f.field + " is usable: " + f.failure->message};
          }
        }
      }
    }
  }
  MarkConflicts(spec, results);
  MarkOverlappingTls(spec, results);
  return results;
}

std::string SelectorString(const rapidjson::Value& selector) {
  std::string out;
  auto add = [&](const std::string& term) { out += (out.empty() ? "" : ",") + term; };
  if (const rapidjson::Value* labels = json::Find(selector, "matchLabels");
      labels != nullptr && labels->IsObject()) {
    for (const auto& m : labels->GetObject()) {
      add(std::string(m.name.GetString()) + "=" + (m.value.IsString() ? m.value.GetString() : ""));
    }
  }
  if (const rapidjson::Value* exprs = json::Find(selector, "matchExpressions");
      exprs != nullptr && exprs->IsArray()) {
    for (const auto& e : exprs->GetArray()) {
      std::string key = json::GetString(e, "key");
      std::string op = json::GetString(e, "operator");
      std::string values;
      if (const rapidjson::Value* v = json::Find(e, "values"); v != nullptr && v->IsArray()) {
        for (const auto& item : v->GetArray()) {
          values +=
              (values.empty() ? "" : ",") + std::string(item.IsString() ? item.GetString() : "");
        }
      }
      if (op == "In") {
        add(key + " in (" + values + ")");
      } else if (op == "NotIn") {
        add(key + " notin (" + values + ")");
      } else if (op == "Exists") {
        add(key);
      } else if (op == "DoesNotExist") {
        add("!" + key);
      }
    }
  }
  return out;
}

}  // namespace portico::plugins::gateway
