#include "controller/sync/sync_scope.h"

#include <gtest/gtest.h>

#include "controller/sync/sync_test_util.h"

namespace portico::controller::sync {
namespace {

using namespace testing;  // NOLINT: the test helpers

class ScopeTest : public ::testing::Test {
 protected:
  GatewayScope Scope(const HelloOptions& options) {
    auto scope = GatewayScope::FromHello(MakeHello(options));
    EXPECT_TRUE(scope.ok()) << scope.status().message();
    return *scope;
  }
  // Decide with every object having a view, or only `with_view` when set.
  Delivery Decide(const GatewayScope& scope, const core::StoreKey& key, bool precompute = false) {
    ScopeEvaluator evaluator(scope, policies_, links_,
                             [&](const core::StoreKey& k) { return !no_view_.contains(k); });
    if (precompute) evaluator.PrecomputeAttached();
    return evaluator.Decide(key);
  }

  SyncPolicies policies_ = TestPolicies();
  SyncLinks links_;
  std::set<core::StoreKey> no_view_;
};

TEST_F(ScopeTest, HelloRootsAndHandlers) {
  HelloOptions o;
  o.gateways = {GatewayKey("a"), core::StoreKey{"", "", "infra", "b"}};  // kind defaulted
  o.gateway_class = "portico";
  o.without = {ServiceKey("x")};
  GatewayScope scope = Scope(o);
  EXPECT_TRUE(scope.IsRoot(GatewayKey("a")));
  EXPECT_TRUE(scope.IsRoot(GatewayKey("b", "infra")));
  EXPECT_TRUE(scope.IsRoot(ClassKey("portico")));
  EXPECT_EQ(scope.roots.size(), 3u);
  EXPECT_TRUE(scope.Handles(RouteKey("r")));
  EXPECT_FALSE(scope.Handles(ServiceKey("s")));
  EXPECT_FALSE(scope.Handles(ClassKey("portico")));  // announced without the handler bit
}

TEST_F(ScopeTest, HelloWithoutGatewayNameIsRefused) {
  portico::sync::v1::Hello hello = MakeHello({});
  hello.add_gateways()->set_namespace_("default");
  EXPECT_FALSE(GatewayScope::FromHello(hello).ok());
}

TEST_F(ScopeTest, PoliciesDecide) {
  HelloOptions o;
  o.gateways = {GatewayKey("a")};
  GatewayScope scope = Scope(o);
  links_.Set(RouteKey("r1"), {GatewayKey("a")}, {});
  links_.Set(RouteKey("r2"), {GatewayKey("b")}, {});
  links_.Set(GatewayKey("a"), {}, {SecretKey("cert-a")});
  links_.Set(GatewayKey("b"), {}, {SecretKey("cert-b")});
  for (bool precompute : {false, true}) {
    SCOPED_TRACE(precompute ? "precomputed" : "upward search");
    EXPECT_EQ(Decide(scope, GatewayKey("a"), precompute), Delivery::kSend);
    EXPECT_EQ(Decide(scope, GatewayKey("b"), precompute), Delivery::kOutOfScope);
    EXPECT_EQ(Decide(scope, RouteKey("r1"), precompute), Delivery::kSend);
    EXPECT_EQ(Decide(scope, RouteKey("r2"), precompute), Delivery::kOutOfScope);
    EXPECT_EQ(Decide(scope, RouteKey("lonely"), precompute), Delivery::kOutOfScope);
    EXPECT_EQ(Decide(scope, ServiceKey("any"), precompute), Delivery::kSend);
    EXPECT_EQ(Decide(scope, SecretKey("cert-a"), precompute), Delivery::kSend);
    EXPECT_EQ(Decide(scope, SecretKey("cert-b"), precompute), Delivery::kOutOfScope);
    EXPECT_EQ(Decide(scope, SecretKey("unreferenced"), precompute), Delivery::kOutOfScope);
    EXPECT_EQ(Decide(scope, GrantKey("g"), precompute), Delivery::kNever);
    EXPECT_EQ(Decide(scope, ClassKey("c"), precompute), Delivery::kNever);
    EXPECT_EQ(Decide(scope, core::StoreKey{"x.io", "Unknown", "", "u"}, precompute),
              Delivery::kNever);
  }
}

TEST_F(ScopeTest, ReferrerWithoutSyncedViewDoesNotCarryItsSecret) {
  HelloOptions o;
  o.gateways = {GatewayKey("a")};
  GatewayScope scope = Scope(o);
  links_.Set(GatewayKey("a"), {}, {SecretKey("cert")});
  EXPECT_EQ(Decide(scope, SecretKey("cert")), Delivery::kSend);
  no_view_.insert(GatewayKey("a"));
  EXPECT_EQ(Decide(scope, SecretKey("cert")), Delivery::kOutOfScope);
}

TEST_F(ScopeTest, ClassRootAttachesItsGatewaysAndTheirRoutes) {
  HelloOptions o;
  o.gateway_class = "portico";
  GatewayScope scope = Scope(o);
  links_.Set(GatewayKey("g1"), {ClassKey("portico")}, {});
  links_.Set(GatewayKey("g2"), {ClassKey("other")}, {});
  links_.Set(RouteKey("r1"), {GatewayKey("g1")}, {});
  links_.Set(RouteKey("r2"), {GatewayKey("g2"), GatewayKey("g1")}, {});
  links_.Set(PolicyKey("p"), {RouteKey("r1")}, {});  // attached to an attached route
  for (bool precompute : {false, true}) {
    EXPECT_EQ(Decide(scope, GatewayKey("g1"), precompute), Delivery::kSend);
    EXPECT_EQ(Decide(scope, GatewayKey("g2"), precompute), Delivery::kOutOfScope);
    EXPECT_EQ(Decide(scope, RouteKey("r1"), precompute), Delivery::kSend);
    EXPECT_EQ(Decide(scope, RouteKey("r2"), precompute), Delivery::kSend);
    EXPECT_EQ(Decide(scope, PolicyKey("p"), precompute), Delivery::kSend);
  }
  EXPECT_TRUE(scope.Serves(GatewayKey("g1"), links_.ParentsOf(GatewayKey("g1"))));
  EXPECT_FALSE(scope.Serves(GatewayKey("g2"), links_.ParentsOf(GatewayKey("g2"))));
}

TEST_F(ScopeTest, ParentCyclesAreSafe) {
  HelloOptions o;
  o.gateways = {GatewayKey("a")};
  GatewayScope scope = Scope(o);
  // p1 <-> p2 cycle, p2 also attached to the root through p3; q1 <-> q2 never reaches a root.
  links_.Set(PolicyKey("p1"), {PolicyKey("p2")}, {});
  links_.Set(PolicyKey("p2"), {PolicyKey("p1"), PolicyKey("p3")}, {});
  links_.Set(PolicyKey("p3"), {GatewayKey("a")}, {});
  links_.Set(PolicyKey("q1"), {PolicyKey("q2")}, {});
  links_.Set(PolicyKey("q2"), {PolicyKey("q1")}, {});
  for (bool precompute : {false, true}) {
    ScopeEvaluator evaluator(scope, policies_, links_, [](const core::StoreKey&) { return true; });
    if (precompute) evaluator.PrecomputeAttached();
    EXPECT_FALSE(evaluator.InScope(PolicyKey("q1")));
    EXPECT_TRUE(evaluator.InScope(PolicyKey("p1")));
    EXPECT_TRUE(evaluator.InScope(PolicyKey("p2")));
    EXPECT_FALSE(evaluator.InScope(PolicyKey("q2")));
  }
}

TEST_F(ScopeTest, NoHandler) {
  HelloOptions o;
  o.gateways = {GatewayKey("a")};
  o.without = {PolicyKey("x"), ServiceKey("x")};
  GatewayScope scope = Scope(o);
  links_.Set(PolicyKey("p"), {GatewayKey("a")}, {});
  links_.Set(PolicyKey("q"), {GatewayKey("b")}, {});
  EXPECT_EQ(Decide(scope, PolicyKey("p")), Delivery::kNoHandler);
  EXPECT_EQ(Decide(scope, PolicyKey("q")), Delivery::kOutOfScope);  // not wanted anyway
  EXPECT_EQ(Decide(scope, ServiceKey("s")), Delivery::kNoHandler);
}

TEST_F(ScopeTest, SecretReferencedOnlyByANoHandlerReferrerIsNotSent) {
  HelloOptions o;
  o.gateways = {GatewayKey("a")};
  o.without = {PolicyKey("x")};
  GatewayScope scope = Scope(o);
  links_.Set(PolicyKey("p"), {GatewayKey("a")}, {SecretKey("s")});
  EXPECT_EQ(Decide(scope, SecretKey("s")), Delivery::kOutOfScope);
}

TEST_F(ScopeTest, ReferenceCyclesAreSafe) {
  HelloOptions o;
  o.gateways = {GatewayKey("a")};
  GatewayScope scope = Scope(o);
  links_.Set(SecretKey("s1"), {}, {SecretKey("s2")});
  links_.Set(SecretKey("s2"), {}, {SecretKey("s1")});
  EXPECT_EQ(Decide(scope, SecretKey("s1")), Delivery::kOutOfScope);
  links_.Set(GatewayKey("a"), {}, {SecretKey("s2")});
  EXPECT_EQ(Decide(scope, SecretKey("s1")), Delivery::kSend);  // through s2, referred by a
}

}  // namespace
}  // namespace portico::controller::sync
