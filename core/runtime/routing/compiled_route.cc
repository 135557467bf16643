// compiled_route.cc: see compiled_route.h.
#include "core/runtime/routing/compiled_route.h"
#include "core/runtime/routing/builtin_filters.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <set>

#include "core/runtime/routing/regex_prefix.h"
#include "portico/sdk/fields.h"
#include "portico/sdk/json.h"

namespace portico::core::routing::internal {

ValueMatch::ValueMatch() = default;
ValueMatch::ValueMatch(ValueMatch&&) noexcept = default;
ValueMatch& ValueMatch::operator=(ValueMatch&&) noexcept = default;
ValueMatch::~ValueMatch() = default;

CompiledRule::CompiledRule() = default;
CompiledRule::CompiledRule(CompiledRule&&) noexcept = default;
CompiledRule& CompiledRule::operator=(CompiledRule&&) noexcept = default;
CompiledRule::~CompiledRule() = default;

std::string CompiledRule::IndexKey() const {
  switch (path_type) {
    case PathMatchType::kExact:
      return path_value;
    case PathMatchType::kPrefix:
      // Gateway API PathPrefix: a trailing '/' is ignored ("/abc/" matches "/abc").
      if (!path_value.empty() && path_value.back() == '/') {
        return path_value.substr(0, path_value.size() - 1);
      }
      return path_value;
    case PathMatchType::kRegex:
      return LiteralPrefix(path_value);
  }
  return path_value;
}

namespace {

using ::portico::sdk::FieldError;
using rapidjson::Value;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// String reads member `key`: absent/null -> `fallback`; not a string -> error.
StatusOr<std::string> String(const Value& obj, const char* key, const std::string& field,
                             std::string_view fallback = "") {
  const Value* v = json::Find(obj, key);
  if (v == nullptr || v->IsNull()) return std::string(fallback);
  if (!v->IsString()) return FieldError(field + "." + key, "must be a string");
  return std::string(v->GetString(), v->GetStringLength());
}

StatusOr<std::string> RequiredString(const Value& obj, const char* key, const std::string& field) {
  const Value* v = json::Find(obj, key);
  if (v == nullptr || !v->IsString()) return FieldError(field + "." + key, "must be a string");
  return std::string(v->GetString(), v->GetStringLength());
}

StatusOr<int64_t> Int(const Value& obj, const char* key, const std::string& field,
                      int64_t fallback = 0) {
  const Value* v = json::Find(obj, key);
  if (v == nullptr || v->IsNull()) return fallback;
  if (!v->IsInt64()) return FieldError(field + "." + key, "must be an integer");
  return v->GetInt64();
}

// Array returns member `key` as an array (nullptr when absent or null).
StatusOr<const Value*> Array(const Value& obj, const char* key, const std::string& field) {
  const Value* v = json::Find(obj, key);
  if (v == nullptr || v->IsNull()) return static_cast<const Value*>(nullptr);
  if (!v->IsArray()) return FieldError(field + "." + key, "must be an array");
  return v;
}

std::string At(const std::string& field, rapidjson::SizeType i) {
  return field + "[" + std::to_string(i) + "]";
}

PathModifierType ModifierType(std::string_view type) {
  if (type == "ReplaceFullPath") return PathModifierType::kReplaceFullPath;
  if (type == "ReplacePrefixMatch") return PathModifierType::kReplacePrefixMatch;
  return PathModifierType::kNone;
}

// ReadPathModifier reads "path": {type, value} into (type string, enum, value).
Status ReadPathModifier(const Value& obj, const std::string& field, std::string* type,
                        PathModifierType* modifier, std::string* value) {
  const Value* path = json::Find(obj, "path");
  if (path == nullptr || path->IsNull()) return OkStatus();
  if (!path->IsObject()) return FieldError(field + ".path", "must be an object");
  PORTICO_ASSIGN_OR_RETURN(*type, RequiredString(*path, "type", field + ".path"));
  *modifier = ModifierType(*type);
  if (*modifier == PathModifierType::kNone) {
    return FieldError(field + ".path.type", "\"" + *type + "\" is not supported");
  }
  PORTICO_ASSIGN_OR_RETURN(*value, String(*path, "value", field + ".path"));
  return OkStatus();
}

StatusOr<Redirect> ParseRedirect(const Value& r, const std::string& field) {
  if (!r.IsObject()) return FieldError(field, "must be an object");
  Redirect out;
  PORTICO_ASSIGN_OR_RETURN(out.scheme, String(r, "scheme", field));
  PORTICO_ASSIGN_OR_RETURN(out.hostname, String(r, "hostname", field));
  PORTICO_ASSIGN_OR_RETURN(int64_t port, Int(r, "port", field));
  if (port < 0 || port > 65535) return FieldError(field + ".port", "must be 1-65535");
  out.port = static_cast<int>(port);
  PORTICO_ASSIGN_OR_RETURN(int64_t status, Int(r, "statusCode", field, 302));
  if (status < 300 || status > 399) return FieldError(field + ".statusCode", "must be 3xx");
  out.status_code = static_cast<int>(status);
  PORTICO_RETURN_IF_ERROR(
      ReadPathModifier(r, field, &out.path_type, &out.path_modifier, &out.path_value));
  return out;
}

Status ReadPairs(const Value& f, const char* key, const std::string& field,
                 std::vector<std::pair<std::string, std::string>>* out) {
  PORTICO_ASSIGN_OR_RETURN(const Value* items, Array(f, key, field));
  for (rapidjson::SizeType i = 0; items != nullptr && i < items->Size(); ++i) {
    std::string sub = At(field + "." + key, i);
    if (!(*items)[i].IsObject()) return FieldError(sub, "must be an object");
    PORTICO_ASSIGN_OR_RETURN(std::string name, RequiredString((*items)[i], "name", sub));
    PORTICO_ASSIGN_OR_RETURN(std::string value, String((*items)[i], "value", sub));
    out->emplace_back(std::move(name), std::move(value));
  }
  return OkStatus();
}

// ReadStrings reads array member `key` of strings (absent: none).
Status ReadStrings(const Value& f, const char* key, const std::string& field,
                   std::vector<std::string>* out) {
  PORTICO_ASSIGN_OR_RETURN(const Value* items, Array(f, key, field));
  for (rapidjson::SizeType i = 0; items != nullptr && i < items->Size(); ++i) {
    if (!(*items)[i].IsString()) return FieldError(At(field + "." + key, i), "must be a string");
    out->emplace_back((*items)[i].GetString(), (*items)[i].GetStringLength());
  }
  return OkStatus();
}

// JoinList joins `items` with ", " (the list syntax of the Access-Control-* headers), leaving
// out "*" when `skip_wildcard`; *has_wildcard says whether "*" was there.
std::string JoinList(const std::vector<std::string>& items, bool skip_wildcard,
                     bool* has_wildcard) {
  std::string out;
  for (const std::string& item : items) {
    if (item == "*") {
      *has_wildcard = true;
      if (skip_wildcard) continue;
    }
    if (!out.empty()) out.append(", ");
    out.append(item);
  }
  return out;
}

// ParseCors reads {"builtin": "cors", allowOrigins, allowCredentials, allowMethods, allowHeaders,
// exposeHeaders, maxAge}.
StatusOr<std::shared_ptr<const CorsPolicy>> ParseCors(const Value& f, const std::string& field) {
  auto cors = std::make_shared<CorsPolicy>();
  std::vector<std::string> origins, methods, headers, expose;
  PORTICO_RETURN_IF_ERROR(ReadStrings(f, "allowOrigins", field, &origins));
  PORTICO_RETURN_IF_ERROR(ReadStrings(f, "allowMethods", field, &methods));
  PORTICO_RETURN_IF_ERROR(ReadStrings(f, "allowHeaders", field, &headers));
  PORTICO_RETURN_IF_ERROR(ReadStrings(f, "exposeHeaders", field, &expose));
  for (size_t i = 0; i < origins.size(); ++i) {
    if (origins[i] == "*") {
      cors->any_origin = true;
      continue;
    }
    std::optional<CorsOrigin> origin = ParseCorsOrigin(origins[i]);
    if (!origin) {
      return FieldError(At(field + ".allowOrigins", static_cast<rapidjson::SizeType>(i)),
                        "\"" + origins[i] + "\" is not an origin (scheme://host[:port])");
    }
    cors->origins.push_back(std::move(*origin));
  }
  if (cors->any_origin) cors->origins.clear();  // "*" allows them all
  cors->origins.shrink_to_fit();
  if (const Value* c = json::Find(f, "allowCredentials"); c != nullptr && !c->IsNull()) {
    if (!c->IsBool()) return FieldError(field + ".allowCredentials", "must be a boolean");
    cors->allow_credentials = c->GetBool();
  }
  cors->allow_methods = JoinList(methods, false, &cors->any_method);
  cors->allow_headers = JoinList(headers, false, &cors->any_header);
  cors->expose_headers = JoinList(expose, false, &cors->expose_any);
  cors->expose_named = JoinList(expose, true, &cors->expose_any);
  PORTICO_ASSIGN_OR_RETURN(int64_t max_age, Int(f, "maxAge", field, 5));
  if (max_age < 1 || max_age > INT32_MAX) {
    return FieldError(field + ".maxAge", "must be 1-2147483647 seconds");
  }
  cors->max_age = std::to_string(max_age);
  return std::shared_ptr<const CorsPolicy>(std::move(cors));
}

StatusOr<FilterSpec> ParseFilter(const Value& f, const std::string& field) {
  if (!f.IsObject()) return FieldError(field, "must be an object");
  FilterSpec out;
  if (const Value* binding = json::Find(f, "binding"); binding != nullptr) {
    if (!binding->IsString()) return FieldError(field + ".binding", "must be a string");
    out.kind = FilterKind::kBinding;
    out.binding.assign(binding->GetString(), binding->GetStringLength());
    return out;
  }
  PORTICO_ASSIGN_OR_RETURN(std::string builtin, RequiredString(f, "builtin", field));
  if (builtin == "requestHeaders" || builtin == "responseHeaders") {
    out.kind =
        builtin == "requestHeaders" ? FilterKind::kRequestHeaders : FilterKind::kResponseHeaders;
    PORTICO_RETURN_IF_ERROR(ReadPairs(f, "set", field, &out.headers.set));
    PORTICO_RETURN_IF_ERROR(ReadPairs(f, "add", field, &out.headers.add));
    PORTICO_ASSIGN_OR_RETURN(const Value* remove, Array(f, "remove", field));
    for (rapidjson::SizeType i = 0; remove != nullptr && i < remove->Size(); ++i) {
      if (!(*remove)[i].IsString()) return FieldError(At(field + ".remove", i), "must be a string");
      out.headers.remove.emplace_back((*remove)[i].GetString(), (*remove)[i].GetStringLength());
    }
  } else if (builtin == "urlRewrite") {
    out.kind = FilterKind::kUrlRewrite;
    if (const Value* h = json::Find(f, "hostname"); h != nullptr && !h->IsNull()) {
      if (!h->IsString()) return FieldError(field + ".hostname", "must be a string");
      out.rewrite.hostname.emplace(h->GetString(), h->GetStringLength());
    }
    std::string type;
    PORTICO_RETURN_IF_ERROR(
        ReadPathModifier(f, field, &type, &out.rewrite.path_type, &out.rewrite.path_value));
  } else if (builtin == "redirect") {
    out.kind = FilterKind::kRedirect;
    PORTICO_ASSIGN_OR_RETURN(out.redirect, ParseRedirect(f, field));
  } else if (builtin == "mirror") {
    out.kind = FilterKind::kMirror;
    PORTICO_ASSIGN_OR_RETURN(out.mirror_key, String(f, "key", field));
    if (const Value* p = json::Find(f, "percent"); p != nullptr && !p->IsNull()) {
      if (!p->IsNumber()) return FieldError(field + ".percent", "must be a number");
      out.mirror_percent = std::clamp(p->GetDouble(), 0.0, 100.0);
    }
  } else if (builtin == "cors") {
    out.kind = FilterKind::kCors;
    PORTICO_ASSIGN_OR_RETURN(out.cors, ParseCors(f, field));
  } else {
    return FieldError(field + ".builtin", "filter \"" + builtin + "\" is not supported");
  }
  return out;
}

// ParseFilters appends the built filters of `obj`.filters to `out`.
Status ParseFilters(const Value& obj, const std::string& field, filter::FilterList* out) {
  PORTICO_ASSIGN_OR_RETURN(const Value* filters, Array(obj, "filters", field));
  for (rapidjson::SizeType i = 0; filters != nullptr && i < filters->Size(); ++i) {
    PORTICO_ASSIGN_OR_RETURN(FilterSpec f, ParseFilter((*filters)[i], At(field + ".filters", i)));
    out->push_back(MakeBuiltinFilter(std::move(f)));
  }
  return OkStatus();
}

Status ParseAction(const Value& a, const std::string& field, RouteAction* out) {
  if (!a.IsObject()) return FieldError(field, "must be an object");
  PORTICO_ASSIGN_OR_RETURN(const Value* backends, Array(a, "backends", field));
  uint64_t total = 0;
  for (rapidjson::SizeType i = 0; backends != nullptr && i < backends->Size(); ++i) {
    const Value& b = (*backends)[i];
    std::string sub = At(field + ".backends", i);
    if (!b.IsObject()) return FieldError(sub, "must be an object");
    BackendRef ref;
    PORTICO_ASSIGN_OR_RETURN(ref.key, String(b, "key", sub));
    PORTICO_ASSIGN_OR_RETURN(int64_t weight, Int(b, "weight", sub, 1));
    if (weight < 0 || weight > 1000000) return FieldError(sub + ".weight", "must be 0-1000000");
    ref.weight = static_cast<uint32_t>(weight);
    PORTICO_RETURN_IF_ERROR(ParseFilters(b, sub, &ref.filters));
    total += ref.weight;
    out->backends.push_back(std::move(ref));
  }
  out->total_weight = static_cast<uint32_t>(total);
  if (const Value* r = json::Find(a, "redirect"); r != nullptr && !r->IsNull()) {
    FilterSpec redirect;
    redirect.kind = FilterKind::kRedirect;
    PORTICO_ASSIGN_OR_RETURN(redirect.redirect, ParseRedirect(*r, field + ".redirect"));
    out->filters.push_back(MakeBuiltinFilter(std::move(redirect)));
  }
  PORTICO_RETURN_IF_ERROR(ParseFilters(a, field, &out->filters));
  out->filters.shrink_to_fit();
  if (const Value* t = json::Find(a, "timeouts"); t != nullptr && !t->IsNull()) {
    if (!t->IsObject()) return FieldError(field + ".timeouts", "must be an object");
    PORTICO_ASSIGN_OR_RETURN(out->request_timeout_ms, Int(*t, "requestMs", field + ".timeouts"));
    PORTICO_ASSIGN_OR_RETURN(out->backend_request_timeout_ms,
                             Int(*t, "backendRequestMs", field + ".timeouts"));
  }
  if (const Value* r = json::Find(a, "retry"); r != nullptr && !r->IsNull()) {
    const std::string sub = field + ".retry";
    if (!r->IsObject()) return FieldError(sub, "must be an object");
    auto retry = std::make_shared<RetryPolicy>();
    PORTICO_ASSIGN_OR_RETURN(const Value* codes, Array(*r, "codes", sub));
    for (rapidjson::SizeType i = 0; codes != nullptr && i < codes->Size(); ++i) {
      const Value& c = (*codes)[i];
      if (!c.IsInt() || c.GetInt() < 100 || c.GetInt() > 599) {
        return FieldError(At(sub + ".codes", i), "must be an HTTP status code");
      }
      retry->codes.push_back(static_cast<uint16_t>(c.GetInt()));
    }
    PORTICO_ASSIGN_OR_RETURN(int64_t attempts, Int(*r, "attempts", sub));
    PORTICO_ASSIGN_OR_RETURN(int64_t backoff, Int(*r, "backoffMs", sub));
    if (attempts < 0 || attempts > 100) return FieldError(sub + ".attempts", "must be 0-100");
    if (backoff < 0 || backoff > 3'600'000) return FieldError(sub + ".backoffMs", "must be 0-1h");
    retry->attempts = static_cast<uint32_t>(attempts);
    retry->backoff_ms = static_cast<uint32_t>(backoff);
    out->retry = std::move(retry);
  }
  out->backends.shrink_to_fit();
  return OkStatus();
}

StatusOr<std::vector<ValueMatch>> ParseValueMatches(const Value& match, const char* key,
                                                    const std::string& field, bool lower) {
  std::vector<ValueMatch> out;
  PORTICO_ASSIGN_OR_RETURN(const Value* items, Array(match, key, field));
  for (rapidjson::SizeType i = 0; items != nullptr && i < items->Size(); ++i) {
    const Value& item = (*items)[i];
    std::string sub = At(field + "." + key, i);
    if (!item.IsObject()) return FieldError(sub, "must be an object");
    ValueMatch m;
    PORTICO_ASSIGN_OR_RETURN(m.name, RequiredString(item, "name", sub));
    if (lower) m.name = Lower(m.name);
    PORTICO_ASSIGN_OR_RETURN(std::string type, String(item, "type", sub, "Exact"));
    PORTICO_ASSIGN_OR_RETURN(m.value, RequiredString(item, "value", sub));
    if (type == "Regex") {
      PORTICO_RETURN_IF_ERROR(LazyRegex::Check(m.value, sub + ".value"));
      m.is_regex = true;
    } else if (type != "Exact") {
      return FieldError(sub + ".type", "\"" + type + "\" is not supported");
    }
    out.push_back(std::move(m));
  }
  return out;
}

Status ParseMatch(const Value& m, const std::string& field, CompiledRule* rule) {
  if (!m.IsObject()) return FieldError(field, "must be an object");
  std::string type = "Prefix";
  rule->path_value = "/";
  if (const Value* path = json::Find(m, "path"); path != nullptr && !path->IsNull()) {
    if (!path->IsObject()) return FieldError(field + ".path", "must be an object");
    PORTICO_ASSIGN_OR_RETURN(type, String(*path, "type", field + ".path", "Prefix"));
    PORTICO_ASSIGN_OR_RETURN(rule->path_value, String(*path, "value", field + ".path", "/"));
  }
  if (type == "Exact") {
    rule->path_type = PathMatchType::kExact;
  } else if (type == "Prefix") {
    rule->path_type = PathMatchType::kPrefix;
  } else if (type == "Regex") {
    rule->path_type = PathMatchType::kRegex;
    PORTICO_RETURN_IF_ERROR(LazyRegex::Check(rule->path_value, field + ".path.value"));
  } else {
    return FieldError(field + ".path.type", "\"" + type + "\" is not supported");
  }
  PORTICO_ASSIGN_OR_RETURN(rule->method, String(m, "method", field));
  PORTICO_ASSIGN_OR_RETURN(rule->headers, ParseValueMatches(m, "headers", field, true));
  PORTICO_ASSIGN_OR_RETURN(rule->query, ParseValueMatches(m, "query", field, false));
  return OkStatus();
}

StatusOr<std::string> RefString(const Value& obj, const char* key, const std::string& field) {
  const Value* ref = json::Find(obj, key);
  if (ref == nullptr || !ref->IsObject()) return FieldError(field + "." + key, "is required");
  PORTICO_ASSIGN_OR_RETURN(std::string ns, RequiredString(*ref, "namespace", field + "." + key));
  PORTICO_ASSIGN_OR_RETURN(std::string name, RequiredString(*ref, "name", field + "." + key));
  return ns + "/" + name;
}

// Intern returns the process-wide copy of `s` (Build runs on one thread at a time, but tests
// may build tables on several).
const std::string* Intern(std::string s) {
  static std::mutex mu;
  static auto* strings = new std::set<std::string>();  // never freed, like the libraries
  std::lock_guard<std::mutex> lock(mu);
  return &*strings->insert(std::move(s)).first;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decode percent-decodes `in` into `buf` (capacity `cap`); returns `in` itself when it holds no
// escape, nullopt when the decoded text does not fit.
std::optional<std::string_view> Decode(std::string_view in, char* buf, size_t cap) {
  if (in.find('%') == std::string_view::npos) return in;
  size_t n = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    if (n == cap) return std::nullopt;
    int hi = 0, lo = 0;
    if (in[i] == '%' && i + 2 < in.size() && (hi = HexValue(in[i + 1])) >= 0 &&
        (lo = HexValue(in[i + 2])) >= 0) {
      buf[n++] = static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      buf[n++] = in[i];
    }
  }
  return std::string_view(buf, n);
}

}  // namespace

bool QueryParamMatches(std::string_view query, const ValueMatch& m) {
  constexpr size_t kBuf = 1024;
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string_view raw_name = pair.substr(0, eq);
    std::string_view raw_value =
        eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    char name_buf[kBuf];
    std::optional<std::string_view> name = Decode(raw_name, name_buf, kBuf);
    if (!name || *name != m.name) continue;
    // The first parameter of that name decides.
    char value_buf[kBuf];
    std::optional<std::string_view> value = Decode(raw_value, value_buf, kBuf);
    if (!value) value = raw_value;  // too long to decode here: compared as sent
    return m.is_regex ? m.regex.Matches(*value, m.value) : *value == m.value;
  }
  return false;
}

