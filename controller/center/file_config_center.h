// file_config_center.h: FileConfigCenter, the ConfigCenter of a directory of YAML/JSON files
// (DESIGN.md §6), watched recursively with inotify.
//
// What it reads: every .yaml, .yml and .json file below the directory (any name, hidden files
// and directories and editors' temporary files excepted, see IsConfigFile()), several documents
// per file. What it does on bad input is SourceRegistry's rules (source_registry.h): a broken
// file keeps what it last produced and is reported with file:line:col; a document without
// apiVersion/kind/metadata.name or of a kind the ObjectIdentifier rejects is reported and its
// siblings apply; of two documents claiming one object the first by path order wins and both
// are reported; deep nesting and alias bombs are refused per `limits`.
//
// Change delivery: Start() reads everything and delivers ONE initial batch on the caller's
// thread, then a watcher thread collects inotify events until `debounce` passes without one for
// a path (or `max_delay` since its first), re-reads the files concerned and delivers what really
// changed as one batch. Files of `large_file_bytes` or more are read by a worker thread instead and
// delivered in a batch of their own when parsed, so that a 60 MB file never delays an edit of
// another file. Atomic renames, partial writes (a truncated or half-written file keeps its objects
// until the write completes) and directories created, moved or removed are handled.
//
// Writing: Apply() and Delete() edit the files (source_writer.h: in place, other documents and
// comments kept, atomic rename); an object not defined anywhere goes to a new file
// "<kind>-<namespace>-<name>.yaml" ("<kind>-<name>.yaml" when cluster-scoped). Delete() removes
// every document claiming the object. The result comes back through the watcher.
//
// Limits: files under a symlinked directory are not read, and edits of a symlinked file's target
// are not seen until Resync() (as ListConfigFiles()); removing and re-creating the directory
// itself needs a restart.
//
// Thread-safety: as ConfigCenter (config_center.h): OnChanges() is called from one thread at a
// time (Start()'s caller, the watcher thread, the large-file worker, or Resync()'s caller; one
// mutex orders them); Errors(), Apply(), Delete(), Resync() and Describe() may be called from
// any thread, but not from inside OnChanges() or `on_errors`. Ownership: the listener must outlive
// Stop(); the destructor stops. Stop() waits for a large file being parsed (seconds for tens of
// MB).
#ifndef PORTICO_CONTROLLER_CENTER_FILE_CONFIG_CENTER_H_
#define PORTICO_CONTROLLER_CENTER_FILE_CONFIG_CENTER_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "controller/center/config_center.h"
#include "controller/center/file_read_worker.h"
#include "controller/center/inotify_watcher.h"
#include "controller/center/object_limits.h"
#include "controller/center/source_registry.h"
#include "controller/center/yaml_to_json.h"

namespace portico::controller {

struct FileConfigCenterOptions {
  std::filesystem::path dir;
  // Quiet time after a path's last event before it is re-read; a burst of writes to a file is
  // one read, and paths whose bursts end together are one batch. Each path waits for its own
  // quiet time only: a file being written for seconds does not delay an edit of another.
  std::chrono::milliseconds debounce{50};
  // A path is read at the latest this long after the first event of its burst, even if events
  // keep coming.
  std::chrono::milliseconds max_delay{2000};
  YamlLimits limits;
  size_t max_file_bytes = 64u << 20;
  // Per-object and per-file bounds (object_limits.h); an object over them is refused and keeps
  // its last good version.
  ObjectLimits object_limits;
  // Files at least this large are read and parsed by a separate worker (file_read_worker.h)
  // after Start(), so that they never delay the edits of other files.
  size_t large_file_bytes = 1u << 20;
  // Identity of a document (required). Called from the watcher thread and Apply()'s callers,
  // so it must be thread-safe.
  ObjectIdentifier identifier;
  // Called after a scan (after its batch was delivered) when Errors() changed, on the thread
  // that delivers batches, with the new Errors(). Optional; the center also logs the errors
  // that appear and clear.
  std::function<void(const std::vector<ConfigError>&)> on_errors;
};

class FileConfigCenter : public ConfigCenter {
 public:
  explicit FileConfigCenter(FileConfigCenterOptions options);
  ~FileConfigCenter() override;
  FileConfigCenter(const FileConfigCenter&) = delete;
  FileConfigCenter& operator=(const FileConfigCenter&) = delete;

  // Start fails when the directory does not exist or cannot be watched; once only.
  Status Start(ConfigListener* listener) override;
  // Stop joins the watcher thread; idempotent. No OnChanges() call runs after it returns.
  void Stop() override;

  std::vector<ConfigError> Errors() const override;
  Status Apply(std::string_view documents) override;
  Status Delete(const sdk::ObjectRef& ref) override;
  Status Resync() override;
  std::string Describe() const override;

  // NewFileName is where Apply() puts a new object, relative to the directory.
  static std::string NewFileName(const sdk::ObjectRef& ref);

 private:
  void Run();
  // Scan re-reads `paths` (files, or directories whose files are all re-read) and, with
  // `everything`, the whole directory; delivers the changes (always when `initial`).
  // Requires deliver_mu_.
  Status Scan(const std::set<std::string>& paths, bool everything, bool initial);
  // IsLargeFile: the worker holds `file` or it has at least large_file_bytes.
  bool IsLargeFile(const std::string& file) const;
  // ApplyRead records a read done by the worker and delivers what changed (the worker's thread).
  void ApplyRead(const std::string& file, FileDocuments read);
  // ReportErrors logs and announces errors that appeared or cleared. Requires deliver_mu_.
  void ReportErrors();
  std::vector<ConfigError> ErrorsLocked() const;
  std::string Relative(const std::filesystem::path& path) const;
  // WriteNew puts an object no file defines into NewFileName(ref) (or "-1", "-2"... when that
  // file exists and defines something else). Requires write_mu_.
  Status WriteNew(const sdk::ObjectRef& ref, const rapidjson::Value& doc);

  FileConfigCenterOptions options_;
  std::filesystem::path root_;  // options_.dir made absolute

  // Held across a scan and its delivery: batches go out one at a time, in order. Taken before mu_.
  std::mutex deliver_mu_;
  ConfigListener* listener_ = nullptr;        // guarded by deliver_mu_
  std::vector<ConfigError> reported_errors_;  // guarded by deliver_mu_
  // Between a successful Start() and Stop(); written under deliver_mu_.
  std::atomic<bool> running_{false};

  // Guards the registry and the center's own errors; held briefly (never while reading files
  // or delivering).
  mutable std::mutex mu_;
  SourceRegistry registry_;
  std::vector<ConfigError> scan_errors_;   // the directory could not be listed
  std::vector<ConfigError> watch_errors_;  // directories that could not be watched

  // Serialises Apply() and Delete(). Taken before mu_.
  std::mutex write_mu_;

  // Reads large files (and every file it holds) after Start(); see large_file_bytes.
  std::unique_ptr<FileReadWorker> worker_;
  std::unique_ptr<InotifyWatcher> watcher_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
};

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_CENTER_FILE_CONFIG_CENTER_H_
