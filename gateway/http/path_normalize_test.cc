#include "gateway/http/path_normalize.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace portico::gateway::http {
namespace {

std::string Normal(std::string_view path) {
  std::string out = "stale";
  if (!NormalizePath(path, &out)) return "<invalid>";
  return out;
}

TEST(PathNormalizeTest, NormalPathsAreCopiedUnchanged) {
  for (const char* path : {"/", "/a", "/a/", "/v2/users/42", "/a/..b/.c/b..", "/a.b/c~d"}) {
    EXPECT_EQ(Normal(path), path);
  }
}

TEST(PathNormalizeTest, DotSegmentsAreRemovedWithoutClimbingAboveTheRoot) {
  const std::vector<std::pair<std::string, std::string>> cases = {{"/a/./b", "/a/b"},
                                                                  {"/a/.", "/a/"},
                                                                  {"/a/b/../c", "/a/c"},
                                                                  {"/a/b/..", "/a/"},
                                                                  {"/a/..", "/"},
                                                                  {"/..", "/"},
                                                                  {"/../a", "/a"},
                                                                  {"/../../a/b", "/a/b"},
                                                                  {"/./", "/"},
                                                                  {"/a/./../b/", "/b/"},
                                                                  {"/v2/../admin", "/admin"},
                                                                  {"/a/b/c/../../d", "/a/d"}};
  for (const auto& [in, want] : cases) EXPECT_EQ(Normal(in), want) << in;
}

TEST(PathNormalizeTest, SlashRunsAreMerged) {
  EXPECT_EQ(Normal("//admin"), "/admin");
  EXPECT_EQ(Normal("/a//b///c"), "/a/b/c");
  EXPECT_EQ(Normal("/a//"), "/a/");
  EXPECT_EQ(Normal("//"), "/");
  EXPECT_EQ(Normal("/a//../b"), "/b");
}

TEST(PathNormalizeTest, BackslashesAreSlashes) {
  std::string out;
  EXPECT_EQ(Normal("/a\\b"), "/a/b");
  EXPECT_EQ(Normal("/public\\..\\admin"), "/admin");
  EXPECT_EQ(Normal("/\\\\admin\\"), "/admin/");
  EXPECT_EQ(Normal("/a%5Cb"), "/a%5Cb");  // encoded, it stays one segment (see EscapedSlashes)
  UnescapeSlashes("/public%5C..%5cadmin", &out);
  EXPECT_EQ(Normal(out), "/admin");
}

TEST(PathNormalizeTest, UnreservedEscapesAreDecodedOthersUpperCased) {
  EXPECT_EQ(Normal("/%7Euser/%41%62%2d%2E%5f"), "/~user/Ab-._");
  EXPECT_EQ(Normal("/a%2fb"), "/a%2Fb");  // an encoded slash stays one segment
  EXPECT_EQ(Normal("/a%20b%c3%a9"), "/a%20b%C3%A9");
  EXPECT_EQ(Normal("/%2E%2E/admin"), "/admin");  // decoded dots are dot segments
  EXPECT_EQ(Normal("/a/%2e/b"), "/a/b");
}

TEST(PathNormalizeTest, MalformedPathsAreRefused) {
  for (const char* path : {"", "a/b", "*", "/a%", "/a%4", "/a%zz", "/%G1/x"}) {
    EXPECT_EQ(Normal(path), "<invalid>") << path;
  }
}

TEST(PathNormalizeTest, EscapedSlashesAreFoundAndDecodedAlone) {
  EXPECT_TRUE(HasEscapedSlash("/a%2fb"));
  EXPECT_TRUE(HasEscapedSlash("/a%2Fb"));
  EXPECT_TRUE(HasEscapedSlash("/a%5cb"));
  EXPECT_TRUE(HasEscapedSlash("/%41%5C"));
  EXPECT_FALSE(HasEscapedSlash("/a%252Fb"));  // an escaped '%' then "2Fb"
  EXPECT_FALSE(HasEscapedSlash("/a%2"));
  EXPECT_FALSE(HasEscapedSlash("/a/b%20c"));
  std::string out;
  UnescapeSlashes("/a%2fb%5C..%2F%41%252F", &out);
  EXPECT_EQ(out, "/a/b\\../%41%252F");  // only the slashes are decoded
  EXPECT_EQ(Normal(out), "/a/A%252F");  // the backslash is a slash: "b\\.." is "b/.."
  UnescapeSlashes("/public%2F..%2Fadmin", &out);
  EXPECT_EQ(Normal(out), "/admin");
}

TEST(PathNormalizeTest, EscapedSlashActionsHaveEnvoyGatewaysNames) {
  EXPECT_EQ(ParseEscapedSlashes("KeepUnchanged"), EscapedSlashes::kKeepUnchanged);
  EXPECT_EQ(ParseEscapedSlashes("RejectRequest"), EscapedSlashes::kRejectRequest);
  EXPECT_EQ(ParseEscapedSlashes("UnescapeAndForward"), EscapedSlashes::kUnescapeAndForward);
  EXPECT_EQ(ParseEscapedSlashes("UnescapeAndRedirect"), EscapedSlashes::kUnescapeAndRedirect);
  EXPECT_EQ(ParseEscapedSlashes("unescapeandredirect"), std::nullopt);
  EXPECT_EQ(ParseEscapedSlashes(""), std::nullopt);
}

}  // namespace
}  // namespace portico::gateway::http
