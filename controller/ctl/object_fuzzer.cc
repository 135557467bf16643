#include "controller/ctl/object_fuzzer.h"

#include <rapidjson/pointer.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <regex>
#include <vector>

namespace portico::ctl {
namespace {

using rapidjson::Value;

constexpr int kMaxDepth = 12;

// Strings a processor often parses: names, durations, times, hosts, URLs, paths, odd bytes.
constexpr const char* kSpecialStrings[] = {
    "",
    "a",
    "default",
    "*",
    "*.example.com",
    "example.com",
    "/",
    "/a/b/../c",
    "//",
    "1s",
    "500ms",
    "0s",
    "-1s",
    "99999999h",
    "10.0.0.1",
    "::1",
    "127.0.0.1:0",
    "http://127.0.0.1:80/x",
    "https://",
    "2026-01-01T00:00:00Z",
    "not-a-time",
    "{header.x}",
    "{",
    "}",
    "%00",
    "\xc3\xa9",
    "\xe2\x82\xac",
    "a b",
    "A_B",
    "-",
    ".",
    "..",
};

}  // namespace

ObjectFuzzer::ObjectFuzzer(const core::KindInfo& kind, uint64_t seed) : kind_(kind), rng_(seed) {
  schema_.Parse(kind.schema.data(), kind.schema.size());
  if (schema_.HasParseError() || !schema_.IsObject()) schema_.SetObject();
}

const Value* ObjectFuzzer::Resolve(const Value& schema) const {
  const Value* s = &schema;
  for (int hops = 0; hops < 8 && s->IsObject(); ++hops) {
    const Value* ref = json::Find(*s, "$ref");
    if (ref == nullptr || !ref->IsString()) return s;
    std::string target = ref->GetString();
    if (target == "#") {
      s = &schema_;
      continue;
    }
    if (target.rfind("#", 0) != 0) return nullptr;
    s = rapidjson::Pointer(target.substr(1).c_str()).Get(schema_);
    if (s == nullptr) return nullptr;
  }
  return s;
}

std::string ObjectFuzzer::Matching(const std::string& pattern, size_t min, size_t max,
                                   std::string fallback) {
  auto it = patterns_.find(pattern);
  if (it == patterns_.end()) {
    std::optional<std::regex> compiled;
    try {
      compiled.emplace(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error&) {
    }
    it = patterns_.emplace(pattern, std::move(compiled)).first;
  }
  if (!it->second || Chance(0.1)) return fallback;  // sometimes a mismatch on purpose
  static constexpr const char* kShapes[] = {"a",
                                            "web",
                                            "example.com",
                                            "example.net/gateway-controller",
                                            "portico.io/gateway",
                                            "/",
                                            "/a",
                                            "/v1/x",
                                            "1s",
                                            "10ms",
                                            "2m",
                                            "http",
                                            "https",
                                            "Exact",
                                            "X-Header",
                                            "x-y",
                                            "app.example.com",
                                            "*.example.com",
                                            "10.0.0.1",
                                            "80",
                                            "GET",
                                            "a=b",
                                            "v1",
                                            "Foo"};
  for (int attempt = 0; attempt < 40; ++attempt) {
    std::string candidate = attempt < static_cast<int>(std::size(kShapes)) && Chance(0.7)
                                ? kShapes[Below(std::size(kShapes))]
                                : RandomString(min, std::min<size_t>(max, 16));
    if (candidate.size() >= min && candidate.size() <= max &&
        std::regex_search(candidate, *it->second)) {
      return candidate;
    }
  }
  return fallback;
}

std::string ObjectFuzzer::RandomString(size_t min, size_t max) {
  if (Chance(0.25)) {
    std::string s = kSpecialStrings[Below(std::size(kSpecialStrings))];
    if (s.size() >= min && s.size() <= max) return s;
  }
  if (Chance(0.03))
    max = std::max(min, std::min<size_t>(max, 5000));  // a long one
  else
    max = std::max(min, std::min<size_t>(max, 24));
  size_t n = min + Below(max - min + 1);
  static constexpr std::string_view kDns = "abcdefghijklmnopqrstuvwxyz0123456789-.";
  static constexpr std::string_view kAny =
      "abcXYZ019 -_./:*?#%&=+@!~\"'\\{}[]<>\t\n\x01\x7f\xc3\xa9";
  const std::string_view set = Chance(0.7) ? kDns : kAny;
  std::string s;
  s.reserve(n);
  for (size_t i = 0; i < n; ++i) s += set[Below(set.size())];
  return s;
}

void ObjectFuzzer::RandomValue(Value& out, int depth) {
  switch (Below(depth >= kMaxDepth ? 5 : 7)) {
    case 0:
      out.SetNull();
      break;
    case 1:
      out.SetBool(Chance(0.5));
      break;
    case 2: {
      static constexpr int64_t kInts[] = {0,
                                          1,
                                          -1,
                                          80,
                                          65535,
                                          65536,
                                          int64_t{1} << 31,
                                          std::numeric_limits<int64_t>::max(),
                                          std::numeric_limits<int64_t>::min()};
      out.SetInt64(Chance(0.5) ? kInts[Below(std::size(kInts))]
                               : static_cast<int64_t>(Below(1000)) - 500);
      break;
    }
    case 3:
      out.SetDouble(Chance(0.5) ? 0.5 : -1e300);
      break;
    case 4: {
      std::string s = RandomString(0, 32);
      out.SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()), *alloc_);
      break;
    }
    case 5: {
      out.SetArray();
      for (size_t i = Below(4); i > 0; --i) {
        Value item;
        RandomValue(item, depth + 1);
        out.PushBack(item, *alloc_);
      }
      break;
    }
    default: {
      out.SetObject();
      for (size_t i = Below(4); i > 0; --i) {
        Value item;
        RandomValue(item, depth + 1);
        std::string key = RandomString(1, 12);
        out.AddMember(Value(key.c_str(), *alloc_), item, *alloc_);
      }
      break;
    }
  }
}

