// admin_auth_test.cc: loopback detection, token files (mode, content) and the exposure rule.
#include "core/admin/admin_auth.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace portico::core::admin {
namespace {

using ::testing::HasSubstr;

TEST(AdminAuthTest, LoopbackAddresses) {
  for (const char* a : {"127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "::ffff:127.0.0.1"})
    EXPECT_TRUE(IsLoopbackAddress(a)) << a;
  for (const char* a : {"0.0.0.0", "::", "10.0.0.1", "128.0.0.1", "::ffff:10.0.0.1", "example"})
    EXPECT_FALSE(IsLoopbackAddress(a)) << a;
}

TEST(AdminAuthTest, ExposureNeedsATokenOffLoopback) {
  EXPECT_TRUE(CheckAdminExposure("127.0.0.1", false, "admin.address", "admin.token_file").ok());
  EXPECT_TRUE(CheckAdminExposure("0.0.0.0", true, "admin.address", "admin.token_file").ok());
  Status refused = CheckAdminExposure("0.0.0.0", false, "admin.address", "admin.token_file");
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("admin.address \"0.0.0.0\" is not a loopback"));
  EXPECT_THAT(refused.message(), HasSubstr("set admin.token_file"));
}

class TokenFileTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& content, mode_t mode) {
    std::ofstream(path_, std::ios::trunc) << content;
    ::chmod(path_.c_str(), mode);
    return path_;
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_ =
      (std::filesystem::temp_directory_path() / ("portico-token-" + std::to_string(::getpid())))
          .string();
};

TEST_F(TokenFileTest, ReadsTheTrimmedToken) {
  StatusOr<std::string> token = LoadAdminToken(Write("  abc-123\n", 0600), "admin.token_file");
  ASSERT_TRUE(token.ok()) << token.status().message();
  EXPECT_EQ(*token, "abc-123");
}

TEST_F(TokenFileTest, RefusesOpenModesEmptyAndMissingFiles) {
  Status open = LoadAdminToken(Write("abc", 0644), "admin.token_file").status();
  EXPECT_THAT(open.message(), HasSubstr("readable by group or others (mode 644): chmod 600"));
  EXPECT_THAT(LoadAdminToken(Write(" \n", 0600), "admin.token_file").status().message(),
              HasSubstr("is empty"));
  EXPECT_THAT(LoadAdminToken(Write("a b", 0600), "admin.token_file").status().message(),
              HasSubstr("without whitespace"));
  Status missing = LoadAdminToken(path_ + ".missing", "--admin-token-file").status();
  EXPECT_THAT(missing.message(), HasSubstr("--admin-token-file \"" + path_ + ".missing\""));
}

TEST(AdminAuthTest, BearerComparison) {
  EXPECT_TRUE(BearerTokenMatches("", ""));
  EXPECT_TRUE(BearerTokenMatches("Bearer t0k", "t0k"));
  EXPECT_TRUE(BearerTokenMatches("BEARER t0k", "t0k"));
  EXPECT_FALSE(BearerTokenMatches("Bearer t0", "t0k"));
  EXPECT_FALSE(BearerTokenMatches("Bearer t0kk", "t0k"));
  EXPECT_FALSE(BearerTokenMatches("Basic t0k", "t0k"));
  EXPECT_FALSE(BearerTokenMatches("", "t0k"));
}

}  // namespace
}  // namespace portico::core::admin
