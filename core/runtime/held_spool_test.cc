#include "core/runtime/held_spool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

namespace portico::core {
namespace {

using ::testing::HasSubstr;

// FreshDir is an empty directory removed at the end of the test.
class FreshDir {
 public:
  FreshDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "spool-test-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~FreshDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  bool Empty() const { return std::filesystem::is_empty(path_); }

 private:
  std::string path_;
};

TEST(HeldSpoolTest, BodiesReadBackBeforeAndAfterFlushAndTheFileHasNoName) {
  FreshDir dir;
  auto spool = HeldSpool::Create(dir.path());
  ASSERT_TRUE(spool.ok()) << spool.status().ToString();
  SpoolRef a = *(*spool)->Append(R"({"a":1})");
  SpoolRef empty = *(*spool)->Append("");
  SpoolRef b = *(*spool)->Append(std::string(100000, 'b'));  // larger than the buffer
  EXPECT_EQ(*(*spool)->Read(a), R"({"a":1})");               // not flushed yet: from memory
  ASSERT_TRUE((*spool)->Flush().ok());
  EXPECT_EQ(*(*spool)->Read(a), R"({"a":1})");
  EXPECT_EQ(*(*spool)->Read(empty), "");
  EXPECT_EQ(*(*spool)->Read(b), std::string(100000, 'b'));
  SpoolRef c = *(*spool)->Append("after");
  EXPECT_EQ(c.offset, 100007u);
  EXPECT_EQ(*(*spool)->Read(c), "after");
  EXPECT_EQ((*spool)->live_bytes(), 100012u);
  EXPECT_TRUE(dir.Empty());  // unlinked at creation: nothing is ever left behind
}

TEST(HeldSpoolTest, CompactKeepsTheLiveBodiesAndDropsTheDeadOnes) {
  FreshDir dir;
  auto spool = HeldSpool::Create(dir.path());
  ASSERT_TRUE(spool.ok());
  std::vector<SpoolRef> refs;
  for (int i = 0; i < 3000; ++i) {
    refs.push_back(*(*spool)->Append(std::to_string(i) + std::string(1000, 'x')));
  }
  ASSERT_TRUE((*spool)->Flush().ok());
  EXPECT_FALSE((*spool)->ShouldCompact());
  std::vector<SpoolRef*> live;
  for (int i = 0; i < 3000; ++i) {
    if (i % 3 == 0) {
      live.push_back(&refs[i]);
    } else {
      (*spool)->Release(refs[i]);
    }
  }
  ASSERT_TRUE((*spool)->ShouldCompact());
  uint64_t live_bytes = (*spool)->live_bytes();
  ASSERT_TRUE((*spool)->Compact(live).ok());
  EXPECT_EQ((*spool)->file_bytes(), live_bytes);
  EXPECT_FALSE((*spool)->ShouldCompact());
  for (int i = 0; i < 3000; i += 3) {
    EXPECT_EQ(*(*spool)->Read(refs[i]), std::to_string(i) + std::string(1000, 'x')) << i;
  }
  EXPECT_TRUE(dir.Empty());
}

TEST(HeldSpoolTest, AMissingDirectoryIsNamed) {
  auto spool = HeldSpool::Create("/nonexistent/portico-spool");
  ASSERT_FALSE(spool.ok());
  EXPECT_THAT(spool.status().message(), HasSubstr("/nonexistent/portico-spool"));
}

}  // namespace
}  // namespace portico::core
