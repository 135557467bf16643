// resume_store.h: ResumeStore, what finished Watch streams leave behind so that their gateways
// can resume without a snapshot (ResumeState, sync_session.h): kept by client id for a
// retention period, at most `capacity` of them (the one expiring first is evicted to make room).
//
// Thread-safety: every method may be called from any thread (one internal mutex).
// Ownership: the store owns the states it holds; Take moves one out.
#ifndef PORTICO_CONTROLLER_SYNC_RESUME_STORE_H_
#define PORTICO_CONTROLLER_SYNC_RESUME_STORE_H_

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "controller/sync/sync_session.h"

namespace portico::controller::sync {

class ResumeStore {
 public:
  using Clock = std::chrono::steady_clock;

  // capacity 0 keeps nothing (every gateway then starts from a snapshot).
  ResumeStore(size_t capacity, std::chrono::seconds retention)
      : capacity_(capacity), retention_(retention) {}

  // Put keeps `state` for its client id until now + retention, replacing an older one.
  void Put(ResumeState state, Clock::time_point now = Clock::now());
  // Take removes and returns the state kept for `client_id`, if any and not yet expired.
  std::optional<ResumeState> Take(const std::string& client_id,
                                  Clock::time_point now = Clock::now());
  // Expire drops every state whose retention ended by `now`.
  void Expire(Clock::time_point now = Clock::now());
  size_t size() const;

 private:
  struct Entry {
    ResumeState state;
    Clock::time_point expires;
  };

  const size_t capacity_;
  const std::chrono::seconds retention_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_;  // by client id; guarded by mu_
};

}  // namespace portico::controller::sync

#endif  // PORTICO_CONTROLLER_SYNC_RESUME_STORE_H_
