#include "controller/sync/object_feedback.h"

#include <algorithm>

#include "core/plugin/kind_id.h"

namespace portico::controller::sync {
namespace {

// Names renders "gateway a" or "gateways a, b".
std::string Names(const std::vector<std::string>& names) {
  std::string out = names.size() == 1 ? "gateway " : "gateways ";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ", ";
    out += names[i];
  }
  return out;
}

}  // namespace

SyncFeedback ComputeFeedback(const core::StoreKey& key,
                             const std::vector<GatewayObjectState>& gateways) {
  std::vector<std::string> rejected;  // "gateway a: reason"
  std::vector<std::string> pending;
  std::vector<std::string> applied;
  std::vector<std::string> no_handler;
  SyncFeedback feedback;
  for (const GatewayObjectState& g : gateways) {
    switch (g.state.status) {
      case KeyStatus::kRejected:
        rejected.push_back("gateway " + g.gateway + ": " + g.state.reason);
        break;
      case KeyStatus::kPending:
        pending.push_back(g.gateway);
        break;
      case KeyStatus::kApplied:
        applied.push_back(g.gateway);
        break;
      case KeyStatus::kNoHandler:
        no_handler.push_back(g.gateway);
        break;
      case KeyStatus::kNone:
        break;
    }
    if (g.serves) {
      for (const std::string& address : g.addresses) {
        if (std::find(feedback.addresses.begin(), feedback.addresses.end(), address) ==
            feedback.addresses.end()) {
          feedback.addresses.push_back(address);
        }
      }
    }
  }
  std::string handler_note;
  if (!no_handler.empty()) {
    handler_note = Names(no_handler) +
                   (no_handler.size() == 1 ? " serves it but has" : " serve it but have") +
                   " no handler for " + core::KindId{key.group, key.kind}.ToString();
    feedback.missing_handlers = handler_note;
  }
  if (!rejected.empty()) {
    feedback.status = "False";
    feedback.reason = "Invalid";
    for (size_t i = 0; i < rejected.size(); ++i) {
      if (i > 0) feedback.message += "; ";
      feedback.message += "rejected by " + rejected[i];
    }
  } else if (!pending.empty()) {
    feedback.status = "Unknown";
    feedback.reason = "Pending";
    feedback.message = "waiting for " + Names(pending);
  } else if (!applied.empty()) {
    feedback.status = "True";
    feedback.reason = "Programmed";
    feedback.message = "applied by " + Names(applied);
  } else if (!no_handler.empty()) {
    feedback.status = "False";
    feedback.reason = "NoHandler";
    feedback.message = handler_note;
    return feedback;
  } else {
    feedback.status = "Unknown";
    feedback.reason = "Pending";
    feedback.message = "no connected gateway serves it";
  }
  if (!handler_note.empty()) feedback.message += "; " + handler_note;
  return feedback;
}

}  // namespace portico::controller::sync
