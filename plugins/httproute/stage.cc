// stage.cc: see stage.h.
#include "stage.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "portico/sdk/fields.h"
#include "portico/sdk/json_writer.h"

namespace portico::plugins::httproute {
namespace {

using ::portico::sdk::FieldError;
using sdk::JsonWriter;

std::string At(const std::string& field, size_t i) { return field + "[" + std::to_string(i) + "]"; }
std::string Join(const std::string& field, const char* key) {
  return field.empty() ? std::string(key) : field + "." + key;
}

// Padded renders `value` clamped to [0, 10^width - 1] with leading zeros.
std::string Padded(int64_t value, int width) {
  int64_t max = 1;
  for (int i = 0; i < width; ++i) max *= 10;
  value = std::clamp<int64_t>(value, 0, max - 1);
  std::string digits = std::to_string(value);
  return std::string(static_cast<size_t>(width) - digits.size(), '0') + digits;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// OptionalString returns member `key` of `obj` when it is a string; nullopt when absent; an error
// when it is something else, or empty while `non_empty` is set.
StatusOr<std::optional<std::string>> OptionalString(const rapidjson::Value& obj, const char* key,
                                                    const std::string& field,
                                                    bool non_empty = false) {
  const rapidjson::Value* v = json::Find(obj, key);
  if (v == nullptr || v->IsNull()) return std::optional<std::string>();
  if (!v->IsString() || (non_empty && v->GetStringLength() == 0)) {
    return FieldError(Join(field, key),
                      non_empty ? "must be a non-empty string" : "must be a string");
  }
  return std::optional<std::string>(std::string(v->GetString(), v->GetStringLength()));
}

StatusOr<std::string> RequiredString(const rapidjson::Value& obj, const char* key,
                                     const std::string& field) {
  PORTICO_ASSIGN_OR_RETURN(std::optional<std::string> s, OptionalString(obj, key, field, true));
  if (!s) return FieldError(Join(field, key), "is required");
  return *s;
}

// OptionalArray returns member `key` when it is an array, null when absent, an error otherwise.
StatusOr<const rapidjson::Value*> OptionalArray(const rapidjson::Value& obj, const char* key,
                                                const std::string& field) {
  const rapidjson::Value* v = json::Find(obj, key);
  if (v == nullptr || v->IsNull()) return static_cast<const rapidjson::Value*>(nullptr);
  if (!v->IsArray()) return FieldError(Join(field, key), "must be an array");
  return v;
}

StatusOr<const rapidjson::Value*> RequiredObject(const rapidjson::Value& obj, const char* key,
                                                 const std::string& field) {
  const rapidjson::Value* v = json::Find(obj, key);
  if (v == nullptr || !v->IsObject()) return FieldError(Join(field, key), "must be an object");
  return v;
}

// ------------------------------------------------------------------------------------ matches

struct KeyValueMatch {
  std::string name;
  std::string type;  // Exact | Regex
  std::string value;
};

StatusOr<std::string> ValueMatchType(std::string_view type, const std::string& field) {
  if (type == "Exact") return std::string("Exact");
  if (type == "RegularExpression") return std::string("Regex");
  return FieldError(field, "match type \"" + std::string(type) + "\" is not supported");
}

// KeyValueMatches reads a match's headers (`fold`: names compared case-insensitively and written
// in lower case) or query parameters; only the first entry of a name counts (Gateway API).
StatusOr<std::vector<KeyValueMatch>> KeyValueMatches(const rapidjson::Value& match, const char* key,
                                                     const std::string& field, bool fold) {
  PORTICO_ASSIGN_OR_RETURN(const rapidjson::Value* items, OptionalArray(match, key, field));
  std::vector<KeyValueMatch> out;
  std::set<std::string> seen;
  for (rapidjson::SizeType i = 0; items != nullptr && i < items->Size(); ++i) {
    const rapidjson::Value& item = (*items)[i];
    std::string sub = At(Join(field, key), i);
    if (!item.IsObject()) return FieldError(sub, "must be an object");
    PORTICO_ASSIGN_OR_RETURN(std::string name, RequiredString(item, "name", sub));
    PORTICO_ASSIGN_OR_RETURN(std::optional<std::string> type, OptionalString(item, "type", sub));
    PORTICO_ASSIGN_OR_RETURN(std::string mapped,
                             ValueMatchType(type.value_or("Exact"), sub + ".type"));
    PORTICO_ASSIGN_OR_RETURN(std::optional<std::string> value, OptionalString(item, "value", sub));
    if (!value) return FieldError(sub + ".value", "is required");
    if (fold) name = Lower(name);
    if (!seen.insert(name).second) continue;
    out.push_back({std::move(name), std::move(mapped), std::move(*value)});
  }
  return out;
}

void WriteKeyValues(JsonWriter& w, const char* key, const std::vector<KeyValueMatch>& items) {
  w.Key(key).BeginArray();
  for (const KeyValueMatch& m : items) {
    w.BeginObject().Field("name", m.name).Field("type", m.type).Field("value", m.value);
    w.EndObject();
  }
  w.EndArray();
}

// ParsedMatch is one HTTPRouteMatch as the core gets it, and its rank.
struct ParsedMatch {
  const char* path_type = "Prefix";  // Exact | Prefix | Regex
  std::string path_value = "/";
  std::optional<std::string> method;
  std::vector<KeyValueMatch> headers;
  std::vector<KeyValueMatch> query;
  MatchRank rank;
};

// ParseMatch reads one HTTPRouteMatch (null: the default PathPrefix "/").
StatusOr<ParsedMatch> ParseMatch(const rapidjson::Value* match, const std::string& field) {
  static const rapidjson::Value kEmpty(rapidjson::kObjectType);
  if (match == nullptr) match = &kEmpty;
  if (!match->IsObject()) return FieldError(field, "must be an object");
  ParsedMatch out;
  std::string type = "PathPrefix";
  if (const rapidjson::Value* path = json::Find(*match, "path"); path != nullptr) {
    if (!path->IsObject()) return FieldError(field + ".path", "must be an object");
    PORTICO_ASSIGN_OR_RETURN(std::optional<std::string> t,
                             OptionalString(*path, "type", field + ".path"));
    PORTICO_ASSIGN_OR_RETURN(std::optional<std::string> v,
                             OptionalString(*path, "value", field + ".path", true));
    type = t.value_or(type);
    out.path_value = v.value_or(out.path_value);
  }
  if (type == "Exact") {
    out.path_type = "Exact";
    out.rank.path = PathClass::kExact;
  } else if (type == "PathPrefix") {
    out.path_type = "Prefix";
    out.rank.path = PathClass::kPrefix;
  } else if (type == "RegularExpression") {
    out.path_type = "Regex";
    out.rank.path = PathClass::kRegex;
  } else {
    return FieldError(field + ".path.type", "\"" + type + "\" is not supported");
  }
  out.rank.path_length = out.path_value.size();
  PORTICO_ASSIGN_OR_RETURN(out.method, OptionalString(*match, "method", field, true));
  out.rank.method = out.method.has_value();
  PORTICO_ASSIGN_OR_RETURN(out.headers, KeyValueMatches(*match, "headers", field, /*fold=*/true));
  PORTICO_ASSIGN_OR_RETURN(out.query,
                           KeyValueMatches(*match, "queryParams", field, /*fold=*/false));
  out.rank.headers = out.headers.size();
  out.rank.query = out.query.size();
  return out;
}

void WriteMatch(JsonWriter& w, const ParsedMatch& m) {
  w.Key("match").BeginObject().Key("path").BeginObject().Field("type", m.path_type);
  w.Field("value", m.path_value).EndObject();
  if (m.method) w.Field("method", *m.method);
  WriteKeyValues(w, "headers", m.headers);
  WriteKeyValues(w, "query", m.query);
  w.EndObject();
}

// ------------------------------------------------------------------------------------ filters

// WriteHeaderModifier writes {"builtin": builtin, "set", "add", "remove"}.
Status WriteHeaderModifier(JsonWriter& w, const char* builtin, const rapidjson::Value& config,
                           const std::string& field) {
  w.BeginObject().Field("builtin", builtin);
  for (const char* list : {"set", "add"}) {
    PORTICO_ASSIGN_OR_RETURN(const rapidjson::Value* items, OptionalArray(config, list, field));
    w.Key(list).BeginArray();
    for (rapidjson::SizeType i = 0; items != nullptr && i < items->Size(); ++i) {
      std::string sub = At(Join(field, list), i);
      if (!(*items)[i].IsObject()) return FieldError(sub, "must be an object");
      PORTICO_ASSIGN_OR_RETURN(std::string name, RequiredString((*items)[i], "name", sub));
      PORTICO_ASSIGN_OR_RETURN(std::optional<std::string> value,
                               OptionalString((*items)[i], "value", sub));
      if (!value) return FieldError(sub + ".value", "is required");
      w.BeginObject().Field("name", name).Field("value", *value).EndObject();
    }
    w.EndArray();
  }
  PORTICO_ASSIGN_OR_RETURN(const rapidjson::Value* remove, OptionalArray(config, "remove", field));
  w.Key("remove").BeginArray();
  for (rapidjson::SizeType i = 0; remove != nullptr && i < remove->Size(); ++i) {
    const rapidjson::Value& name = (*remove)[i];
    if (!name.IsString() || name.GetStringLength() == 0) {
      return FieldError(At(Join(field, "remove"), i), "must be a non-empty string");
    }
    w.String(std::string_view(name.GetString(), name.GetStringLength()));
  }
  w.EndArray().EndObject();
  return OkStatus();
}

// WritePathModifier writes "path": {type, value} from an HTTPPathModifier.
Status WritePathModifier(JsonWriter& w, const rapidjson::Value& config, const std::string& field) {
  const rapidjson::Value* path = json::Find(config, "path");
  if (path == nullptr || path->IsNull()) return OkStatus();
  std::string sub = field + ".path";
  if (!path->IsObject()) return FieldError(sub, "must be an object");
  PORTICO_ASSIGN_OR_RETURN(std::string type, RequiredString(*path, "type", sub));
  const char* member = type == "ReplaceFullPath"      ? "replaceFullPath"
                       : type == "ReplacePrefixMatch" ? "replacePrefixMatch"
                                                      : nullptr;
  if (member == nullptr) return FieldError(sub + ".type", "\"" + type + "\" is not supported");
  PORTICO_ASSIGN_OR_RETURN(std::optional<std::string> value, OptionalString(*path, member, sub));
  if (!value) return FieldError(Join(sub, member), "is required");
  w.Key("path").BeginObject().Field("type", type).Field("value", *value).EndObject();
  return OkStatus();
}

// WriteRedirectMembers writes a RequestRedirect's members. A port left out while the scheme is
// given is that scheme's well-known port (Gateway API); absent scheme and port mean the
// request's scheme and the listener's port, which only the core knows.
Status WriteRedirectMembers(JsonWriter& w, const rapidjson::Value& config,
                            const std::string& field) {
  PORTICO_ASSIGN_OR_RETURN(std::optional<std::string> scheme,
                           OptionalString(config, "scheme", field, true));
  PORTICO_ASSIGN_OR_RETURN(std::optional<std::string> hostname,
                           OptionalString(config, "hostname", field, true));
  std::optional<int64_t> port;
  if (const rapidjson::Value* p = json::Find(config, "port"); p != nullptr && !p->IsNull()) {
    if (!p->IsInt64() || p->GetInt64() < 1 || p->GetInt64() > 65535) {
      return FieldError(field + ".port", "must be 1-65535");
    }
    port = p->GetInt64();
  } else if (scheme == "http") {
    port = 80;
  } else if (scheme == "https") {
    port = 443;
  }
  int64_t status_code = 302;
  if (const rapidjson::Value* c = json::Find(config, "statusCode"); c != nullptr && !c->IsNull()) {
    if (!c->IsInt64()) return FieldError(field + ".statusCode", "must be an integer");
    status_code = c->GetInt64();
  }
  if (scheme) w.Field("scheme", *scheme);
  if (hostname) w.Field("hostname", *hostname);
  if (port) w.Field("port", *port);
  PORTICO_RETURN_IF_ERROR(WritePathModifier(w, config, field));
  w.Field("statusCode", status_code);
  return OkStatus();
}

// WriteMirror writes {"builtin": "mirror", "key", "percent"}; percent is 100 unless the filter
// gives a percent or a fraction (then possibly not an integer).
Status WriteMirror(JsonWriter& w, const rapidjson::Value& config, const std::string& field) {
  PORTICO_ASSIGN_OR_RETURN(const rapidjson::Value* ref,
                           RequiredObject(config, "backendRef", field));
  PORTICO_ASSIGN_OR_RETURN(std::optional<std::string> key,
                           OptionalString(*ref, "key", field + ".backendRef"));
  if (!key) return FieldError(field + ".backendRef.key", "is required (an unresolved view)");
  w.BeginObject().Field("builtin", "mirror").Field("key", *key);
  const rapidjson::Value* percent = json::Find(config, "percent");
  const rapidjson::Value* fraction = json::Find(config, "fraction");
  if (percent != nullptr && !percent->IsNull()) {
    if (!percent->IsInt64() || percent->GetInt64() < 0 || percent->GetInt64() > 100) {
      return FieldError(field + ".percent", "must be 0-100");
    }
    w.Field("percent", percent->GetInt64());
  } else if (fraction != nullptr && !fraction->IsNull()) {
    int64_t numerator = json::GetInt(*fraction, "numerator").value_or(-1);
    int64_t denominator = json::GetInt(*fraction, "denominator").value_or(100);
    if (numerator < 0 || denominator < 1 || numerator > denominator) {
      return FieldError(field + ".fraction",
                        "must be 0 <= numerator <= denominator, denominator >= 1");
    }
    if ((numerator * 100) % denominator == 0) {
      w.Field("percent", numerator * 100 / denominator);
    } else {
      w.Key("percent").Value(rapidjson::Value(static_cast<double>(numerator) * 100.0 /
                                              static_cast<double>(denominator)));
    }
  } else {
    w.Field("percent", int64_t{100});
  }
  w.EndObject();
  return OkStatus();
}

// WriteCors writes {"builtin": "cors", "allowOrigins", "allowMethods", "allowHeaders",
// "exposeHeaders", "allowCredentials", "maxAge"} from an HTTPCORSFilter: lists as written (empty
// when absent), credentials false and maxAge 5 (the CRD's default) when absent.
Status WriteCors(JsonWriter& w, const rapidjson::Value& config, const std::string& field) {
  w.BeginObject().Field("builtin", "cors");
  for (const char* list : {"allowOrigins", "allowMethods", "allowHeaders", "exposeHeaders"}) {
    PORTICO_ASSIGN_OR_RETURN(const rapidjson::Value* items, OptionalArray(config, list, field));
    w.Key(list).BeginArray();
    for (rapidjson::SizeType i = 0; items != nullptr && i < items->Size(); ++i) {
      const rapidjson::Value& item = (*items)[i];
      if (!item.IsString() || item.GetStringLength() == 0) {
        return FieldError(At(Join(field, list), i), "must be a non-empty string");
      }
      w.String(std::string_view(item.GetString(), item.GetStringLength()));
    }
    w.EndArray();
  }
  bool credentials = false;
  if (const rapidjson::Value* c = json::Find(config, "allowCredentials");
      c != nullptr && !c->IsNull()) {
    if (!c->IsBool()) return FieldError(field + ".allowCredentials", "must be a boolean");
    credentials = c->GetBool();
  }
  w.Key("allowCredentials").Bool(credentials);
  int64_t max_age = 5;
  if (const rapidjson::Value* a = json::Find(config, "maxAge"); a != nullptr && !a->IsNull()) {
    if (!a->IsInt64() || a->GetInt64() < 1) return FieldError(field + ".maxAge", "must be >= 1");
    max_age = a->GetInt64();
  }
  w.Field("maxAge", max_age).EndObject();
  return OkStatus();
}

// WriteFilter writes one filter of a filters list (a rule-level RequestRedirect is taken out by
// the caller; a backend-level one is written as {"builtin": "redirect", ...}).
Status WriteFilter(JsonWriter& w, const rapidjson::Value& f, const std::string& route_ns,
                   const std::string& field) {
  if (!f.IsObject()) return FieldError(field, "must be an object");
  PORTICO_ASSIGN_OR_RETURN(std::string type, RequiredString(f, "type", field));
  if (type == "RequestHeaderModifier" || type == "ResponseHeaderModifier") {
    const char* member =
        type == "RequestHeaderModifier" ? "requestHeaderModifier" : "responseHeaderModifier";
    PORTICO_ASSIGN_OR_RETURN(const rapidjson::Value* config, RequiredObject(f, member, field));
    return WriteHeaderModifier(
        w, type == "RequestHeaderModifier" ? "requestHeaders" : "responseHeaders", *config,
        Join(field, member));
  }
  if (type == "URLRewrite") {
    PORTICO_ASSIGN_OR_RETURN(const rapidjson::Value* config,
                             RequiredObject(f, "urlRewrite", field));
    std::string sub = field + ".urlRewrite";
    PORTICO_ASSIGN_OR_RETURN(std::optional<std::string> hostname,
                             OptionalString(*config, "hostname", sub, true));
    w.BeginObject().Field("builtin", "urlRewrite");
    if (hostname) w.Field("hostname", *hostname);
    PORTICO_RETURN_IF_ERROR(WritePathModifier(w, *config, sub));
    w.EndObject();
    return OkStatus();
  }
  if (type == "RequestMirror") {
    PORTICO_ASSIGN_OR_RETURN(const rapidjson::Value* config,
                             RequiredObject(f, "requestMirror", field));
    return WriteMirror(w, *config, field + ".requestMirror");
  }
  if (type == "CORS") {
    PORTICO_ASSIGN_OR_RETURN(const rapidjson::Value* config, RequiredObject(f, "cors", field));
    return WriteCors(w, *config, field + ".cors");
  }
  if (type == "RequestRedirect") {
    PORTICO_ASSIGN_OR_RETURN(const rapidjson::Value* config,
                             RequiredObject(f, "requestRedirect", field));
    w.BeginObject().Field("builtin", "redirect");
    PORTICO_RETURN_IF_ERROR(WriteRedirectMembers(w, *config, field + ".requestRedirect"));
    w.EndObject();
    return OkStatus();
  }
  if (type == "ExtensionRef") {
    PORTICO_ASSIGN_OR_RETURN(const rapidjson::Value* ext, RequiredObject(f, "extensionRef", field));
    std::string sub = field + ".extensionRef";
    PORTICO_ASSIGN_OR_RETURN(std::optional<std::string> group, OptionalString(*ext, "group", sub));
    PORTICO_ASSIGN_OR_RETURN(std::string kind, RequiredString(*ext, "kind", sub));
    PORTICO_ASSIGN_OR_RETURN(std::string name, RequiredString(*ext, "name", sub));
    // The filter_binding.v1 id of the filter object: its key group/Kind/namespace/name. An
    // ExtensionRef the controller could not resolve has no binding: the rule answers 500.
    w.BeginObject().Field("binding", group.value_or("") + "/" + kind + "/" + route_ns + "/" + name);
    w.EndObject();
    return OkStatus();
  }
  return FieldError(field + ".type", "filter type \"" + type + "\" is not supported");
}

// WriteFilters writes "filters": [...] of `owner`, skipping `skip` (the rule's redirect).
Status WriteFilters(JsonWriter& w, const rapidjson::Value& owner, const std::string& route_ns,
                    const std::string& field, const rapidjson::Value* skip = nullptr) {
  PORTICO_ASSIGN_OR_RETURN(const rapidjson::Value* filters, OptionalArray(owner, "filters", field));
  w.Key("filters").BeginArray();
  for (rapidjson::SizeType i = 0; filters != nullptr && i < filters->Size(); ++i) {
    if (&(*filters)[i] == skip) continue;
    PORTICO_RETURN_IF_ERROR(WriteFilter(w, (*filters)[i], route_ns, At(Join(field, "filters"), i)));
  }
  w.EndArray();
  return OkStatus();
}

// ------------------------------------------------------------------------------------ actions

Status WriteTimeouts(JsonWriter& w, const rapidjson::Value& rule, const std::string& field) {
  int64_t request_ms = 0, backend_request_ms = 0;
  if (const rapidjson::Value* t = json::Find(rule, "timeouts"); t != nullptr && !t->IsNull()) {
    std::string sub = field + ".timeouts";
    if (!t->IsObject()) return FieldError(sub, "must be an object");
    for (auto [key, out] :
         {std::pair<const char*, int64_t*>{"request", &request_ms},
          std::pair<const char*, int64_t*>{"backendRequest", &backend_request_ms}}) {
      PORTICO_ASSIGN_OR_RETURN(std::optional<std::string> text, OptionalString(*t, key, sub));
      if (!text) continue;
      StatusOr<int64_t> ms = ParseDurationMs(*text);
      if (!ms.ok()) return FieldError(Join(sub, key), std::string(ms.status().message()));
      *out = *ms;
    }
  }
  w.Key("timeouts").BeginObject().Field("requestMs", request_ms);
  w.Field("backendRequestMs", backend_request_ms).EndObject();
  return OkStatus();
}

// WriteRetry writes "retry" ({"codes", "attempts", "backoffMs"}) for a rule that has one. Defaults
// are Envoy Gateway's: 2 attempts (retries after the first try), a 25 ms backoff.
Status WriteRetry(JsonWriter& w, const rapidjson::Value& rule, const std::string& field) {
  const rapidjson::Value* retry = json::Find(rule, "retry");
  if (retry == nullptr || retry->IsNull()) return OkStatus();  // no member: no retries
  const std::string sub = field + ".retry";
  if (!retry->IsObject()) return FieldError(sub, "must be an object");
  w.Key("retry").BeginObject().Key("codes").BeginArray();
  if (const rapidjson::Value* codes = json::Find(*retry, "codes"); codes && codes->IsArray()) {
    for (const auto& c : codes->GetArray()) {
      if (c.IsInt()) w.Int(c.GetInt());
    }
  }
  w.EndArray();
  w.Field("attempts", json::GetInt(*retry, "attempts").value_or(2));
  int64_t backoff_ms = 25;
  PORTICO_ASSIGN_OR_RETURN(std::optional<std::string> backoff,
                           OptionalString(*retry, "backoff", sub));
  if (backoff) {
    StatusOr<int64_t> ms = ParseDurationMs(*backoff);
    if (!ms.ok()) return FieldError(Join(sub, "backoff"), std::string(ms.status().message()));
    backoff_ms = *ms;
  }
  w.Field("backoffMs", backoff_ms).EndObject();
  return OkStatus();
}

// WriteAction writes "action" for a rule: backends, redirect, filters, timeouts, retry.
Status WriteAction(JsonWriter& w, const rapidjson::Value& rule, const std::string& route_ns,
                   const std::string& field) {
  // The rule's RequestRedirect (at most one: the CRD forbids repeating it) replaces backends.
  const rapidjson::Value* redirect = nullptr;
  std::string redirect_field;
  PORTICO_ASSIGN_OR_RETURN(const rapidjson::Value* filters, OptionalArray(rule, "filters", field));
  for (rapidjson::SizeType i = 0; filters != nullptr && i < filters->Size(); ++i) {
    if (json::GetString((*filters)[i], "type") != "RequestRedirect") continue;
    if (redirect != nullptr) {
      return FieldError(At(field + ".filters", i), "a second RequestRedirect filter");
    }
    redirect = &(*filters)[i];
    redirect_field = At(field + ".filters", i);
  }

  w.Key("action").BeginObject().Key("backends").BeginArray();
  PORTICO_ASSIGN_OR_RETURN(const rapidjson::Value* backends,
                           OptionalArray(rule, "backendRefs", field));
  for (rapidjson::SizeType i = 0; backends != nullptr && i < backends->Size(); ++i) {
    const rapidjson::Value& b = (*backends)[i];
    std::string sub = At(field + ".backendRefs", i);
    if (!b.IsObject()) return FieldError(sub, "must be an object");
    PORTICO_ASSIGN_OR_RETURN(std::optional<std::string> key, OptionalString(b, "key", sub));
    if (!key) return FieldError(sub + ".key", "is required (an unresolved view)");
    int64_t weight = 1;
    if (const rapidjson::Value* v = json::Find(b, "weight"); v != nullptr && !v->IsNull()) {
      if (!v->IsInt64() || v->GetInt64() < 0) {
        return FieldError(sub + ".weight", "must be a non-negative integer");
      }
      weight = v->GetInt64();
    }
    w.BeginObject().Field("key", *key).Field("weight", weight);
    PORTICO_RETURN_IF_ERROR(WriteFilters(w, b, route_ns, sub));
    w.EndObject();
  }
  w.EndArray().Key("redirect");
  if (redirect == nullptr) {
    w.Null();
  } else {
    PORTICO_ASSIGN_OR_RETURN(const rapidjson::Value* config,
                             RequiredObject(*redirect, "requestRedirect", redirect_field));
    w.BeginObject();
    PORTICO_RETURN_IF_ERROR(WriteRedirectMembers(w, *config, redirect_field + ".requestRedirect"));
    w.EndObject();
  }
  PORTICO_RETURN_IF_ERROR(WriteFilters(w, rule, route_ns, field, redirect));
  PORTICO_RETURN_IF_ERROR(WriteTimeouts(w, rule, field));
  PORTICO_RETURN_IF_ERROR(WriteRetry(w, rule, field));
  w.EndObject();
  return OkStatus();
}

// ------------------------------------------------------------------------------------ route

Status WriteParents(JsonWriter& w, const rapidjson::Value& view) {
  PORTICO_ASSIGN_OR_RETURN(const rapidjson::Value* parents, OptionalArray(view, "parents", ""));
  if (parents == nullptr) return FieldError("parents", "is required");
  w.Key("parents").BeginArray();
  for (rapidjson::SizeType i = 0; i < parents->Size(); ++i) {
    const rapidjson::Value& p = (*parents)[i];
    std::string field = At("parents", i);
    if (!p.IsObject()) return FieldError(field, "must be an object");
    PORTICO_ASSIGN_OR_RETURN(const rapidjson::Value* gateway, RequiredObject(p, "gateway", field));
    PORTICO_ASSIGN_OR_RETURN(std::string ns,
                             RequiredString(*gateway, "namespace", field + ".gateway"));
    PORTICO_ASSIGN_OR_RETURN(std::string name,
                             RequiredString(*gateway, "name", field + ".gateway"));
    PORTICO_ASSIGN_OR_RETURN(std::string listener, RequiredString(p, "listener", field));
    w.BeginObject().Key("gateway").BeginObject().Field("namespace", ns).Field("name", name);
    w.EndObject().Field("listener", listener).Key("hostnames").BeginArray();
    PORTICO_ASSIGN_OR_RETURN(const rapidjson::Value* hostnames,
                             OptionalArray(p, "hostnames", field));
    for (rapidjson::SizeType j = 0; hostnames != nullptr && j < hostnames->Size(); ++j) {
      const rapidjson::Value& h = (*hostnames)[j];
      if (!h.IsString() || h.GetStringLength() == 0) {
        return FieldError(At(field + ".hostnames", j), "must be a non-empty string");
      }
      w.String(std::string_view(h.GetString(), h.GetStringLength()));
    }
    w.EndArray().EndObject();
  }
  w.EndArray();
  return OkStatus();
}

Status WriteRules(JsonWriter& w, const sdk::ObjectRef& ref, const rapidjson::Value& view,
                  int64_t created_unix_ms) {
  PORTICO_ASSIGN_OR_RETURN(const rapidjson::Value* rules, OptionalArray(view, "rules", ""));
  if (rules == nullptr) return FieldError("rules", "is required");
  w.Key("rules").BeginArray();
  std::set<int64_t> indexes;
  for (rapidjson::SizeType i = 0; i < rules->Size(); ++i) {
    const rapidjson::Value& rule = (*rules)[i];
    std::string field = At("rules", i);
    if (!rule.IsObject()) return FieldError(field, "must be an object");
    // `index` is the rule's position in spec.rules (dropped rules leave gaps).
    std::optional<int64_t> index = json::GetInt(rule, "index");
    if (!index || *index < 0) return FieldError(field + ".index", "must be a non-negative integer");
    if (!indexes.insert(*index).second) {
      return FieldError(field + ".index", "duplicate rule index " + std::to_string(*index));
    }
    PORTICO_ASSIGN_OR_RETURN(std::optional<std::string> name,
                             OptionalString(rule, "name", field, true));
    PORTICO_ASSIGN_OR_RETURN(const rapidjson::Value* matches,
                             OptionalArray(rule, "matches", field));
    // No matches: the Gateway API's default, one PathPrefix "/" match.
    size_t count = matches != nullptr && !matches->Empty() ? matches->Size() : 1;
    for (size_t j = 0; j < count; ++j) {
      const rapidjson::Value* match = matches != nullptr && !matches->Empty()
                                          ? &(*matches)[static_cast<rapidjson::SizeType>(j)]
                                          : nullptr;
      std::string id = std::to_string(*index) + "." + std::to_string(j);
      w.BeginObject().Field("id", id);
      if (name) w.Field("name", *name);
      PORTICO_ASSIGN_OR_RETURN(ParsedMatch parsed, ParseMatch(match, At(field + ".matches", j)));
      w.Field("precedence", PrecedenceKey(parsed.rank, created_unix_ms, ref.ns, ref.name, *index,
                                          static_cast<int64_t>(j)));
      WriteMatch(w, parsed);
      PORTICO_RETURN_IF_ERROR(WriteAction(w, rule, ref.ns, field));
      w.EndObject();
    }
  }
  w.EndArray();
  return OkStatus();
}

}  // namespace

std::string PrecedenceKey(const MatchRank& rank, int64_t created_unix_ms, std::string_view ns,
                          std::string_view name, int64_t rule_index, int64_t match_index) {
  std::string key;
  key.reserve(64 + ns.size() + name.size());
  key += "p:";
  key += static_cast<char>('0' + static_cast<int>(rank.path));
  key += ":" + Padded(9999 - static_cast<int64_t>(rank.path_length), 4);
  key += rank.method ? "/m:0" : "/m:1";
  key += "/h:" + Padded(99 - static_cast<int64_t>(rank.headers), 2);
  key += "/q:" + Padded(99 - static_cast<int64_t>(rank.query), 2);
  key += "/t:" + Padded(created_unix_ms, 14);
  key += "/n:";
  key += ns;
  key += '/';
  key += name;
  key += " /r:" + Padded(rule_index, 4) + "." + Padded(match_index, 4);
  return key;
}

StatusOr<int64_t> ParseDurationMs(std::string_view text) {
  auto bad = [&] {
    return InvalidArgumentError("\"" + std::string(text) +
                                "\" is not a Gateway API duration (e.g. \"10s\", \"500ms\", "
                                "\"1h2m\")");
  };
  int64_t total = 0;
  int groups = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    int64_t number = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (i - start == 5) return bad();  // at most 5 digits per group
      number = number * 10 + (text[i++] - '0');
    }
    if (i == start) return bad();
    int64_t unit_ms = 0;
    if (text.substr(i, 2) == "ms") {
      unit_ms = 1;
      i += 2;
    } else if (i < text.size() && text[i] == 'h') {
      unit_ms = 3600 * 1000;
      ++i;
    } else if (i < text.size() && text[i] == 'm') {
      unit_ms = 60 * 1000;
      ++i;
    } else if (i < text.size() && text[i] == 's') {
      unit_ms = 1000;
      ++i;
    } else {
      return bad();
    }
    if (++groups > 4) return bad();
    total += number * unit_ms;
  }
  if (groups == 0) return bad();
  return total;
}

