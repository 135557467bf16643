#include "controller/sync/resume_store.h"

#include <algorithm>
#include <iterator>
#include <utility>

namespace portico::controller::sync {

void ResumeStore::Put(ResumeState state, Clock::time_point now) {
  if (capacity_ == 0) return;
  std::lock_guard lock(mu_);
  entries_.erase(state.client_id);
  while (entries_.size() >= capacity_) {
    auto first = std::min_element(entries_.begin(), entries_.end(), [](auto& a, auto& b) {
      return a.second.expires < b.second.expires;
    });
    entries_.erase(first);
  }
  std::string client_id = state.client_id;
  entries_.emplace(std::move(client_id), Entry{std::move(state), now + retention_});
}

std::optional<ResumeState> ResumeStore::Take(const std::string& client_id, Clock::time_point now) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(client_id);
  if (it == entries_.end()) return std::nullopt;
  std::optional<ResumeState> out;
  if (it->second.expires > now) out = std::move(it->second.state);
  entries_.erase(it);
  return out;
}

void ResumeStore::Expire(Clock::time_point now) {
  std::lock_guard lock(mu_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    it = it->second.expires <= now ? entries_.erase(it) : std::next(it);
  }
}

size_t ResumeStore::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

}  // namespace portico::controller::sync