void ObjectFuzzer::Generate(const Value& schema_in, Value& out, int depth) {
  const Value* s = Resolve(schema_in);
  if (s == nullptr || !s->IsObject() || depth > kMaxDepth) {
    RandomValue(out, kMaxDepth);
    return;
  }
  if (const Value* e = json::Find(*s, "enum"); e != nullptr && e->IsArray() && !e->Empty()) {
    out.CopyFrom((*e)[static_cast<rapidjson::SizeType>(Below(e->Size()))], *alloc_);
    return;
  }
  std::vector<std::string> forced;  // required by the chosen constraint-only alternative
  for (const char* choice : {"oneOf", "anyOf"}) {
    const Value* alts = json::Find(*s, choice);
    if (alts == nullptr || !alts->IsArray() || alts->Empty()) continue;
    const Value& alt = (*alts)[static_cast<rapidjson::SizeType>(Below(alts->Size()))];
    const Value* resolved = Resolve(alt);
    bool constraint_only =
        resolved != nullptr && resolved->IsObject() && json::Find(*resolved, "type") == nullptr &&
        json::Find(*resolved, "$ref") == nullptr && json::Find(*resolved, "enum") == nullptr &&
        json::Find(*s, "properties") != nullptr;
    if (!constraint_only) {
      Generate(alt, out, depth + 1);
      return;
    }
    // {"required": [...]} beside the properties: generate the object and honour it.
    if (const Value* r = json::Find(*resolved, "required"); r != nullptr && r->IsArray()) {
      for (const Value& name : r->GetArray()) {
        if (name.IsString()) forced.emplace_back(name.GetString());
      }
    }
  }
  if (const Value* all = json::Find(*s, "allOf"); all != nullptr && all->IsArray()) {
    out.SetObject();
    for (const Value& part : all->GetArray()) {
      Value generated;
      Generate(part, generated, depth + 1);
      if (!generated.IsObject()) {
        out = generated;
        return;
      }
      for (auto& m : generated.GetObject()) {
        if (!out.HasMember(m.name)) out.AddMember(m.name, m.value, *alloc_);
      }
    }
    if (json::Find(*s, "properties") == nullptr) return;
  }

  std::string type;
  if (const Value* t = json::Find(*s, "type"); t != nullptr) {
    if (t->IsString()) type = t->GetString();
    if (t->IsArray() && !t->Empty()) {
      const Value& pick = (*t)[static_cast<rapidjson::SizeType>(Below(t->Size()))];
      if (pick.IsString()) type = pick.GetString();
    }
  } else if (json::Find(*s, "properties") != nullptr) {
    type = "object";
  } else if (json::Find(*s, "items") != nullptr) {
    type = "array";
  }
  auto number = [&](const char* name, double fallback) {
    const Value* v = json::Find(*s, name);
    return v != nullptr && v->IsNumber() ? v->GetDouble() : fallback;
  };
  if (type == "object") {
    if (!out.IsObject()) out.SetObject();
    std::vector<std::string> required;
    if (const Value* r = json::Find(*s, "required"); r != nullptr && r->IsArray()) {
      for (const Value& name : r->GetArray()) {
        if (name.IsString()) required.emplace_back(name.GetString());
      }
    }
    if (const Value* props = json::Find(*s, "properties"); props != nullptr && props->IsObject()) {
      for (const auto& m : props->GetObject()) {
        std::string name = m.name.GetString();
        bool needed = std::find(required.begin(), required.end(), name) != required.end();
        bool must = std::find(forced.begin(), forced.end(), name) != forced.end();
        bool other_forced = !forced.empty() && !must && !needed;
        if (out.HasMember(m.name) || !Chance(must ? 1.0 : needed ? 0.97 : other_forced ? 0.2 : 0.5))
          continue;
        Value v;
        Generate(m.value, v, depth + 1);
        out.AddMember(Value(name.c_str(), *alloc_), v, *alloc_);
      }
    }
    if (const Value* extra = json::Find(*s, "additionalProperties");
        extra != nullptr && extra->IsObject()) {
      for (size_t i = Below(3); i > 0; --i) {
        Value v;
        Generate(*extra, v, depth + 1);
        std::string key = RandomString(1, 16);
        if (!out.HasMember(key.c_str())) out.AddMember(Value(key.c_str(), *alloc_), v, *alloc_);
      }
    }
  } else if (type == "array") {
    out.SetArray();
    size_t lo = static_cast<size_t>(std::max(0.0, number("minItems", 0)));
    size_t hi = static_cast<size_t>(std::min(number("maxItems", 4), lo + 4.0));
    size_t n = lo + Below(hi >= lo ? hi - lo + 1 : 1);
    const Value* items = json::Find(*s, "items");
    for (size_t i = 0; i < n; ++i) {
      Value v;
      if (items != nullptr && items->IsArray() && i < items->Size()) {
        Generate((*items)[static_cast<rapidjson::SizeType>(i)], v, depth + 1);
      } else if (items != nullptr && items->IsObject()) {
        Generate(*items, v, depth + 1);
      } else {
        RandomValue(v, depth + 1);
      }
      out.PushBack(v, *alloc_);
    }
  } else if (type == "string") {
    size_t lo = static_cast<size_t>(std::max(0.0, number("minLength", 0)));
    size_t hi = static_cast<size_t>(std::max<double>(lo, number("maxLength", 64)));
    std::string v = RandomString(lo, hi);
    if (const Value* p = json::Find(*s, "pattern"); p != nullptr && p->IsString()) {
      v = Matching(p->GetString(), lo, hi, v);
    }
    out.SetString(v.data(), static_cast<rapidjson::SizeType>(v.size()), *alloc_);
  } else if (type == "integer" || type == "number") {
    double lo = number("minimum", -1000);
    double hi = number("maximum", 100000);
    if (hi < lo) hi = lo;
    if (Chance(0.1)) {
      out.SetInt64(Chance(0.5) ? std::numeric_limits<int64_t>::max() : -1);
    } else if (type == "integer") {
      lo = std::max(lo, -9.0e15);
      hi = std::min(hi, 9.0e15);
      out.SetInt64(static_cast<int64_t>(lo) +
                   static_cast<int64_t>(Below(static_cast<size_t>(hi - lo) + 1)));
    } else {
      out.SetDouble(std::uniform_real_distribution<double>(lo, hi)(rng_));
    }
  } else if (type == "boolean") {
    out.SetBool(Chance(0.5));
  } else if (type == "null") {
    out.SetNull();
  } else {
    RandomValue(out, depth + 1);
  }
}

