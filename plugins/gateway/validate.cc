// validate.cc: see validate.h. Each rule cites the Gateway API CRD rule it mirrors.
#include "validate.h"

#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "portico/sdk/fields.h"
#include "portico/sdk/names.h"

namespace portico::plugins::gateway {
namespace {

using ::portico::sdk::FieldError;
constexpr size_t kMaxListeners = 64;

std::string Quoted(const std::string& s) { return "\"" + s + "\""; }

const rapidjson::Value* Array(const rapidjson::Value& v, const char* name) {
  const rapidjson::Value* a = json::Find(v, name);
  return a != nullptr && a->IsArray() ? a : nullptr;
}

// ValidateSelector checks a metav1.LabelSelector (matchLabels, matchExpressions).
Status ValidateSelector(const rapidjson::Value& selector, const std::string& field) {
  if (!selector.IsObject()) return FieldError(field, "must be an object");
  if (const rapidjson::Value* labels = json::Find(selector, "matchLabels")) {
    if (!labels->IsObject()) return FieldError(field + ".matchLabels", "must be an object");
    for (const auto& m : labels->GetObject()) {
      std::string key = m.name.GetString();
      std::string sub = field + ".matchLabels[" + Quoted(key) + "]";
      if (!sdk::names::IsLabelKey(key)) return FieldError(sub, "invalid label key");
      if (!m.value.IsString() || !sdk::names::IsLabelValue(m.value.GetString())) {
        return FieldError(sub, "invalid label value");
      }
    }
  }
  if (const rapidjson::Value* exprs = Array(selector, "matchExpressions")) {
    for (rapidjson::SizeType i = 0; i < exprs->Size(); ++i) {
      const rapidjson::Value& e = (*exprs)[i];
      std::string sub = field + ".matchExpressions[" + std::to_string(i) + "]";
      std::string key = json::GetString(e, "key");
      if (!sdk::names::IsLabelKey(key)) {
        return FieldError(sub + ".key", "invalid label key " + Quoted(key));
      }
      std::string op = json::GetString(e, "operator");
      const rapidjson::Value* values = Array(e, "values");
      size_t count = values != nullptr ? values->Size() : 0;
      if (op == "In" || op == "NotIn") {
        if (count == 0) return FieldError(sub + ".values", "must be non-empty for operator " + op);
      } else if (op == "Exists" || op == "DoesNotExist") {
        if (count != 0) return FieldError(sub + ".values", "must be empty for operator " + op);
      } else {
        return FieldError(sub + ".operator",
                          Quoted(op) + " is not In, NotIn, Exists or DoesNotExist");
      }
      for (rapidjson::SizeType j = 0; j < count; ++j) {
        const rapidjson::Value& v = (*values)[j];
        if (!v.IsString() || !sdk::names::IsLabelValue(v.GetString())) {
          return FieldError(sub + ".values[" + std::to_string(j) + "]", "invalid label value");
        }
      }
    }
  }
  return OkStatus();
}

// ParseCertificateRef reads a SecretObjectReference (group "" and kind Secret by default).
StatusOr<CertificateRef> ParseCertificateRef(const rapidjson::Value& r, const std::string& field) {
  CertificateRef ref{json::GetString(r, "group"), json::GetString(r, "kind", "Secret"),
                     json::GetString(r, "namespace"), json::GetString(r, "name")};
  if (!sdk::names::IsDnsSubdomain(ref.name)) {
    return FieldError(field + ".name", Quoted(ref.name) + " is not a valid name");
  }
  if (!ref.ns.empty() && !sdk::names::IsDnsLabel(ref.ns)) {
    return FieldError(field + ".namespace", Quoted(ref.ns) + " is not a valid namespace");
  }
  return ref;
}

Status ParseTls(const rapidjson::Value& tls, const std::string& field, Listener& l) {
  if (!tls.IsObject()) return FieldError(field, "must be an object");
  l.has_tls = true;
  l.tls_mode = json::GetString(tls, "mode", "Terminate");
  if (l.tls_mode != "Terminate" && l.tls_mode != "Passthrough") {
    return FieldError(field + ".mode", Quoted(l.tls_mode) + " is not Terminate or Passthrough");
  }
  if (const rapidjson::Value* refs = Array(tls, "certificateRefs")) {
    for (rapidjson::SizeType j = 0; j < refs->Size(); ++j) {
      const rapidjson::Value& r = (*refs)[j];
      std::string sub = field + ".certificateRefs[" + std::to_string(j) + "]";
      PORTICO_ASSIGN_OR_RETURN(CertificateRef ref, ParseCertificateRef(r, sub));
      l.certificate_refs.push_back(std::move(ref));
    }
  }
  const rapidjson::Value* frontend = json::Find(tls, "frontendValidation");
  l.frontend_validation = frontend != nullptr && !frontend->IsNull();
  const rapidjson::Value* options = json::Find(tls, "options");
  bool has_options = options != nullptr && options->IsObject() && options->MemberCount() > 0;
  // CEL: certificateRefs or options must be specified when mode is Terminate.
  if (l.tls_mode == "Terminate" && l.certificate_refs.empty() && !has_options) {
    return FieldError(field + ".certificateRefs",
                      "certificateRefs or options must be specified when mode is Terminate");
  }
  return OkStatus();
}

Status ParseAllowedRoutes(const rapidjson::Value& allowed, const std::string& field, Listener& l) {
  if (const rapidjson::Value* ns = json::Find(allowed, "namespaces")) {
    l.from = json::GetString(*ns, "from", "Same");
    if (l.from != "All" && l.from != "Same" && l.from != "Selector") {
      return FieldError(field + ".namespaces.from",
                        Quoted(l.from) + " is not All, Same or Selector");
    }
    l.selector = json::Find(*ns, "selector");
    if (l.from == "Selector") {
      if (l.selector == nullptr) {
        return FieldError(field + ".namespaces.selector", "is required when from is Selector");
      }
      PORTICO_RETURN_IF_ERROR(ValidateSelector(*l.selector, field + ".namespaces.selector"));
    }
  }
  if (const rapidjson::Value* kinds = Array(allowed, "kinds")) {
    l.kinds_given = true;
    for (rapidjson::SizeType j = 0; j < kinds->Size(); ++j) {
      const rapidjson::Value& k = (*kinds)[j];
      GroupKind gk{json::GetString(k, "group", kGroup), json::GetString(k, "kind")};
      std::string sub = field + ".kinds[" + std::to_string(j) + "]";
      if (!sdk::names::IsGroup(gk.group)) {
        return FieldError(sub + ".group", Quoted(gk.group) + " is not a valid group");
      }
      if (!sdk::names::IsKind(gk.kind)) {
        return FieldError(sub + ".kind", Quoted(gk.kind) + " is not a valid kind");
      }
      l.kinds.push_back(std::move(gk));
    }
  }
  return OkStatus();
}

StatusOr<Listener> ParseListener(const rapidjson::Value& v, const std::string& field) {
  if (!v.IsObject()) return FieldError(field, "must be an object");
  Listener l;
  l.name = json::GetString(v, "name");
  if (!sdk::names::IsDnsSubdomain(l.name)) {
    return FieldError(field + ".name", Quoted(l.name) + " is not a valid listener name");
  }
  std::optional<int64_t> port = json::GetInt(v, "port");
  if (!port || *port < 1 || *port > 65535) return FieldError(field + ".port", "must be 1-65535");
  l.port = *port;
  l.protocol = json::GetString(v, "protocol");
  if (l.protocol.empty()) return FieldError(field + ".protocol", "is required");
  l.protocol_as_written = l.protocol;
  // Core protocols are case-insensitive ("http" is HTTP); custom ones are domain-prefixed.
  std::string upper = l.protocol;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper == "HTTP" || upper == "HTTPS" || upper == "TLS" || upper == "TCP" || upper == "UDP") {
    l.protocol = upper;
  }
  bool l4 = l.protocol == "TCP" || l.protocol == "UDP";
  if (const rapidjson::Value* h = json::Find(v, "hostname"); h != nullptr && h->IsString()) {
    l.hostname = h->GetString();
    // CEL: hostname must not be specified for protocols ['TCP', 'UDP'].
    if (l4 && !l.hostname.empty()) {
      return FieldError(field + ".hostname", "must not be set for protocol " + l.protocol);
    }
    if (!l.hostname.empty() && !sdk::names::IsHostname(l.hostname, /*allow_wildcard=*/true)) {
      return FieldError(field + ".hostname", Quoted(l.hostname) + " is not a valid hostname");
    }
  }
  const rapidjson::Value* tls = json::Find(v, "tls");
  if (tls != nullptr && !tls->IsNull()) {
    // CEL: tls must not be specified for protocols ['HTTP', 'TCP', 'UDP'].
    if (l4 || l.protocol == "HTTP") {
      return FieldError(field + ".tls", "must not be set for protocol " + l.protocol);
    }
    PORTICO_RETURN_IF_ERROR(ParseTls(*tls, field + ".tls", l));
    // CEL: tls mode must be Terminate for protocol HTTPS.
    if (l.protocol == "HTTPS" && l.tls_mode != "Terminate") {
      return FieldError(field + ".tls.mode", "tls mode must be Terminate for protocol HTTPS");
    }
    // CEL: tls mode must be set for protocol TLS.
    if (l.protocol == "TLS" && json::GetString(*tls, "mode").empty()) {
      return FieldError(field + ".tls.mode", "tls mode must be set for protocol TLS");
    }
  } else if (l.protocol == "HTTPS" || l.protocol == "TLS") {
    return FieldError(field + ".tls", "is required for protocol " + l.protocol);
  }
  if (const rapidjson::Value* allowed = json::Find(v, "allowedRoutes")) {
    PORTICO_RETURN_IF_ERROR(ParseAllowedRoutes(*allowed, field + ".allowedRoutes", l));
  }
  return l;
}

Status ParseAddresses(const rapidjson::Value& spec, GatewaySpec& out) {
  const rapidjson::Value* addresses = Array(spec, "addresses");
  if (addresses == nullptr) return OkStatus();
  std::map<std::pair<std::string, std::string>, size_t> seen;
  for (rapidjson::SizeType i = 0; i < addresses->Size(); ++i) {
    const rapidjson::Value& a = (*addresses)[i];
    std::string field = "spec.addresses[" + std::to_string(i) + "]";
    Address address{json::GetString(a, "type", "IPAddress"), json::GetString(a, "value")};
    // An empty value asks for an address to be assigned (the serving gateway's own).
    if (address.type == "IPAddress" && !address.value.empty() &&
        !sdk::names::IsIPv4(address.value) && !sdk::names::IsIPv6(address.value)) {
      return FieldError(field + ".value", Quoted(address.value) + " is not an IP address");
    }
    if (address.type == "Hostname" && !address.value.empty() &&
        !sdk::names::IsHostname(address.value, /*allow_wildcard=*/false)) {
      return FieldError(field + ".value", Quoted(address.value) + " is not a valid hostname");
    }
    // CEL: IPAddress values must be unique; Hostname values must be unique.
    if (auto [it, fresh] = seen.emplace(std::make_pair(address.type, address.value), i);
        !fresh && !address.value.empty()) {
      return FieldError(field + ".value", "duplicate " + address.type + " " +
                                              Quoted(address.value) + " (also spec.addresses[" +
                                              std::to_string(it->second) + "])");
    }
    out.addresses.push_back(std::move(address));
  }
  return OkStatus();
}

StatusOr<FrontendValidation> ParseFrontendValidation(const rapidjson::Value& v,
                                                     const std::string& field) {
  if (!v.IsObject()) return FieldError(field, "must be an object");
  FrontendValidation out;
  out.field = field;
  out.mode = json::GetString(v, "mode", "AllowValidOnly");
  if (out.mode != "AllowValidOnly" && out.mode != "AllowInsecureFallback") {
    return FieldError(field + ".mode",
                      Quoted(out.mode) + " is not AllowValidOnly or AllowInsecureFallback");
  }
  const rapidjson::Value* refs = Array(v, "caCertificateRefs");
  if (refs == nullptr || refs->Empty() || refs->Size() > 8) {
    return FieldError(field + ".caCertificateRefs", "must list 1 to 8 references");
  }
  for (rapidjson::SizeType i = 0; i < refs->Size(); ++i) {
    const rapidjson::Value& r = (*refs)[i];
    std::string sub = field + ".caCertificateRefs[" + std::to_string(i) + "]";
    if (!r.IsObject()) return FieldError(sub, "must be an object");
    CaCertificateRef ref{json::GetString(r, "group"), json::GetString(r, "kind"),
                         json::GetString(r, "namespace"), json::GetString(r, "name")};
    if (!ref.group.empty() && !sdk::names::IsGroup(ref.group)) {
      return FieldError(sub + ".group", Quoted(ref.group) + " is not a valid group");
    }
    if (!sdk::names::IsKind(ref.kind)) {
      return FieldError(sub + ".kind", Quoted(ref.kind) + " is not a valid kind");
    }
    if (!sdk::names::IsDnsSubdomain(ref.name)) {
      return FieldError(sub + ".name", Quoted(ref.name) + " is not a valid name");
    }
    if (!ref.ns.empty() && !sdk::names::IsDnsLabel(ref.ns)) {
      return FieldError(sub + ".namespace", Quoted(ref.ns) + " is not a valid namespace");
    }
    out.ca_refs.push_back(std::move(ref));
  }
  return out;
}

// ParseFrontend reads spec.tls.frontend (Gateway API v1.4: client-certificate validation).
Status ParseFrontend(const rapidjson::Value& spec, GatewaySpec& out) {
  const rapidjson::Value* frontend = json::FindPath(spec, "tls.frontend");
  if (frontend == nullptr || frontend->IsNull()) return OkStatus();
  const std::string field = "spec.tls.frontend";
  if (!frontend->IsObject()) return FieldError(field, "must be an object");
  const rapidjson::Value* def = json::Find(*frontend, "default");
  if (def == nullptr || !def->IsObject()) return FieldError(field + ".default", "is required");
  if (const rapidjson::Value* v = json::Find(*def, "validation"); v != nullptr && !v->IsNull()) {
    PORTICO_ASSIGN_OR_RETURN(out.frontend.default_validation,
                             ParseFrontendValidation(*v, field + ".default.validation"));
  }
  const rapidjson::Value* per_port = json::Find(*frontend, "perPort");
  if (per_port == nullptr || per_port->IsNull()) return OkStatus();
  if (!per_port->IsArray()) return FieldError(field + ".perPort", "must be an array");
  std::map<int64_t, size_t> seen;
  for (rapidjson::SizeType i = 0; i < per_port->Size(); ++i) {
    const rapidjson::Value& p = (*per_port)[i];
    std::string sub = field + ".perPort[" + std::to_string(i) + "]";
    if (!p.IsObject()) return FieldError(sub, "must be an object");
    std::optional<int64_t> port = json::GetInt(p, "port");
    if (!port || *port < 1 || *port > 65535) return FieldError(sub + ".port", "must be 1-65535");
    // CEL: Port for TLS configuration must be unique within the Gateway.
    if (auto [it, fresh] = seen.emplace(*port, i); !fresh) {
      return FieldError(sub + ".port", "port " + std::to_string(*port) +
                                           " repeats spec.tls.frontend.perPort[" +
                                           std::to_string(it->second) + "]");
    }
    const rapidjson::Value* tls = json::Find(p, "tls");
    if (tls == nullptr || !tls->IsObject()) return FieldError(sub + ".tls", "is required");
    std::optional<FrontendValidation> validation;
    if (const rapidjson::Value* v = json::Find(*tls, "validation"); v != nullptr && !v->IsNull()) {
      PORTICO_ASSIGN_OR_RETURN(validation, ParseFrontendValidation(*v, sub + ".tls.validation"));
    }
    out.frontend.per_port.emplace(*port, std::move(validation));
  }
  return OkStatus();
}

}  // namespace

