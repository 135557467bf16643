#include "controller/center/file_config_center.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <system_error>
#include <utility>

#include "controller/center/config_files.h"
#include "controller/center/file_documents.h"
#include "controller/center/source_writer.h"

namespace portico::controller {

FileConfigCenter::FileConfigCenter(FileConfigCenterOptions options)
    : options_(std::move(options)), root_(options_.dir) {}

FileConfigCenter::~FileConfigCenter() { Stop(); }

std::string FileConfigCenter::Describe() const { return "file:" + root_.string(); }

std::string FileConfigCenter::Relative(const std::filesystem::path& path) const {
  return path.lexically_relative(root_).generic_string();
}

std::string FileConfigCenter::NewFileName(const sdk::ObjectRef& ref) {
  std::string kind = ref.kind;
  std::transform(kind.begin(), kind.end(), kind.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string name = kind + "-" + (ref.ns.empty() ? "" : ref.ns + "-") + ref.name;
  for (char& c : name) {
    bool safe = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    if (!safe) c = '_';
  }
  return name + ".yaml";
}

Status FileConfigCenter::Start(ConfigListener* listener) {
  std::lock_guard<std::mutex> deliver(deliver_mu_);
  if (listener_ != nullptr || stopping_.load()) {
    return FailedPreconditionError(Describe() + ": already started");
  }
  if (listener == nullptr) return InvalidArgumentError(Describe() + ": no listener");
  if (!options_.identifier) return InvalidArgumentError(Describe() + ": no ObjectIdentifier");
  std::error_code ec;
  root_ = std::filesystem::absolute(options_.dir, ec).lexically_normal();
  if (!root_.empty() && root_.filename().empty()) root_ = root_.parent_path();  // trailing '/'
  if (ec || !std::filesystem::is_directory(root_, ec)) {
    return NotFoundError("config directory " + options_.dir.string() +
                         " does not exist or is not a directory");
  }
  // Watch first, then read: nothing written in between is missed.
  PORTICO_ASSIGN_OR_RETURN(watcher_, InotifyWatcher::Create(root_));
  listener_ = listener;
  Status scanned = Scan({}, /*everything=*/true, /*initial=*/true);
  if (!scanned.ok()) {
    listener_ = nullptr;
    watcher_.reset();
    return scanned;
  }
  running_ = true;
  worker_ = std::make_unique<FileReadWorker>(
      [this](const std::string& file) {
        FileReadOptions read_options{options_.limits, options_.max_file_bytes,
                                     options_.object_limits, &options_.identifier};
        return ReadFileDocuments(root_, file, read_options);
      },
      [this](const std::string& file, FileDocuments read) { ApplyRead(file, std::move(read)); });
  thread_ = std::thread([this] { Run(); });
  return OkStatus();
}

void FileConfigCenter::Stop() {
  stopping_ = true;
  if (watcher_ != nullptr) watcher_->Wake();
  if (thread_.joinable()) thread_.join();
  if (worker_ != nullptr) worker_->Stop();           // after the watcher: nothing enqueues any more
  std::lock_guard<std::mutex> deliver(deliver_mu_);  // waits for a Resync() delivering
  running_ = false;
}

void FileConfigCenter::Run() {
  using Clock = std::chrono::steady_clock;
  // Each path has its own burst: a file written for seconds (60 MB copied in place) does not
  // hold back an edit of another file, which is read `debounce` after its own last event.
  struct Burst {
    Clock::time_point first;
    Clock::time_point last;
  };
  std::map<std::string, Burst> pending;
  std::optional<Burst> rescan;  // events were lost: everything, once quiet
  auto ready_at = [&](const Burst& b) {
    return std::min(b.last + options_.debounce, b.first + options_.max_delay);
  };
  while (!stopping_.load()) {
    std::chrono::milliseconds timeout(-1);
    if (!pending.empty() || rescan.has_value()) {
      Clock::time_point next = Clock::time_point::max();
      for (const auto& [path, burst] : pending) next = std::min(next, ready_at(burst));
      if (rescan.has_value()) next = std::min(next, ready_at(*rescan));
      timeout = std::max(std::chrono::milliseconds(0),
                         std::chrono::ceil<std::chrono::milliseconds>(next - Clock::now()));
    }
    InotifyWatcher::WatchEvents events = watcher_->Wait(timeout);
    if (stopping_.load()) break;
    Clock::time_point now = Clock::now();
    if (!events.errors.empty()) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        for (std::string& error : events.errors) {
          watch_errors_.push_back({{"", 0}, "", Describe() + ": " + error});
        }
      }
      std::lock_guard<std::mutex> deliver(deliver_mu_);
      ReportErrors();
    }
    for (const std::string& path : events.paths) {
      pending.try_emplace(path, Burst{now, now}).first->second.last = now;
    }
    if (events.rescan) {
      if (!rescan.has_value()) rescan = Burst{now, now};
      rescan->last = now;
    }

    std::set<std::string> ready;
    bool everything = false;
    if (rescan.has_value() && now >= ready_at(*rescan)) {
      everything = true;  // covers every pending path
      rescan.reset();
      pending.clear();
    }
    for (auto it = pending.begin(); it != pending.end();) {
      if (now >= ready_at(it->second)) {
        ready.insert(it->first);
        it = pending.erase(it);
      } else {
        ++it;
      }
    }
    if (everything || !ready.empty()) {
      std::lock_guard<std::mutex> deliver(deliver_mu_);
      Status scanned = Scan(ready, everything, /*initial=*/false);  // errors are in Errors()
      (void)scanned;
    }
  }
}

