#include "controller/ctl/object_table.h"

#include <cstdio>
#include <ctime>
#include <map>

#include "controller/ctl/table_printer.h"

namespace portico::ctl {
namespace {

using Value = rapidjson::Value;

std::string Join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += sep;
    out += item;
  }
  return out;
}

std::string Cell(std::string text) { return text.empty() ? "<none>" : text; }

// KindColumn is one kind-specific column.
struct KindColumn {
  const char* header;
  std::string (*render)(const Value& object);
};

std::string GatewayAddress(const Value& o) {
  const Value* addresses = json::FindPath(o, "status.addresses");
  if (addresses == nullptr || !addresses->IsArray() || addresses->Empty()) return "";
  return json::GetString((*addresses)[0], "value");
}

std::string RouteHostnames(const Value& o) {
  const Value* hostnames = json::FindPath(o, "spec.hostnames");
  std::vector<std::string> out;
  if (hostnames != nullptr && hostnames->IsArray()) {
    for (const auto& h : hostnames->GetArray()) {
      if (h.IsString()) out.emplace_back(h.GetString(), h.GetStringLength());
    }
  }
  return Join(out, ",");
}

std::string ServicePorts(const Value& o) {
  const Value* ports = json::FindPath(o, "spec.ports");
  std::vector<std::string> out;
  if (ports != nullptr && ports->IsArray()) {
    for (const auto& p : ports->GetArray()) {
      std::optional<int64_t> port = json::GetInt(p, "port");
      if (!port) continue;
      out.push_back(std::to_string(*port) + "/" + json::GetString(p, "protocol", "TCP"));
    }
  }
  return Join(out, ",");
}

const std::map<std::string, std::vector<KindColumn>, std::less<>>& KindColumns() {
  static const auto* columns = new std::map<std::string, std::vector<KindColumn>, std::less<>>{
      {"GatewayClass",
       {{"CONTROLLER", [](const Value& o) { return json::GetString(o, "spec.controllerName"); }}}},
      {"Gateway",
       {{"CLASS", [](const Value& o) { return json::GetString(o, "spec.gatewayClassName"); }},
        {"ADDRESS", GatewayAddress}}},
      {"HTTPRoute", {{"HOSTNAMES", RouteHostnames}}},
      {"Service",
       {{"TYPE", [](const Value& o) { return json::GetString(o, "spec.type", "ClusterIP"); }},
        {"PORT(S)", ServicePorts}}},
      {"Secret", {{"TYPE", [](const Value& o) { return json::GetString(o, "type", "Opaque"); }}}},
  };
  return *columns;
}

// Condition is what the summary keeps of one condition type.
struct Condition {
  std::string status;
  std::string reason;
};

void Collect(const Value* conditions, std::vector<std::string>* order,
             std::map<std::string, Condition>* by_type) {
  if (conditions == nullptr || !conditions->IsArray()) return;
  for (const auto& c : conditions->GetArray()) {
    std::string type = json::GetString(c, "type");
    if (type.empty()) continue;
    Condition next{json::GetString(c, "status"), json::GetString(c, "reason")};
    auto it = by_type->find(type);
    if (it == by_type->end()) {
      order->push_back(type);
      by_type->emplace(type, next);
    } else if (it->second.status == "True" && next.status != "True") {
      it->second = next;  // the worst of several parents shows
    }
  }
}

}  // namespace

std::string StatusSummary(const Value& object) {
  std::string error = json::GetString(object, "portico.error");
  if (!error.empty()) {
    if (error.size() > 60) error = error.substr(0, 57) + "...";
    return "Error: " + error;
  }
  std::vector<std::string> order;
  std::map<std::string, Condition> by_type;
  Collect(json::FindPath(object, "status.conditions"), &order, &by_type);
  // Routes report per parent (status.parents), policies per ancestor (status.ancestors,
  // Gateway API PolicyAncestorStatus): the worst of each condition type shows.
  for (const char* per : {"status.parents", "status.ancestors"}) {
    const Value* entries = json::FindPath(object, per);
    if (entries == nullptr || !entries->IsArray()) continue;
    for (const auto& entry : entries->GetArray()) {
      Collect(json::Find(entry, "conditions"), &order, &by_type);
    }
  }
  if (order.empty()) return "-";
  std::vector<std::string> cells;
  for (const auto& type : order) {
    const Condition& c = by_type[type];
    if (c.status == "True") {
      cells.push_back(type);
    } else {
      cells.push_back(type + "=" + (c.status.empty() ? "Unknown" : c.status) +
                      (c.reason.empty() ? "" : "(" + c.reason + ")"));
    }
  }
  return Join(cells, ",");
}

