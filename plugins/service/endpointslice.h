// endpointslice.h: the EndpointSlice kind (discovery.k8s.io/v1): processor and gateway handler.
//
// The processor validates the address type, every address against it, ports (unique names,
// numbers) and endpoint conditions, looks up the owning Service (label
// kubernetes.io/service-name; a recorded read, so the slice's status follows the Service), and
// syncs a normalised view with the conditions' defaults applied (ready and serving default to
// true, terminating to false). The handler stages it as a backend.v1 "endpoints" entry.
// Threading: stateless; process() may run concurrently; stage() on the gateway's sync thread.
#ifndef PORTICO_PLUGINS_SERVICE_ENDPOINTSLICE_H_
#define PORTICO_PLUGINS_SERVICE_ENDPOINTSLICE_H_

#include <vector>

#include "portico/sdk/handler.h"
#include "portico/sdk/processor.h"

namespace portico::plugins::service {

inline constexpr char kDiscoveryGroup[] = "discovery.k8s.io";
inline constexpr char kServiceNameLabel[] = "kubernetes.io/service-name";

Status ProcessEndpointSlice(const sdk::Object& obj, sdk::ProcessContext& ctx,
                            sdk::ProcessResult& result);
Status StageEndpointSlice(const sdk::Txn& txn, const std::vector<sdk::Change>& changes);

}  // namespace portico::plugins::service

#endif  // PORTICO_PLUGINS_SERVICE_ENDPOINTSLICE_H_
