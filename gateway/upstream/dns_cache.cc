// dns_cache.cc: see dns_cache.h.
#include "gateway/upstream/dns_cache.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

namespace portico::gateway::upstream {

namespace {

// A name that failed is tried again on lookup at most this often.
constexpr std::chrono::seconds kRetryFailed{1};

}  // namespace

DnsCache::DnsCache(Resolver resolver, std::chrono::milliseconds refresh)
    : resolver_(resolver ? std::move(resolver) : Resolver(&DnsCache::SystemResolve)),
      refresh_(refresh) {
  thread_ = std::thread([this] { Run(); });
}

DnsCache::~DnsCache() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  thread_.join();
}

void DnsCache::QueueLocked(const std::string& name, Entry& entry) {
  if (entry.queued) return;
  entry.queued = true;
  queue_.push_back(name);
  work_cv_.notify_one();
}

void DnsCache::Prefetch(const std::vector<std::string>& names, std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(mu_);
  for (const std::string& name : names) {
    Entry& entry = entries_[name];
    if (!entry.tried) QueueLocked(name, entry);
  }
  done_cv_.wait_for(lock, wait, [&] {
    return std::all_of(names.begin(), names.end(),
                       [&](const std::string& name) { return entries_[name].tried; });
  });
}

std::shared_ptr<const DnsCache::Addresses> DnsCache::Lookup(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry& entry = entries_[name];
  if (entry.addresses == nullptr &&
      (!entry.tried || std::chrono::steady_clock::now() - entry.tried_at >= kRetryFailed)) {
    QueueLocked(name, entry);
  }
  return entry.addresses;
}

void DnsCache::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (queue_.empty()) {
      // Sleep until a name is queued or the oldest resolution is due for its refresh.
      auto due = std::chrono::steady_clock::time_point::max();
      for (const auto& [name, entry] : entries_) {
        if (entry.tried && !entry.queued) due = std::min(due, entry.tried_at + refresh_);
      }
      auto ready = [this] { return stop_ || !queue_.empty(); };
      if (due == std::chrono::steady_clock::time_point::max()) {
        work_cv_.wait(lock, ready);
      } else {
        work_cv_.wait_until(lock, due, ready);
      }
      const auto now = std::chrono::steady_clock::now();
      for (auto& [name, entry] : entries_) {
        if (entry.tried && !entry.queued && entry.tried_at + refresh_ <= now) {
          QueueLocked(name, entry);
        }
      }
      continue;
    }
    std::string name = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    Addresses result = resolver_(name);
    lock.lock();
    Entry& entry = entries_[name];
    entry.queued = false;
    entry.tried = true;
    entry.tried_at = std::chrono::steady_clock::now();
    if (!result.empty()) entry.addresses = std::make_shared<const Addresses>(std::move(result));
    done_cv_.notify_all();
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
