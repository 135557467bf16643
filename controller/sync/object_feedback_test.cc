#include "controller/sync/object_feedback.h"

#include <gtest/gtest.h>

#include <chrono>

#include "controller/sync/feedback_tracker.h"
#include "controller/sync/sync_test_util.h"

namespace portico::controller::sync {
namespace {

using namespace testing;  // NOLINT: the test helpers

GatewayObjectState State(std::string gateway, KeyStatus status, std::string reason = "") {
  GatewayObjectState s;
  s.gateway = std::move(gateway);
  s.state.status = status;
  s.state.reason = std::move(reason);
  return s;
}

TEST(ComputeFeedbackTest, AppliedByEveryGateway) {
  SyncFeedback f = ComputeFeedback(
      RouteKey("r"), {State("a", KeyStatus::kApplied), State("b", KeyStatus::kApplied),
                      State("c", KeyStatus::kNone)});
  EXPECT_EQ(f.status, "True");
  EXPECT_EQ(f.reason, "Programmed");
  EXPECT_EQ(f.message, "applied by gateways a, b");
}

TEST(ComputeFeedbackTest, PendingWhileOneOwesAnAck) {
  SyncFeedback f = ComputeFeedback(
      RouteKey("r"), {State("a", KeyStatus::kApplied), State("b", KeyStatus::kPending)});
  EXPECT_EQ(f.status, "Unknown");
  EXPECT_EQ(f.reason, "Pending");
  EXPECT_EQ(f.message, "waiting for gateway b");
}

TEST(ComputeFeedbackTest, RejectionWins) {
  SyncFeedback f = ComputeFeedback(
      RouteKey("r"), {State("a", KeyStatus::kRejected, "bad regex"),
                      State("b", KeyStatus::kPending), State("c", KeyStatus::kRejected, "x")});
  EXPECT_EQ(f.status, "False");
  EXPECT_EQ(f.reason, "Invalid");
  EXPECT_EQ(f.message, "rejected by gateway a: bad regex; rejected by gateway c: x");
}

TEST(ComputeFeedbackTest, NoGateway) {
  SyncFeedback f = ComputeFeedback(RouteKey("r"), {State("a", KeyStatus::kNone)});
  EXPECT_EQ(f.status, "Unknown");
  EXPECT_EQ(f.reason, "Pending");
  EXPECT_EQ(f.message, "no connected gateway serves it");
  EXPECT_EQ(ComputeFeedback(RouteKey("r"), {}).message, "no connected gateway serves it");
}

TEST(ComputeFeedbackTest, NoHandlerIsNamed) {
  SyncFeedback only = ComputeFeedback(PolicyKey("p"), {State("a", KeyStatus::kNoHandler)});
  EXPECT_EQ(only.status, "False");
  EXPECT_EQ(only.reason, "NoHandler");
  EXPECT_EQ(only.message, "gateway a serves it but has no handler for TLSPolicy.portico.dev");
  SyncFeedback mixed = ComputeFeedback(
      PolicyKey("p"), {State("a", KeyStatus::kApplied), State("b", KeyStatus::kNoHandler),
                       State("c", KeyStatus::kNoHandler)});
  EXPECT_EQ(mixed.status, "True");
  EXPECT_EQ(mixed.message,
            "applied by gateway a; gateways b, c serve it but have no handler for "
            "TLSPolicy.portico.dev");
  EXPECT_EQ(mixed.missing_handlers,
            "gateways b, c serve it but have no handler for TLSPolicy.portico.dev");
  SyncFeedback all = ComputeFeedback(PolicyKey("p"), {State("a", KeyStatus::kApplied)});
  EXPECT_EQ(all.missing_handlers, "");
}

TEST(ComputeFeedbackTest, AddressesOfServingGateways) {
  GatewayObjectState a = State("a", KeyStatus::kApplied);
  a.serves = true;
  a.addresses = {"10.0.0.1", "10.0.0.2"};
  GatewayObjectState b = State("b", KeyStatus::kApplied);
  b.serves = true;
  b.addresses = {"10.0.0.2", "gw.example.com"};
  GatewayObjectState c = State("c", KeyStatus::kNone);
  c.addresses = {"10.9.9.9"};  // does not serve it
  SyncFeedback f = ComputeFeedback(GatewayKey("g"), {a, b, c});
  EXPECT_EQ(f.addresses, (std::vector<std::string>{"10.0.0.1", "10.0.0.2", "gw.example.com"}));
}

// FakeGateway answers StateOf from a map.
class FakeGateway : public GatewayStateSource {
 public:
  explicit FakeGateway(std::string name) : name_(std::move(name)) {}
  std::string DisplayName() const override { return name_; }
  GatewayKeyState StateOf(const core::StoreKey& key, std::string_view hash) const override {
    std::lock_guard lock(mu_);
    auto it = states_.find(key);
    return it == states_.end() ? GatewayKeyState{} : it->second;
  }
  bool Serves(const core::StoreKey& key) const override { return key == GatewayKey("g"); }
  std::vector<std::string> Addresses() const override { return {"192.0.2.1"}; }
  void Set(const core::StoreKey& key, KeyStatus status) {
    std::lock_guard lock(mu_);
    states_[key].status = status;
  }

