#include "core/store/object_store.h"

#include <mutex>
#include <utility>

#include "core/common/sha256.h"

namespace portico::core {

Status ObjectStoreOptions::Validate() const {
  if (max_log_bytes == 0) return InvalidArgumentError("store options: max_log_bytes is 0");
  if (max_log_age <= Clock::Duration::zero()) {
    return InvalidArgumentError("store options: max_log_age must be positive");
  }
  return OkStatus();
}

ObjectStore::ObjectStore(ObjectStoreOptions options)
    : clock_(options.clock != nullptr ? options.clock : Clock::Real()),
      log_(options.max_log_bytes, options.max_log_age) {}

StatusOr<WriteResult> ObjectStore::Put(const StoreKey& key, std::optional<std::string> json) {
  PORTICO_RETURN_IF_ERROR(key.Validate());
  // Hash outside the lock. Sha256Hex is never empty, so an empty hash means "no JSON".
  std::string hash = json.has_value() ? Sha256Hex(*json) : std::string();
  std::shared_ptr<const std::string> body;
  if (json.has_value()) body = std::make_shared<const std::string>(std::move(*json));
  uint64_t version;
  {
    std::unique_lock lock(mu_);
    auto it = objects_.find(key);
    if (it != objects_.end() && it->second.hash == hash) {
      return WriteResult{it->second.version, false};
    }
    version = ++head_;
    Entry entry{body, hash, version};
    if (it == objects_.end()) {
      objects_.emplace(key, std::move(entry));
    } else {
      it->second = std::move(entry);
    }
    CommitLocked(StoreOp::kUpsert, key, hash, std::move(body));
  }
  notifier_.Publish(version);
  return WriteResult{version, true};
}

StatusOr<WriteResult> ObjectStore::Delete(const StoreKey& key) {
  PORTICO_RETURN_IF_ERROR(key.Validate());
  uint64_t version;
  {
    std::unique_lock lock(mu_);
    auto it = objects_.find(key);
    if (it == objects_.end()) return WriteResult{head_, false};
    std::string hash = std::move(it->second.hash);
    objects_.erase(it);
    version = ++head_;
    CommitLocked(StoreOp::kDelete, key, hash, nullptr);
  }
  notifier_.Publish(version);
  return WriteResult{version, true};
}

void ObjectStore::CommitLocked(StoreOp op, const StoreKey& key, const std::string& hash,
                               std::shared_ptr<const std::string> json) {
  // Now() under the lock keeps log times in version order, which age trimming relies on.
  Clock::TimePoint now = clock_->Now();
  log_.Append(StoreEvent{head_, op, key, hash, std::move(json)}, now);
  log_.Trim(now);
}

std::optional<StoredObject> ObjectStore::Get(const StoreKey& key) const {
  std::shared_lock lock(mu_);
  auto it = objects_.find(key);
  if (it == objects_.end()) return std::nullopt;
  return StoredObject{it->first, it->second.json, it->second.hash, it->second.version};
}

StoreSnapshot ObjectStore::Snapshot() const {
  StoreSnapshot out;
  std::shared_lock lock(mu_);
  out.version = head_;
  out.objects.reserve(objects_.size());
  for (const auto& [key, entry] : objects_) {
    out.objects.push_back(StoredObject{key, entry.json, entry.hash, entry.version});
  }
  return out;
}

StatusOr<ChangeSet> ObjectStore::Changes(uint64_t from_version) const {
  std::shared_lock lock(mu_);
  if (from_version > head_) {
    return OutOfRangeError("store changes: from_version " + std::to_string(from_version) +
                           " is ahead of head " + std::to_string(head_));
  }
  ChangeSet out;
  out.head = head_;
  std::optional<std::vector<StoreEvent>> events = log_.Since(from_version);
  if (!events.has_value()) {
    out.relist = true;
  } else {
    out.events = std::move(*events);
  }
  return out;
}

uint64_t ObjectStore::Head() const {
  std::shared_lock lock(mu_);
  return head_;
}

uint64_t ObjectStore::WaitForChange(uint64_t version,
                                    std::chrono::steady_clock::time_point deadline) const {
  return notifier_.WaitFor(version, deadline);
}

ChangeSubscription ObjectStore::Subscribe(ChangeNotifier::Callback callback) {
  return notifier_.Subscribe(std::move(callback));
}

void ObjectStore::TrimExpired() {
  std::unique_lock lock(mu_);
  log_.Trim(clock_->Now());
}

StoreStats ObjectStore::Stats() const {
  std::shared_lock lock(mu_);
  StoreStats out;
  out.objects = objects_.size();
  out.log_entries = log_.size();
  out.log_bytes = log_.bytes();
  out.oldest_version = log_.oldest_version();
  out.min_from_version = log_.min_from_version();
  out.head = head_;
  return out;
}

}  // namespace portico::core
