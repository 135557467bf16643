// change_notifier.h: ChangeNotifier, how watchers of the processed store learn that its head
// moved: blocking waits with a deadline (WaitFor) and callbacks (Subscribe).
//
// Thread-safety: all methods may be called concurrently. Callbacks run on the thread that
// called Publish (a store writer), after the store released its lock, so they may read the
// store; they should be quick (a writer waits for them) and must not throw. Per subscription,
// calls are serialized and see a strictly increasing head; several versions committed in quick
// succession may be reported by one call with the newest head.
//
// Ownership: a ChangeSubscription owns its registration; destroying or cancelling it
// unsubscribes, waiting for a running call of its callback to finish (unless the callback is
// cancelling itself). A subscription may outlive its notifier. The notifier must outlive
// threads blocked in WaitFor and calls to Publish.
#ifndef PORTICO_CORE_STORE_CHANGE_NOTIFIER_H_
#define PORTICO_CORE_STORE_CHANGE_NOTIFIER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace portico::core {

namespace store_internal {
struct Subscriber;
struct SubscriberList;
}  // namespace store_internal

// ChangeSubscription is the handle of one Subscribe call; move-only. See the file comment.
class ChangeSubscription {
 public:
  ChangeSubscription() = default;
  ChangeSubscription(ChangeSubscription&& other) noexcept = default;
  ChangeSubscription& operator=(ChangeSubscription&& other) noexcept;
  ~ChangeSubscription() { Cancel(); }

  // Cancel unsubscribes; once it returns the callback is not running (unless Cancel was called
  // from that callback) and will not be called again. Idempotent.
  void Cancel();

  // initial_head is the head when Subscribe registered the callback: the callback reports every
  // head above it.
  uint64_t initial_head() const { return initial_head_; }
  bool active() const { return subscriber_ != nullptr; }

 private:
  friend class ChangeNotifier;
  ChangeSubscription(std::shared_ptr<store_internal::Subscriber> subscriber,
                     std::weak_ptr<store_internal::SubscriberList> list, uint64_t initial_head);

  std::shared_ptr<store_internal::Subscriber> subscriber_;
  std::weak_ptr<store_internal::SubscriberList> list_;
  uint64_t initial_head_ = 0;
};

// ChangeNotifier tracks the newest published head and wakes watchers. See the file comment.
class ChangeNotifier {
 public:
  using Callback = std::function<void(uint64_t head)>;

  ChangeNotifier();
  ~ChangeNotifier();
  ChangeNotifier(const ChangeNotifier&) = delete;
  ChangeNotifier& operator=(const ChangeNotifier&) = delete;

  // Publish announces that every version <= `head` is committed; a smaller head than one
  // already published changes nothing. Wakes WaitFor callers and runs callbacks.
  void Publish(uint64_t head);
  // Head returns the newest published head.
  uint64_t Head() const;

  // WaitFor blocks until the published head exceeds `version` or `deadline` (real time) passes,
  // and returns the published head (<= version on timeout).
  uint64_t WaitFor(uint64_t version, std::chrono::steady_clock::time_point deadline) const;

  // Subscribe registers `callback` for every head published after the current one.
  [[nodiscard]] ChangeSubscription Subscribe(Callback callback);

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  uint64_t head_ = 0;  // guarded by mu_
  std::shared_ptr<store_internal::SubscriberList> list_;
};

}  // namespace portico::core

#endif  // PORTICO_CORE_STORE_CHANGE_NOTIFIER_H_
