// normalize.cc: see normalize.h.
#include "normalize.h"

#include "validate.h"

namespace portico::plugins::httproute {
namespace {

using Allocator = rapidjson::Document::AllocatorType;

class Defaulter {
 public:
  Defaulter(Allocator& alloc, std::string_view route_ns) : alloc_(alloc), ns_(route_ns) {}

  void String(rapidjson::Value& obj, const char* key, std::string_view value) {
    if (obj.IsObject() && !obj.HasMember(key)) {
      obj.AddMember(
          rapidjson::StringRef(key),
          rapidjson::Value(value.data(), static_cast<rapidjson::SizeType>(value.size()), alloc_),
          alloc_);
    }
  }
  void Int(rapidjson::Value& obj, const char* key, int64_t value) {
    if (obj.IsObject() && !obj.HasMember(key)) {
      obj.AddMember(rapidjson::StringRef(key), rapidjson::Value(value), alloc_);
    }
  }
  rapidjson::Value* Array(rapidjson::Value& obj, const char* key) {
    auto it = obj.FindMember(key);
    return it != obj.MemberEnd() && it->value.IsArray() ? &it->value : nullptr;
  }

  // PathPrefix builds {"type":"PathPrefix","value":"/"}, the default path match.
  rapidjson::Value PathPrefix() {
    rapidjson::Value path(rapidjson::kObjectType);
    String(path, "type", "PathPrefix");
    String(path, "value", "/");
    return path;
  }
  rapidjson::Value PathPrefixMatch() {
    rapidjson::Value match(rapidjson::kObjectType);
    match.AddMember("path", PathPrefix(), alloc_);
    return match;
  }

  void BackendRef(rapidjson::Value& ref, bool weighted) {
    String(ref, "group", "");
    String(ref, "kind", "Service");
    String(ref, "namespace", ns_);
    if (weighted) Int(ref, "weight", 1);
  }

  void Filters(rapidjson::Value& owner) {
    rapidjson::Value* filters = Array(owner, "filters");
    if (filters == nullptr) return;
    for (auto& f : filters->GetArray()) {
      if (!f.IsObject()) continue;
      if (auto m = f.FindMember("requestMirror"); m != f.MemberEnd() && m->value.IsObject()) {
        if (auto ref = m->value.FindMember("backendRef"); ref != m->value.MemberEnd()) {
          BackendRef(ref->value, /*weighted=*/false);
        }
      }
      if (auto r = f.FindMember("requestRedirect"); r != f.MemberEnd()) {
        Int(r->value, "statusCode", 302);
      }
    }
  }

  void Match(rapidjson::Value& match) {
    if (!match.IsObject()) return;
    if (!match.HasMember("path")) match.AddMember("path", PathPrefix(), alloc_);
    rapidjson::Value& path = match["path"];
    String(path, "type", "PathPrefix");
    String(path, "value", "/");
    for (const char* list : {"headers", "queryParams"}) {
      if (rapidjson::Value* items = Array(match, list)) {
        for (auto& item : items->GetArray()) String(item, "type", "Exact");
      }
    }
  }

  void Rule(rapidjson::Value& rule) {
    if (!rule.IsObject()) return;
    rapidjson::Value* matches = Array(rule, "matches");
    if (matches == nullptr) {
      rule.RemoveMember("matches");
      rule.AddMember("matches", rapidjson::Value(rapidjson::kArrayType), alloc_);
      matches = &rule["matches"];
    }
    if (matches->Empty()) matches->PushBack(PathPrefixMatch(), alloc_);
    for (auto& m : matches->GetArray()) Match(m);
    Filters(rule);
    if (rapidjson::Value* backends = Array(rule, "backendRefs")) {
      for (auto& b : backends->GetArray()) {
        BackendRef(b, /*weighted=*/true);
        Filters(b);
      }
    }
  }

 private:
  Allocator& alloc_;
  std::string_view ns_;
};

}  // namespace

rapidjson::Document NormalizeRoute(const rapidjson::Value& spec, std::string_view route_ns) {
  rapidjson::Document doc;
  doc.CopyFrom(spec, doc.GetAllocator());
  if (!doc.IsObject()) doc.SetObject();
  Defaulter d(doc.GetAllocator(), route_ns);
  if (rapidjson::Value* parents = d.Array(doc, "parentRefs")) {
    for (auto& p : parents->GetArray()) {
      d.String(p, "group", kGroup);
      d.String(p, "kind", "Gateway");
      d.String(p, "namespace", route_ns);
    }
  }
  if (d.Array(doc, "rules") == nullptr) {
    doc.RemoveMember("rules");
    rapidjson::Value rules(rapidjson::kArrayType);
    rules.PushBack(rapidjson::Value(rapidjson::kObjectType), doc.GetAllocator());
    doc.AddMember("rules", rules, doc.GetAllocator());
  }
  for (auto& rule : doc["rules"].GetArray()) d.Rule(rule);
  return doc;
}

}  // namespace portico::plugins::httproute