const FrontendValidation* FrontendValidationFor(const GatewaySpec& spec, int64_t port) {
  auto it = spec.frontend.per_port.find(port);
  const std::optional<FrontendValidation>& v =
      it != spec.frontend.per_port.end() ? it->second : spec.frontend.default_validation;
  return v ? &*v : nullptr;
}

StatusOr<GatewaySpec> ParseGateway(const rapidjson::Value& spec) {
  GatewaySpec out;
  out.class_name = json::GetString(spec, "gatewayClassName");
  if (out.class_name.empty()) return FieldError("spec.gatewayClassName", "is required");
  const rapidjson::Value* listeners = Array(spec, "listeners");
  if (listeners == nullptr || listeners->Empty()) {
    return FieldError("spec.listeners", "at least one listener is required");
  }
  if (listeners->Size() > kMaxListeners) {
    return FieldError("spec.listeners", "at most 64 listeners");
  }
  std::map<std::string, size_t> by_name;
  std::map<std::tuple<int64_t, std::string, std::string>, size_t> by_triple;
  for (rapidjson::SizeType i = 0; i < listeners->Size(); ++i) {
    std::string field = "spec.listeners[" + std::to_string(i) + "]";
    PORTICO_ASSIGN_OR_RETURN(Listener l, ParseListener((*listeners)[i], field));
    // CEL: Listener name must be unique within the Gateway.
    if (auto [it, fresh] = by_name.emplace(l.name, i); !fresh) {
      return FieldError(field + ".name", "duplicate listener name " + Quoted(l.name) +
                                             " (also spec.listeners[" + std::to_string(it->second) +
                                             "])");
    }
    // CEL: Combination of port, protocol and hostname must be unique for each listener.
    if (auto [it, fresh] =
            by_triple.emplace(std::make_tuple(l.port, l.protocol_as_written, l.hostname), i);
        !fresh) {
      return FieldError(field, "port " + std::to_string(l.port) + ", protocol " + l.protocol +
                                   " and hostname " + Quoted(l.hostname) +
                                   " repeat spec.listeners[" + std::to_string(it->second) + "]");
    }
    out.listeners.push_back(std::move(l));
  }
  PORTICO_RETURN_IF_ERROR(ParseAddresses(spec, out));
  PORTICO_RETURN_IF_ERROR(ParseFrontend(spec, out));
  if (const rapidjson::Value* ref = json::FindPath(spec, "tls.backend.clientCertificateRef");
      ref != nullptr && !ref->IsNull()) {
    if (!ref->IsObject()) {
      return FieldError("spec.tls.backend.clientCertificateRef", "must be an object");
    }
    PORTICO_ASSIGN_OR_RETURN(out.backend_client_certificate,
                             ParseCertificateRef(*ref, "spec.tls.backend.clientCertificateRef"));
  }
  if (const rapidjson::Value* p = json::FindPath(spec, "infrastructure.parametersRef");
      p != nullptr && p->IsObject()) {
    std::string group = json::GetString(*p, "group");
    out.parameters_ref = json::GetString(*p, "kind") + (group.empty() ? "" : "." + group) + " " +
                         json::GetString(*p, "name");
  }
  return out;
}

}  // namespace portico::plugins::gateway
