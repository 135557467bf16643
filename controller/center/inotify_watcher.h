// inotify_watcher.h: InotifyWatcher, the recursive inotify watch of a config directory that
// FileConfigCenter debounces and re-reads from.
//
// It watches every non-hidden directory of the tree (a directory created or moved in is watched
// as soon as its event is read; one moved out or deleted is dropped) and reports, relative to
// the root with '/' separators:
//  - config files (IsConfigFile) written, closed after writing, created, deleted, renamed or
//    with changed attributes (chmod); editors' temporary and hidden files are not reported;
//  - directories created, moved in, moved out, deleted or chmod-ed (the reader lists or forgets
//    the files under them: files created before the new directory's watch existed are found
//    that way);
//  - `rescan` when events were lost (queue overflow), the root itself went away, or a name
//    starting with ".." changed (a Kubernetes ConfigMap volume swaps its "..data" link).
//
// Thread-safety: Wait() is called by one thread at a time (the center's watcher thread); Wake()
// may be called from any thread. Ownership: owns its inotify and eventfd descriptors.
#ifndef PORTICO_CONTROLLER_CENTER_INOTIFY_WATCHER_H_
#define PORTICO_CONTROLLER_CENTER_INOTIFY_WATCHER_H_

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "portico/sdk/status.h"

namespace portico::controller {

class InotifyWatcher {
 public:
  // WatchEvents is what one Wait() read.
  struct WatchEvents {
    std::vector<std::string> paths;   // changed files and directories, relative to the root
    bool rescan = false;              // re-read everything
    bool woken = false;               // Wake() was called
    std::vector<std::string> errors;  // directories that could not be watched, read failures
  };

  // Create watches `root` and every non-hidden directory below it.
  static StatusOr<std::unique_ptr<InotifyWatcher>> Create(const std::filesystem::path& root);
  ~InotifyWatcher();
  InotifyWatcher(const InotifyWatcher&) = delete;
  InotifyWatcher& operator=(const InotifyWatcher&) = delete;

  // Wait blocks until events arrive, Wake() is called or `timeout` passes (negative: forever),
  // and returns what it read (possibly nothing).
  WatchEvents Wait(std::chrono::milliseconds timeout);

  // Wake makes the current or next Wait() return.
  void Wake();

  // WatchedDirectories counts the directories watched (for tests and metrics).
  size_t WatchedDirectories() const { return dirs_.size(); }

 private:
  InotifyWatcher(std::filesystem::path root, int inotify_fd, int wake_fd);

  // AddTree watches directory `rel` and the non-hidden directories below it.
  void AddTree(const std::string& rel, WatchEvents* events);
  // RemoveTree stops watching directory `rel` and everything below it.
  void RemoveTree(const std::string& rel);
  void ReadEvents(WatchEvents* events);

  std::filesystem::path root_;
  int inotify_fd_ = -1;
  int wake_fd_ = -1;
  std::unordered_map<int, std::string> dirs_;  // watch descriptor -> directory ("" = root)
  int root_wd_ = -1;
  std::vector<std::string> pending_errors_;  // from Create(), reported by the first Wait()
};

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_CENTER_INOTIFY_WATCHER_H_