void ObjectFuzzer::SetIdentity(rapidjson::Document& doc) {
  if (!doc.IsObject()) doc.SetObject();
  auto& a = doc.GetAllocator();
  std::string version =
      kind_.versions.empty() ? "v1" : kind_.versions[Below(kind_.versions.size())];
  std::string api = kind_.id.group.empty() ? version : kind_.id.group + "/" + version;
  doc.RemoveMember("apiVersion");
  doc.RemoveMember("kind");
  doc.AddMember("apiVersion", Value(api.c_str(), a), a);
  doc.AddMember("kind", Value(kind_.id.kind.c_str(), a), a);
  Value* meta =
      doc.HasMember("metadata") && doc["metadata"].IsObject() ? &doc["metadata"] : nullptr;
  if (meta == nullptr) {
    doc.RemoveMember("metadata");
    doc.AddMember("metadata", Value(rapidjson::kObjectType), a);
    meta = &doc["metadata"];
  }
  meta->RemoveMember("name");
  meta->RemoveMember("namespace");
  static constexpr const char* kNames[] = {"a", "web", "x-1", "default", "long-name-0123456789"};
  meta->AddMember("name", Value(rapidjson::StringRef(kNames[Below(std::size(kNames))])), a);
  if (kind_.scope == PORTICO_SCOPE_NAMESPACED) {
    meta->AddMember("namespace", Value(rapidjson::StringRef(Chance(0.8) ? "default" : "other")), a);
  }
}

