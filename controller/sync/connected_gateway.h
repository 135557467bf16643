// connected_gateway.h: ConnectedGateway and SyncStats, what the ConfigSync server tells the
// admin API about the gateways connected to it (GET /api/v1/gateways, /metrics). Plain values
// with no gRPC types, so the admin library needs only this header.
//
// Thread-safety: value types.
#ifndef PORTICO_CONTROLLER_SYNC_CONNECTED_GATEWAY_H_
#define PORTICO_CONTROLLER_SYNC_CONNECTED_GATEWAY_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace portico::controller::sync {

// GatewayNack is one object a gateway rejected and the controller will not resend as is.
struct GatewayNack {
  std::string key;  // "group/kind/namespace/name"
  std::string hash;
  std::string reason;
};

// GatewayPlugin is one plugin of a gateway's inventory (its Hello).
struct GatewayPlugin {
  std::string name;
  std::string version;
  std::string sha256;
  std::vector<std::string> handlers;      // kinds it stages on the gateway ("Kind.group")
  std::vector<std::string> filter_types;  // filter types it registered, "name (phase)"
};

struct ConnectedGateway {
  std::string name;                   // Hello.name (the client id when empty)
  std::string client_id;              // Hello.client_id
  std::string peer;                   // gRPC peer ("ipv4:127.0.0.1:51234")
  std::vector<std::string> gateways;  // served Gateways, "namespace/name"
  std::string gateway_class;          // served GatewayClass ("" when none)
  std::vector<std::string> addresses;
  std::string state;              // "waiting for ready", "snapshot", "live"
  uint64_t acked_version = 0;     // newest version the gateway acked
  uint64_t sent_version = 0;      // newest version the controller sent (batch/snapshot end)
  uint64_t head = 0;              // the newest head told to the gateway (heartbeat or end)
  uint64_t lag = 0;               // the store's head now minus acked_version
  int64_t connected_unix_ms = 0;  // wall clock at Hello
  size_t synced_objects = 0;      // objects the controller believes the gateway holds
  std::vector<GatewayPlugin> plugins;  // inventory
  std::vector<GatewayNack> nacks;      // current nacks
};

// SyncStats are the ConfigSync server's counters (cumulative unless said otherwise).
struct SyncStats {
  bool serving = false;    // the gRPC server is listening
  size_t connected = 0;    // gateways with an open Watch stream (gauge)
  uint64_t snapshots = 0;  // snapshots sent (SnapshotEnd messages)
  uint64_t batches = 0;    // batches sent (BatchEnd messages)
  uint64_t events = 0;     // events sent, snapshots included
  uint64_t acks = 0;       // acks received
  uint64_t nacks = 0;      // objects nacked
  uint64_t rejected = 0;   // streams refused (bad first message, protocol errors)
};

}  // namespace portico::controller::sync

#endif  // PORTICO_CONTROLLER_SYNC_CONNECTED_GATEWAY_H_