 private:
  std::string name_;
  mutable std::mutex mu_;
  std::map<core::StoreKey, GatewayKeyState> states_;
};

class FeedbackTrackerTest : public ::testing::Test {
 protected:
  FeedbackTrackerTest()
      : tracker_(
            store_, policies_, [this] { return gateways_; }, &sink_) {}

  core::ObjectStore store_;
  SyncLinks links_;
  SyncPolicies policies_ = TestPolicies();
  FakeSink sink_;
  std::vector<std::shared_ptr<const GatewayStateSource>> gateways_;
  FeedbackTracker tracker_;
};

TEST_F(FeedbackTrackerTest, FirstFlushCoversEverySyncedObject) {
  Put(store_, links_, RouteKey("r"), Body("r"));
  Put(store_, links_, GrantKey("never"), Body("g"));
  ASSERT_TRUE(store_.Put(ServiceKey("no-view"), std::nullopt).ok());
  tracker_.Flush();
  ASSERT_TRUE(sink_.Get(RouteKey("r")));
  EXPECT_EQ(sink_.Get(RouteKey("r"))->message, "no connected gateway serves it");
  EXPECT_FALSE(sink_.Get(GrantKey("never")));
  EXPECT_FALSE(sink_.Get(ServiceKey("no-view")));
}

TEST_F(FeedbackTrackerTest, RecomputesOnlyWhatChanged) {
  auto gw = std::make_shared<FakeGateway>("a");
  gateways_ = {gw};
  Put(store_, links_, RouteKey("r1"), Body("1"));
  Put(store_, links_, RouteKey("r2"), Body("2"));
  EXPECT_EQ(tracker_.Flush(), 2u);
  EXPECT_EQ(tracker_.Flush(), 0u);  // nothing changed

  gw->Set(RouteKey("r1"), KeyStatus::kApplied);
  tracker_.MarkDirty({RouteKey("r1")});
  EXPECT_EQ(tracker_.Flush(), 1u);
  EXPECT_EQ(sink_.Get(RouteKey("r1"))->status, "True");
  EXPECT_EQ(sink_.Get(RouteKey("r2"))->status, "Unknown");

  Put(store_, links_, RouteKey("r2"), Body("2b"));  // a store change is noticed by itself
  gw->Set(RouteKey("r2"), KeyStatus::kPending);
  EXPECT_EQ(tracker_.Flush(), 1u);
  EXPECT_EQ(sink_.Get(RouteKey("r2"))->message, "waiting for gateway a");

  Remove(store_, links_, RouteKey("r2"));
  EXPECT_EQ(tracker_.Flush(), 1u);
  EXPECT_FALSE(sink_.Get(RouteKey("r2")));  // cleared
}

TEST_F(FeedbackTrackerTest, GatewayAddresses) {
  auto gw = std::make_shared<FakeGateway>("a");
  gateways_ = {gw};
  Put(store_, links_, GatewayKey("g"), Body("g"));
  gw->Set(GatewayKey("g"), KeyStatus::kApplied);
  tracker_.Flush();
  ASSERT_TRUE(sink_.Get(GatewayKey("g")));
  EXPECT_EQ(sink_.Get(GatewayKey("g"))->addresses, std::vector<std::string>{"192.0.2.1"});
}

// Ten thousand routes acked by two gateways: one flush writes each once. The time is printed;
// how fast it is belongs to a benchmark, not to a timed unit test (a sanitized build on a loaded
// machine took 2.8 s where an idle one takes milliseconds).
TEST_F(FeedbackTrackerTest, TenThousandAckedRoutesFlushOnceEach) {
  auto gw1 = std::make_shared<FakeGateway>("a");
  auto gw2 = std::make_shared<FakeGateway>("b");
  gateways_ = {gw1, gw2};
  std::vector<core::StoreKey> keys;
  for (int i = 0; i < 10000; ++i) {
    keys.push_back(RouteKey("route-" + std::to_string(i)));
    Put(store_, links_, keys.back(), Body(std::to_string(i)));
  }
  tracker_.Flush();
  for (const core::StoreKey& k : keys) {
    gw1->Set(k, KeyStatus::kApplied);
    gw2->Set(k, KeyStatus::kApplied);
  }
  tracker_.MarkDirty(keys);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(tracker_.Flush(), 10000u);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(sink_.Get(keys.back())->message, "applied by gateways a, b");
  std::printf(
      "flush of 10000 acked routes: %lld ms\n",
      static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));
  EXPECT_EQ(sink_.Get(keys.front())->message, "applied by gateways a, b");
  EXPECT_EQ(tracker_.Flush(), 0u);  // nothing left dirty: no key is written twice
}

}  // namespace
}  // namespace portico::controller::sync
