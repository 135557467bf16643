// lazy_regex_test: LazyRegex checks patterns up front, builds on first use, once, from any thread.
#include "core/runtime/routing/lazy_regex.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace portico::core::routing::internal {
namespace {

TEST(LazyRegexTest, CheckNamesTheFieldAndThePattern) {
  EXPECT_TRUE(LazyRegex::Check("/v[0-9]+/.*", "rules[0].match.path.value").ok());
  Status bad = LazyRegex::Check("/v(", "rules[0].match.path.value");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("rules[0].match.path.value: regular expression \"/v(\""),
            std::string::npos)
      << bad.message();
  EXPECT_NE(bad.message().find("missing )"), std::string::npos) << bad.message();
}

TEST(LazyRegexTest, BuiltOnFirstUseAndMatchesTheWholeText) {
  const std::string pattern = "/v[0-9]+";
  LazyRegex re;
  EXPECT_FALSE(re.built());
  EXPECT_TRUE(re.Matches("/v12", pattern));
  EXPECT_TRUE(re.built());
  EXPECT_FALSE(re.Matches("/v12/x", pattern));  // full match, not a search
  EXPECT_FALSE(re.Matches("x/v12", pattern));
  LazyRegex moved(std::move(re));
  EXPECT_TRUE(moved.built());
  EXPECT_FALSE(re.built());  // NOLINT(bugprone-use-after-move): the move hands the RE2 over
  EXPECT_TRUE(moved.Matches("/v3", pattern));
}

TEST(LazyRegexTest, ConcurrentFirstUsesAgree) {
  const std::string pattern = "/a+b";
  for (int round = 0; round < 20; ++round) {
    LazyRegex re;
    std::atomic<int> matched{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < 50; ++i) {
          if (re.Matches("/aaab", pattern) && !re.Matches("/aaa", pattern)) ++matched;
        }
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(matched.load(), 200);
    EXPECT_TRUE(re.built());
  }
}

}  // namespace
}  // namespace portico::core::routing::internal
