// backend_table.cc: see backend_table.h.
#include "core/runtime/routing/backend_table.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "portico/sdk/abi.h"
#include "portico/sdk/json.h"

namespace portico::core::routing {
namespace {

constexpr uint8_t kPortKey = 0;     // "ns/svc:port"
constexpr uint8_t kServiceKey = 1;  // "ns/svc": ExternalName fallback

// ServicePort is one TCP port of a `ports` entry.
struct ServicePort {
  std::string name;
  int64_t port = 0;
  int64_t target_port = 0;  // 0 when named
  std::string app_protocol;
};

struct ParsedService {
  std::string external_name;
  std::vector<ServicePort> ports;
};

bool IsTcp(const rapidjson::Value& p) {
  std::string protocol = json::GetString(p, "protocol", "TCP");
  return protocol == "TCP";
}

ParsedService ParseService(const rapidjson::Value& doc) {
  ParsedService out;
  if (json::GetString(doc, "serviceType") == "ExternalName") {
    out.external_name = json::GetString(doc, "externalName");
    if (!out.external_name.empty() && out.external_name.back() == '.') {
      out.external_name.pop_back();
    }
  }
  const rapidjson::Value* ports = json::Find(doc, "ports");
  if (ports == nullptr || !ports->IsArray()) return out;
  for (const rapidjson::Value& p : ports->GetArray()) {
    std::optional<int64_t> port = json::GetInt(p, "port");
    if (!port || *port < 1 || *port > 65535 || !IsTcp(p)) continue;
    ServicePort sp;
    sp.name = json::GetString(p, "name");
    sp.port = *port;
    sp.target_port = json::GetInt(p, "targetPort").value_or(0);  // a name reads as 0
    if (json::Find(p, "targetPort") == nullptr) sp.target_port = *port;
    sp.app_protocol = json::GetString(p, "appProtocol");
    out.ports.push_back(std::move(sp));
  }
  return out;
}

Endpoint MakeEndpoint(std::string address, uint16_t port) {
  Endpoint e;
  e.address = std::move(address);
  e.port = port;
  in_addr v4{};
  in6_addr v6{};
  if (inet_pton(AF_INET, e.address.c_str(), &v4) == 1) {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    sa.sin_addr = v4;
    std::memcpy(&e.sockaddr, &sa, sizeof(sa));
    e.sockaddr_len = sizeof(sa);
  } else if (inet_pton(AF_INET6, e.address.c_str(), &v6) == 1) {
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    sa.sin6_port = htons(port);
    sa.sin6_addr = v6;
    std::memcpy(&e.sockaddr, &sa, sizeof(sa));
    e.sockaddr_len = sizeof(sa);
  }
  return e;
}

// SliceEndpoints adds the ready endpoints of one `endpoints` entry for Service port `sp`.
void SliceEndpoints(const rapidjson::Value& slice, const ServicePort& sp,
                    std::set<std::pair<std::string, uint16_t>>& out) {
  const rapidjson::Value* ports = json::Find(slice, "ports");
  if (ports == nullptr || !ports->IsArray()) return;
  std::optional<int64_t> port;
  bool found = false;
  for (const rapidjson::Value& p : ports->GetArray()) {
    if (json::GetString(p, "name") != sp.name || !IsTcp(p)) continue;
    found = true;
    port = json::GetInt(p, "port");
    break;
  }
  if (!found) return;
  if (!port) port = sp.target_port;  // a slice port without a number: the numeric targetPort
  if (*port < 1 || *port > 65535) return;
  const rapidjson::Value* endpoints = json::Find(slice, "endpoints");
  if (endpoints == nullptr || !endpoints->IsArray()) return;
  for (const rapidjson::Value& e : endpoints->GetArray()) {
    const rapidjson::Value* ready = json::Find(e, "ready");
    if (ready != nullptr && ready->IsBool() && !ready->GetBool()) continue;
    const rapidjson::Value* addresses = json::Find(e, "addresses");
    if (addresses == nullptr || !addresses->IsArray()) continue;
    for (const rapidjson::Value& a : addresses->GetArray()) {
      if (a.IsString() && a.GetStringLength() > 0) {
        out.emplace(std::string(a.GetString(), a.GetStringLength()), static_cast<uint16_t>(*port));
      }
    }
  }
}

// Source is one backend.v1 entry of a Service.
struct Source {
  std::shared_ptr<const std::string> json;
  bool ports = false;  // the Service's `ports` entry (else a slice)
};

}  // namespace

std::shared_ptr<const BackendTable> BackendTable::Build(const RuntimeSnapshot& snapshot,
                                                        const BackendTable* previous) {
  std::shared_ptr<const FormatEntries> entries;
  if (auto it = snapshot.formats.find(PORTICO_FORMAT_BACKEND); it != snapshot.formats.end()) {
    entries = it->second;
  }
  if (previous != nullptr && previous->source_ == entries) return previous->shared_from_this();

  auto table = std::make_shared<BackendTable>(Token{});
  table->source_ = entries;

  // Group the entries by Service: the `ports` entry first, then slices by id. A `ports` id names
  // its Service; a slice is parsed for it unless the previous table saw the same bytes.
  std::map<const std::string*, const std::string*> known;  // entry JSON -> its service
  if (previous != nullptr) {
    for (const ServiceGroup& g : previous->groups_) {
      for (const auto& json : g.sources) known.emplace(json.get(), &g.service);
    }
  }
  std::map<std::string, std::vector<Source>> services;
  if (entries != nullptr) {
    for (const auto& [id, entry] : *entries) {
      bool ports = id.rfind("ports/", 0) == 0;
      std::string service;
      if (ports) {
        service = id.substr(6);
      } else if (id.rfind("endpoints/", 0) == 0) {
        if (auto k = known.find(entry.json.get()); k != known.end()) {
          service = *k->second;
        } else {
          StatusOr<rapidjson::Document> doc = json::Parse(*entry.json);
          if (!doc.ok()) continue;
          service = json::GetString(*doc, "namespace") + "/" + json::GetString(*doc, "service");
        }
      } else {
        continue;
      }
      std::vector<Source>& sources = services[service];
      Source s{entry.json, ports};
      if (ports) {
        sources.insert(sources.begin(), s);
      } else {
        sources.push_back(s);
      }
    }
  }

  auto old_group =
      previous != nullptr ? previous->groups_.begin() : std::vector<ServiceGroup>::const_iterator();
  auto old_end = previous != nullptr ? previous->groups_.end() : old_group;
  std::vector<std::shared_ptr<Backend>> fresh;  // built now; indexes assigned below
  for (auto& [service, sources] : services) {
    ServiceGroup group;
    group.service = service;
    for (const Source& s : sources) group.sources.push_back(s.json);
    while (old_group != old_end && old_group->service < service) ++old_group;
    if (old_group != old_end && old_group->service == service &&
        old_group->sources == group.sources) {
      group.backends = old_group->backends;
      table->groups_.push_back(std::move(group));
      continue;
    }
    if (sources.empty() || !sources.front().ports) continue;  // slices without their Service
    StatusOr<rapidjson::Document> svc = json::Parse(*sources.front().json);
    if (!svc.ok()) continue;
    ParsedService parsed = ParseService(*svc);
    std::vector<rapidjson::Document> slices;
    for (size_t i = 1; i < sources.size(); ++i) {
      StatusOr<rapidjson::Document> slice = json::Parse(*sources[i].json);
      if (slice.ok()) slices.push_back(std::move(*slice));
    }
    for (const ServicePort& sp : parsed.ports) {
      auto backend = std::make_shared<Backend>();
      backend->key = service + ":" + std::to_string(sp.port);
      backend->app_protocol = sp.app_protocol;
      backend->port_name = sp.name;
      backend->external_name = parsed.external_name;
      if (!parsed.external_name.empty()) {
        backend->endpoints.push_back(
            MakeEndpoint(parsed.external_name, static_cast<uint16_t>(sp.port)));
      } else {
        std::set<std::pair<std::string, uint16_t>> found;
        for (const rapidjson::Document& slice : slices) SliceEndpoints(slice, sp, found);
        for (const auto& [address, port] : found) {
          backend->endpoints.push_back(MakeEndpoint(address, port));
        }
      }
      group.backends.push_back(backend);
      fresh.push_back(std::move(backend));
    }
    if (!parsed.external_name.empty()) {
      auto fallback = std::make_shared<Backend>();
      fallback->key = service;
      fallback->external_name = parsed.external_name;
      fallback->endpoints.push_back(MakeEndpoint(parsed.external_name, 0));
      group.backends.push_back(fallback);
      fresh.push_back(std::move(fallback));
    }
    table->groups_.push_back(std::move(group));
  }

  // Indexes: a key keeps its previous index; new keys take freed indexes, lowest first.
  std::set<uint32_t> used;
  for (const ServiceGroup& g : table->groups_) {
    for (const auto& b : g.backends) table->backends_.push_back(b);
  }
  std::map<std::string_view, uint32_t> previous_index;
  if (previous != nullptr && !fresh.empty()) {
    for (const auto& b : previous->backends_) previous_index.emplace(b->key, b->index);
  }
  std::vector<std::shared_ptr<Backend>> unassigned;
  for (auto& b : fresh) {
    if (auto old = previous_index.find(b->key); old != previous_index.end()) {
      b->index = old->second;
      used.insert(b->index);
    } else {
      unassigned.push_back(b);
    }
  }
  std::set<const Backend*> fresh_set;
  for (const auto& b : fresh) fresh_set.insert(b.get());
  for (const auto& b : table->backends_) {
    if (fresh_set.count(b.get()) == 0) used.insert(b->index);  // reused with its index
  }
  uint32_t next = 0;
  for (auto& b : unassigned) {
    while (used.count(next) > 0) ++next;
    b->index = next;
    used.insert(next);
  }
  table->index_limit_ = used.empty() ? 0 : *used.rbegin() + 1;

  std::sort(table->backends_.begin(), table->backends_.end(),
            [](const auto& a, const auto& b) { return a->key < b->key; });
  for (size_t i = 0; i < table->backends_.size(); ++i) {
    const Backend& b = *table->backends_[i];
    bool fallback = b.key.find(':') == std::string::npos;
    table->index_.Add(fallback ? kServiceKey : kPortKey, b.key, static_cast<uint32_t>(i));
  }
  table->index_.Seal();
  return table;
}

const Backend* BackendTable::Find(std::string_view key) const {
  uint32_t i = index_.Find(kPortKey, key);
  if (i != FlatIndex::kNotFound) return backends_[i].get();
  // An ExternalName Service serves any port.
  size_t colon = key.rfind(':');
  if (colon == std::string_view::npos) return nullptr;
  i = index_.Find(kServiceKey, key.substr(0, colon));
  return i == FlatIndex::kNotFound ? nullptr : backends_[i].get();
}

std::vector<const Backend*> BackendTable::All() const {
  std::vector<const Backend*> out;
  for (const auto& b : backends_) out.push_back(b.get());
  return out;
}

}  // namespace portico::core::routing
