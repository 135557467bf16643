#include "controller/reconcile/sync_feedback.h"

#include <arpa/inet.h>

#include <string_view>

namespace portico::controller {
namespace {

using rapidjson::Value;

std::string_view StringMember(const Value& object, const char* name) {
  auto it = object.FindMember(name);
  if (it == object.MemberEnd() || !it->value.IsString()) return {};
  return {it->value.GetString(), it->value.GetStringLength()};
}

void SetString(Value& object, const char* name, const std::string& text,
               Value::AllocatorType& allocator) {
  Value value(text.c_str(), static_cast<rapidjson::SizeType>(text.size()), allocator);
  auto it = object.FindMember(name);
  if (it != object.MemberEnd()) {
    it->value = std::move(value);
  } else {
    object.AddMember(Value(name, allocator), std::move(value), allocator);
  }
}

void SetCondition(const SyncFeedback& feedback, Value& condition, Value::AllocatorType& allocator) {
  SetString(condition, "status", feedback.status, allocator);
  SetString(condition, "reason", feedback.reason, allocator);
  SetString(condition, "message", feedback.message, allocator);
  condition.RemoveMember("lastTransitionTime");  // restamped from the previous rendering
}

// ReplacePlaceholders walks `value` and gives every Unknown Programmed condition the feedback.
void ReplacePlaceholders(const SyncFeedback& feedback, Value& value,
                         Value::AllocatorType& allocator) {
  if (value.IsArray()) {
    for (Value& element : value.GetArray()) ReplacePlaceholders(feedback, element, allocator);
    return;
  }
  if (!value.IsObject()) return;
  for (auto& member : value.GetObject()) {
    std::string_view name(member.name.GetString(), member.name.GetStringLength());
    if (name == "conditions" && member.value.IsArray()) {
      for (Value& condition : member.value.GetArray()) {
        if (condition.IsObject() && StringMember(condition, "type") == "Programmed" &&
            StringMember(condition, "status") == "Unknown") {
          SetCondition(feedback, condition, allocator);
        }
      }
    } else {
      ReplacePlaceholders(feedback, member.value, allocator);
    }
  }
}

bool HasTopLevelProgrammed(const Value& status) {
  auto it = status.FindMember("conditions");
  if (it == status.MemberEnd() || !it->value.IsArray()) return false;
  for (const Value& condition : it->value.GetArray()) {
    if (condition.IsObject() && StringMember(condition, "type") == "Programmed") return true;
  }
  return false;
}

bool IsIpAddress(const std::string& text) {
  unsigned char buffer[16];
  return inet_pton(AF_INET, text.c_str(), buffer) == 1 ||
         inet_pton(AF_INET6, text.c_str(), buffer) == 1;
}

}  // namespace

void ApplySyncFeedback(const SyncFeedback& feedback, Value& status,
                       Value::AllocatorType& allocator) {
  if (!status.IsObject()) return;
  ReplacePlaceholders(feedback, status, allocator);
  if ((feedback.status == "False" || !feedback.missing_handlers.empty()) &&
      !HasTopLevelProgrammed(status)) {
    auto it = status.FindMember("conditions");
    if (it == status.MemberEnd() || !it->value.IsArray()) {
      status.RemoveMember("conditions");
      status.AddMember("conditions", Value(rapidjson::kArrayType), allocator);
      it = status.FindMember("conditions");
    }
    Value condition(rapidjson::kObjectType);
    condition.AddMember("type", "Programmed", allocator);
    SetCondition(feedback, condition, allocator);
    it->value.PushBack(std::move(condition), allocator);
  }
  if (!feedback.addresses.empty()) {
    auto it = status.FindMember("addresses");
    if (it == status.MemberEnd() || !it->value.IsArray() || it->value.Empty()) {
      Value addresses(rapidjson::kArrayType);
      for (const std::string& address : feedback.addresses) {
        Value entry(rapidjson::kObjectType);
        SetString(entry, "type", IsIpAddress(address) ? "IPAddress" : "Hostname", allocator);
        SetString(entry, "value", address, allocator);
        addresses.PushBack(std::move(entry), allocator);
      }
      status.RemoveMember("addresses");
      status.AddMember("addresses", std::move(addresses), allocator);
    }
  }
}

}  // namespace portico::controller
