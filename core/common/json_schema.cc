#include "core/common/json_schema.h"

#include "core/common/json_schema_messages.h"
#include "core/common/json_schema_violations.h"

#include <rapidjson/internal/regex.h>
#include <rapidjson/pointer.h>
#include <rapidjson/schema.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace portico::core {
namespace {

using rapidjson::Value;
using schema_text::IsPlainName;
using schema_text::Member;
using schema_text::Quote;
using schema_text::QuoteString;
using schema_text::Reason;
using schema_text::Resolve;
using schema_text::View;

// silently skip it).
Status CheckRegex(std::string_view pattern, const std::string& where) {
  std::string p(pattern);
  rapidjson::internal::GenericRegex<rapidjson::UTF8<>> regex(p.c_str());
  if (regex.IsValid()) return OkStatus();
  return InvalidArgumentError(where + ": pattern " + QuoteString(pattern) +
                              " is not supported by RapidJSON's regex engine (no \\d, \\w, "
                              "\\-, \\/, (?:...), lookaround, or empty alternatives like "
                              "\"^$|...\")");
}

// CheckSchema walks a schema for what RapidJSON 1.1 would silently get wrong: patterns its regex
// engine cannot compile, "$ref"s that do not resolve locally, and "patternProperties". Only
// keywords that hold schemas are descended into, so data ("enum", "default") is never mistaken
// for a schema, whatever its property names.
Status CheckSchema(const Value& root, const Value& schema, const std::string& at) {
  if (!schema.IsObject()) return OkStatus();
  for (const auto& m : schema.GetObject()) {
    std::string_view name = View(m.name);
    std::string here = at + "/" + std::string(name);
    if (name == "pattern" && m.value.IsString()) {
      PORTICO_RETURN_IF_ERROR(CheckRegex(View(m.value), here));
    } else if (name == "patternProperties") {
      // RapidJSON 1.1 mis-attributes patternProperties results (a valid member can fail with
      // "type"), so a schema using it would reject good objects.
      return InvalidArgumentError(here +
                                  ": not supported (RapidJSON 1.1 validates it incorrectly); use "
                                  "\"additionalProperties\" with a schema");
    } else if (name == "$ref" && m.value.IsString()) {
      if (Resolve(root, &schema) == nullptr) {
        return InvalidArgumentError(here + ": " + Quote(m.value) +
                                    " does not resolve (only local references \"#/...\" are "
                                    "supported)");
      }
    } else if ((name == "properties" || name == "definitions" || name == "dependencies") &&
               m.value.IsObject()) {
      for (const auto& sub : m.value.GetObject()) {
        PORTICO_RETURN_IF_ERROR(
            CheckSchema(root, sub.value, here + "/" + std::string(View(sub.name))));
      }
    } else if ((name == "allOf" || name == "anyOf" || name == "oneOf" || name == "items") &&
               m.value.IsArray()) {
      for (rapidjson::SizeType i = 0; i < m.value.Size(); ++i) {
        PORTICO_RETURN_IF_ERROR(CheckSchema(root, m.value[i], here + "/" + std::to_string(i)));
      }
    } else if (name == "items" || name == "additionalItems" || name == "additionalProperties" ||
               name == "not") {
      PORTICO_RETURN_IF_ERROR(CheckSchema(root, m.value, here));
    }
  }
  return OkStatus();
}

// RenderPath turns a JSON pointer into "spec.rules[0].matches[0]", walking `doc` to tell
// array indexes from object keys that happen to be numeric.
std::string RenderPath(const Value& doc, const rapidjson::Pointer::Token* tokens, size_t count) {
  std::string out;
  const Value* cur = &doc;
  for (size_t i = 0; i < count; ++i) {
    std::string_view name(tokens[i].name, tokens[i].length);
    if (cur != nullptr && cur->IsArray()) {
      out += "[" + std::string(name) + "]";
      cur = tokens[i].index < cur->Size() ? &(*cur)[tokens[i].index] : nullptr;
      continue;
    }
    if (IsPlainName(name)) {
      if (!out.empty()) out += ".";
      out += name;
    } else {
      out += "[" + QuoteString(name) + "]";
    }
    cur = Member(cur, name);
  }
  return out;
}

const Value* FindDefault(const Value& root, const Value& prop_schema) {
  if (const Value* d = Member(&prop_schema, "default")) return d;
  const Value* resolved = Resolve(root, &prop_schema);
  return resolved == nullptr ? nullptr : Member(resolved, "default");
}

void Default(const Value& root, const Value& schema, Value& v, Value::AllocatorType& a, int depth) {
  if (depth > 64) return;  // documents nested this deep are rejected by Validate anyway
  const Value* node = Resolve(root, &schema);
  if (node == nullptr || !node->IsObject()) return;
  if (const Value* all = Member(node, "allOf"); all != nullptr && all->IsArray()) {
    for (const auto& sub : all->GetArray()) Default(root, sub, v, a, depth + 1);
  }
  if (v.IsObject()) {
    const Value* props = Member(node, "properties");
    if (props != nullptr && props->IsObject()) {
      for (const auto& p : props->GetObject()) {
        auto it = v.FindMember(p.name);
        if (it == v.MemberEnd() || it->value.IsNull()) {
          const Value* def = FindDefault(root, p.value);
          if (def == nullptr) continue;
          if (it == v.MemberEnd()) {
            v.AddMember(Value(p.name, a), Value(*def, a), a);
            it = v.FindMember(p.name);
          } else {
            it->value.CopyFrom(*def, a);
          }
        }
        Default(root, p.value, it->value, a, depth + 1);
      }
    }
    const Value* extra = Member(node, "additionalProperties");
    if (extra != nullptr && extra->IsObject()) {
      for (auto& m : v.GetObject()) {
        if (props == nullptr || !props->IsObject() || !props->HasMember(m.name)) {
          Default(root, *extra, m.value, a, depth + 1);
        }
      }
    }
  } else if (v.IsArray()) {
    const Value* items = Member(node, "items");
    if (items != nullptr && items->IsObject()) {
      for (auto& e : v.GetArray()) Default(root, *items, e, a, depth + 1);
    }
  }
}

}  // namespace

