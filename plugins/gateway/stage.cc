// stage.cc: see stage.h.
#include "stage.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "portico/sdk/fields.h"
#include "portico/sdk/json_writer.h"

namespace portico::plugins::gateway {
namespace {

using sdk::FieldError;
using sdk::RequiredString;

// CopyCertificate writes the view's {secretRef: {namespace, name}, sha256} `c` (named `field`)
// after checking its shape.
Status CopyCertificate(sdk::JsonWriter& w, const rapidjson::Value& c, const std::string& field) {
  if (!c.IsObject()) return FieldError(field, "must be an object");
  const rapidjson::Value* ref = json::Find(c, "secretRef");
  if (ref == nullptr || !ref->IsObject()) return FieldError(field + ".secretRef", "is required");
  PORTICO_ASSIGN_OR_RETURN(std::string ns, RequiredString(*ref, "namespace", field + ".secretRef"));
  PORTICO_ASSIGN_OR_RETURN(std::string name, RequiredString(*ref, "name", field + ".secretRef"));
  PORTICO_ASSIGN_OR_RETURN(std::string sha256, RequiredString(c, "sha256", field));
  w.BeginObject().Key("secretRef").BeginObject().Field("namespace", ns).Field("name", name);
  w.EndObject().Field("sha256", sha256).EndObject();
  return OkStatus();
}

// WriteTls writes {"mode", "certificates": [{secretRef, sha256}]} from the view's tls object.
Status WriteTls(sdk::JsonWriter& w, const rapidjson::Value& tls, const std::string& field) {
  if (!tls.IsObject()) return FieldError(field, "must be an object");
  PORTICO_ASSIGN_OR_RETURN(std::string mode, RequiredString(tls, "mode", field));
  w.Key("tls").BeginObject().Field("mode", mode).Key("certificates").BeginArray();
  const rapidjson::Value* certs = json::Find(tls, "certificates");
  if (certs != nullptr && !certs->IsArray()) {
    return FieldError(field + ".certificates", "must be an array");
  }
  for (rapidjson::SizeType i = 0; certs != nullptr && i < certs->Size(); ++i) {
    PORTICO_RETURN_IF_ERROR(
        CopyCertificate(w, (*certs)[i], field + ".certificates[" + std::to_string(i) + "]"));
  }
  w.EndArray().EndObject();
  return OkStatus();
}

// WriteListener writes one listener of a listener_set.v1 entry.
Status WriteListener(sdk::JsonWriter& w, const rapidjson::Value& l, const std::string& field) {
  PORTICO_ASSIGN_OR_RETURN(std::string name, RequiredString(l, "name", field));
  PORTICO_ASSIGN_OR_RETURN(std::string protocol, RequiredString(l, "protocol", field));
  w.BeginObject().Field("name", name).Field("protocol", protocol);
  if (const rapidjson::Value* h = json::Find(l, "hostname"); h != nullptr) {
    if (!h->IsString()) return FieldError(field + ".hostname", "must be a string");
    // Absent means any host; an empty hostname in a view means the same.
    if (h->GetStringLength() > 0) w.Field("hostname", h->GetString());
  }
  if (const rapidjson::Value* tls = json::Find(l, "tls"); tls != nullptr) {
    PORTICO_RETURN_IF_ERROR(WriteTls(w, *tls, field + ".tls"));
  } else if (protocol == "HTTPS") {
    return FieldError(field + ".tls", "is required for protocol HTTPS");
  }
  w.Key("routeKinds").BeginArray();
  const rapidjson::Value* kinds = json::Find(l, "routeKinds");
  if (kinds != nullptr && !kinds->IsArray()) {
    return FieldError(field + ".routeKinds", "must be an array");
  }
  for (rapidjson::SizeType i = 0; kinds != nullptr && i < kinds->Size(); ++i) {
    std::string sub = field + ".routeKinds[" + std::to_string(i) + "]";
    const rapidjson::Value& k = (*kinds)[i];
    if (!k.IsObject()) return FieldError(sub, "must be an object");
    PORTICO_ASSIGN_OR_RETURN(std::string kind, RequiredString(k, "kind", sub));
    w.BeginObject().Field("group", json::GetString(k, "group")).Field("kind", kind).EndObject();
  }
  w.EndArray().EndObject();
  return OkStatus();
}

// PortValidation is one port's client-certificate validation as the view carries it.
struct PortValidation {
  std::string mode;
  struct Ca {
    std::string kind, ns, name, sha256;
  };
  std::vector<Ca> ca_certificates;
};

// FrontendValidations reads the view's "frontendValidation" by port.
StatusOr<std::map<int64_t, PortValidation>> FrontendValidations(const rapidjson::Value& view) {
  std::map<int64_t, PortValidation> out;
  const rapidjson::Value* list = json::Find(view, "frontendValidation");
  if (list == nullptr) return out;
  if (!list->IsArray()) return FieldError("frontendValidation", "must be an array");
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
    const rapidjson::Value& v = (*list)[i];
    std::string field = "frontendValidation[" + std::to_string(i) + "]";
    if (!v.IsObject()) return FieldError(field, "must be an object");
    std::optional<int64_t> port = json::GetInt(v, "port");
    if (!port || *port < 1 || *port > 65535) return FieldError(field + ".port", "must be 1-65535");
    PortValidation f;
    PORTICO_ASSIGN_OR_RETURN(f.mode, RequiredString(v, "mode", field));
    if (f.mode != "AllowValidOnly" && f.mode != "AllowInsecureFallback") {
      return FieldError(field + ".mode",
                        "\"" + f.mode + "\" is not AllowValidOnly or AllowInsecureFallback");
    }
    const rapidjson::Value* cas = json::Find(v, "caCertificates");
    if (cas == nullptr || !cas->IsArray() || cas->Empty()) {
      return FieldError(field + ".caCertificates", "must be a non-empty array");
    }
    for (rapidjson::SizeType j = 0; j < cas->Size(); ++j) {
      const rapidjson::Value& c = (*cas)[j];
      std::string sub = field + ".caCertificates[" + std::to_string(j) + "]";
      const rapidjson::Value* ref = c.IsObject() ? json::Find(c, "ref") : nullptr;
      if (ref == nullptr || !ref->IsObject()) return FieldError(sub + ".ref", "is required");
      PortValidation::Ca ca;
      PORTICO_ASSIGN_OR_RETURN(ca.kind, RequiredString(*ref, "kind", sub + ".ref"));
      if (ca.kind != "ConfigMap" && ca.kind != "Secret") {
        return FieldError(sub + ".ref.kind", "\"" + ca.kind + "\" is not ConfigMap or Secret");
      }
      PORTICO_ASSIGN_OR_RETURN(ca.ns, RequiredString(*ref, "namespace", sub + ".ref"));
      PORTICO_ASSIGN_OR_RETURN(ca.name, RequiredString(*ref, "name", sub + ".ref"));
      PORTICO_ASSIGN_OR_RETURN(ca.sha256, RequiredString(c, "sha256", sub));
      f.ca_certificates.push_back(std::move(ca));
    }
    if (!out.emplace(*port, std::move(f)).second) {
      return FieldError(field + ".port", "port " + std::to_string(*port) + " is repeated");
    }
  }
  return out;
}

void WriteFrontendValidation(sdk::JsonWriter& w, const PortValidation& f) {
  w.Key("frontendValidation").BeginObject().Field("mode", f.mode);
  w.Key("caCertificates").BeginArray();
  for (const PortValidation::Ca& ca : f.ca_certificates) {
    w.BeginObject().Key("ref").BeginObject().Field("kind", ca.kind).Field("namespace", ca.ns);
    w.Field("name", ca.name).EndObject().Field("sha256", ca.sha256).EndObject();
  }
  w.EndArray().EndObject();
}

// Addresses returns the distinct addresses the Gateway's listener sets are keyed by, in written
// order; {""} when the view has none.
StatusOr<std::vector<std::string>> Addresses(const rapidjson::Value& view) {
  std::vector<std::string> out;
  const rapidjson::Value* addresses = json::Find(view, "addresses");
  if (addresses != nullptr && !addresses->IsArray()) {
    return FieldError("addresses", "must be an array");
  }
  for (rapidjson::SizeType i = 0; addresses != nullptr && i < addresses->Size(); ++i) {
    const rapidjson::Value& a = (*addresses)[i];
    std::string field = "addresses[" + std::to_string(i) + "]";
    if (!a.IsObject()) return FieldError(field, "must be an object");
    std::string type = json::GetString(a, "type", "IPAddress");
    // The processor accepts only IPAddress Gateways; anything else is not a view it writes.
    if (type != "IPAddress") {
      return FieldError(field + ".type", "\"" + type + "\" is not supported (only IPAddress)");
    }
    std::string value = json::GetString(a, "value");
    if (std::find(out.begin(), out.end(), value) == out.end()) out.push_back(std::move(value));
  }
  if (out.empty()) out.emplace_back();
  return out;
}

}  // namespace

