// regex_prefix_test: LiteralPrefix never claims more than every full match starts with.
#include "core/runtime/routing/regex_prefix.h"

#include <gtest/gtest.h>
#include <re2/re2.h>

namespace portico::core::routing {
namespace {

TEST(RegexPrefixTest, LiteralPrefixes) {
  EXPECT_EQ(LiteralPrefix("/api/v[0-9]+"), "/api/v");
  EXPECT_EQ(LiteralPrefix("^/api/users/.*"), "/api/users/");
  EXPECT_EQ(LiteralPrefix("/exact"), "/exact");
  EXPECT_EQ(LiteralPrefix("/a\\.b/\\d+"), "/a.b/");
  EXPECT_EQ(LiteralPrefix("/ab?c"), "/a");  // "b" may be absent
  EXPECT_EQ(LiteralPrefix("/ab*"), "/a");
  EXPECT_EQ(LiteralPrefix("/ab+"), "/a");
  EXPECT_EQ(LiteralPrefix("/ab{2,3}"), "/a");
  EXPECT_EQ(LiteralPrefix("/(a|b)/x"), "/");
  EXPECT_EQ(LiteralPrefix("/a|/b"), "");      // top-level alternation
  EXPECT_EQ(LiteralPrefix("/x[|]y"), "/x");   // '|' inside a class is a literal
  EXPECT_EQ(LiteralPrefix("(?i)/case"), "");  // flags
  EXPECT_EQ(LiteralPrefix("\\Q/lit\\E"), "");
  EXPECT_EQ(LiteralPrefix(".*\\.jpg"), "");
  EXPECT_EQ(LiteralPrefix("/caf\xc3\xa9/x"), "/caf");
  EXPECT_EQ(LiteralPrefix(""), "");
}

TEST(RegexPrefixTest, EveryFullMatchStartsWithThePrefix) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"/ab?c", {"/ac", "/abc"}},       {"/x(y|z)+", {"/xy", "/xzzy"}},
      {"/a\\/b.*", {"/a/b", "/a/bcd"}}, {"/r/[0-9]{4}/end", {"/r/0042/end"}},
      {"(/p|/q)", {"/p", "/q"}},
  };
  for (const auto& [pattern, texts] : cases) {
    RE2 re(pattern);
    ASSERT_TRUE(re.ok()) << pattern;
    std::string prefix = LiteralPrefix(pattern);
    for (const std::string& text : texts) {
      ASSERT_TRUE(RE2::FullMatch(text, re)) << pattern << " " << text;
      EXPECT_EQ(text.rfind(prefix, 0), 0u) << pattern << " " << text << " prefix " << prefix;
    }
  }
}

}  // namespace
}  // namespace portico::core::routing
