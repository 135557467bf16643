#include "core/common/json_schema_messages.h"

#include <rapidjson/pointer.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <vector>

namespace portico::core::schema_text {

using rapidjson::Value;

namespace {

constexpr size_t kMaxQuotedValue = 80;   // longest "got ..." value quoted in an error
constexpr int kMaxRefHops = 32;          // "$ref" chains longer than this are treated as cycles
constexpr size_t kMaxListedFields = 16;  // unknown field: list the known ones up to this many

}  // namespace

std::string_view View(const Value& v) { return {v.GetString(), v.GetStringLength()}; }

const Value* Member(const Value* v, std::string_view name) {
  return v == nullptr ? nullptr : json::Find(*v, name);
}

// Quote renders a value as (truncated) JSON for an error message.
std::string Quote(const Value& v) {
  std::string s = json::Serialize(v);
  if (s.size() <= kMaxQuotedValue) return s;
  size_t cut = kMaxQuotedValue;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // UTF-8 boundary
  return s.substr(0, cut) + "...";
}

std::string QuoteString(std::string_view s) {
  Value v(rapidjson::StringRef(s.data(), s.size()));
  return Quote(v);
}

// Got describes an instance value for "(got ...)".
namespace {

std::string Got(const Value* v) {
  if (v == nullptr) return "nothing";
  if (v->IsObject()) return "an object";
  if (v->IsArray()) return "an array";
  return Quote(*v);
}

// Count renders "1 item" / "2 items".
std::string Count(uint64_t n, std::string_view singular, std::string_view plural) {
  return std::to_string(n) + " " + std::string(n == 1 ? singular : plural);
}

std::string Plural(uint64_t n, std::string_view word) {
  return Count(n, word, std::string(word) + "s");
}

const Value& EmptyValue() {
  static const Value* const kEmpty = new Value();
  return *kEmpty;
}

std::string TypeName(std::string_view t) {
  if (t == "object") return "an object";
  if (t == "array") return "an array";
  if (t == "integer") return "an integer";
  if (t == "null") return "null";
  return "a " + std::string(t);
}

std::string JoinQuoted(const std::vector<std::string>& names, std::string_view last_sep) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += (i + 1 == names.size()) ? last_sep : ", ";
    out += QuoteString(names[i]);
  }
  return out;
}

// EditDistance is the Levenshtein distance, for "did you mean" hints on unknown fields.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                  std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (same ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

size_t CodePoints(const Value& v) {
  size_t n = 0;
  for (unsigned char c : View(v)) n += (c & 0xC0) != 0x80;
  return n;
}

