#include "controller/center/atomic_write.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace portico::controller {
namespace {

std::string Errno(std::string_view what, const std::filesystem::path& path) {
  return std::string(what) + " " + path.string() + ": " + std::strerror(errno);
}

// SyncDirectory makes a rename or unlink in `dir` durable.
Status SyncDirectory(const std::filesystem::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return UnavailableError(Errno("cannot open directory", dir));
  int rc = ::fsync(fd);
  int saved = errno;
  ::close(fd);
  errno = saved;
  if (rc != 0 && errno != EINVAL) return UnavailableError(Errno("cannot fsync directory", dir));
  return OkStatus();
}

Status WriteAll(int fd, std::string_view content, const std::filesystem::path& path) {
  while (!content.empty()) {
    ssize_t n = ::write(fd, content.data(), content.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return UnavailableError(Errno("cannot write", path));
    }
    content.remove_prefix(static_cast<size_t>(n));
  }
  return OkStatus();
}

}  // namespace

Status WriteFileAtomically(const std::filesystem::path& path, std::string_view content,
                           mode_t new_file_mode) {
  std::filesystem::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  std::string tmpl = (dir / ("." + path.filename().string() + ".XXXXXX")).string();
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) return UnavailableError(Errno("cannot create a temporary file for", path));
  std::filesystem::path tmp(name.data());

  auto fail = [&](Status status) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return status;
  };
  struct stat st;
  mode_t mode = (::stat(path.c_str(), &st) == 0) ? (st.st_mode & 07777) : new_file_mode;
  if (::fchmod(fd, mode) != 0) return fail(UnavailableError(Errno("cannot chmod", tmp)));
  Status written = WriteAll(fd, content, tmp);
  if (!written.ok()) return fail(written);
  if (::fsync(fd) != 0) return fail(UnavailableError(Errno("cannot fsync", tmp)));
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return UnavailableError(Errno("cannot close", tmp));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status status = UnavailableError(Errno("cannot rename a temporary file onto", path));
    ::unlink(tmp.c_str());
    return status;
  }
  return SyncDirectory(dir);
}

Status RemoveFileDurably(const std::filesystem::path& path) {
  if (::unlink(path.c_str()) != 0) {
    if (errno == ENOENT) return NotFoundError(path.string() + " does not exist");
    return UnavailableError(Errno("cannot remove", path));
  }
  std::filesystem::path dir = path.parent_path();
  return SyncDirectory(dir.empty() ? "." : dir);
}

}  // namespace portico::controller
