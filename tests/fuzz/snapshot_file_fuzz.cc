// snapshot_file_fuzz: the gateway's snapshot file reader on any file content: it never crashes;
// it accepts only what hashes right (every object's hash is the sha256 of its body), and what
// it accepts is written back and read again unchanged.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/common/sha256.h"
#include "gateway/sync/snapshot_file.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

std::filesystem::path Scratch(const char* what) {
  return std::filesystem::temp_directory_path() /
         ("portico-snapshot-fuzz-" + std::to_string(::getpid()) + "." + what);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path in_path = Scratch("in");
  static const std::filesystem::path out_path = Scratch("out");
  {
    std::ofstream out(in_path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  auto state = portico::gateway::ReadSnapshotFile(in_path);
  if (!state.ok()) {
    FUZZ_CHECK(state.status().message().find(in_path.string()) != std::string::npos,
               "error without the path: %s", state.status().message().c_str());
    return 0;
  }
  for (const auto& object : state->objects) {
    FUZZ_CHECK(portico::core::Sha256Hex(*object.json) == object.hash, "hash mismatch accepted");
  }
  FUZZ_CHECK(portico::gateway::WriteSnapshotFile(out_path, *state).ok(), "write back failed");
  auto again = portico::gateway::ReadSnapshotFile(out_path);
  FUZZ_CHECK(again.ok(), "written back, refused: %s", again.status().message().c_str());
  FUZZ_CHECK(again->version == state->version && again->server_id == state->server_id &&
                 again->objects.size() == state->objects.size(),
             "round trip changed the state");
  return 0;
}
