#include "core/common/json_schema_violations.h"

#include <rapidjson/internal/regex.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "core/common/json_schema_messages.h"

namespace portico::core::schema_text {
namespace {

using rapidjson::Value;
using Regex = rapidjson::internal::GenericRegex<rapidjson::UTF8<>>;

constexpr int kMaxDepth = 128;  // deeper documents are refused by the YAML reader long before

bool HasType(const Value& inst, std::string_view type) {
  if (type == "object") return inst.IsObject();
  if (type == "array") return inst.IsArray();
  if (type == "string") return inst.IsString();
  if (type == "boolean") return inst.IsBool();
  if (type == "null") return inst.IsNull();
  if (type == "number") return inst.IsNumber();
  if (type == "integer") return inst.IsNumber() && !inst.IsDouble();  // as RapidJSON 1.1
  return true;  // an unknown type name constrains nothing
}

bool TypeMatches(const Value& type, const Value& inst) {
  if (type.IsString()) return HasType(inst, View(type));
  if (!type.IsArray()) return true;
  for (const auto& t : type.GetArray()) {
    if (t.IsString() && HasType(inst, View(t))) return true;
  }
  return false;
}

uint64_t UintOf(const Value* v) { return v != nullptr && v->IsUint64() ? v->GetUint64() : 0; }

std::string Child(const std::string& path, std::string_view key) {
  if (IsPlainName(key)) return path.empty() ? std::string(key) : path + "." + std::string(key);
  return path + "[" + QuoteString(key) + "]";
}

std::string Index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

class Walker {
 public:
  Walker(const Value& root, size_t max) : root_(root), max_(max) {}

  // Walk appends the failures of `inst` (at `path`) against `schema` to `out`.
  void Walk(const Value& schema, const Value& inst, const std::string& path, int depth,
            std::vector<SchemaViolation>* out, size_t max) {
    if (out->size() >= max || depth > kMaxDepth) return;
    const Value* node = Resolve(root_, &schema);
    if (node == nullptr || !node->IsObject()) return;
    auto add = [&](std::string_view keyword, std::string_view last_token = {}) {
      if (out->size() < max) {
        out->push_back({path, Reason(keyword, node, &inst, last_token)});
      }
    };
    if (const Value* type = Member(node, "type"); type != nullptr && !TypeMatches(*type, inst)) {
      add("type");
      return;  // the other keywords of a value of the wrong type say nothing more
    }
    if (inst.IsObject()) {
      WalkObject(*node, inst, path, depth, out, max, add);
    } else if (inst.IsArray()) {
      WalkArray(*node, inst, path, depth, out, max, add);
    } else if (inst.IsString()) {
      size_t length = CodePoints(inst);
      if (const Value* min = Member(node, "minLength"); min != nullptr && length < UintOf(min)) {
        add("minLength");
      }
      if (const Value* m = Member(node, "maxLength"); m != nullptr && length > UintOf(m)) {
        add("maxLength");
      }
      if (const Value* pattern = Member(node, "pattern");
          pattern != nullptr && pattern->IsString() && !Matches(*pattern, inst)) {
        add("pattern");
      }
    } else if (inst.IsNumber()) {
      WalkNumber(*node, inst, add);
    }
    if (const Value* e = Member(node, "enum"); e != nullptr && e->IsArray()) {
      bool found = false;
      for (const auto& allowed : e->GetArray()) found = found || allowed == inst;
      if (!found) add("enum");
    }
    if (const Value* all = Member(node, "allOf"); all != nullptr && all->IsArray()) {
      for (const auto& sub : all->GetArray()) Walk(sub, inst, path, depth + 1, out, max);
    }
    if (const Value* any = Member(node, "anyOf"); any != nullptr && any->IsArray()) {
      bool one = false;
      for (const auto& sub : any->GetArray()) one = one || Valid(sub, inst, depth);
      if (!one) add("anyOf");
    }
    if (const Value* of = Member(node, "oneOf"); of != nullptr && of->IsArray()) {
      size_t valid = 0;
      for (const auto& sub : of->GetArray()) valid += Valid(sub, inst, depth) ? 1 : 0;
      if (valid != 1) add("oneOf");
    }
    if (const Value* n = Member(node, "not"); n != nullptr && Valid(*n, inst, depth)) add("not");
  }

  size_t max() const { return max_; }

