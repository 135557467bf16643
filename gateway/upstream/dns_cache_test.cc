// DnsCache: unit tests (a scripted resolver; the system resolver is covered by proxy_test).
#include "gateway/upstream/dns_cache.h"

#include <gtest/gtest.h>
#include <netinet/in.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

namespace portico::gateway::upstream {
namespace {

using std::chrono::milliseconds;

// WaitUntil polls `condition` for up to 10 s.
template <typename F>
bool WaitUntil(F condition) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(milliseconds(2));
  }
  return condition();
}

DnsCache::Addresses One(const std::string& text) {
  DnsCache::ResolvedAddress a;
  a.address.ss_family = AF_INET;
  a.length = sizeof(sockaddr_in);
  a.text = text;
  return {a};
}

std::string First(const std::shared_ptr<const DnsCache::Addresses>& addresses) {
  return addresses == nullptr || addresses->empty() ? "<none>" : addresses->front().text;
}

// Gate holds up a scripted resolution; shared with the resolver, which may outlive the cache.
struct Gate {
  std::atomic<bool> entered{false};
  std::atomic<bool> release{false};
  std::atomic<bool> returned{false};
};

TEST(DnsCacheTest, PrefetchWaitsForTheFirstAnswer) {
  std::atomic<int> calls{0};
  DnsCache cache([&](const std::string& name) {
    ++calls;
    return name == "a.test" ? One("10.0.0.1") : DnsCache::Addresses{};
  });
  cache.Prefetch({"a.test", "none.test"}, milliseconds(5000));
  EXPECT_EQ(calls.load(), 2);
  EXPECT_EQ(First(cache.Lookup("a.test")), "10.0.0.1");
  EXPECT_EQ(First(cache.Lookup("none.test")), "<none>");
  cache.Prefetch({"a.test"}, milliseconds(5000));  // known: not resolved again
  EXPECT_EQ(calls.load(), 2);
}

TEST(DnsCacheTest, RefreshesAndKeepsTheLastGoodAddressesWhenARefreshFails) {
  std::atomic<int> calls{0};
  std::atomic<int> answer{1};  // 1: 10.0.0.1, 2: 10.0.0.2, 0: no answer
  DnsCache cache(
      [&](const std::string&) {
        ++calls;
        const int a = answer.load();
        return a == 0 ? DnsCache::Addresses{} : One("10.0.0." + std::to_string(a));
      },
      milliseconds(20));
  cache.Prefetch({"svc.test"}, milliseconds(5000));
  EXPECT_EQ(First(cache.Lookup("svc.test")), "10.0.0.1");
  answer = 2;
  EXPECT_TRUE(WaitUntil([&] { return First(cache.Lookup("svc.test")) == "10.0.0.2"; }));
  answer = 0;
  const int before = calls.load();
  ASSERT_TRUE(WaitUntil([&] { return calls.load() >= before + 2; }));  // two failed refreshes
  EXPECT_EQ(First(cache.Lookup("svc.test")), "10.0.0.2");
}

TEST(DnsCacheTest, RetainForgetsNamesNoLongerUsed) {
  std::atomic<int> calls{0};
  DnsCache cache([&](const std::string& name) {
    ++calls;
    return One(name == "a.test" ? "10.0.0.1" : "10.0.0.2");
  });
  cache.Prefetch({"a.test", "b.test"}, milliseconds(5000));
  ASSERT_EQ(calls.load(), 2);
  cache.Retain({"b.test"});
  EXPECT_EQ(First(cache.Lookup("b.test")), "10.0.0.2");  // kept, not resolved again
  EXPECT_EQ(calls.load(), 2);
  // a.test was forgotten: no addresses until it is resolved again.
  EXPECT_EQ(First(cache.Lookup("a.test")), "<none>");
  EXPECT_TRUE(WaitUntil([&] { return First(cache.Lookup("a.test")) == "10.0.0.1"; }));
  EXPECT_EQ(calls.load(), 3);
  cache.Retain({});
  EXPECT_EQ(First(cache.Lookup("b.test")), "<none>");
}

TEST(DnsCacheTest, ANameForgottenWhileBeingResolvedDropsTheAnswer) {
  auto gate = std::make_shared<Gate>();
  DnsCache cache([gate](const std::string&) {
    gate->entered = true;
    while (!gate->release.load()) std::this_thread::sleep_for(milliseconds(1));
    return One("10.0.0.9");
  });
  cache.Prefetch({"slow.test"}, milliseconds(0));
  ASSERT_TRUE(WaitUntil([&] { return gate->entered.load(); }));
  cache.Retain({});
  gate->release = true;
  // The answer arrives for a name no longer known: the resolver thread must not add it back.
  // Prefetch of another name waits until the thread moved past that answer.
  cache.Prefetch({"other.test"}, milliseconds(5000));
  std::shared_ptr<const DnsCache::Addresses> slow = cache.Lookup("slow.test");
  EXPECT_EQ(First(slow), "<none>");
}

TEST(DnsCacheTest, DestroyingDoesNotWaitForAResolutionThatHangs) {
  auto hang = std::make_shared<Gate>();
  auto cache = std::make_unique<DnsCache>([hang](const std::string&) {
    hang->entered = true;
    while (!hang->release.load()) std::this_thread::sleep_for(milliseconds(1));
    hang->returned = true;
    return One("10.0.0.1");
  });
  EXPECT_EQ(First(cache->Lookup("hang.test")), "<none>");
  ASSERT_TRUE(WaitUntil([&] { return hang->entered.load(); }));
  cache.reset();  // returns while the resolver still hangs
  EXPECT_FALSE(hang->returned.load());
  hang->release = true;
  EXPECT_TRUE(WaitUntil([&] { return hang->returned.load(); }));
}

TEST(DnsCacheTest, SystemResolveReadsTheHostsFile) {
  DnsCache::Addresses localhost = DnsCache::SystemResolve("localhost");
  ASSERT_FALSE(localhost.empty());
  EXPECT_EQ(localhost.front().text, "127.0.0.1");  // IPv4 preferred
  EXPECT_TRUE(DnsCache::SystemResolve("").empty());
}

}  // namespace
}  // namespace portico::gateway::upstream