struct SchemaValidator::Impl {
  rapidjson::Document schema;
  std::string what;

  std::mutex mu;
  std::vector<std::unique_ptr<rapidjson::SchemaDocument>> idle;  // guarded by mu

  // Lease lends one compiled schema document to a single Validate call.
  class Lease {
   public:
    explicit Lease(Impl& impl) : impl_(impl) {
      {
        std::lock_guard<std::mutex> lock(impl_.mu);
        if (!impl_.idle.empty()) {
          doc_ = std::move(impl_.idle.back());
          impl_.idle.pop_back();
        }
      }
      // Compiling reads the schema Document only, so it may run outside the lock.
      if (doc_ == nullptr) doc_ = std::make_unique<rapidjson::SchemaDocument>(impl_.schema);
    }
    ~Lease() {
      std::lock_guard<std::mutex> lock(impl_.mu);
      impl_.idle.push_back(std::move(doc_));
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    const rapidjson::SchemaDocument& get() const { return *doc_; }

   private:
    Impl& impl_;
    std::unique_ptr<rapidjson::SchemaDocument> doc_;
  };
};

StatusOr<SchemaValidator> SchemaValidator::Compile(std::string_view schema_json,
                                                   std::string_view what) {
  auto impl = std::make_shared<Impl>();
  impl->what = std::string(what);
  PORTICO_ASSIGN_OR_RETURN(impl->schema, json::Parse(schema_json, what));
  if (!impl->schema.IsObject()) {
    return InvalidArgumentError(impl->what + ": a JSON Schema must be an object");
  }
  PORTICO_RETURN_IF_ERROR(CheckSchema(impl->schema, impl->schema, "#").WithPrefix(impl->what));
  impl->idle.push_back(std::make_unique<rapidjson::SchemaDocument>(impl->schema));
  return SchemaValidator(std::move(impl));
}

std::optional<SchemaViolation> SchemaValidator::FirstViolation(const rapidjson::Value& doc) const {
  Impl::Lease lease(*impl_);
  rapidjson::SchemaValidator validator(lease.get());
  if (doc.Accept(validator)) return std::nullopt;

  const char* invalid_keyword = validator.GetInvalidSchemaKeyword();
  std::string keyword = invalid_keyword == nullptr ? "" : invalid_keyword;
  const Value* schema_node = validator.GetInvalidSchemaPointer().Get(impl_->schema);
  const auto& doc_pointer = validator.GetInvalidDocumentPointer();
  const Value* inst = doc_pointer.Get(doc);
  size_t count = doc_pointer.GetTokenCount();
  std::string_view last_token;
  // An unknown field is reported at its parent: "spec: unknown field "x"".
  if (keyword == "additionalProperties" && count > 0) {
    last_token = std::string_view(doc_pointer.GetTokens()[count - 1].name,
                                  doc_pointer.GetTokens()[count - 1].length);
    --count;
  }
  return SchemaViolation{RenderPath(doc, doc_pointer.GetTokens(), count),
                         Reason(keyword, schema_node, inst, last_token)};
}

Status SchemaValidator::Validate(const rapidjson::Value& doc, std::string_view object_name) const {
  std::optional<SchemaViolation> first = FirstViolation(doc);
  if (!first.has_value()) return OkStatus();
  std::string message(object_name);
  if (!first->field.empty()) message += (message.empty() ? "" : ": ") + first->field;
  if (!message.empty()) message += ": ";
  message += first->reason;
  return InvalidArgumentError(std::move(message));
}

std::vector<SchemaViolation> SchemaValidator::Violations(const rapidjson::Value& doc,
                                                         size_t max) const {
  std::optional<SchemaViolation> first = FirstViolation(doc);
  if (!first.has_value() || max == 0) return {};
  std::vector<SchemaViolation> all = schema_text::CollectViolations(impl_->schema, doc, max);
  // RapidJSON reports some failures at an ancestor of the walk's ("allOf" at the object where
  // the walk names the field); when the walk found nothing at or below RapidJSON's field, its
  // failure leads, so the list never misses what Validate says.
  const std::string& at = first->field;
  bool covered = std::any_of(all.begin(), all.end(), [&](const SchemaViolation& v) {
    return at.empty() ? true
                      : v.field == at || (v.field.starts_with(at) &&
                                          (v.field[at.size()] == '.' || v.field[at.size()] == '['));
  });
  if (!covered || all.empty()) {
    all.insert(all.begin(), std::move(*first));
    if (all.size() > max) all.pop_back();
  }
  return all;
}

void SchemaValidator::ApplyDefaults(rapidjson::Value& doc,
                                    rapidjson::Value::AllocatorType& allocator) const {
  Default(impl_->schema, impl_->schema, doc, allocator, 0);
}

const rapidjson::Value& SchemaValidator::schema() const { return impl_->schema; }

}  // namespace portico::core
