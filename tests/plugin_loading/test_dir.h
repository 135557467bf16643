// test_dir.h: TempDir, a fresh directory per test holding copies of fixture plugins; and
// RunShell, which runs a command line (portico-ctl) and captures its output and exit status.
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

// ShellRun is what RunShell captured.
struct ShellRun {
  int exit_code = -1;  // -1 when the command could not run or did not exit
  std::string out;     // its standard output (with whatever the command line redirects there)
};

// RunShell runs `command` with /bin/sh and waits for it.
ShellRun RunShell(const std::string& command);

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
