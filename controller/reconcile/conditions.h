// conditions.h: StampConditions, the host's part of Kubernetes conditions: every "conditions"
// array anywhere in a status gets observedGeneration (unless the processor set it) and a
// lastTransitionTime that moves only when the condition's status changes.
//
// A condition is matched with its previous version by its place and type: the path of objects
// and array elements leading to its "conditions" array (elements named by their "name" member,
// else by their "parentRef", else by index) plus its "type".
//
// Thread-safety: pure functions over caller-owned values.
#ifndef PORTICO_CONTROLLER_RECONCILE_CONDITIONS_H_
#define PORTICO_CONTROLLER_RECONCILE_CONDITIONS_H_

#include <cstdint>
#include <string_view>

#include "portico/sdk/json.h"

namespace portico::controller {

// StampConditions stamps every condition in `status` (allocator must own it): observedGeneration
// = `generation` when absent; lastTransitionTime, when absent, is taken from `previous` (the
// previously shown status, may be null) if that had the same condition with the same status,
// else `now` (RFC 3339).
void StampConditions(rapidjson::Value& status, rapidjson::Value::AllocatorType& allocator,
                     const rapidjson::Value* previous, int64_t generation, std::string_view now);

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_RECONCILE_CONDITIONS_H_
