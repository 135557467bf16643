// policy_peers.h: ListPolicyPeers, the other policies of one kind in a namespace as conflict
// resolution reads them (Gateway API policy attachment: of two policies on one target the
// oldest wins): each peer's name, age and export, oldest first. A policy kind's processor writes
// its age into its export as "createdUnixMs" (CreatedUnixMs of metadata.creationTimestamp) and
// what it contends for beside it; listing through the context records the read, so a policy is
// requeued when a peer appears, changes or goes.
//
// Header-only. Threading: as ProcessContext (one process() call). Ownership: PolicyPeers owns
// the listed JSON; each Peer's `export_json` points into it and lives as long as it.
#ifndef PORTICO_SDK_POLICY_PEERS_H_
#define PORTICO_SDK_POLICY_PEERS_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "portico/sdk/json.h"
#include "portico/sdk/processor.h"
#include "portico/sdk/timestamp.h"

namespace portico::sdk {

// OlderPolicy orders policies by age: creation time, then name.
inline bool OlderPolicy(int64_t a_created, std::string_view a_name, int64_t b_created,
                        std::string_view b_name) {
  return std::tie(a_created, a_name) < std::tie(b_created, b_name);
}

struct PolicyPeers {
  struct Peer {
    std::string name;
    int64_t created_unix_ms = kUnknownCreatedUnixMs;
    const rapidjson::Value* export_json = nullptr;  // an object
  };
  std::unique_ptr<rapidjson::Document> list;
  std::vector<Peer> peers;  // oldest first
};

// ListPolicyPeers lists the objects of (group, kind) in `ns` other than `self` that have an
// export (a JSON object), oldest first.
inline PolicyPeers ListPolicyPeers(const ProcessContext& ctx, std::string_view group,
                                   std::string_view kind, std::string_view ns,
                                   std::string_view self) {
  PolicyPeers out;
  auto listed = json::Parse(ctx.ListExports(group, kind, ns), std::string(kind) + " list");
  if (!listed.ok() || !listed->IsArray()) return out;
  out.list = std::make_unique<rapidjson::Document>(std::move(listed).value());
  for (const auto& item : out.list->GetArray()) {
    PolicyPeers::Peer peer;
    peer.name = json::GetString(item, "name");
    peer.export_json = json::Find(item, "export");
    if (peer.name == self || peer.export_json == nullptr || !peer.export_json->IsObject()) continue;
    peer.created_unix_ms =
        json::GetInt(*peer.export_json, "createdUnixMs").value_or(kUnknownCreatedUnixMs);
    out.peers.push_back(std::move(peer));
  }
  std::sort(out.peers.begin(), out.peers.end(), [](const auto& a, const auto& b) {
    return OlderPolicy(a.created_unix_ms, a.name, b.created_unix_ms, b.name);
  });
  return out;
}

}  // namespace portico::sdk

#endif  // PORTICO_SDK_POLICY_PEERS_H_
