#include "controller/sync/sync_links.h"

#include <gtest/gtest.h>

namespace portico::controller::sync {

using core::StoreKey;
namespace {

StoreKey Key(std::string kind, std::string name) {
  return StoreKey{"g", std::move(kind), "ns", std::move(name)};
}

TEST(SyncLinksTest, IndexesBothDirections) {
  SyncLinks links;
  links.Set(Key("Route", "r1"), {Key("Gateway", "a"), Key("Gateway", "b")}, {Key("Secret", "s")});
  links.Set(Key("Route", "r2"), {Key("Gateway", "a")}, {});
  EXPECT_EQ(links.ParentsOf(Key("Route", "r1")),
            (std::vector<StoreKey>{Key("Gateway", "a"), Key("Gateway", "b")}));
  EXPECT_EQ(links.ChildrenOf(Key("Gateway", "a")),
            (std::vector<StoreKey>{Key("Route", "r1"), Key("Route", "r2")}));
  EXPECT_EQ(links.ChildrenOf(Key("Gateway", "b")), (std::vector<StoreKey>{Key("Route", "r1")}));
  EXPECT_EQ(links.ReferencesOf(Key("Route", "r1")), (std::vector<StoreKey>{Key("Secret", "s")}));
  EXPECT_EQ(links.ReferrersOf(Key("Secret", "s")), (std::vector<StoreKey>{Key("Route", "r1")}));
  EXPECT_TRUE(links.ReferrersOf(Key("Secret", "other")).empty());
}

TEST(SyncLinksTest, SetReplacesAndGenerationMovesOnlyOnChange) {
  SyncLinks links;
  EXPECT_EQ(links.Generation(), 0u);
  links.Set(Key("Route", "r"), {Key("Gateway", "a")}, {});
  uint64_t g1 = links.Generation();
  EXPECT_GT(g1, 0u);
  links.Set(Key("Route", "r"), {Key("Gateway", "a")}, {});
  EXPECT_EQ(links.Generation(), g1);
  links.Set(Key("Route", "r"), {Key("Gateway", "b")}, {});
  EXPECT_GT(links.Generation(), g1);
  EXPECT_TRUE(links.ChildrenOf(Key("Gateway", "a")).empty());
  EXPECT_EQ(links.ChildrenOf(Key("Gateway", "b")), (std::vector<StoreKey>{Key("Route", "r")}));
  uint64_t g2 = links.Generation();
  links.Remove(Key("Route", "never-linked"));
  EXPECT_EQ(links.Generation(), g2);
}

TEST(SyncLinksTest, RemoveLeavesNoResidue) {
  SyncLinks links;
  for (int i = 0; i < 100; ++i) {
    links.Set(Key("Route", "r" + std::to_string(i)), {Key("Gateway", "a")}, {Key("Svc", "s")});
  }
  EXPECT_EQ(links.Size(), 100u);
  for (int i = 0; i < 100; ++i) links.Remove(Key("Route", "r" + std::to_string(i)));
  EXPECT_EQ(links.Size(), 0u);
  EXPECT_TRUE(links.ChildrenOf(Key("Gateway", "a")).empty());
  EXPECT_TRUE(links.ReferrersOf(Key("Svc", "s")).empty());
}

}  // namespace
}  // namespace portico::controller::sync
