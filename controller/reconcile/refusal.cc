#include "controller/reconcile/refusal.h"

#include <string_view>

namespace portico::controller {
namespace {

constexpr size_t kMaxMessage = 4096;  // Kubernetes allows 32 KiB; a status stays readable

using Value = rapidjson::Value;
using Allocator = Value::AllocatorType;

Value Str(std::string_view s, Allocator& a) {
  return Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
}

Value Condition(std::string_view type, std::string_view status, int64_t generation,
                const std::string& message, Allocator& a) {
  Value c(rapidjson::kObjectType);
  c.AddMember("type", Str(type, a), a);
  c.AddMember("status", Str(status, a), a);
  c.AddMember("reason", "Invalid", a);
  c.AddMember("message", Str(message, a), a);
  c.AddMember("observedGeneration", Value(generation), a);
  return c;
}

// Conditions returns status.conditions, created when missing.
Value& Conditions(Value& status, Allocator& a) {
  if (!status.IsObject()) status.SetObject();
  auto it = status.FindMember("conditions");
  if (it == status.MemberEnd() || !it->value.IsArray()) {
    status.RemoveMember("conditions");
    status.AddMember("conditions", Value(rapidjson::kArrayType), a);
    it = status.FindMember("conditions");
  }
  return it->value;
}

// NoteOnAccepted appends `note` to every Accepted=True condition anywhere in `v`.
void NoteOnAccepted(Value& v, const std::string& note, Allocator& a) {
  if (v.IsArray()) {
    for (auto& e : v.GetArray()) NoteOnAccepted(e, note, a);
    return;
  }
  if (!v.IsObject()) return;
  for (auto& m : v.GetObject()) {
    if (std::string_view(m.name.GetString(), m.name.GetStringLength()) != "conditions" ||
        !m.value.IsArray()) {
      NoteOnAccepted(m.value, note, a);
      continue;
    }
    for (auto& c : m.value.GetArray()) {
      if (json::GetString(c, "type") != "Accepted" || json::GetString(c, "status") != "True") {
        continue;
      }
      std::string message = json::GetString(c, "message");
      message += (message.empty() ? "" : "; ") + note;
      c.RemoveMember("message");
      c.AddMember("message", Str(message, a), a);
    }
  }
}

}  // namespace

std::string RefusalMessage(const Refusal& refusal, int64_t serving_generation) {
  std::string out = "generation " + std::to_string(refusal.generation) + " refused: ";
  size_t shown = 0;
  for (const FieldViolation& v : refusal.violations) {
    std::string line = v.field.empty() ? v.message : v.field + ": " + v.message;
    if (shown > 0 && out.size() + line.size() > kMaxMessage) break;
    out += (shown++ == 0 ? "" : "; ") + line;
  }
  if (shown < refusal.violations.size()) {
    out += "; and " + std::to_string(refusal.violations.size() - shown) +
           " more (portico-ctl get -o yaml, /api/v1/errors)";
  }
  if (serving_generation > 0) {
    return out + "; generation " + std::to_string(serving_generation) + " keeps serving";
  }
  return out + "; no generation serves";
}

void ApplyRefusal(const Refusal& refusal, int64_t serving_generation, Value& status, Allocator& a) {
  const std::string message = RefusalMessage(refusal, serving_generation);
  if (serving_generation == 0) {
    Value& conditions = Conditions(status, a);
    conditions.PushBack(Condition("Accepted", "False", refusal.generation, message, a), a);
    return;
  }
  NoteOnAccepted(status,
                 "generation " + std::to_string(refusal.generation) +
                     " was refused (see the Refused condition), generation " +
                     std::to_string(serving_generation) + " keeps serving",
                 a);
  Conditions(status, a).PushBack(Condition("Refused", "True", refusal.generation, message, a), a);
}

}  // namespace portico::controller
