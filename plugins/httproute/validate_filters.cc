// validate_filters.cc: filter rules of validate.h. Comments quote the CRD's CEL messages.
#include <map>
#include <set>

#include "portico/sdk/fields.h"
#include "portico/sdk/names.h"
#include "validate.h"

namespace portico::plugins::httproute {
namespace {

using ::portico::sdk::FieldError;
using ::portico::sdk::Quoted;
std::string At(const std::string& field, size_t i) { return field + "[" + std::to_string(i) + "]"; }

const rapidjson::Value* Array(const rapidjson::Value& v, const char* name) {
  const rapidjson::Value* a = json::Find(v, name);
  return a != nullptr && a->IsArray() ? a : nullptr;
}

// kFilterFields maps each filter type to the member that configures it.
const std::map<std::string, std::string>& FilterFields() {
  static const auto* fields = new std::map<std::string, std::string>{
      {"RequestHeaderModifier", "requestHeaderModifier"},
      {"ResponseHeaderModifier", "responseHeaderModifier"},
      {"RequestMirror", "requestMirror"},
      {"RequestRedirect", "requestRedirect"},
      {"URLRewrite", "urlRewrite"},
      {"ExtensionRef", "extensionRef"},
      {"CORS", "cors"},
      {"ExternalAuth", "externalAuth"},
  };
  return *fields;
}

Status CheckHeaderModifier(const rapidjson::Value& m, const std::string& field) {
  for (const char* list : {"set", "add"}) {
    const rapidjson::Value* items = Array(m, list);
    if (items == nullptr) continue;
    std::set<std::string> seen;
    for (rapidjson::SizeType i = 0; i < items->Size(); ++i) {
      std::string sub = At(field + "." + list, i);
      std::string name = json::GetString((*items)[i], "name");
      if (!sdk::names::IsHeaderName(name)) {
        return FieldError(sub + ".name", Quoted(name) + " is not a valid header name");
      }
      if (!seen.insert(name).second) {
        return FieldError(sub + ".name", "duplicate header name " + Quoted(name));
      }
      const rapidjson::Value* value = json::Find((*items)[i], "value");
      if (value == nullptr || !value->IsString()) return FieldError(sub + ".value", "is required");
    }
  }
  if (const rapidjson::Value* remove = Array(m, "remove")) {
    std::set<std::string> seen;
    for (rapidjson::SizeType i = 0; i < remove->Size(); ++i) {
      const rapidjson::Value& v = (*remove)[i];
      std::string name = v.IsString() ? v.GetString() : "";
      if (!sdk::names::IsHeaderName(name)) {
        return FieldError(At(field + ".remove", i), Quoted(name) + " is not a valid header name");
      }
      if (!seen.insert(name).second) {
        return FieldError(At(field + ".remove", i), "duplicate header name " + Quoted(name));
      }
    }
  }
  return OkStatus();
}

// CheckPathModifier mirrors the CEL rules of HTTPPathModifier.
Status CheckPathModifier(const rapidjson::Value& path, const std::string& field) {
  std::string type = json::GetString(path, "type");
  bool full = json::Find(path, "replaceFullPath") != nullptr;
  bool prefix = json::Find(path, "replacePrefixMatch") != nullptr;
  if (type != "ReplaceFullPath" && type != "ReplacePrefixMatch") {
    return FieldError(field + ".type",
                      Quoted(type) + " is not ReplaceFullPath or ReplacePrefixMatch");
  }
  if (type == "ReplaceFullPath" && !full) {
    return FieldError(field + ".replaceFullPath",
                      "replaceFullPath must be specified when type is set to 'ReplaceFullPath'");
  }
  if (full && type != "ReplaceFullPath") {
    return FieldError(field + ".type",
                      "type must be 'ReplaceFullPath' when replaceFullPath is set");
  }
  if (type == "ReplacePrefixMatch" && !prefix) {
    return FieldError(
        field + ".replacePrefixMatch",
        "replacePrefixMatch must be specified when type is set to 'ReplacePrefixMatch'");
  }
  if (prefix && type != "ReplacePrefixMatch") {
    return FieldError(field + ".type",
                      "type must be 'ReplacePrefixMatch' when replacePrefixMatch is set");
  }
  return OkStatus();
}

Status CheckPreciseHostname(const rapidjson::Value& config, const std::string& field) {
  const rapidjson::Value* h = json::Find(config, "hostname");
  if (h == nullptr) return OkStatus();
  std::string value = h->IsString() ? h->GetString() : "";
  if (!sdk::names::IsHostname(value, /*allow_wildcard=*/false)) {
    return FieldError(field + ".hostname",
                      Quoted(value) + " is not a valid hostname (no wildcards)");
  }
  return OkStatus();
}

Status CheckRedirect(const rapidjson::Value& r, const std::string& field) {
  std::string scheme = json::GetString(r, "scheme", "http");
  if (scheme != "http" && scheme != "https") {
    return FieldError(field + ".scheme", Quoted(scheme) + " is not http or https");
  }
  PORTICO_RETURN_IF_ERROR(CheckPreciseHostname(r, field));
  if (const rapidjson::Value* port = json::Find(r, "port");
      port != nullptr && (!port->IsInt64() || port->GetInt64() < 1 || port->GetInt64() > 65535)) {
    return FieldError(field + ".port", "must be 1-65535");
  }
  if (const rapidjson::Value* code = json::Find(r, "statusCode")) {
    static const std::set<int64_t> kCodes = {301, 302, 303, 307, 308};
    if (!code->IsInt64() || kCodes.count(code->GetInt64()) == 0) {
      return FieldError(field + ".statusCode", "must be 301, 302, 303, 307 or 308");
    }
  }
  if (const rapidjson::Value* path = json::Find(r, "path")) {
    PORTICO_RETURN_IF_ERROR(CheckPathModifier(*path, field + ".path"));
  }
  return OkStatus();
}

Status CheckMirror(const rapidjson::Value& m, const std::string& field) {
  const rapidjson::Value* ref = json::Find(m, "backendRef");
  if (ref == nullptr) return FieldError(field + ".backendRef", "is required");
  PORTICO_RETURN_IF_ERROR(ValidateBackendRef(*ref, field + ".backendRef"));
  const rapidjson::Value* percent = json::Find(m, "percent");
  const rapidjson::Value* fraction = json::Find(m, "fraction");
  // CEL: Only one of percent or fraction may be specified in HTTPRequestMirrorFilter.
  if (percent != nullptr && fraction != nullptr) {
    return FieldError(field, "only one of percent or fraction may be specified");
  }
  if (percent != nullptr &&
      (!percent->IsInt64() || percent->GetInt64() < 0 || percent->GetInt64() > 100)) {
    return FieldError(field + ".percent", "must be 0-100");
  }
  if (fraction != nullptr) {
    int64_t numerator = json::GetInt(*fraction, "numerator").value_or(-1);
    int64_t denominator = json::GetInt(*fraction, "denominator").value_or(100);
    if (numerator < 0) return FieldError(field + ".fraction.numerator", "must be at least 0");
    if (denominator < 1) return FieldError(field + ".fraction.denominator", "must be at least 1");
    // CEL: numerator must be less than or equal to denominator.
    if (numerator > denominator) {
      return FieldError(field + ".fraction", "numerator must be less than or equal to denominator");
    }
  }
  return OkStatus();
}

Status CheckExtensionRef(const rapidjson::Value& e, const std::string& field) {
  std::string group = json::GetString(e, "group");
  std::string kind = json::GetString(e, "kind");
  std::string name = json::GetString(e, "name");
  if (!sdk::names::IsGroup(group)) {
    return FieldError(field + ".group", Quoted(group) + " is not a valid group");
  }
  if (!sdk::names::IsKind(kind)) {
    return FieldError(field + ".kind", Quoted(kind) + " is not a valid kind");
  }
  if (name.empty()) return FieldError(field + ".name", "is required");
  return OkStatus();
}

// IsCorsOrigin: the CRD's CORSOrigin pattern, "scheme://host[:port]" with a port of 1-65535
// (the pattern allows five digits; the field's documentation limits the range).
bool IsCorsOrigin(std::string_view s) {
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  const size_t sep = s.find("://");
  if (sep == std::string_view::npos || sep < 2 || s.size() > 253) return false;
  if (!alpha(s[0])) return false;
  for (char c : s.substr(1, sep - 1)) {
    if (!alpha(c) && !digit(c) && c != '+' && c != '.' && c != '-') return false;
  }
  std::string_view rest = s.substr(sep + 3);
  const size_t colon = rest.find(':');
  std::string_view host = rest.substr(0, colon);
  if (host.empty() || host.find_first_of("/?#") != std::string_view::npos) return false;
  if (colon == std::string_view::npos) return true;
  std::string_view port = rest.substr(colon + 1);
  if (port.empty() || port.size() > 5) return false;
  int64_t value = 0;
  for (char c : port) {
    if (!digit(c)) return false;
    value = value * 10 + (c - '0');
  }
  return value >= 1 && value <= 65535;
}

// CheckCorsList checks list member `list` of an HTTPCORSFilter: at most `max` items each `valid`,
// no duplicates (the CRD's listType=set), and, when `lone_wildcard`, "*" only alone.
Status CheckCorsList(const rapidjson::Value& cors, const char* list, const std::string& field,
                     size_t max, bool (*valid)(std::string_view), const char* what,
                     bool lone_wildcard) {
  const rapidjson::Value* items = json::Find(cors, list);
  if (items == nullptr || items->IsNull()) return OkStatus();
  const std::string sub = field + "." + list;
  if (!items->IsArray()) return FieldError(sub, "must be an array");
  if (items->Size() > max) return FieldError(sub, "must have at most " + std::to_string(max));
  std::set<std::string> seen;
  for (rapidjson::SizeType i = 0; i < items->Size(); ++i) {
    const rapidjson::Value& v = (*items)[i];
    std::string item = v.IsString() ? std::string(v.GetString(), v.GetStringLength()) : "";
    if (!valid(item)) return FieldError(At(sub, i), Quoted(item) + " is not " + what);
    if (!seen.insert(item).second) return FieldError(At(sub, i), "duplicate value " + Quoted(item));
  }
  // CEL: AllowOrigins (AllowMethods) cannot contain '*' alongside other origins (methods).
  if (lone_wildcard && seen.count("*") > 0 && seen.size() > 1) {
    return FieldError(sub, std::string("cannot contain '*' alongside other ") +
                               (std::string_view(list) == "allowOrigins" ? "origins" : "methods"));
  }
  return OkStatus();
}

Status CheckCors(const rapidjson::Value& cors, const std::string& field) {
  PORTICO_RETURN_IF_ERROR(CheckCorsList(
      cors, "allowOrigins", field, 64,
      [](std::string_view s) { return s == "*" || IsCorsOrigin(s); },
      "\"*\" or an origin scheme://host[:port]", /*lone_wildcard=*/true));
  PORTICO_RETURN_IF_ERROR(CheckCorsList(
      cors, "allowMethods", field, 9,
      [](std::string_view s) {
        static const std::set<std::string, std::less<>> kMethods = {
            "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "*"};
        return kMethods.count(s) > 0;
      },
      "an HTTP method or \"*\"", /*lone_wildcard=*/true));
  for (const char* list : {"allowHeaders", "exposeHeaders"}) {
    PORTICO_RETURN_IF_ERROR(CheckCorsList(
        cors, list, field, 64, [](std::string_view s) { return sdk::names::IsHeaderName(s); },
        "a valid header name", /*lone_wildcard=*/false));
  }
  if (const rapidjson::Value* c = json::Find(cors, "allowCredentials");
      c != nullptr && !c->IsNull() && !c->IsBool()) {
    return FieldError(field + ".allowCredentials", "must be a boolean");
  }
  if (const rapidjson::Value* age = json::Find(cors, "maxAge");
      age != nullptr && (!age->IsInt64() || age->GetInt64() < 1 || age->GetInt64() > INT32_MAX)) {
    return FieldError(field + ".maxAge", "must be at least 1 (seconds)");
  }
  return OkStatus();
}

// UsesReplacePrefixMatch: a RequestRedirect or URLRewrite filter of `type` rewriting the prefix.
bool UsesReplacePrefixMatch(const rapidjson::Value& filter, const char* member) {
  const rapidjson::Value* config = json::Find(filter, member);
  const rapidjson::Value* path = config != nullptr ? json::Find(*config, "path") : nullptr;
  return path != nullptr && json::GetString(*path, "type") == "ReplacePrefixMatch" &&
         json::Find(*path, "replacePrefixMatch") != nullptr;
}

// HasSinglePathPrefixMatch: after defaulting, the rule has exactly one match whose path is a
// PathPrefix (no matches default to one PathPrefix "/"; a match without path is PathPrefix "/").
bool HasSinglePathPrefixMatch(const rapidjson::Value& rule) {
  const rapidjson::Value* matches = Array(rule, "matches");
  if (matches == nullptr || matches->Empty()) return true;
  if (matches->Size() != 1) return false;
  const rapidjson::Value* path = json::Find((*matches)[0], "path");
  return path == nullptr || json::GetString(*path, "type", "PathPrefix") == "PathPrefix";
}

}  // namespace

Status ValidateFilters(const rapidjson::Value& filters, const rapidjson::Value& rule,
                       const std::string& field, bool backend_level) {
  std::map<std::string, size_t> count;
  for (rapidjson::SizeType i = 0; i < filters.Size(); ++i) {
    const rapidjson::Value& f = filters[i];
    std::string sub = At(field, i);
    std::string type = json::GetString(f, "type");
    auto it = FilterFields().find(type);
    if (it == FilterFields().end()) {
      return FieldError(sub + ".type", "unsupported filter type " + Quoted(type));
    }
    // CEL: filter.<member> must be nil if the filter.type is not <Type>, and must be
    // specified for <Type> filter.type.
    for (const auto& [other_type, member] : FilterFields()) {
      bool present = json::Find(f, member) != nullptr;
      if (other_type == type && !present) {
        return FieldError(sub + "." + member, "must be specified for " + type + " filter.type");
      }
      if (other_type != type && present) {
        return FieldError(sub + "." + member,
                          "must be nil if the filter.type is not " + other_type);
      }
    }
    const rapidjson::Value& config = *json::Find(f, it->second);
    std::string config_field = sub + "." + it->second;
    if (type == "RequestHeaderModifier" || type == "ResponseHeaderModifier") {
      PORTICO_RETURN_IF_ERROR(CheckHeaderModifier(config, config_field));
    } else if (type == "RequestRedirect") {
      PORTICO_RETURN_IF_ERROR(CheckRedirect(config, config_field));
    } else if (type == "URLRewrite") {
      PORTICO_RETURN_IF_ERROR(CheckPreciseHostname(config, config_field));
      if (const rapidjson::Value* path = json::Find(config, "path")) {
        PORTICO_RETURN_IF_ERROR(CheckPathModifier(*path, config_field + ".path"));
      }
    } else if (type == "RequestMirror") {
      PORTICO_RETURN_IF_ERROR(CheckMirror(config, config_field));
    } else if (type == "ExtensionRef") {
      PORTICO_RETURN_IF_ERROR(CheckExtensionRef(config, config_field));
    } else if (type == "CORS") {
      PORTICO_RETURN_IF_ERROR(CheckCors(config, config_field));
    }
    // CEL: When using RequestRedirect (URLRewrite) filter with path.replacePrefixMatch, exactly
    // one PathPrefix match must be specified.
    for (const char* member : {"requestRedirect", "urlRewrite"}) {
      if (UsesReplacePrefixMatch(f, member) && !HasSinglePathPrefixMatch(rule)) {
        return FieldError(config_field + ".path.replacePrefixMatch",
                          std::string("When using ") +
                              (member[0] == 'r' ? "RequestRedirect" : "URLRewrite") +
                              " filter with path.replacePrefixMatch, exactly one PathPrefix match "
                              "must be specified");
      }
    }
    size_t n = ++count[type];
    // CEL: <Type> filter cannot be repeated.
    if (n > 1 && (type == "RequestHeaderModifier" || type == "ResponseHeaderModifier" ||
                  type == "RequestRedirect" || type == "URLRewrite" || type == "CORS")) {
      return FieldError(sub, type + " filter cannot be repeated");
    }
  }
  // CEL: May specify either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite,
  // but not both.
  if (count["RequestRedirect"] > 0 && count["URLRewrite"] > 0) {
    return FieldError(field, "may specify either RequestRedirect or URLRewrite, but not both");
  }
  // CEL: RequestRedirect filter must not be used together with backendRefs.
  const rapidjson::Value* backends = Array(rule, "backendRefs");
  if (!backend_level && count["RequestRedirect"] > 0 && backends != nullptr && !backends->Empty()) {
    return FieldError(field, "RequestRedirect filter must not be used together with backendRefs");
  }
  return OkStatus();
}

}  // namespace portico::plugins::httproute
