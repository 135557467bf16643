// object_render.h: how an object is shown (ObjectView.json): its accepted document (defaults,
// metadata.generation, metadata.creationTimestamp) plus "status": the processor's status with
// contributions aggregated (status_aggregation.h) and conditions stamped (conditions.h); Secret
// material redacted.
//
// Thread-safety: pure functions over the caller's values.
#ifndef PORTICO_CONTROLLER_RECONCILE_OBJECT_RENDER_H_
#define PORTICO_CONTROLLER_RECONCILE_OBJECT_RENDER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/reconcile/refusal.h"
#include "controller/reconcile/status_aggregation.h"
#include "controller/reconcile/sync_feedback.h"
#include "portico/sdk/json.h"
#include "portico/sdk/types.h"

namespace portico::controller {

// RenderInput is what rendering an accepted object needs (copied out of the object table).
struct RenderInput {
  sdk::ObjectRef ref;
  // The accepted document: validated, defaulted, metadata stamped, no status. Never null.
  std::shared_ptr<const rapidjson::Document> doc;
  int64_t generation = 0;  // the accepted document's (observedGeneration of its conditions)
  std::optional<std::string> status;  // the processor's status JSON
  std::vector<StatusContribution> contributions;
  std::shared_ptr<const rapidjson::Document> previous_status;  // last rendered; may be null
  std::optional<SyncFeedback> feedback;  // what gateways reported (sync_feedback.h)
  std::optional<Refusal> refusal;        // a newer generation refused (refusal.h)
};

// RenderedObject is a rendering: the status shown (kept to stamp the next rendering) and the
// whole object's JSON.
struct RenderedObject {
  std::shared_ptr<const rapidjson::Document> status;
  std::string json;
};

// RenderObject renders an accepted object; `now` (RFC 3339) stamps conditions that changed.
// The "status" member is present when the processor wrote a status, contributions exist or
// gateways gave feedback (folded in by ApplySyncFeedback before stamping) or a newer generation
// was refused (ApplyRefusal, before stamping).
RenderedObject RenderObject(const RenderInput& input, std::string_view now);

// RenderRaw renders an object never accepted: its document as written, with metadata stamps
// and no status but the refusal's Accepted=False condition, if any (redacted when it is a
// Secret).
std::string RenderRaw(const sdk::ObjectRef& ref, const rapidjson::Value& raw, int64_t generation,
                      std::string_view creation_timestamp, const Refusal* refusal = nullptr);

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_RECONCILE_OBJECT_RENDER_H_
