// feedback_tracker.h: FeedbackTracker, which keeps every synced object's `Programmed` feedback
// (object_feedback.h) current as gateways connect, receive, ack, nack and leave, and as objects
// change in the processed store.
//
// Incremental: it recomputes only objects whose inputs changed: keys marked dirty by the
// gateways' sessions (sent, acked, nacked, left scope, gateway gone) and keys the store changed
// since the tracker last looked (ObjectStore::Changes from its own cursor; a relist recomputes
// everything). Each recomputation asks every connected gateway (GatewayStateSource) where it
// stands with the object's current hash and hands the result to the sink; objects that are gone,
// have no synced view or never sync get nullopt (once).
// Feedback is status only and never causes sync traffic.
//
// Thread-safety: MarkDirty/MarkAllDirty may be called from any thread. Flush runs on the
// tracker's thread (Start) or, without Start, on the caller's (tests); flushes never overlap.
// Ownership: the store, policies, sink and whatever `gateways` returns must outlive the tracker.
#ifndef PORTICO_CONTROLLER_SYNC_FEEDBACK_TRACKER_H_
#define PORTICO_CONTROLLER_SYNC_FEEDBACK_TRACKER_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <vector>

#include "controller/sync/object_feedback.h"
#include "controller/sync/sync_scope.h"
#include "core/store/object_store.h"

namespace portico::controller::sync {

// GatewayStateSource is one connected gateway as feedback sees it (SyncSession implements it).
// Methods may be called from the feedback thread concurrently with the gateway's stream.
class GatewayStateSource {
 public:
  virtual ~GatewayStateSource() = default;
  virtual std::string DisplayName() const = 0;
  // StateOf: where the gateway stands with `key` whose current content hash is `hash`.
  virtual GatewayKeyState StateOf(const core::StoreKey& key, std::string_view hash) const = 0;
  // Serves: `key` is a Gateway this gateway serves (status.addresses).
  virtual bool Serves(const core::StoreKey& key) const = 0;
  virtual std::vector<std::string> Addresses() const = 0;
};

class FeedbackTracker {
 public:
  using Gateways = std::function<std::vector<std::shared_ptr<const GatewayStateSource>>()>;

  FeedbackTracker(const core::ObjectStore& store, const SyncPolicies& policies, Gateways gateways,
                  SyncFeedbackSink* sink);
  ~FeedbackTracker();
  FeedbackTracker(const FeedbackTracker&) = delete;
  FeedbackTracker& operator=(const FeedbackTracker&) = delete;

  // Start runs Flush on a thread whenever something is dirty or the store moved. `store` is
  // the same store, non-const for Subscribe.
  void Start(core::ObjectStore& store);
  // Stop joins the thread; idempotent.
  void Stop();

  void MarkDirty(std::vector<core::StoreKey> keys);
  void MarkAllDirty();

  // Flush recomputes what is dirty and returns the number of objects published (set or
  // cleared). The first Flush recomputes everything.
  size_t Flush();

 private:
  void Run();
  // Publish recomputes `key` (current object `object`, nullopt when absent).
  struct Gateway {
    std::shared_ptr<const GatewayStateSource> source;
    std::string name;
  };
  void Publish(const core::StoreKey& key, const std::optional<core::StoredObject>& object,
               const std::vector<Gateway>& gateways);

  const core::ObjectStore& store_;
  const SyncPolicies& policies_;
  Gateways gateways_;
  SyncFeedbackSink* sink_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_set<core::StoreKey> dirty_;  // guarded by mu_
  bool all_dirty_ = true;                     // guarded by mu_
  bool store_moved_ = false;                  // guarded by mu_
  bool stop_ = false;                         // guarded by mu_

  std::mutex flush_mu_;                           // one Flush at a time; guards the below
  uint64_t cursor_ = 0;                           // store version the tracker has looked at
  std::unordered_set<core::StoreKey> published_;  // keys holding non-null feedback

  core::ChangeSubscription subscription_;
  std::thread thread_;
};

}  // namespace portico::controller::sync

#endif  // PORTICO_CONTROLLER_SYNC_FEEDBACK_TRACKER_H_
