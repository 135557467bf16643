#include "controller/center/inotify_watcher.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <system_error>

#include "controller/center/config_files.h"

namespace portico::controller {
namespace {

// What a config directory's readers care about. IN_ATTRIB: a file or directory that could not
// be read may have become readable (chmod); a touch re-reads a file and finds no change.
constexpr uint32_t kMask = IN_CLOSE_WRITE | IN_MODIFY | IN_ATTRIB | IN_CREATE | IN_DELETE |
                           IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF |
                           IN_ONLYDIR | IN_EXCL_UNLINK;

std::string Join(const std::string& dir, std::string_view name) {
  return dir.empty() ? std::string(name) : dir + "/" + std::string(name);
}

}  // namespace

StatusOr<std::unique_ptr<InotifyWatcher>> InotifyWatcher::Create(
    const std::filesystem::path& root) {
  int inotify_fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (inotify_fd < 0) {
    return UnavailableError(std::string("inotify_init1: ") + std::strerror(errno));
  }
  int wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd < 0) {
    int saved = errno;
    ::close(inotify_fd);
    return UnavailableError(std::string("eventfd: ") + std::strerror(saved));
  }
  std::unique_ptr<InotifyWatcher> watcher(new InotifyWatcher(root, inotify_fd, wake_fd));
  WatchEvents first;
  watcher->AddTree("", &first);
  if (watcher->root_wd_ < 0) {
    return UnavailableError("cannot watch " + root.string() + ": " +
                            (first.errors.empty() ? "unknown error" : first.errors.front()));
  }
  // Errors about subdirectories are reported by the first Wait().
  watcher->pending_errors_ = std::move(first.errors);
  return watcher;
}

InotifyWatcher::InotifyWatcher(std::filesystem::path root, int inotify_fd, int wake_fd)
    : root_(std::move(root)), inotify_fd_(inotify_fd), wake_fd_(wake_fd) {}

InotifyWatcher::~InotifyWatcher() {
  ::close(inotify_fd_);
  ::close(wake_fd_);
}

void InotifyWatcher::AddTree(const std::string& rel, WatchEvents* events) {
  std::filesystem::path abs = rel.empty() ? root_ : root_ / rel;
  // The root may be a symlink (a mounted volume); directories below it are followed only when
  // real, as ListConfigFiles() does.
  uint32_t mask = kMask | (rel.empty() ? 0 : IN_DONT_FOLLOW);
  int wd = ::inotify_add_watch(inotify_fd_, abs.c_str(), mask);
  if (wd < 0) {
    // Gone or replaced by a file since its event: nothing to watch.
    if (errno == ENOENT || errno == ENOTDIR) return;
    std::string error = "cannot watch " + abs.string() + ": " + std::strerror(errno);
    if (errno == ENOSPC) error += " (raise fs.inotify.max_user_watches)";
    events->errors.push_back(std::move(error));
    return;
  }
  dirs_[wd] = rel;
  if (rel.empty()) root_wd_ = wd;
  std::error_code ec;
  std::filesystem::directory_iterator it(
      abs, std::filesystem::directory_options::skip_permission_denied, ec);
  if (ec) return;  // removed meanwhile; its parent's event says so
  for (const auto& entry : it) {
    std::string name = entry.path().filename().string();
    if (name.starts_with(".")) continue;
    std::error_code entry_ec;
    if (entry.is_symlink(entry_ec) || !entry.is_directory(entry_ec)) continue;
    AddTree(Join(rel, name), events);
  }
}

void InotifyWatcher::RemoveTree(const std::string& rel) {
  std::string prefix = rel + "/";
  for (auto it = dirs_.begin(); it != dirs_.end();) {
    if (it->second == rel || it->second.starts_with(prefix)) {
      // A deleted directory's watch is already gone (EINVAL); a moved one's must be dropped.
      ::inotify_rm_watch(inotify_fd_, it->first);
      it = dirs_.erase(it);
    } else {
      ++it;
    }
  }
}

InotifyWatcher::WatchEvents InotifyWatcher::Wait(std::chrono::milliseconds timeout) {
  WatchEvents events;
  events.errors = std::move(pending_errors_);
  pending_errors_.clear();
  pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  int ms = timeout.count() < 0 ? -1 : static_cast<int>(std::min<int64_t>(timeout.count(), INT_MAX));
  int rc = ::poll(fds, 2, ms);
  if (rc < 0) {
    if (errno != EINTR) events.errors.push_back(std::string("poll: ") + std::strerror(errno));
    return events;
  }
  if (fds[1].revents & POLLIN) {
    uint64_t count;
    while (::read(wake_fd_, &count, sizeof(count)) < 0 && errno == EINTR) {
    }
    events.woken = true;
  }
  if (fds[0].revents & POLLIN) ReadEvents(&events);
  return events;
}

void InotifyWatcher::Wake() {
  uint64_t one = 1;
  while (::write(wake_fd_, &one, sizeof(one)) < 0 && errno == EINTR) {
  }
}

void InotifyWatcher::ReadEvents(WatchEvents* events) {
  alignas(inotify_event) char buffer[64 * 1024];
  for (;;) {
    ssize_t n = ::read(inotify_fd_, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN) {
        events->errors.push_back(std::string("reading inotify events: ") + std::strerror(errno));
        events->rescan = true;
      }
      return;
    }
    if (n == 0) return;
    for (char* p = buffer; p < buffer + n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(p);
      p += sizeof(inotify_event) + event->len;
      if (event->mask & IN_Q_OVERFLOW) {
        events->rescan = true;
        continue;
      }
      auto dir = dirs_.find(event->wd);
      if (dir == dirs_.end()) continue;  // a watch already dropped
      if (event->mask & IN_IGNORED) {
        if (event->wd == root_wd_) {
          root_wd_ = -1;
          events->rescan = true;
        }
        dirs_.erase(dir);
        continue;
      }
      if (event->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
        // Subdirectories are handled through their parent's event; the root has none.
        if (event->wd == root_wd_) events->rescan = true;
        continue;
      }
      if (event->len == 0) continue;
      std::string name(event->name);  // NUL-padded to `len`
      if (name.starts_with("..")) {
        events->rescan = true;  // a ConfigMap volume swapped its ..data link
        continue;
      }
      if (name.starts_with(".")) continue;
      std::string rel = Join(dir->second, name);
      if (event->mask & IN_ISDIR) {
        if (event->mask & (IN_CREATE | IN_MOVED_TO | IN_ATTRIB)) {
          AddTree(rel, events);  // an existing watch is kept (same descriptor)
        } else if (event->mask & (IN_DELETE | IN_MOVED_FROM)) {
          RemoveTree(rel);
        }
        events->paths.push_back(std::move(rel));
      } else if (IsConfigFile(name)) {
        events->paths.push_back(std::move(rel));
      }
    }
  }
}

}  // namespace portico::controller
