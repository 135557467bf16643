// validate.cc: route-level rules (parents, hostnames, rules, matches, backends, timeouts); the
// filter rules are in validate_filters.cc. Comments quote the CRD's CEL messages they mirror.
#include "validate.h"

#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "portico/sdk/fields.h"
#include "portico/sdk/names.h"

namespace portico::plugins::httproute {
namespace {

using ::portico::sdk::FieldError;
using ::portico::sdk::Quoted;
constexpr size_t kMaxTotalMatches = 128;
constexpr int64_t kMaxWeight = 1000000;

std::string At(const std::string& field, size_t i) { return field + "[" + std::to_string(i) + "]"; }

const rapidjson::Value* Array(const rapidjson::Value& v, const char* name) {
  const rapidjson::Value* a = json::Find(v, name);
  return a != nullptr && a->IsArray() ? a : nullptr;
}

Status CheckHostnames(const rapidjson::Value& spec) {
  const rapidjson::Value* hostnames = Array(spec, "hostnames");
  if (hostnames == nullptr) return OkStatus();
  for (rapidjson::SizeType i = 0; i < hostnames->Size(); ++i) {
    const rapidjson::Value& h = (*hostnames)[i];
    std::string value = h.IsString() ? h.GetString() : "";
    if (!sdk::names::IsHostname(value, /*allow_wildcard=*/true)) {
      return FieldError(At("spec.hostnames", i), Quoted(value) + " is not a valid hostname");
    }
  }
  return OkStatus();
}

// ParentKey identifies "the same parent" as the CEL rules do: group, kind and name after
// defaulting, and namespace with "" equal to unset.
using ParentKey = std::tuple<std::string, std::string, std::string, std::string>;

Status CheckParentRefs(const rapidjson::Value& spec) {
  const rapidjson::Value* parents = Array(spec, "parentRefs");
  if (parents == nullptr) return OkStatus();
  std::map<ParentKey, std::vector<size_t>> by_parent;
  for (rapidjson::SizeType i = 0; i < parents->Size(); ++i) {
    const rapidjson::Value& p = (*parents)[i];
    std::string field = At("spec.parentRefs", i);
    std::string name = json::GetString(p, "name");
    if (!sdk::names::IsDnsSubdomain(name)) {
      return FieldError(field + ".name", Quoted(name) + " is not a valid name");
    }
    std::string group = json::GetString(p, "group", kGroup);
    std::string kind = json::GetString(p, "kind", "Gateway");
    if (!sdk::names::IsGroup(group)) {
      return FieldError(field + ".group", Quoted(group) + " is not a valid group");
    }
    if (!sdk::names::IsKind(kind)) {
      return FieldError(field + ".kind", Quoted(kind) + " is not a valid kind");
    }
    std::string ns = json::GetString(p, "namespace");
    if (!ns.empty() && !sdk::names::IsDnsLabel(ns)) {
      return FieldError(field + ".namespace", Quoted(ns) + " is not a valid namespace");
    }
    std::string section = json::GetString(p, "sectionName");
    if (!section.empty() && !sdk::names::IsDnsSubdomain(section)) {
      return FieldError(field + ".sectionName", Quoted(section) + " is not a valid section name");
    }
    if (const rapidjson::Value* port = json::Find(p, "port");
        port != nullptr && (!port->IsInt64() || port->GetInt64() < 1 || port->GetInt64() > 65535)) {
      return FieldError(field + ".port", "must be 1-65535");
    }
    by_parent[{group, kind, ns, name}].push_back(i);
  }
  for (const auto& [key, indexes] : by_parent) {
    if (indexes.size() < 2) continue;
    std::set<std::pair<std::string, int64_t>> seen;
    bool first_has_section = false, first_has_port = false;
    for (size_t n = 0; n < indexes.size(); ++n) {
      const rapidjson::Value& p = (*parents)[static_cast<rapidjson::SizeType>(indexes[n])];
      std::string section = json::GetString(p, "sectionName");
      int64_t port = json::GetInt(p, "port").value_or(0);
      std::string field = At("spec.parentRefs", indexes[n]);
      if (n == 0) {
        first_has_section = !section.empty();
        first_has_port = port != 0;
      }
      // CEL: sectionName or port must be specified when parentRefs includes 2 or more
      // references to the same parent (and consistently so).
      if ((section.empty() && port == 0) || first_has_section != !section.empty() ||
          first_has_port != (port != 0)) {
        return FieldError(field,
                          "sectionName or port must be specified when parentRefs includes 2 or "
                          "more references to the same parent");
      }
      // CEL: sectionName or port must be unique when parentRefs includes 2 or more references
      // to the same parent.
      if (!seen.emplace(section, port).second) {
        return FieldError(field,
                          "sectionName or port must be unique when parentRefs includes 2 or "
                          "more references to the same parent");
      }
    }
  }
  return OkStatus();
}

// CheckPathValue mirrors the CEL rules of HTTPPathMatch for Exact and PathPrefix.
Status CheckPathValue(std::string_view value, const std::string& type, const std::string& field) {
  auto fail = [&](const std::string& what) {
    return FieldError(field, what + " when type is " + type);
  };
  if (value.empty() || value.front() != '/') {
    return fail("must be an absolute path starting with \"/\"");
  }
  if (value.find("//") != std::string_view::npos) return fail("must not contain \"//\"");
  if (value.find("/./") != std::string_view::npos) return fail("must not contain \"/./\"");
  if (value.find("/../") != std::string_view::npos) return fail("must not contain \"/../\"");
  if (value.find("%2f") != std::string_view::npos || value.find("%2F") != std::string_view::npos) {
    return fail("must not contain \"%2f\" or \"%2F\"");
  }
  if (value.find('#') != std::string_view::npos) return fail("must not contain \"#\"");
  auto ends_with = [&](std::string_view suffix) {
    return value.size() >= suffix.size() && value.substr(value.size() - suffix.size()) == suffix;
  };
  if (ends_with("/..")) return fail("must not end with \"/..\"");
  if (ends_with("/.")) return fail("must not end with \"/.\"");
  for (size_t i = 0; i < value.size(); ++i) {
    char c = value[i];
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 std::string_view("-/._~!$&'()*+,;=:@").find(c) != std::string_view::npos;
    if (plain) continue;
    auto hex = [](char h) {
      return (h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F');
    };
    if (c == '%' && i + 2 < value.size() && hex(value[i + 1]) && hex(value[i + 2])) {
      i += 2;
      continue;
    }
    return fail(
        "must only contain valid characters (matching "
        "^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$)");
  }
  return OkStatus();
}

// CheckNamedMatches checks headers or queryParams: valid, unique names (listType=map) and types.
Status CheckNamedMatches(const rapidjson::Value& match, const char* list,
                         const std::string& field) {
  const rapidjson::Value* items = Array(match, list);
  if (items == nullptr) return OkStatus();
  std::set<std::string> names_seen;
  for (rapidjson::SizeType i = 0; i < items->Size(); ++i) {
    const rapidjson::Value& h = (*items)[i];
    std::string sub = At(field + "." + list, i);
    std::string name = json::GetString(h, "name");
    if (!sdk::names::IsHeaderName(name)) {
      return FieldError(sub + ".name", Quoted(name) + " is not a valid name");
    }
    if (!names_seen.insert(name).second) {
      return FieldError(sub + ".name", "duplicate name " + Quoted(name));
    }
    std::string type = json::GetString(h, "type", "Exact");
    if (type != "Exact" && type != "RegularExpression") {
      return FieldError(sub + ".type", Quoted(type) + " is not Exact or RegularExpression");
    }
    const rapidjson::Value* value = json::Find(h, "value");
    if (value == nullptr || !value->IsString()) return FieldError(sub + ".value", "is required");
    if (type == "RegularExpression" && value->GetStringLength() == 0) {
      return FieldError(sub + ".value", "must not be empty for type RegularExpression");
    }
  }
  return OkStatus();
}

Status CheckMatch(const rapidjson::Value& match, const std::string& field) {
  if (!match.IsObject()) return FieldError(field, "must be an object");
  if (const rapidjson::Value* path = json::Find(match, "path")) {
    std::string type = json::GetString(*path, "type", "PathPrefix");
    std::string value = json::GetString(*path, "value", "/");
    if (type == "Exact" || type == "PathPrefix") {
      PORTICO_RETURN_IF_ERROR(CheckPathValue(value, type, field + ".path.value"));
    } else if (type == "RegularExpression") {
      // RE2 syntax is checked where it is compiled (the gateway); an empty pattern never is valid.
      if (value.empty()) {
        return FieldError(field + ".path.value", "must not be empty for type RegularExpression");
      }
    } else {
      return FieldError(field + ".path.type",
                        Quoted(type) + " is not Exact, PathPrefix or RegularExpression");
    }
  }
  PORTICO_RETURN_IF_ERROR(CheckNamedMatches(match, "headers", field));
  PORTICO_RETURN_IF_ERROR(CheckNamedMatches(match, "queryParams", field));
  if (const rapidjson::Value* method = json::Find(match, "method")) {
    static const std::set<std::string> kMethods = {"GET",     "HEAD",    "POST",  "PUT",  "DELETE",
                                                   "CONNECT", "OPTIONS", "TRACE", "PATCH"};
    std::string m = method->IsString() ? method->GetString() : "";
    if (kMethods.count(m) == 0) {
      return FieldError(field + ".method", Quoted(m) + " is not an HTTP method");
    }
  }
  return OkStatus();
}

Status CheckTimeouts(const rapidjson::Value& rule, const std::string& field) {
  const rapidjson::Value* timeouts = json::Find(rule, "timeouts");
  if (timeouts == nullptr) return OkStatus();
  std::optional<int64_t> request, backend;
  for (const char* name : {"request", "backendRequest"}) {
    const rapidjson::Value* v = json::Find(*timeouts, name);
    if (v == nullptr) continue;
    std::optional<int64_t> ms =
        v->IsString() ? sdk::names::ParseDuration(v->GetString()) : std::nullopt;
    if (!ms) {
      return FieldError(field + ".timeouts." + name,
                        "must be a duration such as \"1h30m\", \"10s\" or \"500ms\"");
    }
    (std::string_view(name) == "request" ? request : backend) = ms;
  }
  // CEL: backendRequest timeout cannot be longer than request timeout.
  if (request && backend && *request != 0 && *backend > *request) {
    return FieldError(field + ".timeouts.backendRequest",
                      "backendRequest timeout cannot be longer than request timeout");
  }
  return OkStatus();
}

// CheckRetry: rules[].retry (GEP-1731): codes are 4xx/5xx (the schema), attempts >= 0, backoff a
// duration.
Status CheckRetry(const rapidjson::Value& rule, const std::string& field) {
  const rapidjson::Value* retry = json::Find(rule, "retry");
  if (retry == nullptr || retry->IsNull()) return OkStatus();
  if (const rapidjson::Value* b = json::Find(*retry, "backoff"); b != nullptr && !b->IsNull()) {
    if (!b->IsString() || !sdk::names::ParseDuration(b->GetString())) {
      return FieldError(field + ".retry.backoff", "must be a duration such as \"100ms\" or \"1s\"");
    }
  }
  return OkStatus();
}

Status CheckRule(const rapidjson::Value& rule, const std::string& field) {
  if (!rule.IsObject()) return FieldError(field, "must be an object");
  if (const rapidjson::Value* matches = Array(rule, "matches")) {
    for (rapidjson::SizeType i = 0; i < matches->Size(); ++i) {
      PORTICO_RETURN_IF_ERROR(CheckMatch((*matches)[i], At(field + ".matches", i)));
    }
  }
  static const rapidjson::Value kNone(rapidjson::kArrayType);
  const rapidjson::Value* filters = Array(rule, "filters");
  PORTICO_RETURN_IF_ERROR(ValidateFilters(filters != nullptr ? *filters : kNone, rule,
                                          field + ".filters", /*backend_level=*/false));
  if (const rapidjson::Value* backends = Array(rule, "backendRefs")) {
    for (rapidjson::SizeType i = 0; i < backends->Size(); ++i) {
      const rapidjson::Value& b = (*backends)[i];
      std::string sub = At(field + ".backendRefs", i);
      PORTICO_RETURN_IF_ERROR(ValidateBackendRef(b, sub));
      if (const rapidjson::Value* w = json::Find(b, "weight");
          w != nullptr && (!w->IsInt64() || w->GetInt64() < 0 || w->GetInt64() > kMaxWeight)) {
        return FieldError(sub + ".weight", "must be 0-1000000");
      }
      if (const rapidjson::Value* bf = Array(b, "filters")) {
        PORTICO_RETURN_IF_ERROR(
            ValidateFilters(*bf, rule, sub + ".filters", /*backend_level=*/true));
      }
    }
  }
  PORTICO_RETURN_IF_ERROR(CheckRetry(rule, field));
  return CheckTimeouts(rule, field);
}

}  // namespace

Status ValidateBackendRef(const rapidjson::Value& ref, const std::string& field) {
  if (!ref.IsObject()) return FieldError(field, "must be an object");
  std::string name = json::GetString(ref, "name");
  if (name.empty() || name.size() > 253) return FieldError(field + ".name", "is required");
  std::string group = json::GetString(ref, "group");
  std::string kind = json::GetString(ref, "kind", "Service");
  if (!sdk::names::IsGroup(group)) {
    return FieldError(field + ".group", Quoted(group) + " is not a valid group");
  }
  if (!sdk::names::IsKind(kind)) {
    return FieldError(field + ".kind", Quoted(kind) + " is not a valid kind");
  }
  std::string ns = json::GetString(ref, "namespace");
  if (!ns.empty() && !sdk::names::IsDnsLabel(ns)) {
    return FieldError(field + ".namespace", Quoted(ns) + " is not a valid namespace");
  }
  const rapidjson::Value* port = json::Find(ref, "port");
  // CEL: Must have port for Service reference.
  if (port == nullptr && group.empty() && kind == "Service") {
    return FieldError(field + ".port", "is required for a Service reference");
  }
  if (port != nullptr && (!port->IsInt64() || port->GetInt64() < 1 || port->GetInt64() > 65535)) {
    return FieldError(field + ".port", "must be 1-65535");
  }
  return OkStatus();
}

Status ValidateRoute(const rapidjson::Value& spec) {
  PORTICO_RETURN_IF_ERROR(CheckHostnames(spec));
  PORTICO_RETURN_IF_ERROR(CheckParentRefs(spec));
  const rapidjson::Value* rules = Array(spec, "rules");
  if (rules == nullptr) return OkStatus();
  size_t total_matches = 0;
  std::map<std::string, size_t> rule_names;
  for (rapidjson::SizeType i = 0; i < rules->Size(); ++i) {
    const rapidjson::Value& rule = (*rules)[i];
    std::string field = At("spec.rules", i);
    PORTICO_RETURN_IF_ERROR(CheckRule(rule, field));
    if (const rapidjson::Value* matches = Array(rule, "matches")) total_matches += matches->Size();
    std::string name = json::GetString(rule, "name");
    if (!name.empty()) {
      if (!sdk::names::IsDnsSubdomain(name)) {
        return FieldError(field + ".name", Quoted(name) + " is not a valid rule name");
      }
      // CEL: Rule name must be unique within the route.
      if (auto [it, fresh] = rule_names.emplace(name, i); !fresh) {
        return FieldError(field + ".name",
                          "rule name " + Quoted(name) +
                              " must be unique within the route (also spec.rules[" +
                              std::to_string(it->second) + "])");
      }
    }
  }
  // CEL: While 16 rules and 64 matches per rule are allowed, the total number of matches
  // across all rules in a route must be less than 128.
  if (total_matches > kMaxTotalMatches) {
    return FieldError("spec.rules", "the total number of matches across all rules (" +
                                        std::to_string(total_matches) + ") must be at most 128");
  }
  return OkStatus();
}

}  // namespace portico::plugins::httproute