std::string HumanAge(int64_t seconds) {
  if (seconds < 0) seconds = 0;
  int64_t minutes = seconds / 60;
  int64_t hours = seconds / 3600;
  int64_t days = hours / 24;
  int64_t years = days / 365;
  auto s = [](int64_t n, const char* unit) { return std::to_string(n) + unit; };
  if (seconds < 120) return s(seconds, "s");
  if (minutes < 10) {
    int64_t rest = seconds % 60;
    return rest == 0 ? s(minutes, "m") : s(minutes, "m") + s(rest, "s");
  }
  if (minutes < 180) return s(minutes, "m");
  if (hours < 8) {
    int64_t rest = minutes % 60;
    return rest == 0 ? s(hours, "h") : s(hours, "h") + s(rest, "m");
  }
  if (hours < 48) return s(hours, "h");
  if (hours < 24 * 8) {
    int64_t rest = hours % 24;
    return rest == 0 ? s(days, "d") : s(days, "d") + s(rest, "h");
  }
  if (days < 365 * 2) return s(days, "d");
  if (years < 8) {
    int64_t rest = days % 365;
    return rest == 0 ? s(years, "y") : s(years, "y") + s(rest, "d");
  }
  return s(years, "y");
}

std::optional<int64_t> ParseRfc3339(std::string_view text) {
  int year, month, day, hour, minute, second;
  int consumed = 0;
  std::string copy(text);
  if (std::sscanf(copy.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &year, &month, &day, &hour, &minute,
                  &second, &consumed) != 6) {
    return std::nullopt;
  }
  std::string_view rest = text.substr(static_cast<size_t>(consumed));
  if (rest.starts_with('.')) {
    rest.remove_prefix(1);
    while (!rest.empty() && rest.front() >= '0' && rest.front() <= '9') rest.remove_prefix(1);
  }
  int64_t offset = 0;
  if (rest == "Z" || rest == "z") {
    offset = 0;
  } else if (rest.size() == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':') {
    int oh = (rest[1] - '0') * 10 + (rest[2] - '0');
    int om = (rest[4] - '0') * 10 + (rest[5] - '0');
    offset = (rest[0] == '-' ? -1 : 1) * (oh * 3600 + om * 60);
  } else {
    return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  return static_cast<int64_t>(timegm(&tm)) - offset;
}

void PrintObjectTable(const std::vector<const Value*>& objects, bool all_namespaces,
                      int64_t now_unix_s, std::ostream& out) {
  bool show_namespace = false;
  if (all_namespaces) {
    for (const Value* o : objects) {
      if (!json::GetString(*o, "metadata.namespace").empty()) show_namespace = true;
    }
  }
  std::string kind = objects.empty() ? "" : json::GetString(*objects[0], "kind");
  const std::vector<KindColumn>* columns = nullptr;
  auto found = KindColumns().find(kind);
  if (found != KindColumns().end()) columns = &found->second;

  std::vector<std::string> headers;
  if (show_namespace) headers.push_back("NAMESPACE");
  headers.push_back("NAME");
  if (columns != nullptr) {
    for (const KindColumn& c : *columns) headers.push_back(c.header);
  }
  headers.push_back("STATUS");
  headers.push_back("AGE");
  TablePrinter table(headers);
  for (const Value* o : objects) {
    std::vector<std::string> row;
    if (show_namespace) row.push_back(json::GetString(*o, "metadata.namespace"));
    row.push_back(json::GetString(*o, "metadata.name"));
    if (columns != nullptr) {
      for (const KindColumn& c : *columns) row.push_back(Cell(c.render(*o)));
    }
    row.push_back(StatusSummary(*o));
    std::optional<int64_t> created =
        ParseRfc3339(json::GetString(*o, "metadata.creationTimestamp"));
    row.push_back(created ? HumanAge(now_unix_s - *created) : "<unknown>");
    table.AddRow(std::move(row));
  }
  table.Print(out);
}

}  // namespace portico::ctl
