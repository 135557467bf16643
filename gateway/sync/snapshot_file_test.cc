// snapshot_file_test.cc: the snapshot file's round trip, mode, atomic replacement, corruption
// detection, and SnapshotWriter's write-behind (rate limit, only when dirty, final write).
#include "gateway/sync/snapshot_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "core/common/sha256.h"

namespace portico::gateway {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

class SnapshotFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "portico-snapshot-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = dir_ / "gateway.snapshot";
  }
  void TearDown() override { fs::remove_all(dir_); }

  static core::HeldObject Object(std::string kind, std::string ns, std::string name,
                                 std::string json) {
    std::string hash = core::Sha256Hex(json);
    return core::HeldObject{core::StoreKey{"gateway.networking.k8s.io", std::move(kind),
                                           std::move(ns), std::move(name)},
                            std::move(hash), std::make_shared<const std::string>(std::move(json))};
  }

  static SnapshotState Sample() {
    SnapshotState state;
    state.version = 42;
    state.server_id = "server-a";
    state.objects.push_back(Object("Gateway", "infra", "web", R"({"listeners":[]})"));
    state.objects.push_back(Object("HTTPRoute", "default", "r1", R"({"rules":[1]})"));
    state.objects.push_back(Object("GatewayClass", "", "portico", "{}"));
    return state;
  }

  fs::path dir_;
  fs::path path_;
};

TEST_F(SnapshotFileTest, RoundTripWithMode0600) {
  SnapshotState state = Sample();
  ::umask(0022);
  ASSERT_TRUE(WriteSnapshotFile(path_, state).ok());
  struct stat st {};
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_FALSE(fs::exists(path_.string() + ".tmp"));

  auto read = ReadSnapshotFile(path_);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->version, 42u);
  EXPECT_EQ(read->server_id, "server-a");
  ASSERT_EQ(read->objects.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(read->objects[i].key, state.objects[i].key);
    EXPECT_EQ(read->objects[i].hash, state.objects[i].hash);
    EXPECT_EQ(*read->objects[i].json, *state.objects[i].json);
  }

  // Replacing keeps 0600 even over a looser existing file, and leaves no temp file behind.
  ::chmod(path_.c_str(), 0644);
  std::ofstream(path_.string() + ".tmp") << "stale";
  ::chmod((path_.string() + ".tmp").c_str(), 0666);
  state.objects.pop_back();
  state.version = 43;
  ASSERT_TRUE(WriteSnapshotFile(path_, state).ok());
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_FALSE(fs::exists(path_.string() + ".tmp"));
  read = ReadSnapshotFile(path_);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->version, 43u);
  EXPECT_EQ(read->objects.size(), 2u);
}

TEST_F(SnapshotFileTest, MissingIsNotFoundAndUnwritableIsAnError) {
  EXPECT_EQ(ReadSnapshotFile(path_).status().code(), StatusCode::kNotFound);
  Status status = WriteSnapshotFile(dir_ / "no-such-dir" / "snap", Sample());
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("no-such-dir"), std::string::npos) << status;
}

TEST_F(SnapshotFileTest, CorruptFilesAreDataLoss) {
  ASSERT_TRUE(WriteSnapshotFile(path_, Sample()).ok());
  std::string good;
  {
    std::ifstream in(path_, std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto write = [&](const std::string& bytes) {
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << bytes;
  };
  std::vector<std::pair<std::string, std::string>> cases = {
      {"", "empty"},
      {"this is not a protobuf at all \xff\xff\xff", "corrupt"},
      {good.substr(0, good.size() / 2), "corrupt"},
  };
  // One byte of a body flipped: parses, but the hash no longer matches.
  std::string flipped = good;
  size_t at = flipped.find("listeners");
  ASSERT_NE(at, std::string::npos);
  flipped[at] = 'L';
  cases.emplace_back(flipped, "hash does not match");
  for (const auto& [bytes, want] : cases) {
    write(bytes);
    auto read = ReadSnapshotFile(path_);
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.status().code(), StatusCode::kDataLoss) << read.status();
    EXPECT_NE(read.status().message().find(want), std::string::npos) << read.status();
    EXPECT_NE(read.status().message().find(path_.string()), std::string::npos);
  }
}

// WaitFor polls `condition` until it holds or `timeout` passes.
template <typename F>
bool WaitFor(F condition, milliseconds timeout = milliseconds(10000)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(1));
  }
  return true;
}

TEST_F(SnapshotFileTest, WriterWritesBehindOnlyWhenDirtyAndAtStop) {
  std::atomic<uint64_t> version{1};
  std::atomic<int> captures{0};
  auto source = [&] {
    ++captures;
    SnapshotState state = Sample();
    state.version = version.load();
    return state;
  };
  // A long interval: after the first write, further changes wait for Stop().
  SnapshotWriter writer(path_, source, std::chrono::hours(1));
  EXPECT_EQ(writer.Writes(), 0u);
  EXPECT_FALSE(fs::exists(path_));
  writer.MarkDirty();
  ASSERT_TRUE(WaitFor([&] { return writer.Writes() == 1; }));
  EXPECT_TRUE(writer.LastStatus().ok());
  EXPECT_EQ(ReadSnapshotFile(path_)->version, 1u);

  version = 2;
  writer.MarkDirty();
  writer.MarkDirty();
  // Rate-limited: still version 1 on disk. Stop writes the pending change once.
  EXPECT_EQ(writer.Writes(), 1u);
  writer.Stop();
  EXPECT_EQ(writer.Writes(), 2u);
  EXPECT_EQ(captures.load(), 2);
  EXPECT_EQ(ReadSnapshotFile(path_)->version, 2u);
  writer.Stop();  // idempotent, nothing dirty: no write
  EXPECT_EQ(writer.Writes(), 2u);
}

TEST_F(SnapshotFileTest, WriterStopWithoutChangesWritesNothing) {
  SnapshotWriter writer(
      path_, [] { return SnapshotState{}; }, milliseconds(1));
  writer.Stop();
  EXPECT_EQ(writer.Writes(), 0u);
  EXPECT_FALSE(fs::exists(path_));
}

TEST_F(SnapshotFileTest, WriterRewritesAfterTheInterval) {
  std::atomic<uint64_t> version{1};
  SnapshotWriter writer(
      path_,
      [&] {
        SnapshotState state = Sample();
        state.version = version.load();
        return state;
      },
      milliseconds(20));
  for (uint64_t v = 1; v <= 3; ++v) {
    version = v;
    writer.MarkDirty();
    ASSERT_TRUE(WaitFor([&] { return writer.Writes() == v; })) << v;
  }
  EXPECT_EQ(ReadSnapshotFile(path_)->version, 3u);
  writer.Stop();
  EXPECT_EQ(writer.Writes(), 3u);
}

}  // namespace
}  // namespace portico::gateway
