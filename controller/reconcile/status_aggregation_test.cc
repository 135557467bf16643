#include "controller/reconcile/status_aggregation.h"

#include <gtest/gtest.h>

namespace portico::controller {
namespace {

std::string Aggregate(const std::optional<std::string>& base,
                      std::vector<StatusContribution> contributions) {
  return json::Serialize(AggregateStatus(base, std::move(contributions)));
}

TEST(ContributionTopicTest, ParsesOpsFieldsAndSelectors) {
  auto topic = ContributionTopic::Parse("count:listeners[name=a.example.com].attachedRoutes");
  ASSERT_TRUE(topic.ok()) << topic.status();
  EXPECT_EQ(topic->op, ContributionTopic::Op::kCount);
  ASSERT_EQ(topic->path.size(), 2u);
  EXPECT_EQ(topic->path[0].field, "listeners");
  ASSERT_EQ(topic->path[0].selectors.size(), 1u);
  EXPECT_EQ(topic->path[0].selectors[0].first, "name");
  EXPECT_EQ(topic->path[0].selectors[0].second, "a.example.com");
  EXPECT_EQ(topic->path[1].field, "attachedRoutes");

  auto append = ContributionTopic::Parse("append:parentsOf");
  ASSERT_TRUE(append.ok());
  EXPECT_EQ(append->op, ContributionTopic::Op::kAppend);
}

TEST(ContributionTopicTest, RejectsMalformedTopics) {
  for (const char* bad : {"listeners.attachedRoutes", "sum:a", "count:", "count:a..b",
                          "count:a[name=x", "count:a[=x].b", "count:a.", "count:a[x]"}) {
    EXPECT_FALSE(ContributionTopic::Parse(bad).ok()) << bad;
  }
}

TEST(AggregateStatusTest, CountAddsOneOrTheGivenInteger) {
  std::string base = R"({"listeners":[{"name":"http","attachedRoutes":0},)"
                     R"({"name":"https","attachedRoutes":0}]})";
  EXPECT_EQ(Aggregate(base, {{"a", "count:listeners[name=http].attachedRoutes", ""},
                             {"b", "count:listeners[name=http].attachedRoutes", "4"},
                             {"c", "count:listeners[name=https].attachedRoutes", "{}"}}),
            R"({"listeners":[{"name":"http","attachedRoutes":5},)"
            R"({"name":"https","attachedRoutes":1}]})");
}

TEST(AggregateStatusTest, CountOnAMissingPathIsSkipped) {
  std::string base = R"({"listeners":[{"name":"http","attachedRoutes":0}]})";
  EXPECT_EQ(Aggregate(base, {{"a", "count:listeners[name=grpc].attachedRoutes", ""},
                             {"a", "count:other.field", ""}}),
            base);
  EXPECT_EQ(Aggregate(std::nullopt, {{"a", "count:x", ""}}), "{}");
}

TEST(AggregateStatusTest, AppendCreatesPathsAndKeepsContributorOrder) {
  EXPECT_EQ(Aggregate(std::nullopt, {{"z", "append:notes", R"("from z")"},
                                     {"a", "append:notes", R"({"n":1})"},
                                     {"m", "append:parents[name=gw].routes", R"("r")"}}),
            R"({"notes":[{"n":1},"from z"],"parents":[{"name":"gw","routes":["r"]}]})");
}

TEST(AggregateStatusTest, SelectorsMatchIntegersAndSkipTypeMismatches) {
  std::string base = R"({"ports":[{"port":80,"hits":0}],"scalar":"x"})";
  EXPECT_EQ(Aggregate(base, {{"a", "count:ports[port=80].hits", ""},
                             {"a", "append:scalar", "1"},
                             {"a", "count:scalar", ""}}),
            R"({"ports":[{"port":80,"hits":1}],"scalar":"x"})");
}

TEST(AggregateStatusTest, NonObjectBaseStartsEmpty) {
  EXPECT_EQ(Aggregate(std::string("[1]"), {{"a", "append:x", "1"}}), R"({"x":[1]})");
}

}  // namespace
}  // namespace portico::controller