StatusOr<std::vector<ListenerSetEntry>> TranslateGateway(const sdk::ObjectRef& ref,
                                                         const rapidjson::Value& view) {
  const rapidjson::Value* listeners = json::Find(view, "listeners");
  if (listeners == nullptr || !listeners->IsArray()) {
    return FieldError("listeners", "must be an array");
  }
  // Listeners grouped by port, each group in written order.
  std::map<int64_t, std::vector<rapidjson::SizeType>> by_port;
  for (rapidjson::SizeType i = 0; i < listeners->Size(); ++i) {
    const rapidjson::Value& l = (*listeners)[i];
    std::string field = "listeners[" + std::to_string(i) + "]";
    if (!l.IsObject()) return FieldError(field, "must be an object");
    std::optional<int64_t> port = json::GetInt(l, "port");
    if (!port || *port < 1 || *port > 65535) return FieldError(field + ".port", "must be 1-65535");
    by_port[*port].push_back(i);
  }
  PORTICO_ASSIGN_OR_RETURN(std::vector<std::string> addresses, Addresses(view));
  PORTICO_ASSIGN_OR_RETURN(auto frontend, FrontendValidations(view));
  for (const auto& [port, f] : frontend) {
    auto it = by_port.find(port);
    bool https = it != by_port.end() &&
                 std::any_of(it->second.begin(), it->second.end(), [&](rapidjson::SizeType i) {
                   return json::GetString((*listeners)[i], "protocol") == "HTTPS";
                 });
    if (!https) {
      return FieldError("frontendValidation",
                        "port " + std::to_string(port) + " has no HTTPS listener");
    }
  }

  // The backend client certificate (spec.tls.backend) belongs to every entry of the Gateway.
  std::string backend_certificate;
  if (const rapidjson::Value* c = json::Find(view, "backendClientCertificate"); c != nullptr) {
    sdk::JsonWriter cw;
    PORTICO_RETURN_IF_ERROR(CopyCertificate(cw, *c, "backendClientCertificate"));
    backend_certificate = cw.Take();  // checked and normalised once, copied into every entry
  }

  std::vector<ListenerSetEntry> out;
  for (const std::string& address : addresses) {
    for (const auto& [port, indexes] : by_port) {
      sdk::JsonWriter w;
      w.BeginObject().Field("entry", "listeners").Key("gateway").BeginObject();
      w.Field("namespace", ref.ns).Field("name", ref.name).EndObject();
      w.Field("address", address).Field("port", port).Key("listeners").BeginArray();
      for (rapidjson::SizeType i : indexes) {
        PORTICO_RETURN_IF_ERROR(
            WriteListener(w, (*listeners)[i], "listeners[" + std::to_string(i) + "]"));
      }
      w.EndArray();
      if (auto f = frontend.find(port); f != frontend.end()) WriteFrontendValidation(w, f->second);
      if (!backend_certificate.empty()) {
        w.Key("backendClientCertificate").Value(*json::Parse(backend_certificate));
      }
      w.EndObject();
      std::string id = "gateway/" + ref.ns + "/" + ref.name + "/" + std::to_string(port);
      if (!address.empty()) id += "/" + address;
      out.push_back({std::move(id), w.Take()});
    }
  }
  return out;
}

Status StageGateway(const sdk::Txn& txn, const std::vector<sdk::Change>& changes) {
  return sdk::StageEachView(
      txn, changes, [&](const sdk::Change& change, const rapidjson::Document& view) -> Status {
        StatusOr<std::vector<ListenerSetEntry>> entries = TranslateGateway(change.ref, view);
        if (!entries.ok()) {
          txn.Nack(change.ref, change.ref.Display() + ": " + entries.status().message());
          return OkStatus();
        }
        const std::string owner = change.ref.Key();
        for (const ListenerSetEntry& e : *entries) {
          PORTICO_RETURN_IF_ERROR(txn.Put(owner, PORTICO_FORMAT_LISTENER_SET, e.id, e.json));
        }
        return OkStatus();
      });
}

}  // namespace portico::plugins::gateway