 private:
  template <typename Add>
  void WalkObject(const Value& node, const Value& inst, const std::string& path, int depth,
                  std::vector<SchemaViolation>* out, size_t max, const Add& add) {
    const Value* props = Member(&node, "properties");
    const Value* extra = Member(&node, "additionalProperties");
    for (const auto& m : inst.GetObject()) {
      std::string_view key = View(m.name);
      if (const Value* sub = Member(props, key); sub != nullptr) {
        Walk(*sub, m.value, Child(path, key), depth + 1, out, max);
      } else if (extra != nullptr && extra->IsBool() && !extra->GetBool()) {
        add("additionalProperties", key);  // reported at the parent, as Validate does
      } else if (extra != nullptr && extra->IsObject()) {
        Walk(*extra, m.value, Child(path, key), depth + 1, out, max);
      }
    }
    if (const Value* required = Member(&node, "required");
        required != nullptr && required->IsArray()) {
      bool missing = false;
      for (const auto& name : required->GetArray()) {
        missing = missing || (name.IsString() && Member(&inst, View(name)) == nullptr);
      }
      if (missing) add("required");
    }
    size_t count = inst.MemberCount();
    if (const Value* m = Member(&node, "minProperties"); m != nullptr && count < UintOf(m)) {
      add("minProperties");
    }
    if (const Value* m = Member(&node, "maxProperties"); m != nullptr && count > UintOf(m)) {
      add("maxProperties");
    }
    if (const Value* deps = Member(&node, "dependencies"); deps != nullptr && deps->IsObject()) {
      bool violated = false;
      for (const auto& d : deps->GetObject()) {
        if (Member(&inst, View(d.name)) == nullptr) continue;
        if (d.value.IsArray()) {
          for (const auto& need : d.value.GetArray()) {
            violated = violated || (need.IsString() && Member(&inst, View(need)) == nullptr);
          }
        } else if (d.value.IsObject()) {
          Walk(d.value, inst, path, depth + 1, out, max);
        }
      }
      if (violated) add("dependencies");
    }
  }

  template <typename Add>
  void WalkArray(const Value& node, const Value& inst, const std::string& path, int depth,
                 std::vector<SchemaViolation>* out, size_t max, const Add& add) {
    const Value* items = Member(&node, "items");
    if (items != nullptr && items->IsObject()) {
      for (rapidjson::SizeType i = 0; i < inst.Size(); ++i) {
        Walk(*items, inst[i], Index(path, i), depth + 1, out, max);
      }
    } else if (items != nullptr && items->IsArray()) {
      const Value* extra = Member(&node, "additionalItems");
      bool extra_refused = false;
      for (rapidjson::SizeType i = 0; i < inst.Size(); ++i) {
        if (i < items->Size()) {
          Walk((*items)[i], inst[i], Index(path, i), depth + 1, out, max);
        } else if (extra != nullptr && extra->IsObject()) {
          Walk(*extra, inst[i], Index(path, i), depth + 1, out, max);
        } else if (extra != nullptr && extra->IsBool() && !extra->GetBool()) {
          extra_refused = true;
        }
      }
      if (extra_refused) add("additionalItems");
    }
    size_t size = inst.Size();
    if (const Value* m = Member(&node, "minItems"); m != nullptr && size < UintOf(m)) {
      add("minItems");
    }
    if (const Value* m = Member(&node, "maxItems"); m != nullptr && size > UintOf(m)) {
      add("maxItems");
    }
    if (const Value* u = Member(&node, "uniqueItems");
        u != nullptr && u->IsBool() && u->GetBool()) {
      // Reported at the first repeated item, as RapidJSON does.
      for (rapidjson::SizeType j = 1; j < inst.Size() && out->size() < max; ++j) {
        bool repeated = false;
        for (rapidjson::SizeType i = 0; i < j && !repeated; ++i) repeated = inst[i] == inst[j];
        if (repeated) {
          out->push_back({Index(path, j), Reason("uniqueItems", &node, &inst[j], {})});
          break;
        }
      }
    }
  }

  template <typename Add>
  static void WalkNumber(const Value& node, const Value& inst, const Add& add) {
    const double d = inst.GetDouble();
    auto flag = [&](std::string_view name) {
      const Value* v = Member(&node, name);
      return v != nullptr && v->IsBool() && v->GetBool();
    };
    if (const Value* m = Member(&node, "minimum"); m != nullptr && m->IsNumber()) {
      double limit = m->GetDouble();
      if (flag("exclusiveMinimum") ? d <= limit : d < limit) add("minimum");
    }
    if (const Value* m = Member(&node, "maximum"); m != nullptr && m->IsNumber()) {
      double limit = m->GetDouble();
      if (flag("exclusiveMaximum") ? d >= limit : d > limit) add("maximum");
    }
    if (const Value* m = Member(&node, "multipleOf");
        m != nullptr && m->IsNumber() && m->GetDouble() != 0) {
      double q = d / m->GetDouble();
      if (std::fabs(q - std::round(q)) > 1e-9) add("multipleOf");
    }
  }

  bool Valid(const Value& schema, const Value& inst, int depth) {
    std::vector<SchemaViolation> probe;
    Walk(schema, inst, "", depth + 1, &probe, 1);
    return probe.empty();
  }

  bool Matches(const Value& pattern, const Value& inst) {
    auto it = regexes_.find(&pattern);
    if (it == regexes_.end()) {
      it = regexes_.emplace(&pattern, std::make_unique<Regex>(pattern.GetString())).first;
    }
    // A pattern the engine cannot compile is skipped, as RapidJSON does (Compile refuses them).
    return !it->second->IsValid() || it->second->Search(inst.GetString());
  }

  const Value& root_;
  size_t max_;
  std::map<const Value*, std::unique_ptr<Regex>> regexes_;  // compiled once per walk
};

}  // namespace

std::vector<SchemaViolation> CollectViolations(const Value& root, const Value& doc, size_t max) {
  std::vector<SchemaViolation> out;
  Walker walker(root, max);
  walker.Walk(root, doc, "", 0, &out, walker.max());
  return out;
}

}  // namespace portico::core::schema_text