Status FileConfigCenter::Scan(const std::set<std::string>& paths, bool everything, bool initial) {
  std::set<std::string> files;
  Status listed = OkStatus();
  if (everything) {
    auto listing = ListConfigFiles(root_);
    if (listing.ok()) {
      for (const auto& file : *listing) files.insert(Relative(file));
      // Files known but no longer listed are re-read (and found gone). When the directory
      // cannot be listed at all, nothing is dropped.
      std::lock_guard<std::mutex> lock(mu_);
      for (std::string& file : registry_.Files()) files.insert(std::move(file));
    } else {
      listed = listing.status();
      if (initial) return listed;
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& path : paths) {
      for (std::string& file : registry_.FilesUnder(path)) files.insert(std::move(file));
    }
  }
  for (const std::string& path : paths) {
    std::filesystem::path abs = root_ / path;
    std::error_code ec;
    auto status = std::filesystem::symlink_status(abs, ec);
    if (std::filesystem::is_directory(status)) {
      auto listing = ListConfigFiles(abs);  // fails when removed meanwhile: nothing to add
      if (listing.ok()) {
        for (const auto& file : *listing) files.insert(Relative(file));
      }
    } else if (IsConfigFile(abs)) {
      files.insert(path);
    }
  }

  // Files are read without mu_: Errors(), Apply() and Delete() do not wait for the disk. Large
  // files, and files the worker still holds (their reads apply in order), go to the worker.
  FileReadOptions read_options{options_.limits, options_.max_file_bytes, options_.object_limits,
                               &options_.identifier};
  std::vector<std::pair<std::string, FileDocuments>> reads;
  reads.reserve(files.size());
  for (const std::string& file : files) {
    if (!initial && worker_ != nullptr && IsLargeFile(file)) {
      spdlog::debug("config: {} is read apart from other files (large)", file);
      worker_->Enqueue(file);
      continue;
    }
    reads.emplace_back(file, ReadFileDocuments(root_, file, read_options));
  }
  std::vector<ConfigChange> changes;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [file, read] : reads) registry_.Update(file, std::move(read));
    changes = registry_.TakeChanges();
    if (everything) {
      scan_errors_.clear();
      if (!listed.ok()) {
        scan_errors_.push_back({{"", 0}, "", listed.message() + "; keeping every object"});
      }
    }
  }
  if (initial || !changes.empty()) listener_->OnChanges(std::move(changes), initial);
  ReportErrors();
  return listed;
}

bool FileConfigCenter::IsLargeFile(const std::string& file) const {
  if (worker_->Holds(file)) return true;
  std::error_code ec;
  uintmax_t size = std::filesystem::file_size(root_ / file, ec);
  return !ec && size >= options_.large_file_bytes;
}

void FileConfigCenter::ApplyRead(const std::string& file, FileDocuments read) {
  std::lock_guard<std::mutex> deliver(deliver_mu_);
  std::vector<ConfigChange> changes;
  {
    std::lock_guard<std::mutex> lock(mu_);
    registry_.Update(file, std::move(read));
    changes = registry_.TakeChanges();
  }
  if (!changes.empty()) listener_->OnChanges(std::move(changes), /*initial=*/false);
  ReportErrors();
}

std::vector<ConfigError> FileConfigCenter::Errors() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ErrorsLocked();
}

std::vector<ConfigError> FileConfigCenter::ErrorsLocked() const {
  std::vector<ConfigError> errors = scan_errors_;
  errors.insert(errors.end(), watch_errors_.begin(), watch_errors_.end());
  std::vector<ConfigError> files = registry_.Errors();
  errors.insert(errors.end(), files.begin(), files.end());
  return errors;
}

void FileConfigCenter::ReportErrors() {
  std::vector<ConfigError> now = Errors();
  std::set<std::string> before;
  for (const ConfigError& error : reported_errors_) before.insert(error.message);
  std::set<std::string> after;
  for (const ConfigError& error : now) after.insert(error.message);
  if (before == after) return;
  for (const std::string& message : after) {
    if (before.count(message) == 0) spdlog::warn("config: {}", message);
  }
  for (const std::string& message : before) {
    if (after.count(message) == 0) spdlog::info("config: resolved: {}", message);
  }
  reported_errors_ = now;
  if (options_.on_errors) options_.on_errors(now);
}

