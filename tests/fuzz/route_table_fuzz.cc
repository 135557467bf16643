// route_table_fuzz: RouteTable::Build and Match on any listener_set.v1 and route_rules.v1
// contributions and any request. Build never fails (what it cannot use is refused) and Match
// never crashes; and a table rebuilt from a previous one (sharing its unchanged routes and
// shards) routes every request exactly as a table built from scratch does.
//
// Input: sections separated by a line "---": the first is a listener_set.v1 entry, the last
// the request (host, path, query, method on the first four lines, then "name: value" header
// lines), the ones between route_rules.v1 entries. The rebuilt table's previous one holds only
// the first route entry, so the reuse paths (kept routes, kept and rebuilt shards) all run.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/runtime/routing/route_table.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using portico::core::FormatEntries;
using portico::core::RuntimeEntry;
using portico::core::RuntimeSnapshot;
using portico::core::routing::HeaderLambda;
using portico::core::routing::MatchResult;
using portico::core::routing::RequestView;
using portico::core::routing::RouteTable;

std::vector<std::string_view> Split(std::string_view text, std::string_view separator) {
  std::vector<std::string_view> out;
  while (true) {
    size_t at = text.find(separator);
    if (at == std::string_view::npos) {
      out.push_back(text);
      return out;
    }
    out.push_back(text.substr(0, at));
    text.remove_prefix(at + separator.size());
  }
}

RuntimeSnapshot SnapshotOf(std::string_view listeners, const std::vector<std::string_view>& routes,
                           uint64_t generation) {
  RuntimeSnapshot snapshot;
  snapshot.generation = generation;
  auto sets = std::make_shared<FormatEntries>();
  sets->emplace("gateway/infra/web/80",
                RuntimeEntry("gateway.networking.k8s.io/Gateway/infra/web",
                             std::make_shared<const std::string>(listeners)));
  snapshot.formats["listener_set.v1"] = sets;
  if (!routes.empty()) {
    auto rules = std::make_shared<FormatEntries>();
    for (size_t i = 0; i < routes.size(); ++i) {
      std::string name = "r" + std::to_string(i);
      rules->emplace("httproute/infra/" + name,
                     RuntimeEntry("gateway.networking.k8s.io/HTTPRoute/infra/" + name,
                                  std::make_shared<const std::string>(routes[i])));
    }
    snapshot.formats["route_rules.v1"] = rules;
  }
  return snapshot;
}

// Outcome renders what a match decided, comparable across tables.
std::string Outcome(const MatchResult& m) {
  std::string out = std::to_string(static_cast<int>(m.outcome));
  if (m.listener != nullptr) {
    out += " listener " + m.listener->hostname + "/" + m.listener->protocol;
    for (const std::string& name : m.listener->names) out += " " + name;
  }
  if (m.action != nullptr) {
    out += " rule " + m.action->route_key + "#" + m.action->rule_id + " backends " +
           std::to_string(m.action->backends.size()) + " filters " +
           std::to_string(m.action->filters.size());
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> sections = Split(input, "\n---\n");
  if (sections.size() < 2) return 0;
  std::string_view listeners = sections.front();
  std::vector<std::string_view> routes(sections.begin() + 1, sections.end() - 1);
  std::vector<std::string_view> request_lines = Split(sections.back(), "\n");
  request_lines.resize(std::max<size_t>(request_lines.size(), 4));

  std::map<std::string, std::string, std::less<>> headers;
  for (size_t i = 4; i < request_lines.size(); ++i) {
    size_t colon = request_lines[i].find(": ");
    if (colon == std::string_view::npos) continue;
    std::string name(request_lines[i].substr(0, colon));
    for (char& c : name) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    headers.emplace(std::move(name), std::string(request_lines[i].substr(colon + 2)));
  }
  auto header_source = HeaderLambda([&](std::string_view name) -> std::optional<std::string_view> {
    auto it = headers.find(name);
    if (it == headers.end()) return std::nullopt;
    return std::string_view(it->second);
  });
  RequestView request;
  request.host = request_lines[0];
  request.path = request_lines[1];
  request.query = request_lines[2];
  request.method = request_lines[3];
  request.headers = &header_source;

  RuntimeSnapshot all = SnapshotOf(listeners, routes, 2);
  std::shared_ptr<const RouteTable> fresh = RouteTable::Build(all, nullptr);
  std::vector<std::string_view> first(routes.begin(),
                                      routes.begin() + std::min<size_t>(1, routes.size()));
  std::shared_ptr<const RouteTable> before =
      RouteTable::Build(SnapshotOf(listeners, first, 1), nullptr);
  std::shared_ptr<const RouteTable> rebuilt = RouteTable::Build(all, before.get());
  FUZZ_CHECK(fresh != nullptr && rebuilt != nullptr, "Build returned no table");
  FUZZ_CHECK(fresh->Refusals().size() == rebuilt->Refusals().size(),
             "fresh refuses %zu owners, rebuilt %zu", fresh->Refusals().size(),
             rebuilt->Refusals().size());

  static const bool print = std::getenv("PORTICO_FUZZ_PRINT") != nullptr;  // to check seeds
  if (print) {
    for (const auto& refusal : fresh->Refusals()) {
      std::fprintf(stderr, "refused %s: %s\n", refusal.owner.c_str(), refusal.reason.c_str());
    }
  }
  for (const auto& socket : fresh->Sockets()) {
    std::string a = Outcome(fresh->Match(socket.address, socket.port, request));
    std::string b = Outcome(rebuilt->Match(socket.address, socket.port, request));
    if (print) std::fprintf(stderr, "%s:%u: %s\n", socket.address.c_str(), socket.port, a.c_str());
    FUZZ_CHECK(a == b, "on %s:%u fresh matched [%s], rebuilt [%s]", socket.address.c_str(),
               static_cast<unsigned>(socket.port), a.c_str(), b.c_str());
    // Matching twice decides the same (no state carried between requests).
    FUZZ_CHECK(a == Outcome(fresh->Match(socket.address, socket.port, request)),
               "a second match differs: [%s]", a.c_str());
  }
  FUZZ_CHECK(fresh->Sockets() == rebuilt->Sockets(), "fresh and rebuilt tables bind differently");
  return 0;
}
