#include "core/plugin/reads_graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace portico::core {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

KindId K(const char* ref) { return KindId::Parse(ref); }

TEST(ReadsGraphTest, KindsComeAfterWhatTheyReadWithDeterministicTies) {
  std::map<KindId, std::vector<KindId>> reads = {
      {K("HTTPRoute.gw.io"), {K("Gateway.gw.io"), K("Service"), K("ReferenceGrant.gw.io")}},
      {K("Gateway.gw.io"), {K("GatewayClass.gw.io"), K("Secret")}},
      {K("GatewayClass.gw.io"), {}},
      {K("Secret"), {}},
      {K("Service"), {}},
      {K("ReferenceGrant.gw.io"), {}},
      {K("Namespace"), {}},
  };
  ReadsOrder order = OrderByReads(reads);
  EXPECT_THAT(order.cycles, IsEmpty());
  EXPECT_THAT(order.blocked, IsEmpty());
  EXPECT_THAT(order.order,
              ElementsAre(K("Namespace"), K("Secret"), K("Service"), K("GatewayClass.gw.io"),
                          K("Gateway.gw.io"), K("ReferenceGrant.gw.io"), K("HTTPRoute.gw.io")));
}

TEST(ReadsGraphTest, UnknownTargetsAndSelfEdgesAreIgnored) {
  ReadsOrder order = OrderByReads({{K("B.x"), {K("B.x"), K("Missing.x")}}, {K("A.x"), {K("B.x")}}});
  EXPECT_THAT(order.cycles, IsEmpty());
  EXPECT_THAT(order.order, ElementsAre(K("B.x"), K("A.x")));
}

TEST(ReadsGraphTest, FindsCyclesAndWhatTheyBlock) {
  std::map<KindId, std::vector<KindId>> reads = {
      {K("A.x"), {K("B.x")}},
      {K("B.x"), {K("A.x")}},  // cycle 1
      {K("C.x"), {K("D.x")}},
      {K("D.x"), {K("E.x")}},            // cycle 2 (C -> D -> E -> C)
      {K("E.x"), {K("C.x"), K("D.x")}},  // with a shorter D <-> E
      {K("F.x"), {K("A.x")}},            // blocked by cycle 1
      {K("G.x"), {}},
  };
  ReadsOrder order = OrderByReads(reads);
  EXPECT_THAT(order.order, ElementsAre(K("G.x")));
  ASSERT_EQ(order.cycles.size(), 2u);
  EXPECT_EQ(CycleString(order.cycles[0]), "A.x -> B.x -> A.x");
  // Shortest closed path from the smallest kind of the component.
  EXPECT_EQ(CycleString(order.cycles[1]), "C.x -> D.x -> E.x -> C.x");
  EXPECT_THAT(order.blocked, ElementsAre(K("F.x")));
}

TEST(ReadsGraphTest, EmptyGraph) {
  ReadsOrder order = OrderByReads({});
  EXPECT_THAT(order.order, IsEmpty());
  EXPECT_THAT(order.cycles, IsEmpty());
}

}  // namespace
}  // namespace portico::core
