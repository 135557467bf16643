// object_feedback.h: ComputeFeedback, how what connected gateways did with one object (sent,
// acked, nacked, no handler) becomes that object's `Programmed` feedback (SyncFeedback,
// controller/reconcile/sync_feedback.h), and SyncFeedbackSink, where that feedback goes.
//
// Rules (DESIGN.md §5; only for objects of kinds that sync at all):
//  - any gateway nacked the current hash:     False   "Invalid"    "rejected by gateway a: why"
//  - else any gateway still owes an ack:      Unknown "Pending"    "waiting for gateway a"
//  - else some gateway acked it:              True    "Programmed" "applied by gateways a, b"
//  - else only gateways without a handler:    False   "NoHandler"  "gateway a serves it but has
//                                                                   no handler for Kind.group"
//  - else:                                    Unknown "Pending"    "no connected gateway serves it"
// Gateways that would receive the object but lack a handler for its kind are named in the message
// in every case. `addresses` are those of the gateways serving the object as a Gateway.
//
// Thread-safety: pure functions and value types; SyncFeedbackSink implementations say their own.
#ifndef PORTICO_CONTROLLER_SYNC_OBJECT_FEEDBACK_H_
#define PORTICO_CONTROLLER_SYNC_OBJECT_FEEDBACK_H_

#include <optional>
#include <string>
#include <vector>

#include "controller/reconcile/sync_feedback.h"
#include "core/store/store_key.h"

namespace portico::controller::sync {

// SyncFeedbackSink receives feedback per object (nullopt clears it). The Controller forwards to
// Reconciler::SetSyncFeedback; tests record. Called from the feedback thread only.
class SyncFeedbackSink {
 public:
  virtual ~SyncFeedbackSink() = default;
  virtual void SetSyncFeedback(const core::StoreKey& key, std::optional<SyncFeedback> feedback) = 0;
};

// KeyStatus is where one gateway stands with one object's current hash.
enum class KeyStatus {
  kNone,       // the gateway does not (and should not) hold it
  kPending,    // sent (or an older hash held) and not acked yet
  kApplied,    // acked at a version >= the one it was sent at
  kRejected,   // the gateway nacked this hash
  kNoHandler,  // its policy sends it here, but the gateway has no handler for the kind
};

struct GatewayKeyState {
  KeyStatus status = KeyStatus::kNone;
  std::string reason;  // the nack reason (kRejected)
};

// GatewayObjectState is one connected gateway's view of one object.
struct GatewayObjectState {
  std::string gateway;  // the gateway's name
  GatewayKeyState state;
  bool serves = false;  // the object is a Gateway this gateway serves: report its addresses
  std::vector<std::string> addresses;
};

// ComputeFeedback applies the rules of the file comment to `gateways` (in connection order).
SyncFeedback ComputeFeedback(const core::StoreKey& key,
                             const std::vector<GatewayObjectState>& gateways);

}  // namespace portico::controller::sync

#endif  // PORTICO_CONTROLLER_SYNC_OBJECT_FEEDBACK_H_