bool RuleMatches(const CompiledRule& rule, const RequestView& request) {
  if (!rule.method.empty() && rule.method != request.method) return false;
  for (const ValueMatch& h : rule.headers) {
    if (request.headers == nullptr) return false;
    std::optional<std::string_view> value = request.headers->Get(h.name);
    if (!value) return false;
    if (h.is_regex ? !h.regex.Matches(*value, h.value) : *value != h.value) return false;
  }
  for (const ValueMatch& q : rule.query) {
    if (!QueryParamMatches(request.query, q)) return false;
  }
  if (rule.path_type == PathMatchType::kRegex &&
      !rule.path_regex.Matches(request.path, rule.path_value)) {
    return false;
  }
  return true;
}

StatusOr<std::shared_ptr<const CompiledRoute>> CompileRoute(const std::string& id,
                                                            std::string_view json,
                                                            const Digest128& digest) {
  auto route = std::make_shared<CompiledRoute>();
  PORTICO_ASSIGN_OR_RETURN(rapidjson::Document doc, json::Parse(json, "route_rules.v1 " + id));
  route->digest = digest;
  if (!doc.IsObject()) return FieldError(id, "must be an object");
  const Value* ref = json::Find(doc, "route");
  if (ref == nullptr || !ref->IsObject()) return FieldError("route", "is required");
  PORTICO_ASSIGN_OR_RETURN(std::string group, String(*ref, "group", "route"));
  PORTICO_ASSIGN_OR_RETURN(std::string kind, RequiredString(*ref, "kind", "route"));
  route->group_kind = Intern(group + "/" + kind);
  PORTICO_ASSIGN_OR_RETURN(std::string route_key, RefString(doc, "route", ""));

  PORTICO_ASSIGN_OR_RETURN(const Value* parents, Array(doc, "parents", "route"));
  for (rapidjson::SizeType i = 0; parents != nullptr && i < parents->Size(); ++i) {
    const Value& p = (*parents)[i];
    std::string field = At("parents", i);
    if (!p.IsObject()) return FieldError(field, "must be an object");
    ParentRef parent;
    PORTICO_ASSIGN_OR_RETURN(std::string gateway, RefString(p, "gateway", field));
    PORTICO_ASSIGN_OR_RETURN(std::string listener, RequiredString(p, "listener", field));
    parent.listener = gateway + "/" + listener;
    PORTICO_ASSIGN_OR_RETURN(const Value* hostnames, Array(p, "hostnames", field));
    for (rapidjson::SizeType j = 0; hostnames != nullptr && j < hostnames->Size(); ++j) {
      const Value& h = (*hostnames)[j];
      if (!h.IsString() || h.GetStringLength() == 0) {
        return FieldError(At(field + ".hostnames", j), "must be a non-empty string");
      }
      std::string host = Lower(std::string_view(h.GetString(), h.GetStringLength()));
      if (std::find(parent.hostnames.begin(), parent.hostnames.end(), host) ==
          parent.hostnames.end()) {
        parent.hostnames.push_back(std::move(host));
      }
    }
    parent.hostnames.shrink_to_fit();
    route->parents.push_back(std::move(parent));
  }

  PORTICO_ASSIGN_OR_RETURN(const Value* rules, Array(doc, "rules", "route"));
  for (rapidjson::SizeType i = 0; rules != nullptr && i < rules->Size(); ++i) {
    const Value& r = (*rules)[i];
    std::string field = At("rules", i);
    if (!r.IsObject()) return FieldError(field, "must be an object");
    CompiledRule rule;
    PORTICO_ASSIGN_OR_RETURN(rule.action.rule_id, RequiredString(r, "id", field));
    PORTICO_ASSIGN_OR_RETURN(rule.action.rule_name, String(r, "name", field));
    PORTICO_ASSIGN_OR_RETURN(rule.precedence, RequiredString(r, "precedence", field));
    const Value* match = json::Find(r, "match");
    static const Value kEmpty(rapidjson::kObjectType);
    PORTICO_RETURN_IF_ERROR(ParseMatch(match != nullptr && !match->IsNull() ? *match : kEmpty,
                                       field + ".match", &rule));
    const Value* action = json::Find(r, "action");
    if (action == nullptr) return FieldError(field + ".action", "is required");
    PORTICO_RETURN_IF_ERROR(ParseAction(*action, field + ".action", &rule.action));
    rule.action.route_key = route_key;
    if (rule.path_type == PathMatchType::kPrefix) rule.action.matched_prefix = rule.path_value;
    route->rules.push_back(std::move(rule));
  }
  route->parents.shrink_to_fit();
  route->rules.shrink_to_fit();
  return std::shared_ptr<const CompiledRoute>(std::move(route));
}

}  // namespace portico::core::routing::internal

namespace portico::core::routing {

const BackendRef* RouteAction::PickBackend(uint64_t random) const {
  if (total_weight == 0) return nullptr;
  uint32_t point = static_cast<uint32_t>(random % total_weight);
  for (const BackendRef& b : backends) {
    if (point < b.weight) return &b;
    point -= b.weight;
  }
  return nullptr;  // unreachable while total_weight is the sum of the weights
}

}  // namespace portico::core::routing
