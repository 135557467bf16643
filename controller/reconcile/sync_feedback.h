// sync_feedback.h: SyncFeedback, what connected gateways reported about an object (ConfigSync
// acks and nacks, DESIGN.md §5), and ApplySyncFeedback, how it shows in the object's status.
//
// Feedback is status only: it never changes an object's synced view, so it never causes sync
// traffic. It becomes the object's `Programmed` condition:
//  - every condition of type Programmed whose status is "Unknown" (a processor's placeholder:
//    "waiting for a gateway", e.g. a Gateway's and each listener's) takes the feedback's status,
//    reason and message; conditions a processor decided (True/False) are kept;
//  - when the feedback is False, or names gateways that lack a handler for the kind, and the
//    status has no top-level Programmed condition, one is added to status.conditions, so a
//    rejection or a missing handler shows on every kind, placeholder or not;
//  - `addresses` (the addresses of the gateways serving a Gateway) fill status.addresses when
//    the processor set none: [{"type": "IPAddress"|"Hostname", "value": ...}].
//
// Thread-safety: value type and a pure function.
#ifndef PORTICO_CONTROLLER_RECONCILE_SYNC_FEEDBACK_H_
#define PORTICO_CONTROLLER_RECONCILE_SYNC_FEEDBACK_H_

#include <string>
#include <vector>

#include "portico/sdk/json.h"

namespace portico::controller {

struct SyncFeedback {
  std::string status;  // "True" | "False" | "Unknown"
  std::string reason;  // "Programmed", "Invalid", "Pending", ...
  std::string message;
  std::vector<std::string> addresses;
  // missing_handlers names the gateways that serve the object but have no handler for its kind
  // ("gateway b serves it but has no handler for TLSPolicy.portico.io"); "" when none. It is
  // also part of `message`.
  std::string missing_handlers;

  friend bool operator==(const SyncFeedback&, const SyncFeedback&) = default;
};

// ApplySyncFeedback folds `feedback` into `status` (a JSON object; allocator must own it).
void ApplySyncFeedback(const SyncFeedback& feedback, rapidjson::Value& status,
                       rapidjson::Value::AllocatorType& allocator);

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_RECONCILE_SYNC_FEEDBACK_H_
