#include "controller/reconcile/conditions.h"

#include <string>
#include <unordered_map>
#include <utility>

namespace portico::controller {
namespace {

// Previous maps "path|type" to the condition's (status, lastTransitionTime).
using Previous = std::unordered_map<std::string, std::pair<std::string, std::string>>;

std::string StringMember(const rapidjson::Value& v, const char* name) {
  const rapidjson::Value* m = json::Find(v, name);
  return m != nullptr && m->IsString() ? std::string(m->GetString(), m->GetStringLength()) : "";
}

// ElementId names an array element stably across renderings.
std::string ElementId(const rapidjson::Value& element, size_t index) {
  if (element.IsObject()) {
    const rapidjson::Value* name = json::Find(element, "name");
    if (name != nullptr && name->IsString()) {
      return "name=" + std::string(name->GetString(), name->GetStringLength());
    }
    const rapidjson::Value* parent = json::Find(element, "parentRef");
    if (parent != nullptr) return "parentRef=" + json::Serialize(*parent);
  }
  return "#" + std::to_string(index);
}

void Collect(const rapidjson::Value& v, const std::string& path, Previous& out) {
  if (v.IsObject()) {
    for (const auto& m : v.GetObject()) {
      std::string name(m.name.GetString(), m.name.GetStringLength());
      if (name == "conditions" && m.value.IsArray()) {
        for (const auto& c : m.value.GetArray()) {
          std::string type = StringMember(c, "type");
          if (type.empty()) continue;
          out[path + "conditions|" + type] = {StringMember(c, "status"),
                                              StringMember(c, "lastTransitionTime")};
        }
      } else {
        Collect(m.value, path + name + ".", out);
      }
    }
  } else if (v.IsArray()) {
    size_t i = 0;
    for (const auto& e : v.GetArray()) {
      Collect(e, path + "[" + ElementId(e, i) + "].", out);
      ++i;
    }
  }
}

void Stamp(rapidjson::Value& v, const std::string& path, const Previous& previous,
           int64_t generation, std::string_view now, rapidjson::Value::AllocatorType& allocator) {
  if (v.IsObject()) {
    for (auto& m : v.GetObject()) {
      std::string name(m.name.GetString(), m.name.GetStringLength());
      if (name != "conditions" || !m.value.IsArray()) {
        Stamp(m.value, path + name + ".", previous, generation, now, allocator);
        continue;
      }
      for (auto& c : m.value.GetArray()) {
        if (!c.IsObject()) continue;
        if (!c.HasMember("observedGeneration")) {
          c.AddMember("observedGeneration", rapidjson::Value(generation), allocator);
        }
        const rapidjson::Value* ltt = json::Find(c, "lastTransitionTime");
        if (ltt != nullptr && ltt->IsString() && ltt->GetStringLength() > 0) continue;
        std::string time(now);
        auto it = previous.find(path + "conditions|" + StringMember(c, "type"));
        if (it != previous.end() && it->second.first == StringMember(c, "status") &&
            !it->second.second.empty()) {
          time = it->second.second;
        }
        c.RemoveMember("lastTransitionTime");
        c.AddMember("lastTransitionTime", rapidjson::Value(time.c_str(), allocator), allocator);
      }
    }
  } else if (v.IsArray()) {
    size_t i = 0;
    for (auto& e : v.GetArray()) {
      Stamp(e, path + "[" + ElementId(e, i) + "].", previous, generation, now, allocator);
      ++i;
    }
  }
}

}  // namespace

void StampConditions(rapidjson::Value& status, rapidjson::Value::AllocatorType& allocator,
                     const rapidjson::Value* previous, int64_t generation, std::string_view now) {
  Previous before;
  if (previous != nullptr) Collect(*previous, "", before);
  Stamp(status, "", before, generation, now, allocator);
}

}  // namespace portico::controller
