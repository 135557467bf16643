#include "core/store/change_notifier.h"

#include <algorithm>
#include <utility>

namespace portico::core {
namespace store_internal {

struct Subscriber {
  // Held while the callback runs, so Cancel waits for it; recursive so the callback may cancel
  // its own subscription.
  std::recursive_mutex mu;
  ChangeNotifier::Callback callback;
  bool active = true;      // guarded by mu
  uint64_t delivered = 0;  // guarded by mu: the newest head reported (or initial_head)
};

struct SubscriberList {
  std::mutex mu;
  std::vector<std::shared_ptr<Subscriber>> subscribers;  // guarded by mu
};

}  // namespace store_internal

using store_internal::Subscriber;
using store_internal::SubscriberList;

ChangeSubscription::ChangeSubscription(std::shared_ptr<Subscriber> subscriber,
                                       std::weak_ptr<SubscriberList> list, uint64_t initial_head)
    : subscriber_(std::move(subscriber)), list_(std::move(list)), initial_head_(initial_head) {}

ChangeSubscription& ChangeSubscription::operator=(ChangeSubscription&& other) noexcept {
  if (this != &other) {
    Cancel();
    subscriber_ = std::move(other.subscriber_);
    list_ = std::move(other.list_);
    initial_head_ = other.initial_head_;
  }
  return *this;
}

void ChangeSubscription::Cancel() {
  if (subscriber_ == nullptr) return;
  if (std::shared_ptr<SubscriberList> list = list_.lock()) {
    std::lock_guard lock(list->mu);
    auto& subs = list->subscribers;
    subs.erase(std::remove(subs.begin(), subs.end(), subscriber_), subs.end());
  }
  {
    // Waits for a running callback; a Publish that copied the list before the removal above
    // sees active == false. The callback itself is kept alive until the last reference goes
    // (it may be the caller of this Cancel).
    std::lock_guard lock(subscriber_->mu);
    subscriber_->active = false;
  }
  subscriber_.reset();
  list_.reset();
}

ChangeNotifier::ChangeNotifier() : list_(std::make_shared<SubscriberList>()) {}

ChangeNotifier::~ChangeNotifier() = default;

void ChangeNotifier::Publish(uint64_t head) {
  {
    std::lock_guard lock(mu_);
    if (head <= head_) return;
    head_ = head;
  }
  cv_.notify_all();
  std::vector<std::shared_ptr<Subscriber>> subscribers;
  {
    std::lock_guard lock(list_->mu);
    subscribers = list_->subscribers;
  }
  for (const std::shared_ptr<Subscriber>& sub : subscribers) {
    std::lock_guard lock(sub->mu);
    if (!sub->active) continue;
    // Read the head under sub->mu: concurrent publishers then report increasing heads.
    uint64_t current = Head();
    if (current <= sub->delivered) continue;
    sub->delivered = current;
    sub->callback(current);
  }
}

uint64_t ChangeNotifier::Head() const {
  std::lock_guard lock(mu_);
  return head_;
}

uint64_t ChangeNotifier::WaitFor(uint64_t version,
                                 std::chrono::steady_clock::time_point deadline) const {
  std::unique_lock lock(mu_);
  cv_.wait_until(lock, deadline, [&] { return head_ > version; });
  return head_;
}

ChangeSubscription ChangeNotifier::Subscribe(Callback callback) {
  auto sub = std::make_shared<Subscriber>();
  sub->callback = std::move(callback);
  // Read the head and register under list_->mu: a Publish whose head this read misses copies
  // the list after the registration, so no head is lost between the two.
  std::lock_guard lock(list_->mu);
  uint64_t initial_head = Head();
  sub->delivered = initial_head;
  list_->subscribers.push_back(sub);
  return ChangeSubscription(std::move(sub), list_, initial_head);
}

}  // namespace portico::core
