// snapshot_file.h: the gateway's snapshot file (DESIGN.md §5): the synced objects it holds with
// the version and server_id they reflect, so a gateway that restarts while the controller is
// unreachable serves its last configuration, and one that reaches the same controller resumes
// from that version instead of taking a full snapshot.
//
// Format: one serialized portico.sync.v1.ListResponse {events, version, server_id}; each event
// is an OP_UPSERT with key, hash (hex sha256 of body) and body. Written atomically (a temp file
// beside it, fsync, rename) with mode 0600. Read back only if it parses and every hash matches
// its body; anything else is "corrupt" (DATA_LOSS) and the caller ignores the file.
//
// SnapshotWriter writes behind: MarkDirty() after each commit; its thread writes at most once
// per `min_interval`, only when something changed, and once more at Stop() if something changed
// since the last write.
//
// Thread-safety: the free functions are reentrant (two writers of one path race on the rename,
// never on the contents). SnapshotWriter: MarkDirty/Stop/Writes/LastStatus from any thread; the
// source is called on the writer's thread (and on the thread calling Stop).
#ifndef PORTICO_GATEWAY_SYNC_SNAPSHOT_FILE_H_
#define PORTICO_GATEWAY_SYNC_SNAPSHOT_FILE_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/runtime/runtime_types.h"
#include "portico/sdk/status.h"

namespace portico::gateway {

// SnapshotState is what a snapshot file holds.
struct SnapshotState {
  uint64_t version = 0;
  std::string server_id;
  std::vector<core::HeldObject> objects;
};

// WriteSnapshotFile writes `state` to `path` atomically with mode 0600. UNAVAILABLE naming the
// path and errno text when a step fails (the previous file, if any, is left as it was).
Status WriteSnapshotFile(const std::filesystem::path& path, const SnapshotState& state);

// ReadSnapshotFile reads a file written by WriteSnapshotFile. NOT_FOUND when it does not exist;
// DATA_LOSS naming the path when it cannot be parsed, an event is not a keyed upsert, or a hash
// does not match its body.
StatusOr<SnapshotState> ReadSnapshotFile(const std::filesystem::path& path);

class SnapshotWriter {
 public:
  using Source = std::function<SnapshotState()>;

  // Starts the writer thread. `source` captures the state to write (consistently).
  SnapshotWriter(std::filesystem::path path, Source source,
                 std::chrono::milliseconds min_interval = std::chrono::seconds(1));
  ~SnapshotWriter();
  SnapshotWriter(const SnapshotWriter&) = delete;
  SnapshotWriter& operator=(const SnapshotWriter&) = delete;

  // MarkDirty: the state changed; it is written within min_interval of the previous write.
  void MarkDirty();
  // Stop joins the thread and writes once more if something changed since the last write.
  // Idempotent.
  void Stop();

  // Writes counts completed writes (successful or not); LastStatus is the last write's result.
  uint64_t Writes() const;
  Status LastStatus() const;
  const std::filesystem::path& path() const { return path_; }

 private:
  void Run();
  void WriteOnce();  // takes the source's state and writes it; updates counters

  const std::filesystem::path path_;
  const Source source_;
  const std::chrono::milliseconds min_interval_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool dirty_ = false;
  bool stopping_ = false;
  uint64_t writes_ = 0;
  Status last_status_;
  std::thread thread_;
  std::once_flag stopped_;
};

}  // namespace portico::gateway

#endif  // PORTICO_GATEWAY_SYNC_SNAPSHOT_FILE_H_
