// hostname_test: the Gateway API hostname semantics of sdk/hostname.h, which the HTTPRoute
// plugin attaches with and the Gateway plugin detects overlapping TLS hostnames with.
#include "portico/sdk/hostname.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace portico::sdk::hostname {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(plugin_hostname, WildcardsMatchOneOrMoreLabels) {
  EXPECT_TRUE(Matches("*.example.com", "a.example.com"));
  EXPECT_TRUE(Matches("*.example.com", "a.b.example.com"));
  EXPECT_TRUE(Matches("*.example.com", "*.a.example.com"));
  EXPECT_FALSE(Matches("*.example.com", "example.com"));
  EXPECT_FALSE(Matches("*.example.com", "aexample.com"));
  EXPECT_FALSE(Matches("*.example.com", "*.example.com.org"));
  EXPECT_TRUE(Matches("a.example.com", "a.example.com"));
  EXPECT_FALSE(Matches("a.example.com", "b.example.com"));
}

TEST(plugin_hostname, IntersectionIsTheMoreSpecificName) {
  EXPECT_EQ(Intersect("*.example.com", "a.example.com"), "a.example.com");
  EXPECT_EQ(Intersect("a.example.com", "*.example.com"), "a.example.com");
  EXPECT_EQ(Intersect("*.example.com", "*.a.example.com"), "*.a.example.com");
  EXPECT_EQ(Intersect("*.a.example.com", "*.example.com"), "*.a.example.com");
  EXPECT_EQ(Intersect("*.example.com", "*.example.com"), "*.example.com");
  EXPECT_EQ(Intersect("a.example.com", "b.example.com"), std::nullopt);
  EXPECT_EQ(Intersect("*.example.com", "example.com"), std::nullopt);
}

TEST(plugin_hostname, RouteHostnamesAgainstAListener) {
  Intersection any = IntersectAll("", {});
  EXPECT_TRUE(any.matches);
  EXPECT_THAT(any.hostnames, IsEmpty());
  EXPECT_THAT(IntersectAll("", {"a.com", "*.b.com"}).hostnames, ElementsAre("a.com", "*.b.com"));
  EXPECT_THAT(IntersectAll("*.b.com", {}).hostnames, ElementsAre("*.b.com"));
  // Hostnames outside the listener's are ignored; duplicates collapse.
  Intersection some = IntersectAll("*.b.com", {"x.b.com", "a.com", "*.com", "x.b.com"});
  EXPECT_TRUE(some.matches);
  EXPECT_THAT(some.hostnames, ElementsAre("x.b.com", "*.b.com"));
  EXPECT_FALSE(IntersectAll("very.specific.com", {"specific.com", "*.other.com"}).matches);
}

TEST(plugin_hostname, OverlapIgnoresTheCatchAll) {
  EXPECT_TRUE(Overlap("*.wildcard.org", "fourth-example.wildcard.org"));
  EXPECT_TRUE(Overlap("a.org", "a.org"));
  EXPECT_FALSE(Overlap("second-example.org", "*.wildcard.org"));
  EXPECT_FALSE(Overlap("", "a.org"));
}

}  // namespace
}  // namespace portico::sdk::hostname
