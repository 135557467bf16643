// dns_cache.cc: see dns_cache.h.
#include "gateway/upstream/dns_cache.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>
#include <unordered_set>

namespace portico::gateway::upstream {

namespace {

// A name that failed is tried again on lookup at most this often.
constexpr std::chrono::seconds kRetryFailed{1};
// The destructor waits at most this long for a resolution in progress before detaching.
constexpr std::chrono::milliseconds kWaitForResolution{200};

}  // namespace

DnsCache::DnsCache(Resolver resolver, std::chrono::milliseconds refresh)
    : state_(std::make_shared<State>(
          resolver ? std::move(resolver) : Resolver(&DnsCache::SystemResolve), refresh)) {
  thread_ = std::thread([state = state_] { state->Run(); });
}

DnsCache::~DnsCache() {
  bool resolving;
  {
    std::unique_lock<std::mutex> lock(state_->mu);
    state_->stop = true;
    state_->work_cv.notify_all();
    // A resolution in progress may be a getaddrinfo taking seconds: wait a little for it, then
    // leave it to finish on its own (the thread holds the state and sees `stop` afterwards).
    resolving =
        !state_->done_cv.wait_for(lock, kWaitForResolution, [this] { return !state_->resolving; });
  }
  if (resolving) {
    thread_.detach();
  } else {
    thread_.join();
  }
}

void DnsCache::State::QueueLocked(const std::string& name, Entry& entry) {
  if (entry.queued) return;
  entry.queued = true;
  queue.push_back(name);
  work_cv.notify_one();
}

void DnsCache::Prefetch(const std::vector<std::string>& names, std::chrono::milliseconds wait) {
  State& s = *state_;
  std::unique_lock<std::mutex> lock(s.mu);
  for (const std::string& name : names) {
    Entry& entry = s.entries[name];
    if (!entry.tried) s.QueueLocked(name, entry);
  }
  s.done_cv.wait_for(lock, wait, [&] {
    return std::all_of(names.begin(), names.end(),
                       [&](const std::string& name) { return s.entries[name].tried; });
  });
}

void DnsCache::Retain(const std::vector<std::string>& names) {
  const std::unordered_set<std::string> keep(names.begin(), names.end());
  std::lock_guard<std::mutex> lock(state_->mu);
  std::erase_if(state_->entries, [&](const auto& item) { return keep.count(item.first) == 0; });
  // Queued names no longer known are skipped by Run when they come up.
}

std::shared_ptr<const DnsCache::Addresses> DnsCache::Lookup(const std::string& name) {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mu);
  Entry& entry = s.entries[name];
  if (entry.addresses == nullptr &&
      (!entry.tried || std::chrono::steady_clock::now() - entry.tried_at >= kRetryFailed)) {
    s.QueueLocked(name, entry);
  }
  return entry.addresses;
}

void DnsCache::State::Run() {
  std::unique_lock<std::mutex> lock(mu);
  while (!stop) {
    if (queue.empty()) {
      // Sleep until a name is queued or the oldest resolution is due for its refresh.
      auto due = std::chrono::steady_clock::time_point::max();
      for (const auto& [name, entry] : entries) {
        if (entry.tried && !entry.queued) due = std::min(due, entry.tried_at + refresh);
      }
      auto ready = [this] { return stop || !queue.empty(); };
      if (due == std::chrono::steady_clock::time_point::max()) {
        work_cv.wait(lock, ready);
      } else {
        work_cv.wait_until(lock, due, ready);
      }
      const auto now = std::chrono::steady_clock::now();
      for (auto& [name, entry] : entries) {
        if (entry.tried && !entry.queued && entry.tried_at + refresh <= now) {
          QueueLocked(name, entry);
        }
      }
      continue;
    }
    std::string name = std::move(queue.front());
    queue.pop_front();
    if (entries.count(name) == 0) continue;  // forgotten (Retain) after it was queued
    resolving = true;
    lock.unlock();
    Addresses result = resolver(name);
    lock.lock();
    resolving = false;
    auto found = entries.find(name);
    if (found == entries.end()) {  // forgotten (Retain, or the cache is gone) meanwhile
      done_cv.notify_all();
      continue;
    }
    Entry& entry = found->second;
    entry.queued = false;
    entry.tried = true;
    entry.tried_at = std::chrono::steady_clock::now();
    if (!result.empty()) entry.addresses = std::make_shared<const Addresses>(std::move(result));
    done_cv.notify_all();
  }
}

DnsCache::Addresses DnsCache::SystemResolve(const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  Addresses out;
  if (getaddrinfo(name.c_str(), nullptr, &hints, &list) != 0) return out;
  for (addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
    if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6) continue;
    ResolvedAddress a;
    std::memcpy(&a.address, ai->ai_addr, ai->ai_addrlen);
    a.length = ai->ai_addrlen;
    char text[INET6_ADDRSTRLEN] = {};
    const void* raw =
        ai->ai_family == AF_INET
            ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(ai->ai_addr)->sin_addr)
            : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(ai->ai_addr)->sin6_addr);
    inet_ntop(ai->ai_family, raw, text, sizeof(text));
    a.text = text;
    const bool seen = std::any_of(out.begin(), out.end(),
                                  [&](const ResolvedAddress& b) { return b.text == a.text; });
    if (!seen) out.push_back(std::move(a));
  }
  freeaddrinfo(list);
  // IPv4 preferred (Envoy's V4_PREFERRED): the IPv6 addresses only when there is no IPv4 one.
  if (std::any_of(out.begin(), out.end(),
                  [](const ResolvedAddress& a) { return a.address.ss_family == AF_INET; })) {
    out.erase(
        std::remove_if(out.begin(), out.end(),
                       [](const ResolvedAddress& a) { return a.address.ss_family != AF_INET; }),
        out.end());
  }
  return out;
}

}  // namespace portico::gateway::upstream
