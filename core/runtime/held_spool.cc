#include "core/runtime/held_spool.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace portico::core {
namespace {

constexpr uint64_t kMinCompactBytes = 1 << 20;

std::string ErrnoText(int err) { return std::strerror(err); }

// OpenUnlinked returns a read-write descriptor of a new file in `dir` that has no name.
StatusOr<int> OpenUnlinked(const std::string& dir) {
#ifdef O_TMPFILE
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  int err = errno;
  if (err != EOPNOTSUPP && err != EISDIR && err != EINVAL) {
    return Status(StatusCode::kUnavailable,
                  "held-object spool: cannot create a file in " + dir + ": " + ErrnoText(err));
  }
#endif
  std::string path = dir + "/.portico-held-XXXXXX";
  int tmp = ::mkostemp(path.data(), O_CLOEXEC);
  if (tmp < 0) {
    return Status(StatusCode::kUnavailable,
                  "held-object spool: cannot create a file in " + dir + ": " + ErrnoText(errno));
  }
  ::unlink(path.c_str());
  return tmp;
}

Status WriteAll(int fd, std::string_view data, uint64_t offset) {
  while (!data.empty()) {
    ssize_t n = ::pwrite(fd, data.data(), data.size(), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return Status(StatusCode::kUnavailable,
                    "held-object spool: write failed: " + ErrnoText(n < 0 ? errno : EIO));
    }
    data.remove_prefix(static_cast<size_t>(n));
    offset += static_cast<uint64_t>(n);
  }
  return OkStatus();
}

}  // namespace

StatusOr<std::unique_ptr<HeldSpool>> HeldSpool::Create(const std::string& dir) {
  PORTICO_ASSIGN_OR_RETURN(int fd, OpenUnlinked(dir));
  return std::unique_ptr<HeldSpool>(new HeldSpool(dir, fd));
}

HeldSpool::~HeldSpool() {
  if (fd_ >= 0) ::close(fd_);
}

StatusOr<SpoolRef> HeldSpool::Append(std::string_view body) {
  if (pending_.size() + body.size() > kBufferBytes) PORTICO_RETURN_IF_ERROR(Flush());
  SpoolRef ref{flushed_ + pending_.size(), static_cast<uint32_t>(body.size())};
  if (body.size() > kBufferBytes) {
    PORTICO_RETURN_IF_ERROR(WriteAll(fd_, body, flushed_));
    flushed_ += body.size();
  } else {
    pending_.append(body);
  }
  live_bytes_ += body.size();
  return ref;
}

Status HeldSpool::Flush() {
  if (pending_.empty()) return OkStatus();
  Status status = WriteAll(fd_, pending_, flushed_);
  // On failure the bytes past flushed_ may be partly written: they are overwritten next time.
  if (status.ok()) flushed_ += pending_.size();
  pending_.clear();  // keeps its capacity
  return status;
}

StatusOr<std::string> HeldSpool::Read(const SpoolRef& ref) const {
  std::string out(ref.size, '\0');
  if (ref.offset >= flushed_) {
    uint64_t at = ref.offset - flushed_;
    if (at + ref.size > pending_.size()) {
      return Status(StatusCode::kInternal, "held-object spool: reference past the end");
    }
    out.assign(pending_, at, ref.size);
    return out;
  }
  size_t done = 0;
  while (done < ref.size) {
    ssize_t n =
        ::pread(fd_, out.data() + done, ref.size - done, static_cast<off_t>(ref.offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return Status(StatusCode::kUnavailable,
                    "held-object spool: read failed: " + ErrnoText(n < 0 ? errno : EIO));
    }
    done += static_cast<size_t>(n);
  }
  return out;
}

void HeldSpool::Release(const SpoolRef& ref) { live_bytes_ -= ref.size; }

bool HeldSpool::ShouldCompact() const {
  uint64_t dead = file_bytes() - live_bytes_;
  return dead > kMinCompactBytes && dead > live_bytes_;
}

Status HeldSpool::Compact(std::vector<SpoolRef*>& live) {
  PORTICO_ASSIGN_OR_RETURN(int fd, OpenUnlinked(dir_));
  PORTICO_RETURN_IF_ERROR(Flush());
  std::vector<SpoolRef> moved;
  moved.reserve(live.size());
  std::string chunk;
  chunk.reserve(kBufferBytes);
  uint64_t written = 0;
  Status status;
  for (const SpoolRef* ref : live) {
    StatusOr<std::string> body = Read(*ref);
    if (!body.ok()) {
      status = body.status();
      break;
    }
    moved.push_back(SpoolRef{written + chunk.size(), ref->size});
    chunk += *body;
    if (chunk.size() >= kBufferBytes) {
      status = WriteAll(fd, chunk, written);
      if (!status.ok()) break;
      written += chunk.size();
      chunk.clear();
    }
  }
  if (status.ok()) status = WriteAll(fd, chunk, written);
  if (!status.ok()) {
    ::close(fd);
    return status;
  }
  written += chunk.size();
  ::close(fd_);
  fd_ = fd;
  flushed_ = written;
  live_bytes_ = written;
  for (size_t i = 0; i < live.size(); ++i) *live[i] = moved[i];
  return OkStatus();
}

}  // namespace portico::core
