// support.cc: see support.h.
#include "support.h"

#include <set>

namespace portico::plugins::httproute {
namespace {

std::optional<std::string> UnsupportedFilter(const rapidjson::Value& owner,
                                             const std::string& where) {
  static const std::set<std::string> kSupported = {"RequestHeaderModifier",
                                                   "ResponseHeaderModifier",
                                                   "RequestRedirect",
                                                   "URLRewrite",
                                                   "RequestMirror",
                                                   "ExtensionRef",
                                                   "CORS"};
  const rapidjson::Value* filters = json::Find(owner, "filters");
  if (filters == nullptr || !filters->IsArray()) return std::nullopt;
  for (const auto& f : filters->GetArray()) {
    std::string type = json::GetString(f, "type");
    if (kSupported.count(type) == 0) return "filter type " + type + where + " is not supported";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> UnsupportedFeature(const rapidjson::Value& rule) {
  for (const char* field : {"sessionPersistence"}) {
    const rapidjson::Value* v = json::Find(rule, field);
    if (v != nullptr && !v->IsNull()) return std::string(field) + " is not supported";
  }
  if (auto bad = UnsupportedFilter(rule, "")) return bad;
  if (const rapidjson::Value* backends = json::Find(rule, "backendRefs");
      backends != nullptr && backends->IsArray()) {
    for (const auto& b : backends->GetArray()) {
      if (auto bad = UnsupportedFilter(b, " (in a backendRef)")) return bad;
    }
  }
  return std::nullopt;
}

}  // namespace portico::plugins::httproute
