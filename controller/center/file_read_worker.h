// file_read_worker.h: FileReadWorker, a thread that reads and parses the config files handed to
// it, one at a time, so that a large file (tens of MB of YAML take seconds to parse) never holds
// up the edits of other files (issue 15). FileConfigCenter hands it the files at or above its
// `large_file_bytes`, and every file the worker still holds, so that one file's reads are applied
// in order.
//
// Order: files are read in the order first handed; a file handed again while queued is read
// once, while being read it is read again afterwards (the newest content always wins).
//
// Threading: Enqueue() and Holds() may be called from any thread; `read` and `done` run on the
// worker's thread, one call at a time, `done` after the matching `read`. A file stays held
// until its `done` has returned. Ownership: the worker owns its thread; Stop() (or the
// destructor) joins it after the read in progress, and no `done` runs after Stop() returns.
#ifndef PORTICO_CONTROLLER_CENTER_FILE_READ_WORKER_H_
#define PORTICO_CONTROLLER_CENTER_FILE_READ_WORKER_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "controller/center/file_documents.h"

namespace portico::controller {

class FileReadWorker {
 public:
  using ReadFn = std::function<FileDocuments(const std::string& file)>;
  using DoneFn = std::function<void(const std::string& file, FileDocuments read)>;

  FileReadWorker(ReadFn read, DoneFn done);
  ~FileReadWorker();
  FileReadWorker(const FileReadWorker&) = delete;
  FileReadWorker& operator=(const FileReadWorker&) = delete;

  // Enqueue hands `file` (relative to the config directory) to the worker.
  void Enqueue(const std::string& file);
  // Holds tells whether `file` is queued or being read (its `done` has not returned yet).
  bool Holds(const std::string& file) const;
  // Stop joins the thread; files still queued are dropped. Idempotent.
  void Stop();

 private:
  void Run();

  ReadFn read_;
  DoneFn done_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;  // guarded by mu_
  std::set<std::string> queued_;   // guarded by mu_: the files in queue_
  std::string current_;            // guarded by mu_: being read ("" when none)
  bool again_ = false;             // guarded by mu_: current_ was handed again meanwhile
  bool stopping_ = false;          // guarded by mu_
  std::thread thread_;
};

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_CENTER_FILE_READ_WORKER_H_
