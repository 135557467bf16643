// held_spool.h: HeldSpool, an append-only scratch file holding the bodies of the synced objects
// the gateway runtime holds (their last good versions), so that those bodies cost no heap. The
// runtime keeps a SpoolRef (offset, size) per object and reads a body back only when something
// asks for it: get_synced in a handler, Held() for the admin API and the snapshot file.
//
// The file is unlinked as soon as it is created (O_TMPFILE, else mkstemp + unlink): nothing is
// left behind, whatever way the process ends. Appends go through a fixed 64 KiB buffer, served
// from memory until written; the buffer never grows (a growing one, freed after a snapshot, left
// the heap fragmented: 10,000 routes cost 1.9 KB of RSS each instead of 0.7 KB). Space of
// released bodies is reclaimed by Compact, which writes the live bodies to a new file and
// returns their new references.
//
// Thread-safety: none; the owner serialises every call (GatewayRuntime: its lock).
// Ownership: owns its file descriptor.
#ifndef PORTICO_CORE_RUNTIME_HELD_SPOOL_H_
#define PORTICO_CORE_RUNTIME_HELD_SPOOL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "portico/sdk/status.h"

namespace portico::core {

// SpoolRef locates one body in a HeldSpool.
struct SpoolRef {
  uint64_t offset = 0;
  uint32_t size = 0;
};

class HeldSpool {
 public:
  // Create opens a new unlinked spool file in directory `dir`. The error names the directory.
  static StatusOr<std::unique_ptr<HeldSpool>> Create(const std::string& dir);

  HeldSpool(const HeldSpool&) = delete;
  HeldSpool& operator=(const HeldSpool&) = delete;
  ~HeldSpool();

  // Append adds `body`, readable at once. On an error (disk full, I/O error), the bodies
  // appended since the last Flush may be lost: their references are invalid (release them) and
  // the caller keeps those bodies itself.
  StatusOr<SpoolRef> Append(std::string_view body);
  // Flush writes the buffered bodies, with the same error contract as Append.
  Status Flush();
  // Read returns the body at `ref`.
  StatusOr<std::string> Read(const SpoolRef& ref) const;
  // Release marks the body at `ref` dead (its space is reclaimed by the next Compact).
  void Release(const SpoolRef& ref);

  // ShouldCompact reports whether dead bodies take more than half the file (and over 1 MiB).
  bool ShouldCompact() const;
  // Compact writes the bodies at `live` (every live reference, any order) to a new file and
  // replaces them in place with their new references. On an error nothing changes.
  Status Compact(std::vector<SpoolRef*>& live);

  uint64_t live_bytes() const { return live_bytes_; }
  uint64_t file_bytes() const { return flushed_ + pending_.size(); }

 private:
  static constexpr size_t kBufferBytes = 64 << 10;

  HeldSpool(std::string dir, int fd) : dir_(std::move(dir)), fd_(fd) {
    pending_.reserve(kBufferBytes);
  }

  std::string dir_;
  int fd_ = -1;
  uint64_t flushed_ = 0;  // bytes written to the file; pending_ starts there
  std::string pending_;   // appended, not written yet (at most kBufferBytes)
  uint64_t live_bytes_ = 0;
};

}  // namespace portico::core

#endif  // PORTICO_CORE_RUNTIME_HELD_SPOOL_H_
