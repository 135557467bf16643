#include "controller/sync/feedback_tracker.h"

#include <utility>

namespace portico::controller::sync {

FeedbackTracker::FeedbackTracker(const core::ObjectStore& store, const SyncPolicies& policies,
                                 Gateways gateways, SyncFeedbackSink* sink)
    : store_(store), policies_(policies), gateways_(std::move(gateways)), sink_(sink) {}

FeedbackTracker::~FeedbackTracker() { Stop(); }

void FeedbackTracker::Start(core::ObjectStore& store) {
  subscription_ = store.Subscribe([this](uint64_t) {
    {
      std::lock_guard lock(mu_);
      store_moved_ = true;
    }
    cv_.notify_one();
  });
  thread_ = std::thread([this] { Run(); });
}

void FeedbackTracker::Stop() {
  subscription_.Cancel();
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void FeedbackTracker::MarkDirty(std::vector<core::StoreKey> keys) {
  if (keys.empty()) return;
  {
    std::lock_guard lock(mu_);
    for (core::StoreKey& key : keys) dirty_.insert(std::move(key));
  }
  cv_.notify_one();
}

void FeedbackTracker::MarkAllDirty() {
  {
    std::lock_guard lock(mu_);
    all_dirty_ = true;
  }
  cv_.notify_one();
}

void FeedbackTracker::Run() {
  while (true) {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stop_ || all_dirty_ || store_moved_ || !dirty_.empty(); });
      if (stop_) return;
    }
    Flush();
  }
}

size_t FeedbackTracker::Flush() {
  std::lock_guard flush_lock(flush_mu_);
  std::unordered_set<core::StoreKey> dirty;
  bool all = false;
  {
    std::lock_guard lock(mu_);
    dirty.swap(dirty_);
    all = all_dirty_;
    all_dirty_ = false;
    store_moved_ = false;
  }
  if (!all) {
    StatusOr<core::ChangeSet> changes = store_.Changes(cursor_);
    if (!changes.ok() || changes->relist) {
      all = true;
    } else {
      for (core::StoreEvent& event : changes->events) dirty.insert(std::move(event.key));
      cursor_ = changes->head;
    }
  }
  std::vector<Gateway> gateways;
  for (auto& source : gateways_()) {
    std::string name = source->DisplayName();
    gateways.push_back(Gateway{std::move(source), std::move(name)});
  }
  size_t published = 0;
  if (all) {
    core::StoreSnapshot snapshot = store_.Snapshot();
    cursor_ = snapshot.version;
    std::unordered_set<core::StoreKey> stale = std::move(published_);
    published_.clear();
    for (const core::StoredObject& object : snapshot.objects) {
      stale.erase(object.key);
      Publish(object.key, object, gateways);
      ++published;
    }
    for (const core::StoreKey& key : stale) {
      sink_->SetSyncFeedback(key, std::nullopt);
      ++published;
    }
    return published;
  }
  for (const core::StoreKey& key : dirty) {
    Publish(key, store_.Get(key), gateways);
    ++published;
  }
  return published;
}

void FeedbackTracker::Publish(const core::StoreKey& key,
                              const std::optional<core::StoredObject>& object,
                              const std::vector<Gateway>& gateways) {
  if (!object || object->json == nullptr || !policies_.Syncs(key)) {
    if (published_.erase(key) > 0) sink_->SetSyncFeedback(key, std::nullopt);
    return;
  }
  std::vector<GatewayObjectState> states;
  states.reserve(gateways.size());
  for (const Gateway& g : gateways) {
    GatewayObjectState& s = states.emplace_back();
    s.gateway = g.name;
    s.state = g.source->StateOf(key, object->hash);
    s.serves = g.source->Serves(key);
    if (s.serves) s.addresses = g.source->Addresses();
  }
  published_.insert(key);
  sink_->SetSyncFeedback(key, ComputeFeedback(key, states));
}

}  // namespace portico::controller::sync