std::string ObjectFuzzer::Generated() {
  rapidjson::Document doc;
  alloc_ = &doc.GetAllocator();
  Generate(schema_, doc, 0);
  SetIdentity(doc);
  return json::Serialize(doc);
}

std::string ObjectFuzzer::Mutated() {
  rapidjson::Document doc;
  alloc_ = &doc.GetAllocator();
  Generate(schema_, doc, 0);
  SetIdentity(doc);
  // Walk down a random path, then break what is there.
  Value* parent = &doc;
  for (int depth = 0; depth < kMaxDepth; ++depth) {
    Value* child = nullptr;
    if (parent->IsObject() && parent->MemberCount() > 0) {
      auto it = parent->MemberBegin() + static_cast<long>(Below(parent->MemberCount()));
      child = &it->value;
    } else if (parent->IsArray() && !parent->Empty()) {
      child = &(*parent)[static_cast<rapidjson::SizeType>(Below(parent->Size()))];
    }
    if (child == nullptr || (!child->IsObject() && !child->IsArray()) || Chance(0.3)) break;
    parent = child;
  }
  if (parent->IsObject() && parent->MemberCount() > 0) {
    auto it = parent->MemberBegin() + static_cast<long>(Below(parent->MemberCount()));
    std::string name = it->name.GetString();
    bool identity =
        parent == &doc && (name == "apiVersion" || name == "kind" || name == "metadata");
    if (!identity && Chance(0.3)) {
      parent->RemoveMember(it);
    } else if (!identity) {
      RandomValue(it->value, 0);
    }
  } else if (parent->IsArray() && !parent->Empty()) {
    RandomValue((*parent)[static_cast<rapidjson::SizeType>(Below(parent->Size()))], 0);
  }
  return json::Serialize(doc);
}

std::string ObjectFuzzer::Malformed() {
  switch (Below(6)) {
    case 0: {
      std::string text = Generated();
      return text.substr(0, Below(text.size()));
    }
    case 1: {
      std::string text;
      for (size_t n = Below(200); n > 0; --n) text += static_cast<char>(Below(256));
      return text;
    }
    case 2: {
      size_t depth = 100 + Below(3000);
      std::string text = std::string(depth, '[') + (Chance(0.5) ? std::string(depth, ']') : "");
      return Chance(0.5) ? "{\"spec\":" + text + "}" : text;
    }
    case 3: {
      static constexpr const char* kNotObjects[] = {"[]", "null", "42", "\"x\"", "true", ""};
      return kNotObjects[Below(std::size(kNotObjects))];
    }
    case 4: {
      std::string text = Generated();
      if (!text.empty()) text[Below(text.size())] = static_cast<char>(Below(256));
      return text;
    }
    default: {
      static constexpr const char* kNumbers[] = {
          "1e400", "-1e400", "123456789012345678901234567890", "-0", "0.0000000000000000000001"};
      std::string text = Generated();
      size_t at = text.find("\"spec\":");
      std::string number = kNumbers[Below(std::size(kNumbers))];
      return at == std::string::npos
                 ? "{\"spec\":" + number + "}"
                 : text.substr(0, at) + "\"spec\":" + number + "," + text.substr(at);
    }
  }
}

}  // namespace portico::ctl
