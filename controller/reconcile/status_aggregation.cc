#include "controller/reconcile/status_aggregation.h"

#include <algorithm>

namespace portico::controller {
namespace {

Status TopicError(std::string_view topic, std::string_view what) {
  return InvalidArgumentError("contribution topic \"" + std::string(topic) +
                              "\": " + std::string(what));
}

bool MatchesSelector(const rapidjson::Value& element, const std::string& key,
                     const std::string& value) {
  if (!element.IsObject()) return false;
  const rapidjson::Value* member = json::Find(element, key);
  if (member == nullptr) return false;
  if (member->IsString()) {
    return std::string_view(member->GetString(), member->GetStringLength()) == value;
  }
  if (member->IsInt64()) return std::to_string(member->GetInt64()) == value;
  return false;
}

rapidjson::Value MakeString(std::string_view s, rapidjson::Value::AllocatorType& allocator) {
  return rapidjson::Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), allocator);
}

}  // namespace

StatusOr<ContributionTopic> ContributionTopic::Parse(std::string_view topic) {
  ContributionTopic out;
  size_t colon = topic.find(':');
  if (colon == std::string_view::npos) return TopicError(topic, "expected \"<op>:<path>\"");
  std::string_view op = topic.substr(0, colon);
  if (op == "count") {
    out.op = Op::kCount;
  } else if (op == "append") {
    out.op = Op::kAppend;
  } else {
    return TopicError(topic, "unknown op \"" + std::string(op) + "\" (count, append)");
  }
  std::string_view path = topic.substr(colon + 1);
  size_t i = 0;
  while (true) {
    Segment segment;
    size_t start = i;
    while (i < path.size() && path[i] != '.' && path[i] != '[') ++i;
    segment.field = std::string(path.substr(start, i - start));
    if (segment.field.empty()) {
      return TopicError(topic, "empty field name at offset " + std::to_string(colon + 1 + start));
    }
    while (i < path.size() && path[i] == '[') {
      size_t close = path.find(']', i);
      if (close == std::string_view::npos) return TopicError(topic, "unclosed '['");
      std::string_view inside = path.substr(i + 1, close - i - 1);
      size_t eq = inside.find('=');
      if (eq == std::string_view::npos || eq == 0) {
        return TopicError(topic, "selector \"[" + std::string(inside) + "]\" is not [key=value]");
      }
      segment.selectors.emplace_back(std::string(inside.substr(0, eq)),
                                     std::string(inside.substr(eq + 1)));
      i = close + 1;
    }
    out.path.push_back(std::move(segment));
    if (i == path.size()) break;
    if (path[i] != '.') {
      return TopicError(topic, "expected '.' at offset " + std::to_string(colon + 1 + i));
    }
    ++i;
    if (i == path.size()) return TopicError(topic, "trailing '.'");
  }
  return out;
}

bool ApplyContribution(rapidjson::Value& status, rapidjson::Value::AllocatorType& allocator,
                       const ContributionTopic& topic, std::string_view json) {
  const bool append = topic.op == ContributionTopic::Op::kAppend;
  rapidjson::Value* cur = &status;
  for (size_t s = 0; s < topic.path.size(); ++s) {
    const ContributionTopic::Segment& segment = topic.path[s];
    const bool last = s + 1 == topic.path.size();
    if (!cur->IsObject()) return false;
    auto it = cur->FindMember(segment.field);
    if (it == cur->MemberEnd()) {
      if (!append) return false;
      rapidjson::Value created(!segment.selectors.empty() || last ? rapidjson::kArrayType
                                                                  : rapidjson::kObjectType);
      cur->AddMember(MakeString(segment.field, allocator), created, allocator);
      it = cur->FindMember(segment.field);
    }
    cur = &it->value;
    for (const auto& [key, value] : segment.selectors) {
      if (!cur->IsArray()) return false;
      rapidjson::Value* found = nullptr;
      for (auto& element : cur->GetArray()) {
        if (MatchesSelector(element, key, value)) {
          found = &element;
          break;
        }
      }
      if (found == nullptr) {
        if (!append) return false;
        rapidjson::Value element(rapidjson::kObjectType);
        element.AddMember(MakeString(key, allocator), MakeString(value, allocator), allocator);
        cur->PushBack(element, allocator);
        found = &(*cur)[cur->Size() - 1];
      }
      cur = found;
    }
  }
  if (append) {
    if (!cur->IsArray() || json.empty()) return false;
    rapidjson::Document parsed;
    parsed.Parse(json.data(), json.size());
    if (parsed.HasParseError()) return false;
    cur->PushBack(rapidjson::Value(parsed, allocator), allocator);
    return true;
  }
  int64_t delta = 1;
  if (!json.empty()) {
    rapidjson::Document parsed;
    parsed.Parse(json.data(), json.size());
    if (!parsed.HasParseError() && parsed.IsInt64()) delta = parsed.GetInt64();
  }
  if (cur->IsInt64()) {
    cur->SetInt64(cur->GetInt64() + delta);
  } else if (cur->IsNumber()) {
    cur->SetDouble(cur->GetDouble() + static_cast<double>(delta));
  } else {
    return false;
  }
  return true;
}

rapidjson::Document AggregateStatus(const std::optional<std::string>& base,
                                    std::vector<StatusContribution> contributions) {
  rapidjson::Document doc;
  if (base.has_value()) doc.Parse(base->data(), base->size());
  if (!base.has_value() || doc.HasParseError() || !doc.IsObject()) doc.SetObject();
  std::stable_sort(contributions.begin(), contributions.end(),
                   [](const StatusContribution& a, const StatusContribution& b) {
                     if (a.contributor != b.contributor) return a.contributor < b.contributor;
                     return a.topic < b.topic;
                   });
  const std::string* last_topic = nullptr;
  std::optional<ContributionTopic> parsed;
  for (const StatusContribution& c : contributions) {
    if (last_topic == nullptr || *last_topic != c.topic) {
      auto topic = ContributionTopic::Parse(c.topic);
      parsed =
          topic.ok() ? std::optional<ContributionTopic>(std::move(topic).value()) : std::nullopt;
      last_topic = &c.topic;
    }
    if (parsed.has_value()) ApplyContribution(doc, doc.GetAllocator(), *parsed, c.json);
  }
  return doc;
}

}  // namespace portico::controller
