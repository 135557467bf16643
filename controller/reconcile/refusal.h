// refusal.h: Refusal, a generation of an object the controller refused (it failed its schema or
// its processor), and how it shows in the object's status (issue 15): the last good generation
// keeps serving, and its conditions must not read as if the newest one were fine.
//
//  - An object with a serving generation M gets the condition
//      {type: Refused, status: "True", reason: Invalid, observedGeneration: N,
//       message: "generation N refused: spec.x: ...; spec.y: ...; generation M keeps serving"}
//    in status.conditions, and every Accepted=True condition of its status says
//    "...; generation N was refused (see the Refused condition), generation M keeps serving".
//  - An object never accepted shows {type: Accepted, status: "False", reason: Invalid,
//    observedGeneration: N, message: "generation N refused: ...; no generation serves"}.
//
// Thread-safety: value types and pure functions over caller-owned values.
#ifndef PORTICO_CONTROLLER_RECONCILE_REFUSAL_H_
#define PORTICO_CONTROLLER_RECONCILE_REFUSAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "controller/center/config_center.h"
#include "portico/sdk/json.h"

namespace portico::controller {

struct Refusal {
  int64_t generation = 0;
  std::vector<FieldViolation> violations;  // at least one
};

// RefusalMessage: "generation N refused: v1; v2; generation M keeps serving" (M = 0: "no
// generation serves"), shortened past a few KiB (the admin API lists every violation).
std::string RefusalMessage(const Refusal& refusal, int64_t serving_generation);

// ApplyRefusal writes the refusal into `status` (made an object when it is not), as the file
// comment says; `serving_generation` 0 when none serves. `allocator` must own `status`.
void ApplyRefusal(const Refusal& refusal, int64_t serving_generation, rapidjson::Value& status,
                  rapidjson::Value::AllocatorType& allocator);

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_RECONCILE_REFUSAL_H_
