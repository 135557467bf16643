#include "controller/ctl/json_to_yaml.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace portico::ctl {
namespace {

bool LooksNumeric(std::string_view s) {
  if (s.empty()) return false;
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return false;
  if (s.substr(i).starts_with("0x") || s.substr(i).starts_with("0o")) return true;
  bool digit = false;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digit = true;
    } else if (c != '.' && c != 'e' && c != 'E' && c != '-' && c != '+' && c != '_' && c != ':') {
      return false;
    }
  }
  return digit;
}

void Emit(YAML::Emitter& out, const rapidjson::Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      out << YAML::Null;
      break;
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      out << v.GetBool();
      break;
    case rapidjson::kNumberType:
      if (v.IsInt64()) {
        out << v.GetInt64();
      } else if (v.IsUint64()) {
        out << v.GetUint64();
      } else {
        out << v.GetDouble();
      }
      break;
    case rapidjson::kStringType: {
      std::string s(v.GetString(), v.GetStringLength());
      if (s.find('\n') != std::string::npos) {
        out << YAML::Literal << s;
      } else if (NeedsQuotes(s)) {
        out << YAML::DoubleQuoted << s;
      } else {
        out << s;
      }
      break;
    }
    case rapidjson::kArrayType:
      if (v.Empty()) {
        out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
        break;
      }
      out << YAML::BeginSeq;
      for (const auto& item : v.GetArray()) Emit(out, item);
      out << YAML::EndSeq;
      break;
    case rapidjson::kObjectType:
      if (v.MemberCount() == 0) {
        out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
        break;
      }
      out << YAML::BeginMap;
      for (const auto& member : v.GetObject()) {
        out << YAML::Key;
        std::string key(member.name.GetString(), member.name.GetStringLength());
        if (NeedsQuotes(key)) {
          out << YAML::DoubleQuoted << key;
        } else {
          out << key;
        }
        out << YAML::Value;
        Emit(out, member.value);
      }
      out << YAML::EndMap;
      break;
  }
}

}  // namespace

bool NeedsQuotes(std::string_view s) {
  if (s.empty()) return true;
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  static constexpr std::array<std::string_view, 15> kReserved = {
      "true", "false", "yes",  "no",    "on",    "off",  "y", "n",
      "null", "~",     ".inf", "-.inf", "+.inf", ".nan", "<<"};
  for (std::string_view word : kReserved) {
    if (lower == word) return true;
  }
  if (LooksNumeric(s)) return true;
  // YAML 1.1 timestamps ("2024-05-01T12:00:00Z") read back as dates, not strings.
  if (s.size() >= 10 && std::isdigit(static_cast<unsigned char>(s[0])) && s[4] == '-' &&
      s[7] == '-') {
    return true;
  }
  // Leading or trailing space is lost in a plain scalar.
  return s.front() == ' ' || s.back() == ' ';
}

std::string JsonToYaml(const rapidjson::Value& value) {
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetSeqFormat(YAML::Block);
  out.SetMapFormat(YAML::Block);
  out.SetBoolFormat(YAML::TrueFalseBool);
  out.SetDoublePrecision(15);
  Emit(out, value);
  std::string text = out.c_str();
  if (text.empty() || text.back() != '\n') text += '\n';
  return text;
}

}  // namespace portico::ctl