StatusOr<std::string> TranslateRoute(const sdk::ObjectRef& ref, const rapidjson::Value& view) {
  int64_t created = kUnknownCreatedUnixMs;
  if (const rapidjson::Value* metadata = json::Find(view, "metadata"); metadata != nullptr) {
    PORTICO_ASSIGN_OR_RETURN(std::optional<std::string> stamp,
                             OptionalString(*metadata, "creationTimestamp", "metadata"));
    if (stamp && !stamp->empty()) {
      StatusOr<int64_t> ms = ParseTimestampUnixMs(*stamp);
      if (!ms.ok())
        return FieldError("metadata.creationTimestamp", std::string(ms.status().message()));
      created = std::max<int64_t>(*ms, 0);
    }
  }
  JsonWriter w;
  w.BeginObject().Key("route").BeginObject().Field("group", ref.group).Field("kind", ref.kind);
  w.Field("namespace", ref.ns).Field("name", ref.name).EndObject();
  PORTICO_RETURN_IF_ERROR(WriteParents(w, view));
  PORTICO_RETURN_IF_ERROR(WriteRules(w, ref, view, created));
  return w.EndObject().Take();
}

Status StageRoute(const sdk::Txn& txn, const std::vector<sdk::Change>& changes) {
  return sdk::StageEachView(
      txn, changes, [&](const sdk::Change& change, const rapidjson::Document& view) -> Status {
        StatusOr<std::string> entry = TranslateRoute(change.ref, view);
        if (!entry.ok()) {
          txn.Nack(change.ref, change.ref.Display() + ": " + std::string(entry.status().message()));
          return OkStatus();
        }
        return txn.Put(change.ref.Key(), PORTICO_FORMAT_ROUTE_RULES,
                       "httproute/" + change.ref.ns + "/" + change.ref.name, *entry);
      });
}

}  // namespace portico::plugins::httproute
