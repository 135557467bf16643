// route_table.cc: see route_table.h.
#include "core/runtime/routing/route_table.h"

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "core/runtime/routing/compiled_route.h"
#include "core/runtime/routing/flat_index.h"
#include "core/runtime/routing/shard.h"
#include "portico/sdk/abi.h"
#include "portico/sdk/json.h"

namespace portico::core::routing {
namespace internal {

// Host index kinds.
constexpr uint8_t kExactHost = 0;
constexpr uint8_t kWildcardHost = 1;  // keyed by the suffix with its dot: ".example.com"

// ListenerNode is one merged listener: its info and its hostname shards.
struct ListenerNode {
  ListenerInfo info;
  FlatIndex hosts;                   // (kExactHost | kWildcardHost, host) -> shards index
  std::vector<const Shard*> shards;  // held by RouteTable::shards_
  const Shard* any = nullptr;        // routes without hostnames
};

// ListenerSetNode is the listeners on one (address, port).
struct ListenerSetNode {
  std::string address;
  uint16_t port = 0;
  std::string protocol;
  std::vector<std::string> owners;
  std::vector<ListenerNode> listeners;  // sorted by hostname
  FlatIndex by_host;                    // listener hostnames -> listeners index
  uint32_t any_listener = FlatIndex::kNotFound;
};

}  // namespace internal

namespace {

using internal::CompiledRoute;
using internal::kExactHost;
using internal::kWildcardHost;
using internal::ListenerNode;
using internal::ListenerSetNode;
using internal::Shard;

constexpr size_t kMaxHost = 255;

bool IsWildcard(std::string_view h) { return h.size() > 2 && h[0] == '*' && h[1] == '.'; }

// NormalizeHost drops a ":port" suffix (keeping an IPv6 literal's brackets) and lower-cases the
// host into `buf`. A host longer than kMaxHost (no DNS name is) is returned as is.
std::string_view NormalizeHost(std::string_view host, char* buf) {
  if (!host.empty() && host[0] == '[') {
    size_t close = host.find(']');
    if (close != std::string_view::npos) host = host.substr(0, close + 1);
  } else if (size_t colon = host.rfind(':'); colon != std::string_view::npos) {
    bool digits = true;
    for (size_t i = colon + 1; i < host.size(); ++i)
      digits = digits && host[i] >= '0' && host[i] <= '9';
    if (digits) host = host.substr(0, colon);
  }
  if (host.size() > kMaxHost) return host;
  for (size_t i = 0; i < host.size(); ++i) {
    char c = host[i];
    buf[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return std::string_view(buf, host.size());
}

// FindHost looks `host` up in a hostname index: the exact name, then the wildcard suffixes from
// the most specific; calls `take(value)` for each hit until it returns true.
template <typename Take>
bool VisitHost(const FlatIndex& index, std::string_view host, Take take) {
  if (index.empty()) return false;
  if (uint32_t v = index.Find(kExactHost, host); v != FlatIndex::kNotFound && take(v)) return true;
  // "*.example.com" matches one or more labels before ".example.com".
  for (size_t i = 1; i < host.size(); ++i) {
    if (host[i] != '.') continue;
    uint32_t v = index.Find(kWildcardHost, host.substr(i));
    if (v != FlatIndex::kNotFound && take(v)) return true;
  }
  return false;
}

void AddHost(FlatIndex& index, std::string_view host, uint32_t value) {
  if (IsWildcard(host)) {
    index.Add(kWildcardHost, host.substr(1), value);
  } else {
    index.Add(kExactHost, host, value);
  }
}

// RawListener is one listener of a listener_set.v1 entry.
struct RawListener {
  std::string owner;
  std::string gateway;  // "ns/name"
  std::string name;
  std::string protocol;
  std::string hostname;
  std::optional<std::vector<std::string>> route_kinds;  // "<group>/<kind>"; absent: any
};

// RawSet is what the entries of one (address, port) hold.
struct RawSet {
  std::vector<RawListener> listeners;
  std::vector<std::string> entry_ids;  // sorted (entries come in id order)
};

StatusOr<std::vector<RawListener>> ParseListenerEntry(const rapidjson::Value& doc,
                                                      const std::string& owner) {
  std::vector<RawListener> out;
  const rapidjson::Value* gateway = json::Find(doc, "gateway");
  if (gateway == nullptr || !gateway->IsObject()) {
    return InvalidArgumentError("gateway: is required");
  }
  std::string gw = json::GetString(*gateway, "namespace") + "/" + json::GetString(*gateway, "name");
  const rapidjson::Value* listeners = json::Find(doc, "listeners");
  if (listeners == nullptr || !listeners->IsArray()) {
    return InvalidArgumentError("listeners: must be an array");
  }
  for (rapidjson::SizeType i = 0; i < listeners->Size(); ++i) {
    const rapidjson::Value& l = (*listeners)[i];
    std::string field = "listeners[" + std::to_string(i) + "]";
    RawListener raw;
    raw.owner = owner;
    raw.gateway = gw;
    raw.name = json::GetString(l, "name");
    raw.protocol = json::GetString(l, "protocol");
    if (raw.name.empty() || raw.protocol.empty()) {
      return InvalidArgumentError(field + ": name and protocol are required");
    }
    raw.hostname = json::GetString(l, "hostname");
    for (char& c : raw.hostname) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    if (const rapidjson::Value* kinds = json::Find(l, "routeKinds");
        kinds != nullptr && kinds->IsArray()) {
      raw.route_kinds.emplace();
      for (const rapidjson::Value& k : kinds->GetArray()) {
        raw.route_kinds->push_back(json::GetString(k, "group") + "/" + json::GetString(k, "kind"));
      }
    }
    out.push_back(std::move(raw));
  }
  return out;
}

// Target is a listener a route parent may attach to.
struct Target {
  size_t set;
  size_t listener;
  const RawListener* raw;
};

// ShardPlan is one shard to build or reuse.
struct ShardPlan {
  size_t set;
  size_t listener;
  std::string host;  // "" = any; "*.example.com"; "a.example.com"
  std::vector<std::shared_ptr<const CompiledRoute>> routes;
};

std::string ShardKey(const std::string& address, uint16_t port, const std::string& listener_host,
                     const std::string& host) {
  std::string key = address;
  key += '\0';
  key += std::to_string(port);
  key += '\0';
  key += listener_host;
  key += '\0';
  key += host;
  return key;
}

bool SameRoutes(const std::vector<std::shared_ptr<const CompiledRoute>>& a,
                const std::vector<std::shared_ptr<const CompiledRoute>>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

}  // namespace

RouteTable::RouteTable(Token) {}
RouteTable::~RouteTable() = default;

std::shared_ptr<const RouteTable> RouteTable::Build(const RuntimeSnapshot& snapshot,
                                                    const RouteTable* previous) {
  auto format = [&](const char* name) -> std::shared_ptr<const FormatEntries> {
    auto it = snapshot.formats.find(name);
    return it == snapshot.formats.end() ? nullptr : it->second;
  };
  std::shared_ptr<const FormatEntries> listener_entries = format(PORTICO_FORMAT_LISTENER_SET);
  std::shared_ptr<const FormatEntries> route_entries = format(PORTICO_FORMAT_ROUTE_RULES);
  if (previous != nullptr && previous->listener_source_ == listener_entries &&
      previous->route_source_ == route_entries) {
    return previous->shared_from_this();
  }

  auto table = std::make_shared<RouteTable>(Token{});
  table->listener_source_ = listener_entries;
  table->route_source_ = route_entries;
  std::map<std::string, std::string> refusals;  // owner -> reason (the first)
  auto refuse = [&](const std::string& owner, std::string reason) {
    refusals.emplace(owner, std::move(reason));
  };

  // 1. Listener sets: listeners grouped by (port, address).
  std::map<std::pair<uint16_t, std::string>, RawSet> raw_sets;
  if (listener_entries != nullptr) {
    for (const auto& [id, entry] : *listener_entries) {
      StatusOr<rapidjson::Document> doc = json::Parse(*entry.json, "listener_set.v1 " + id);
      if (!doc.ok()) {
        refuse(entry.owner, std::string(doc.status().message()));
        continue;
      }
      if (json::GetString(*doc, "entry") != "listeners") continue;  // tlsPolicy: not routing's
      std::optional<int64_t> port = json::GetInt(*doc, "port");
      if (!port || *port < 1 || *port > 65535) {
        refuse(entry.owner, "listener_set.v1 " + id + ": port must be 1-65535");
        continue;
      }
      StatusOr<std::vector<RawListener>> listeners = ParseListenerEntry(*doc, entry.owner);
      if (!listeners.ok()) {
        refuse(entry.owner,
               "listener_set.v1 " + id + ": " + std::string(listeners.status().message()));
        continue;
      }
      RawSet& set = raw_sets[{static_cast<uint16_t>(*port), json::GetString(*doc, "address")}];
      set.entry_ids.push_back(id);
      for (RawListener& l : *listeners) set.listeners.push_back(std::move(l));
    }
  }

  // Protocol conflicts: one protocol per (address, port), as within one Gateway. The protocol the
  // previous table served there wins; otherwise the first entry's (by id). Owners of listeners
  // with another protocol are refused.
  std::map<std::string, std::vector<Target>> attach;  // "gwns/gwname/listener" -> targets
  for (auto& [key, raw] : raw_sets) {
    const auto& [port, address] = key;
    std::string protocol;
    if (previous != nullptr) {
      if (const ListenerSetNode* old = previous->FindSet(address, port); old != nullptr) {
        for (const RawListener& l : raw.listeners) {
          if (l.protocol == old->protocol) protocol = old->protocol;
        }
      }
    }
    if (protocol.empty() && !raw.listeners.empty()) protocol = raw.listeners.front().protocol;
    std::set<std::string> dropped;
    for (const RawListener& l : raw.listeners) {
      if (l.protocol != protocol) {
        dropped.insert(l.owner);
        refuse(l.owner, "listener " + l.gateway + "/" + l.name + ": port " + std::to_string(port) +
                            (address.empty() ? "" : " on " + address) +
                            " is already used with protocol " + protocol + ", not " + l.protocol);
      }
    }
    auto node = std::make_unique<ListenerSetNode>();
    node->address = address;
    node->port = port;
    node->protocol = protocol;
    std::map<std::string, std::vector<const RawListener*>> by_host;
    for (const RawListener& l : raw.listeners) {
      if (dropped.count(l.owner) > 0) continue;
      by_host[l.hostname].push_back(&l);
      node->owners.push_back(l.owner);
    }
    if (by_host.empty()) continue;
    std::sort(node->owners.begin(), node->owners.end());
    node->owners.erase(std::unique(node->owners.begin(), node->owners.end()), node->owners.end());
    for (const auto& [host, members] : by_host) {
      ListenerNode listener;
      listener.info.address = address;
      listener.info.port = port;
      listener.info.protocol = protocol;
      listener.info.hostname = host;
      for (const RawListener* l : members) {
        listener.info.names.push_back(l->gateway + "/" + l->name);
        attach[l->gateway + "/" + l->name].push_back(
            Target{table->sets_.size(), node->listeners.size(), l});
      }
      std::sort(listener.info.names.begin(), listener.info.names.end());
      uint32_t index = static_cast<uint32_t>(node->listeners.size());
      if (host.empty()) {
        node->any_listener = index;
      } else {
        AddHost(node->by_host, host, index);
      }
      node->listeners.push_back(std::move(listener));
    }
    node->by_host.Seal();
    table->sets_.push_back(std::move(node));
  }
  // The raw listeners (pointed to by `attach`) live in raw_sets until the end of Build.

  // 2. Routes: compiled, or reused when the entry is unchanged.
  std::map<std::string, ShardPlan> plans;
  if (route_entries != nullptr) {
    table->routes_.reserve(route_entries->size());
    // An entry whose digest the previous table compiled is unchanged: reused. Unchanged entries
    // may carry no JSON (RuntimeConsumer::KeepsCompiled), so the digest is the identity.
    std::unordered_map<Digest128, std::shared_ptr<const CompiledRoute>, Digest128Hash> reusable;
    if (previous != nullptr) {
      reusable.reserve(previous->routes_.size());
      for (const auto& r : previous->routes_) reusable.emplace(r->digest, r);
    }
    for (const auto& [id, entry] : *route_entries) {
      std::shared_ptr<const CompiledRoute> route;
      if (auto it = reusable.find(entry.digest); it != reusable.end()) {
        route = it->second;
        ++table->stats_.routes_reused;
      } else if (entry.json == nullptr) {
        refuse(entry.owner, "route_rules.v1 " + id +
                                ": its JSON was dropped and no compiled form has its digest");
        continue;
      } else {
        StatusOr<std::shared_ptr<const CompiledRoute>> compiled =
            internal::CompileRoute(id, *entry.json, entry.digest);
        if (!compiled.ok()) {
          refuse(entry.owner,
                 "route_rules.v1 " + id + ": " + std::string(compiled.status().message()));
          continue;
        }
        route = std::move(*compiled);
      }
      table->routes_.push_back(route);
      table->stats_.rules += route->rules.size();

      // 3. Shard membership: each parent's listeners x effective hostnames.
      for (const internal::ParentRef& parent : route->parents) {
        auto targets = attach.find(parent.listener);
        if (targets == attach.end()) continue;
        for (const Target& t : targets->second) {
          if (t.raw->route_kinds.has_value()) {
            const std::vector<std::string>& kinds = *t.raw->route_kinds;
            if (std::find(kinds.begin(), kinds.end(), *route->group_kind) == kinds.end()) continue;
          }
          const ListenerSetNode& set = *table->sets_[t.set];
          const std::string& listener_host = set.listeners[t.listener].info.hostname;
          auto add = [&](const std::string& host) {
            ShardPlan& plan = plans[ShardKey(set.address, set.port, listener_host, host)];
            plan.set = t.set;
            plan.listener = t.listener;
            plan.host = host;
            plan.routes.push_back(route);
          };
          if (parent.hostnames.empty()) {
            add("");
          } else {
            for (const std::string& host : parent.hostnames) add(host);
          }
        }
      }
    }
  }
  table->stats_.routes = table->routes_.size();

  // 4. Shards: reused when their routes are the same compiled routes, else built.
  std::map<std::pair<size_t, size_t>, std::vector<std::pair<std::string, const Shard*>>>
      by_listener;
  for (auto& [key, plan] : plans) {
    std::sort(plan.routes.begin(), plan.routes.end());  // by address, as Shard keeps them
    plan.routes.erase(std::unique(plan.routes.begin(), plan.routes.end()), plan.routes.end());
    std::shared_ptr<const Shard> shard;
    if (previous != nullptr) {
      auto old = previous->shards_.find(key);
      if (old != previous->shards_.end() && SameRoutes(old->second->routes(), plan.routes)) {
        shard = old->second;
        ++table->stats_.shards_reused;
      }
    }
    if (shard == nullptr) shard = Shard::Build(std::move(plan.routes));
    by_listener[{plan.set, plan.listener}].emplace_back(plan.host, shard.get());
    table->shards_.emplace(key, std::move(shard));
  }
  for (auto& [where, shards] : by_listener) {
    ListenerNode& listener = table->sets_[where.first]->listeners[where.second];
    for (const auto& [host, shard] : shards) {
      if (host.empty()) {
        listener.any = shard;
      } else {
        AddHost(listener.hosts, host, static_cast<uint32_t>(listener.shards.size()));
        listener.shards.push_back(shard);
      }
    }
    listener.hosts.Seal();
  }

  table->stats_.listener_sets = table->sets_.size();
  for (const auto& set : table->sets_) table->stats_.listeners += set->listeners.size();
  table->stats_.shards = table->shards_.size();
  for (auto& [owner, reason] : refusals)
    table->refusals_.push_back(Refusal{owner, std::move(reason)});
  return table;
}

const ListenerSetNode* RouteTable::FindSet(std::string_view address, uint16_t port) const {
  // sets_ is sorted by (port, address) (built from an ordered map).
  auto it = std::lower_bound(sets_.begin(), sets_.end(), std::make_pair(port, address),
                             [](const std::unique_ptr<ListenerSetNode>& s,
                                const std::pair<uint16_t, std::string_view>& k) {
                               return s->port != k.first ? s->port < k.first
                                                         : std::string_view(s->address) < k.second;
                             });
  if (it == sets_.end() || (*it)->port != port || (*it)->address != address) return nullptr;
  return it->get();
}

std::vector<ListenerSocketSpec> RouteTable::Sockets() const {
  std::vector<ListenerSocketSpec> out;
  for (const auto& set : sets_) {
    out.push_back(ListenerSocketSpec{set->address, set->port, set->protocol, set->owners});
  }
  std::sort(out.begin(), out.end(), [](const ListenerSocketSpec& a, const ListenerSocketSpec& b) {
    return std::tie(a.address, a.port, a.protocol) < std::tie(b.address, b.port, b.protocol);
  });
  return out;
}

namespace {

const ListenerNode* SelectIn(const ListenerSetNode& set, std::string_view host) {
  uint32_t found = FlatIndex::kNotFound;
  VisitHost(set.by_host, host, [&](uint32_t v) {
    found = v;
    return true;
  });
  if (found == FlatIndex::kNotFound) found = set.any_listener;
  return found == FlatIndex::kNotFound ? nullptr : &set.listeners[found];
}

}  // namespace

const ListenerInfo* RouteTable::SelectListener(std::string_view address, uint16_t port,
                                               std::string_view host) const {
  const ListenerSetNode* set = FindSet(address, port);
  if (set == nullptr) return nullptr;
  char buf[kMaxHost];
  const ListenerNode* listener = SelectIn(*set, NormalizeHost(host, buf));
  return listener == nullptr ? nullptr : &listener->info;
}

MatchResult RouteTable::Match(std::string_view address, uint16_t port,
                              const RequestView& request) const {
  MatchResult result;
  const ListenerSetNode* set = FindSet(address, port);
  if (set == nullptr) return result;
  char buf[kMaxHost];
  const std::string_view host = NormalizeHost(request.host, buf);
  const ListenerNode* listener = SelectIn(*set, host);
  if (listener == nullptr) return result;
  result.listener = &listener->info;
  result.outcome = MatchOutcome::kNoRoute;
  // The most specific hostname with any matching rule wins: exact, wildcards, then any.
  const RouteAction* action = nullptr;
  VisitHost(listener->hosts, host, [&](uint32_t v) {
    action = listener->shards[v]->Match(request);
    return action != nullptr;
  });
  if (action == nullptr && listener->any != nullptr) action = listener->any->Match(request);
  if (action != nullptr) {
    result.outcome = MatchOutcome::kMatched;
    result.action = action;
  }
  return result;
}

std::vector<SyncNack> RefusalNacks(const std::vector<Refusal>& refusals) {
  std::vector<SyncNack> out;
  for (const Refusal& r : refusals) {
    StatusOr<StoreKey> key = StoreKey::Parse(r.owner);
    if (key.ok()) out.push_back(SyncNack{std::move(*key), "", r.reason});
  }
  return out;
}

}  // namespace portico::core::routing
