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

}  // namespace
}  // namespace portico::gateway::http
