// filter.h: the example.portico.io/RateLimitPolicy filter type (phase ratelimit). One instance
// per policy, created by the gateway from the policy's synced view:
//
//   {"metadata": {"namespace": "default", "name": "per-client", "generation": 1},
//    "limit": {"requests": 100, "intervalMs": 60000},
//    "key": {"type": "Route" | "ClientAddress" | "Header", "header": "X-Api-Key"}, "attach": ...}
//
// For each request of a target it takes a token from the bucket of the request's key (its route
// "namespace/name", its client address, or the header's first value; requests without the
// header share one bucket). With no token left it answers 429 with Retry-After (seconds until
// the next token) and, as on every response it lets through, the fields of
// draft-ietf-httpapi-ratelimit-headers-09:
//   RateLimit-Policy: "per-client";q=100;w=60      (quota, window in seconds)
//   RateLimit: "per-client";r=42;t=35              (remaining, seconds until the bucket is full)
// Time comes from the host's monotonic clock (FilterHost::NowMonotonicMs), the fake clock under
// the SDK's fake host.
//
// Threading: an instance is shared by every worker; its BucketTable locks per shard; the
// per-request state carries the decision from the request hook to the response hook.
#ifndef PORTICO_EXAMPLES_RATELIMIT_FILTER_H_
#define PORTICO_EXAMPLES_RATELIMIT_FILTER_H_

#include <memory>
#include <string_view>

#include "portico/sdk/filter.h"
#include "portico/sdk/status.h"

namespace example::ratelimit {

// CreateRateLimitFilter builds an instance from a synced view; InvalidArgument naming the field
// when the view is not one a RateLimitPolicy processor wrote.
portico::StatusOr<std::unique_ptr<portico::sdk::Filter>> CreateRateLimitFilter(
    std::string_view config);

}  // namespace example::ratelimit

#endif  // PORTICO_EXAMPLES_RATELIMIT_FILTER_H_
