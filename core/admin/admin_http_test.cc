// admin_http_test.cc: request targets, escapes and error bodies.
#include "core/admin/admin_http.h"

#include <gtest/gtest.h>

#include "core/common/percent_encoding.h"

#include "portico/sdk/json.h"

namespace portico::core::admin {
namespace {

TEST(AdminHttpTest, ParsesTargets) {
  std::string path;
  std::map<std::string, std::string, std::less<>> query;
  ASSERT_TRUE(ParseTarget("/api/v1/objects/gtw?namespace=a%20b&wait&x=1+2", &path, &query).ok());
  EXPECT_EQ(path, "/api/v1/objects/gtw");
  EXPECT_EQ(query["namespace"], "a b");
  EXPECT_EQ(query["wait"], "");
  EXPECT_EQ(query["x"], "1 2");
  ASSERT_TRUE(ParseTarget("/a%3Ab", &path, &query).ok());
  EXPECT_EQ(path, "/a:b");
  EXPECT_TRUE(query.empty());
  EXPECT_FALSE(ParseTarget("no-slash", &path, &query).ok());
  EXPECT_FALSE(ParseTarget("/bad%zz", &path, &query).ok());
  EXPECT_FALSE(ParseTarget("/truncated%2", &path, &query).ok());
  EXPECT_FALSE(ParseTarget("/a%2Fb", &path, &query).ok());
}

TEST(AdminHttpTest, EncodesAndMapsCodes) {
  EXPECT_EQ(core::PercentEncode("a b/c~"), "a%20b%2Fc~");
  EXPECT_EQ(HttpStatusFor(StatusCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusFor(StatusCode::kInvalidArgument), 422);
  EXPECT_EQ(HttpStatusFor(StatusCode::kDeadlineExceeded), 504);
  EXPECT_EQ(HttpStatusFor(StatusCode::kInternal), 500);
  AdminResponse error = ErrorResponse(404, "gateways \"x\" not found");
  EXPECT_EQ(error.status, 404);
  auto doc = json::Parse(error.body);
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(json::GetString(*doc, "error"), "gateways \"x\" not found");
  EXPECT_EQ(json::GetString(*doc, "reason"), "NotFound");
}

}  // namespace
}  // namespace portico::core::admin
