// label_selector_test: the Kubernetes label selector syntax (list_exports selectors).
#include "portico/sdk/label_selector.h"

#include <gtest/gtest.h>

namespace portico::sdk {
namespace {

using Labels = std::map<std::string, std::string>;

bool Match(std::string_view selector, const Labels& labels) {
  auto parsed = LabelSelector::Parse(selector);
  EXPECT_TRUE(parsed.ok()) << selector << ": " << parsed.status();
  return parsed.ok() && parsed->Matches(labels);
}

TEST(LabelSelectorTest, EmptySelectorMatchesEverything) {
  EXPECT_TRUE(Match("", {}));
  EXPECT_TRUE(Match("   ", {{"a", "b"}}));
}

TEST(LabelSelectorTest, Equality) {
  EXPECT_TRUE(Match("app=web", {{"app", "web"}}));
  EXPECT_TRUE(Match("app==web", {{"app", "web"}, {"tier", "front"}}));
  EXPECT_FALSE(Match("app=web", {{"app", "db"}}));
  EXPECT_FALSE(Match("app=web", {}));
  EXPECT_TRUE(Match("app=", {{"app", ""}}));
}

TEST(LabelSelectorTest, InequalityMatchesMissingKeys) {
  EXPECT_TRUE(Match("app!=web", {}));
  EXPECT_TRUE(Match("app!=web", {{"app", "db"}}));
  EXPECT_FALSE(Match("app!=web", {{"app", "web"}}));
}

TEST(LabelSelectorTest, ExistenceAndAbsence) {
  EXPECT_TRUE(Match("canary", {{"canary", ""}}));
  EXPECT_FALSE(Match("canary", {}));
  EXPECT_TRUE(Match("!canary", {}));
  EXPECT_FALSE(Match("!canary", {{"canary", "true"}}));
  EXPECT_TRUE(Match("! canary", {}));
}

TEST(LabelSelectorTest, SetMembership) {
  EXPECT_TRUE(Match("env in (prod,staging)", {{"env", "staging"}}));
  EXPECT_TRUE(Match("env in ( prod , staging )", {{"env", "prod"}}));
  EXPECT_FALSE(Match("env in (prod,staging)", {{"env", "dev"}}));
  EXPECT_FALSE(Match("env in (prod)", {}));
  EXPECT_TRUE(Match("env notin (prod)", {}));
  EXPECT_TRUE(Match("env notin (prod)", {{"env", "dev"}}));
  EXPECT_FALSE(Match("env notin(prod,dev)", {{"env", "dev"}}));
}

TEST(LabelSelectorTest, ConjunctionOfRequirements) {
  const char* selector = " app = web , tier notin (db,cache), !canary,team";
  EXPECT_TRUE(Match(selector, {{"app", "web"}, {"tier", "front"}, {"team", "a"}}));
  EXPECT_FALSE(Match(selector, {{"app", "web"}, {"tier", "db"}, {"team", "a"}}));
  EXPECT_FALSE(Match(selector, {{"app", "web"}, {"canary", "1"}, {"team", "a"}}));
  EXPECT_FALSE(Match(selector, {{"app", "web"}}));
  auto parsed = LabelSelector::Parse(selector);
  ASSERT_TRUE(parsed.ok());
  ASSERT_EQ(parsed->requirements().size(), 4u);
  EXPECT_EQ(parsed->requirements()[1],
            (LabelSelector::Requirement{"tier", LabelSelector::Op::kNotIn, {"db", "cache"}}));
}

TEST(LabelSelectorTest, PrefixedKeys) {
  EXPECT_TRUE(Match("kubernetes.io/metadata.name=gateway-conformance-infra",
                    {{"kubernetes.io/metadata.name", "gateway-conformance-infra"}}));
  EXPECT_TRUE(Match("example.com/in", {{"example.com/in", "x"}}));  // "in" as a key name
  EXPECT_TRUE(Match("in in (in)", {{"in", "in"}}));
}

TEST(LabelSelectorTest, RejectsMalformedSelectors) {
  for (const char* bad :
       {"app=web,", ",app", "=web", "app in a", "app in (a", "app in ()", "app >= 1", "app=va lue",
        "-app=x", "app-=x", "app in (a b)", "/name=x", "a/b/c=x", "!", "app=web)"}) {
    auto parsed = LabelSelector::Parse(bad);
    EXPECT_FALSE(parsed.ok()) << "accepted \"" << bad << "\"";
    if (!parsed.ok()) {
      EXPECT_NE(parsed.status().message().find("label selector"), std::string::npos);
    }
  }
  EXPECT_FALSE(LabelSelector::Parse(std::string(64, 'a') + "=x").ok());
  EXPECT_FALSE(LabelSelector::Parse("a=" + std::string(64, 'x')).ok());
}

}  // namespace
}  // namespace portico::sdk
