// policy.h: the RateLimitPolicy kind (example.portico.io/v1alpha1) on the controller and in the
// gateway's handler.
//
//   apiVersion: example.portico.io/v1alpha1
//   kind: RateLimitPolicy
//   metadata: {name: per-client, namespace: default}
//   spec:
//     targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web}]  # or Gateway
//     limit: {requests: 100, interval: 1m}     # a token bucket: 100 tokens, 100 more per minute
//     key: {type: ClientAddress}               # Route (default) | ClientAddress | Header
//                                              # Header needs `header: X-Api-Key`
//
// Processor: the schema checks shapes; ParseSpec the rules it cannot express (an interval of 1 ms
// to 24 h, `header` exactly when the key is Header, no target twice). Each target must exist in
// the policy's namespace (ResolvedRefs); of two policies on one target the oldest
// (creationTimestamp, then name) applies there and the other is Accepted=False/Conflicted
// there. Status: one ancestor per target with Accepted and ResolvedRefs (and Conflicted).
// Synced ("attached": to the gateways holding a target) only when it applies somewhere.
// Handler: one filter_binding.v1 entry per policy, attached to the targets it applies to.
//
// Threading: stateless functions; any controller worker, the gateway's staging thread.
#ifndef PORTICO_EXAMPLES_RATELIMIT_POLICY_H_
#define PORTICO_EXAMPLES_RATELIMIT_POLICY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "portico/sdk/handler.h"
#include "portico/sdk/processor.h"
#include "portico/sdk/status.h"

namespace example::ratelimit {

inline constexpr char kGroup[] = "example.portico.io";
inline constexpr char kKind[] = "RateLimitPolicy";
inline constexpr char kGatewayGroup[] = "gateway.networking.k8s.io";
// The filter type the handler's bindings name (filter.h).
inline constexpr char kFilterType[] = "example.portico.io/RateLimitPolicy";
inline constexpr int64_t kMaxIntervalMs = 24 * 3600 * 1000;

// Target is one entry of spec.targetRefs (same namespace as the policy).
struct Target {
  std::string kind;  // "Gateway" or "HTTPRoute"
  std::string name;
  friend bool operator==(const Target&, const Target&) = default;
};

// RateLimitSpec is a validated spec.
struct RateLimitSpec {
  std::vector<Target> targets;
  int64_t requests = 0;
  int64_t interval_ms = 0;
  std::string key_type = "Route";  // Route | ClientAddress | Header
  std::string header;              // Header only
};

// ParseSpec reads a schema-valid spec; InvalidArgument naming the field for what the schema
// cannot express.
portico::StatusOr<RateLimitSpec> ParseSpec(const rapidjson::Value& spec);

portico::Status ProcessRateLimitPolicy(const portico::sdk::Object& obj,
                                       portico::sdk::ProcessContext& ctx,
                                       portico::sdk::ProcessResult& result);

portico::Status StageRateLimitPolicy(const portico::sdk::Txn& txn,
                                     const std::vector<portico::sdk::Change>& changes);

}  // namespace example::ratelimit

#endif  // PORTICO_EXAMPLES_RATELIMIT_POLICY_H_
