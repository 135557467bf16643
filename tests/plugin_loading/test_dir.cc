#include "tests/plugin_loading/test_dir.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <fstream>
#include <stdexcept>
#include <system_error>

namespace portico::testing {

std::filesystem::path FixturePath(std::string_view name) {
  return std::filesystem::path(PORTICO_FIXTURES_DIR) /
         ("libportico-fixture-" + std::string(name) + ".so");
}

ShellRun RunShell(const std::string& command) {
  ShellRun run;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) run.out.append(buffer, n);
  int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

TempDir::TempDir() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "portico-plugins-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string TempDir::AddFixture(std::string_view name) {
  std::filesystem::path from = FixturePath(name);
  std::filesystem::path to = path_ / from.filename();
  std::filesystem::copy_file(from, to);
  return to.string();
}

std::string TempDir::AddFile(std::string_view file_name, std::string_view bytes) {
  std::filesystem::path to = path_ / file_name;
  std::ofstream out(to, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return to.string();
}

}  // namespace portico::testing
