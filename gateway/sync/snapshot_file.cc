#include "gateway/sync/snapshot_file.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/common/sha256.h"
#include "portico/sync/v1/sync.pb.h"

namespace portico::gateway {
namespace {

namespace fs = std::filesystem;

Status Errno(const std::string& what, const fs::path& path) {
  return UnavailableError("snapshot file: " + what + " " + path.string() + ": " +
                          std::strerror(errno));
}

// WriteAll writes `data` to `fd`, retrying short writes and EINTR.
bool WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

Status WriteSnapshotFile(const fs::path& path, const SnapshotState& state) {
  sync::v1::ListResponse file;
  file.set_version(state.version);
  file.set_server_id(state.server_id);
  file.mutable_events()->Reserve(static_cast<int>(state.objects.size()));
  for (const core::HeldObject& object : state.objects) {
    sync::v1::Event* event = file.add_events();
    event->set_op(sync::v1::Event::OP_UPSERT);
    event->mutable_key()->set_group(object.key.group);
    event->mutable_key()->set_kind(object.key.kind);
    event->mutable_key()->set_namespace_(object.key.ns);
    event->mutable_key()->set_name(object.key.name);
    event->set_hash(object.hash);
    if (object.json != nullptr) event->set_body(*object.json);
  }
  std::string bytes;
  if (!file.SerializeToString(&bytes)) {
    return InternalError("snapshot file: cannot serialize " + path.string());
  }

  fs::path temp = path;
  temp += ".tmp";
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Errno("cannot create", temp);
  // An older temp file may have had another mode: 0600 whatever the umask or history.
  bool ok = ::fchmod(fd, 0600) == 0 && WriteAll(fd, bytes) && ::fsync(fd) == 0;
  Status status = ok ? OkStatus() : Errno("cannot write", temp);
  if (::close(fd) != 0 && status.ok()) status = Errno("cannot close", temp);
  if (status.ok() && ::rename(temp.c_str(), path.c_str()) != 0) {
    status = Errno("cannot rename onto", path);
  }
  if (!status.ok()) {
    ::unlink(temp.c_str());
    return status;
  }
  // Make the rename durable.
  fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  return OkStatus();
}

StatusOr<SnapshotState> ReadSnapshotFile(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return NotFoundError("no snapshot file " + path.string());
  std::ifstream in(path, std::ios::binary);
  if (!in) return UnavailableError("snapshot file: cannot read " + path.string());
  std::ostringstream buffer;
  buffer << in.rdbuf();
  std::string bytes = std::move(buffer).str();
  auto corrupt = [&path](const std::string& why) {
    return DataLossError("snapshot file " + path.string() + " is corrupt: " + why);
  };
  if (bytes.empty()) return corrupt("empty");
  sync::v1::ListResponse file;
  if (!file.ParseFromString(bytes)) return corrupt("not a serialized ListResponse");
  if (file.server_id().empty()) return corrupt("no server_id");
  SnapshotState state;
  state.version = file.version();
  state.server_id = file.server_id();
  state.objects.reserve(static_cast<size_t>(file.events_size()));
  for (int i = 0; i < file.events_size(); ++i) {
    sync::v1::Event* event = file.mutable_events(i);
    const auto& key = event->key();
    core::StoreKey store_key{key.group(), key.kind(), key.namespace_(), key.name()};
    std::string where = "event " + std::to_string(i);
    if (event->op() != sync::v1::Event::OP_UPSERT) return corrupt(where + " is not an upsert");
    if (!store_key.Validate().ok()) return corrupt(where + " has a bad key");
    if (core::Sha256Hex(event->body()) != event->hash()) {
      return corrupt(where + " (" + store_key.ToString() + "): hash does not match its body");
    }
    state.objects.push_back(
        core::HeldObject{std::move(store_key), event->hash(),
                         std::make_shared<const std::string>(std::move(*event->mutable_body()))});
  }
  return state;
}

SnapshotWriter::SnapshotWriter(fs::path path, Source source, std::chrono::milliseconds min_interval)
    : path_(std::move(path)), source_(std::move(source)), min_interval_(min_interval) {
  thread_ = std::thread([this] { Run(); });
}

SnapshotWriter::~SnapshotWriter() { Stop(); }

void SnapshotWriter::MarkDirty() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    dirty_ = true;
  }
  cv_.notify_all();
}

void SnapshotWriter::Stop() {
  std::call_once(stopped_, [this] {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
    bool dirty;
    {
      std::lock_guard<std::mutex> lock(mu_);
      dirty = dirty_;
      dirty_ = false;
    }
    if (dirty) WriteOnce();
  });
}

uint64_t SnapshotWriter::Writes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return writes_;
}

Status SnapshotWriter::LastStatus() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_status_;
}

void SnapshotWriter::Run() {
  using Clock = std::chrono::steady_clock;
  Clock::time_point last_write = Clock::time_point::min();
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return dirty_ || stopping_; });
    if (stopping_) return;  // Stop() writes what is left
    // At most one write per min_interval: wait out the rest of it (Stop cuts the wait short).
    if (last_write != Clock::time_point::min()) {
      Clock::time_point next = last_write + min_interval_;
      if (cv_.wait_until(lock, next, [this] { return stopping_; })) return;
    }
    dirty_ = false;
    lock.unlock();
    WriteOnce();
    last_write = Clock::now();
    lock.lock();
  }
}

void SnapshotWriter::WriteOnce() {
  SnapshotState state = source_();
  Status status = WriteSnapshotFile(path_, state);
  if (status.ok()) {
    spdlog::debug("snapshot file {}: {} objects at version {}", path_.string(),
                  state.objects.size(), state.version);
  } else {
    spdlog::error("{}", status.message());
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++writes_;
  last_status_ = status;
}

}  // namespace portico::gateway