bool IsPlainName(std::string_view s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

// Resolve follows local "$ref"s ("#/definitions/x") from `node`; nullptr when one dangles.
const Value* Resolve(const Value& root, const Value* node) {
  for (int hop = 0; node != nullptr && hop < kMaxRefHops; ++hop) {
    const Value* ref = Member(node, "$ref");
    if (ref == nullptr || !ref->IsString()) return node;
    std::string_view s = View(*ref);
    if (s.empty() || s[0] != '#') return nullptr;
    s.remove_prefix(1);
    rapidjson::Pointer pointer(s.data(), s.size());
    if (!pointer.IsValid()) return nullptr;
    node = pointer.Get(root);
  }
  return nullptr;
}

// CheckRegex reports a pattern RapidJSON's regex engine cannot compile (the validator would
namespace {

std::vector<std::string> RequiredNames(const Value& alternative) {
  std::vector<std::string> names;
  const Value* required = Member(&alternative, "required");
  if (required == nullptr || !required->IsArray()) return names;
  for (const auto& r : required->GetArray()) {
    if (r.IsString()) names.emplace_back(View(r));
  }
  return names;
}

// DescribeAlternatives explains a failed "oneOf"/"anyOf" over `alternatives`.
std::string DescribeAlternatives(std::string_view keyword, const Value& alternatives,
                                 const Value* inst) {
  bool one = keyword == "oneOf";
  if (!alternatives.IsArray() || alternatives.Empty())
    return "failed \"" + std::string(keyword) + "\"";
  // Alternatives that each carry a "description": quote them.
  bool described = true;
  for (const auto& a : alternatives.GetArray()) described &= Member(&a, "description") != nullptr;
  if (described) {
    std::string out = one ? "must satisfy exactly one of: " : "must satisfy at least one of: ";
    bool first = true;
    for (const auto& a : alternatives.GetArray()) {
      const Value* d = Member(&a, "description");
      if (!first) out += "; ";
      first = false;
      out += d->IsString() ? std::string(View(*d)) : Quote(*d);
    }
    return out;
  }
  // Alternatives that are each exactly {"required": ["x"]}: "exactly one of x, y must be set".
  std::vector<std::string> fields;
  for (const auto& a : alternatives.GetArray()) {
    std::vector<std::string> names = RequiredNames(a);
    if (!a.IsObject() || a.MemberCount() != 1 || names.size() != 1) {
      fields.clear();
      break;
    }
    fields.push_back(names[0]);
  }
  if (!fields.empty()) {
    std::vector<std::string> present;
    for (const auto& f : fields) {
      if (Member(inst, f) != nullptr) present.push_back(f);
    }
    std::string out =
        (one ? "exactly one of " : "at least one of ") + JoinQuoted(fields, ", ") + " must be set";
    if (present.empty()) return out + " (got none)";
    return out + " (got " + JoinQuoted(present, " and ") + ")";
  }
  return std::string(one ? "must match exactly one of " : "must match at least one of ") +
         Plural(alternatives.Size(), "allowed form");
}

std::string DescribeUnknownField(const Value* schema, std::string_view field) {
  std::string out = "unknown field " + QuoteString(field);
  const Value* props = Member(schema, "properties");
  if (props == nullptr || !props->IsObject() || props->MemberCount() == 0) return out;
  std::string best;
  // Suggest a name within two edits, or within a third of the longer name ("controller" for
  // "controllerName").
  size_t best_distance = SIZE_MAX;
  std::vector<std::string> known;
  for (const auto& p : props->GetObject()) {
    std::string_view name = View(p.name);
    known.emplace_back(name);
    size_t d = EditDistance(field, name);
    size_t limit = std::max<size_t>(2, std::max(field.size(), name.size()) / 3);
    if (d <= limit && d < best_distance) {
      best_distance = d;
      best = std::string(name);
    }
  }
  if (!best.empty()) return out + " (did you mean " + QuoteString(best) + "?)";
  if (known.size() <= kMaxListedFields) {
    out += "; known fields: ";
    for (size_t i = 0; i < known.size(); ++i) out += (i ? ", " : "") + known[i];
  }
  return out;
}

}  // namespace

// Reason renders why `inst` failed `keyword` of the schema node `schema`.
std::string Reason(std::string_view keyword, const Value* schema, const Value* inst,
                   std::string_view last_token) {
  auto num = [&](std::string_view name) -> std::string {
    const Value* v = Member(schema, name);
    return v == nullptr ? "?" : json::Serialize(*v);
  };
  auto flag = [&](std::string_view name) {
    const Value* v = Member(schema, name);
    return v != nullptr && v->IsBool() && v->GetBool();
  };
  if (keyword == "type") {
    const Value* t = Member(schema, "type");
    std::vector<std::string> names;
    if (t != nullptr && t->IsString()) names.push_back(TypeName(View(*t)));
    if (t != nullptr && t->IsArray()) {
      for (const auto& e : t->GetArray()) {
        if (e.IsString()) names.push_back(TypeName(View(e)));
      }
    }
    std::string out = "must be ";
    for (size_t i = 0; i < names.size(); ++i) {
      if (i > 0) out += (i + 1 == names.size()) ? " or " : ", ";
      out += names[i];
    }
    return out + " (got " + Got(inst) + ")";
  }
  if (keyword == "enum") {
    const Value* e = Member(schema, "enum");
    std::string out = "must be ";
    if (e != nullptr && e->IsArray()) {
      if (e->Size() > 1) out += "one of ";
      for (rapidjson::SizeType i = 0; i < e->Size(); ++i) out += (i ? ", " : "") + Quote((*e)[i]);
    }
    return out + " (got " + Got(inst) + ")";
  }
  if (keyword == "required") {
    std::vector<std::string> missing;
    for (const auto& name : RequiredNames(schema == nullptr ? EmptyValue() : *schema)) {
      if (Member(inst, name) == nullptr) missing.push_back(name);
    }
    if (missing.size() == 1) return "missing required field " + QuoteString(missing[0]);
    return "missing required fields " + JoinQuoted(missing, ", ");
  }
  if (keyword == "additionalProperties") return DescribeUnknownField(schema, last_token);
  if (keyword == "pattern") {
    const Value* pattern = Member(schema, "pattern");
    std::string regex =
        pattern != nullptr && pattern->IsString() ? std::string(View(*pattern)) : "?";
    const Value* title = Member(schema, "title");
    if (title != nullptr && title->IsString()) {
      return "must be " + std::string(View(*title)) + ", matching " + regex + " (got " + Got(inst) +
             ")";
    }
    return "must match " + regex + " (got " + Got(inst) + ")";
  }
  if (keyword == "minimum") {
    return std::string("must be ") + (flag("exclusiveMinimum") ? "> " : ">= ") + num("minimum") +
           " (got " + Got(inst) + ")";
  }
  if (keyword == "maximum") {
    return std::string("must be ") + (flag("exclusiveMaximum") ? "< " : "<= ") + num("maximum") +
           " (got " + Got(inst) + ")";
  }
  if (keyword == "multipleOf")
    return "must be a multiple of " + num("multipleOf") + " (got " + Got(inst) + ")";
  if (keyword == "minLength" || keyword == "maxLength") {
    size_t n = inst != nullptr && inst->IsString() ? CodePoints(*inst) : 0;
    std::string bound = keyword == "minLength" ? "at least " : "at most ";
    const Value* limit = Member(schema, keyword);
    uint64_t l = limit != nullptr && limit->IsUint64() ? limit->GetUint64() : 0;
    return "must be " + bound + Plural(l, "character") + " long (got " + std::to_string(n) +
           (keyword == "minLength" && inst != nullptr ? ": " + Quote(*inst) : "") + ")";
  }
  if (keyword == "minItems" || keyword == "maxItems") {
    size_t n = inst != nullptr && inst->IsArray() ? inst->Size() : 0;
    const Value* limit = Member(schema, keyword);
    uint64_t l = limit != nullptr && limit->IsUint64() ? limit->GetUint64() : 0;
    return std::string("must have ") + (keyword == "minItems" ? "at least " : "at most ") +
           Plural(l, "item") + " (got " + std::to_string(n) + ")";
  }
  if (keyword == "minProperties" || keyword == "maxProperties") {
    size_t n = inst != nullptr && inst->IsObject() ? inst->MemberCount() : 0;
    const Value* limit = Member(schema, keyword);
    uint64_t l = limit != nullptr && limit->IsUint64() ? limit->GetUint64() : 0;
    return std::string("must have ") + (keyword == "minProperties" ? "at least " : "at most ") +
           Count(l, "entry", "entries") + " (got " + std::to_string(n) + ")";
  }
  if (keyword == "uniqueItems") return "must be unique within the list (got " + Got(inst) + ")";
  if (keyword == "oneOf" || keyword == "anyOf") {
    const Value* alts = Member(schema, keyword);
    return DescribeAlternatives(keyword, alts == nullptr ? EmptyValue() : *alts, inst);
  }
  if (keyword == "allOf") return "does not satisfy all of its constraints";
  if (keyword == "not") {
    const Value* n = Member(schema, "not");
    const Value* d = Member(n, "description");
    if (d != nullptr && d->IsString()) {
      return "must not " + std::string(View(*d)) + " (got " + Got(inst) + ")";
    }
    const Value* p = Member(n, "pattern");
    if (p != nullptr) return "must not match " + Quote(*p) + " (got " + Got(inst) + ")";
    return "matches a form that is not allowed";
  }
  if (keyword == "dependencies") {
    const Value* deps = Member(schema, "dependencies");
    if (deps != nullptr && deps->IsObject() && inst != nullptr && inst->IsObject()) {
      for (const auto& d : deps->GetObject()) {
        if (Member(inst, View(d.name)) == nullptr || !d.value.IsArray()) continue;
        for (const auto& need : d.value.GetArray()) {
          if (need.IsString() && Member(inst, View(need)) == nullptr) {
            return "field " + Quote(d.name) + " requires field " + Quote(need);
          }
        }
      }
    }
    return "violates a field dependency";
  }
  if (keyword == "additionalItems") return "has more items than allowed";
  return "failed \"" + std::string(keyword) + "\" check";
}

}  // namespace portico::core::schema_text
