// test_dir.h: TempDir, a fresh directory per test holding copies of fixture plugins.
//
// Copies (not links) give every test its own inode, so the dynamic loader maps a new instance of
// each plugin: loads in one test never see another test's plugin state. The directory is removed
// on destruction; plugins loaded from it stay mapped (they are never unloaded).
// Thread-safety: one TempDir per test thread.
#ifndef PORTICO_TESTS_PLUGIN_LOADING_TEST_DIR_H_
#define PORTICO_TESTS_PLUGIN_LOADING_TEST_DIR_H_

#include <filesystem>
#include <string>
#include <string_view>

namespace portico::testing {

// FixturePath is the built fixture libportico-fixture-<name>.so.
std::filesystem::path FixturePath(std::string_view name);

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // AddFixture copies fixture `name` in and returns the copy's path.
  std::string AddFixture(std::string_view name);
  // AddFile writes `bytes` to `file_name` and returns its path.
  std::string AddFile(std::string_view file_name, std::string_view bytes);

 private:
  std::filesystem::path path_;
};

}  // namespace portico::testing

#endif  // PORTICO_TESTS_PLUGIN_LOADING_TEST_DIR_H_
