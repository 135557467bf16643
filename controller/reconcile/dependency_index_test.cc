#include "controller/reconcile/dependency_index.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace portico::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

using Labels = std::map<std::string, std::string>;

sdk::LabelSelector Selector(const char* text) {
  auto s = sdk::LabelSelector::Parse(text);
  EXPECT_TRUE(s.ok()) << s.status();
  return *s;
}

struct Change {
  std::optional<std::string> before;
  std::optional<std::string> after;
  Labels labels_before;
  Labels labels_after;

  ObjectChange For(const std::string& ns, const std::string& name) const {
    return ObjectChange{"g/K/" + ns + "/" + name, "g",          "K", ns, &before, &after,
                        &labels_before,           &labels_after};
  }
};

TEST(DependencyIndexTest, GetReadersAreAffectedOnlyWhenTheExportChanges) {
  DependencyIndex index;
  index.AddGet("r1", "g/K/ns/a");
  index.AddGet("r2", "g/K/ns/a");
  index.AddGet("r3", "g/K/ns/b");
  EXPECT_THAT(index.ReadersOf(Change{std::nullopt, "{}", {}, {}}.For("ns", "a")),
              ElementsAre("r1", "r2"));
  EXPECT_THAT(index.ReadersOf(Change{"{}", "{}", {}, {{"x", "y"}}}.For("ns", "a")), IsEmpty());
  EXPECT_THAT(index.ReadersOf(Change{"{}", std::nullopt, {}, {}}.For("ns", "a")),
              ElementsAre("r1", "r2"));
  EXPECT_THAT(index.ReadersOf(Change{"1", "2", {}, {}}.For("ns", "b")), ElementsAre("r3"));
}

TEST(DependencyIndexTest, BeginReadsReplacesTheReadersPreviousReads) {
  DependencyIndex index;
  index.AddGet("r", "g/K/ns/a");
  index.AddList("r", "g", "K", "ns", "", Selector(""));
  index.BeginReads("r");
  index.AddGet("r", "g/K/ns/b");
  EXPECT_THAT(index.ReadsOf("r"), ElementsAre("get g/K/ns/b"));
  EXPECT_THAT(index.ReadersOf(Change{std::nullopt, "{}", {}, {}}.For("ns", "a")), IsEmpty());
  index.RemoveReader("r");
  EXPECT_EQ(index.ReaderCount(), 0u);
  EXPECT_THAT(index.ReadersOf(Change{std::nullopt, "{}", {}, {}}.For("ns", "b")), IsEmpty());
}

TEST(DependencyIndexTest, ListReadersFollowScopeAndSelector) {
  DependencyIndex index;
  index.AddList("all", "g", "K", "", "", Selector(""));
  index.AddList("ns1", "g", "K", "ns1", "", Selector(""));
  index.AddList("web", "g", "K", "ns1", "app=web", Selector("app=web"));
  // A new object in ns1 without labels: the unfiltered lists.
  EXPECT_THAT(index.ReadersOf(Change{std::nullopt, "{}", {}, {}}.For("ns1", "a")),
              ElementsAre("all", "ns1"));
  // In another namespace: only the all-namespaces list.
  EXPECT_THAT(index.ReadersOf(Change{std::nullopt, "{}", {}, {}}.For("ns2", "a")),
              ElementsAre("all"));
  // Labels change into the selector, and out of it.
  Labels web{{"app", "web"}};
  Labels db{{"app", "db"}};
  EXPECT_THAT(index.ReadersOf(Change{"{}", "{}", db, web}.For("ns1", "a")),
              ElementsAre("all", "ns1", "web"));
  EXPECT_THAT(index.ReadersOf(Change{"{}", "{}", web, db}.For("ns1", "a")),
              ElementsAre("all", "ns1", "web"));
  // A change outside the selector before and after does not concern it.
  EXPECT_THAT(index.ReadersOf(Change{"1", "2", db, db}.For("ns1", "a")), ElementsAre("all", "ns1"));
  // Nothing readable changed.
  EXPECT_THAT(index.ReadersOf(Change{"1", "1", web, web}.For("ns1", "a")), IsEmpty());
  // Without an export the object is not listed, whatever its labels.
  EXPECT_THAT(index.ReadersOf(Change{std::nullopt, std::nullopt, db, web}.For("ns1", "a")),
              IsEmpty());
}

TEST(DependencyIndexTest, ClusterScopedObjectsMatchAllNamespaceLists) {
  DependencyIndex index;
  index.AddList("r", "g", "K", "", "", Selector(""));
  EXPECT_THAT(index.ReadersOf(Change{std::nullopt, "{}", {}, {}}.For("", "a")), ElementsAre("r"));
}

TEST(DependencyIndexTest, SecretReaders) {
  DependencyIndex index;
  index.AddSecret("r1", "ns", "tls");
  index.AddSecret("r2", "ns", "tls");
  index.AddSecret("r2", "ns", "other");
  EXPECT_THAT(index.ReadersOfSecret("ns", "tls"), ElementsAre("r1", "r2"));
  EXPECT_THAT(index.ReadsOf("r2"), ElementsAre("secret ns/other", "secret ns/tls"));
  // A secret read is not a get of an object with a similar key.
  EXPECT_THAT(index.ReadersOf(Change{std::nullopt, "{}", {}, {}}.For("ns", "tls")), IsEmpty());
}

}  // namespace
}  // namespace portico::controller