Status FileConfigCenter::Resync() {
  std::lock_guard<std::mutex> deliver(deliver_mu_);
  if (!running_) return FailedPreconditionError(Describe() + ": not running");
  {
    std::lock_guard<std::mutex> lock(mu_);
    watch_errors_.clear();
  }
  return Scan({}, /*everything=*/true, /*initial=*/false);
}

Status FileConfigCenter::Apply(std::string_view documents) {
  if (!running_) return FailedPreconditionError(Describe() + ": not running");
  StatusOr<std::vector<YamlDocument>> parsed =
      ParseYamlDocuments(documents, "apply", options_.limits);
  if (!parsed.ok()) return InvalidArgumentError(parsed.status().message());
  if (parsed->empty()) return InvalidArgumentError("apply: no documents");
  std::vector<DocumentEdit> items;
  std::set<sdk::ObjectRef> seen;
  for (const YamlDocument& doc : *parsed) {
    StatusOr<sdk::ObjectRef> ref = IdentifyDocument(doc.json, options_.identifier);
    if (!ref.ok()) {
      return InvalidArgumentError("apply:" + std::to_string(doc.line) + ": " +
                                  ref.status().message());
    }
    if (!seen.insert(*ref).second) {
      return InvalidArgumentError("apply:" + std::to_string(doc.line) + ": " + ref->Display() +
                                  " appears twice");
    }
    items.push_back({std::move(ref).value(), &doc.json});
  }

  std::lock_guard<std::mutex> write(write_mu_);
  // Objects defined somewhere are replaced where their winning document lives.
  std::map<std::string, std::vector<DocumentEdit>> by_file;
  std::vector<DocumentEdit> fresh;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const DocumentEdit& item : items) {
      std::vector<SourceLocation> where = registry_.Locate(item.ref);
      if (where.empty()) {
        fresh.push_back(item);
      } else {
        by_file[where.front().file].push_back(item);
      }
    }
  }
  EditOptions edit_options{&options_.identifier, options_.limits, options_.max_file_bytes, false};
  for (const auto& [file, edits] : by_file) {
    StatusOr<EditResult> edited = EditConfigFile(root_ / file, file, edits, edit_options);
    if (!edited.ok()) return edited.status();
    // Removed from that file since the last scan: written as new.
    for (const sdk::ObjectRef& missing : edited->missing) {
      for (const DocumentEdit& edit : edits) {
        if (edit.ref == missing) fresh.push_back(edit);
      }
    }
  }
  for (const DocumentEdit& item : fresh) PORTICO_RETURN_IF_ERROR(WriteNew(item.ref, *item.doc));
  return OkStatus();
}

Status FileConfigCenter::WriteNew(const sdk::ObjectRef& ref, const rapidjson::Value& doc) {
  const std::string base = NewFileName(ref);
  const std::string stem = base.substr(0, base.size() - std::string_view(".yaml").size());
  EditOptions edit_options{&options_.identifier, options_.limits, options_.max_file_bytes, false};
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = attempt == 0 ? base : stem + "-" + std::to_string(attempt) + ".yaml";
    std::filesystem::path path = root_ / name;
    std::error_code ec;
    bool exists = std::filesystem::exists(std::filesystem::symlink_status(path, ec));
    // A missing file is created; an existing one is used only when it already defines the
    // object (written by an earlier Apply() the watcher has not read yet).
    edit_options.append_missing = !exists;
    StatusOr<EditResult> edited = EditConfigFile(path, name, {{ref, &doc}}, edit_options);
    if (edited.ok() && edited->missing.empty()) return OkStatus();
    if (!edited.ok() && !exists) return edited.status();
  }
  return AlreadyExistsError("no free file name for " + ref.Display() + " in " + root_.string());
}

Status FileConfigCenter::Delete(const sdk::ObjectRef& ref) {
  if (!running_) return FailedPreconditionError(Describe() + ": not running");
  std::lock_guard<std::mutex> write(write_mu_);
  std::vector<std::string> files;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const SourceLocation& where : registry_.Locate(ref)) {
      if (std::find(files.begin(), files.end(), where.file) == files.end()) {
        files.push_back(where.file);
      }
    }
  }
  // Written by Apply() and not read by the watcher yet.
  std::string fresh = NewFileName(ref);
  std::error_code ec;
  if (std::find(files.begin(), files.end(), fresh) == files.end() &&
      std::filesystem::exists(root_ / fresh, ec)) {
    files.push_back(fresh);
  }
  EditOptions edit_options{&options_.identifier, options_.limits, options_.max_file_bytes, false};
  bool found = false;
  for (const std::string& file : files) {
    StatusOr<EditResult> edited =
        EditConfigFile(root_ / file, file, {{ref, nullptr}}, edit_options);
    if (!edited.ok()) return edited.status();
    if (edited->missing.empty()) found = true;
  }
  if (!found) return NotFoundError(ref.Display() + " is not defined in " + root_.string());
  return OkStatus();
}

}  // namespace portico::controller
