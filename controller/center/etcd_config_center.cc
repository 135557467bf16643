#include "controller/center/etcd_config_center.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <utility>

#include "controller/center/etcd_keys.h"
#include "controller/center/etcd_writes.h"
#include "controller/center/file_documents.h"
#include "core/common/jitter.h"
#include "core/common/time_format.h"

namespace portico::controller {
namespace {

using Clock = std::chrono::steady_clock;

using core::Jittered;

}  // namespace

EtcdConfigCenter::EtcdConfigCenter(EtcdConfigCenterOptions options)
    : options_(std::move(options)), prefix_dir_(EtcdPrefixDir(options_.prefix)) {}

EtcdConfigCenter::~EtcdConfigCenter() { Stop(); }

StatusOr<std::unique_ptr<EtcdConfigCenter>> EtcdConfigCenter::Create(
    EtcdConfigCenterOptions options) {
  if (!options.identifier) return InvalidArgumentError("etcd center: no ObjectIdentifier");
  if (options.prefix.empty() || options.prefix.front() != '/') {
    return InvalidArgumentError("etcd prefix \"" + options.prefix + "\" must start with '/'");
  }
  std::unique_ptr<EtcdConfigCenter> center(new EtcdConfigCenter(std::move(options)));
  PORTICO_ASSIGN_OR_RETURN(center->client_, EtcdClient::Create(center->options_.client));
  return center;
}

int64_t EtcdConfigCenter::NowMs() const {
  if (options_.now_unix_ms) return options_.now_unix_ms();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Status EtcdConfigCenter::Start(ConfigListener* listener) {
  if (listener == nullptr) return InvalidArgumentError("etcd center: no listener");
  std::lock_guard deliver(deliver_mu_);
  if (running_ || listener_ != nullptr) {
    return FailedPreconditionError("etcd center: already started");
  }
  listener_ = listener;
  auto deadline = Clock::now() + options_.start_timeout;
  std::chrono::milliseconds backoff = options_.backoff_initial;
  Status read;
  while (true) {
    read = FullRead(true);
    if (read.ok()) break;
    spdlog::warn("etcd center: initial read failed: {}", read.message());
    if (Clock::now() + backoff >= deadline || !WaitBackoff(Jittered(backoff))) {
      listener_ = nullptr;
      return UnavailableError("etcd center: could not read " + Describe() + " within " +
                              std::to_string(options_.start_timeout.count()) +
                              " ms: " + read.message());
    }
    backoff = std::min(backoff * 2, options_.backoff_max);
  }
  running_ = true;
  thread_ = std::thread([this] { Run(); });
  return OkStatus();
}

void EtcdConfigCenter::Stop() {
  stopping_ = true;
  {
    std::lock_guard lock(mu_);
    if (watch_ != nullptr) watch_->context->TryCancel();
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  running_ = false;
}

bool EtcdConfigCenter::WaitBackoff(std::chrono::milliseconds delay) {
  std::unique_lock lock(mu_);
  stop_cv_.wait_for(lock, delay, [this] { return stopping_.load(); });
  return !stopping_;
}

void EtcdConfigCenter::SetConnectionError(std::string message) {
  std::lock_guard lock(mu_);
  if (connection_error_ != message && !message.empty()) spdlog::warn("{}", message);
  if (!connection_error_.empty() && message.empty()) {
    spdlog::info("etcd center: watching {} again", Describe());
  }
  connection_error_ = std::move(message);
}

void EtcdConfigCenter::ApplyPut(const mvccpb::KeyValue& kv, std::vector<ConfigChange>* out) {
  if (EtcdReservedKey(prefix_dir_, kv.key())) return;  // the controllers' own keys
  KeyState& s = keys_[kv.key()];
  if (s.create_revision != kv.create_revision() || s.creation_timestamp.empty()) {
    s.create_revision = kv.create_revision();
    s.creation_timestamp = core::FormatRfc3339(NowMs());
  }
  s.mod_revision = kv.mod_revision();
  StatusOr<ParsedDocument> parsed =
      ParseEtcdValue(prefix_dir_, kv.key(), kv.value(), options_.identifier, options_.limits);
  if (!parsed.ok()) {
    std::string message = parsed.status().message();
    if (s.ref) message += "; " + s.ref->Display() + " keeps its last good version";
    s.error = ConfigError{SourceLocation{kv.key(), 0}, s.ref ? s.ref->Display() : "", message};
    return;
  }
  s.error.reset();
  s.stored = EtcdStoredValue(*parsed->doc);
  auto doc = std::make_shared<rapidjson::Document>();
  doc->CopyFrom(*parsed->doc, doc->GetAllocator());
  rapidjson::Value& meta = (*doc)["metadata"];  // IdentifyDocument required metadata.name
  meta.RemoveMember("resourceVersion");
  meta.AddMember("resourceVersion",
                 rapidjson::Value(std::to_string(kv.mod_revision()).c_str(), doc->GetAllocator()),
                 doc->GetAllocator());
  if (!meta.HasMember("creationTimestamp")) {
    meta.AddMember("creationTimestamp",
                   rapidjson::Value(s.creation_timestamp.c_str(), doc->GetAllocator()),
                   doc->GetAllocator());
  }
  auto json = std::make_shared<const std::string>(json::Serialize(*doc));
  if (s.delivered != nullptr && *s.delivered == *json) return;
  s.ref = parsed->ref;
  s.delivered = std::move(json);
  ConfigChange change;
  change.op = ConfigChange::Op::kUpsert;
  change.ref = parsed->ref;
  change.doc = std::move(doc);
  change.source = SourceLocation{kv.key(), 0};
  out->push_back(std::move(change));
}

void EtcdConfigCenter::ApplyDelete(const std::string& key, std::vector<ConfigChange>* out) {
  auto it = keys_.find(key);
  if (it == keys_.end()) return;
  if (it->second.ref && it->second.delivered != nullptr) {
    ConfigChange change;
    change.op = ConfigChange::Op::kDelete;
    change.ref = *it->second.ref;
    change.source = SourceLocation{key, 0};
    out->push_back(std::move(change));
  }
  keys_.erase(it);
}

void EtcdConfigCenter::Deliver(std::vector<ConfigChange> changes, bool initial) {
  if (listener_ == nullptr || (changes.empty() && !initial)) return;
  listener_->OnChanges(std::move(changes), initial);
}

Status EtcdConfigCenter::FullRead(bool initial) {
  int64_t revision = 0;
  PORTICO_ASSIGN_OR_RETURN(std::vector<mvccpb::KeyValue> kvs,
                           RangePrefix(*client_, prefix_dir_, options_.page_size, &revision));
  std::vector<ConfigChange> changes;
  {
    std::lock_guard lock(mu_);
    std::set<std::string> seen;
    for (const mvccpb::KeyValue& kv : kvs) {
      seen.insert(kv.key());
      ApplyPut(kv, &changes);
    }
    std::vector<std::string> gone;
    for (const auto& [key, state] : keys_) {
      if (!seen.contains(key)) gone.push_back(key);
    }
    for (const std::string& key : gone) ApplyDelete(key, &changes);
    revision_ = std::max(revision_, revision);
    ++full_reads_;
  }
  spdlog::info("etcd center: read {} keys under {} at revision {} ({} changes)", kvs.size(),
               prefix_dir_, revision, changes.size());
  Deliver(std::move(changes), initial);
  return OkStatus();
}

void EtcdConfigCenter::Run() {
  std::chrono::milliseconds backoff = options_.backoff_initial;
  while (!stopping_) {
    etcdserverpb::WatchCreateRequest create;
    create.set_key(prefix_dir_);
    create.set_range_end(EtcdClient::PrefixRangeEnd(prefix_dir_));
    create.set_progress_notify(true);
    {
      std::lock_guard lock(mu_);
      create.set_start_revision(revision_ + 1);
    }
    if (options_.before_watch) options_.before_watch();
    if (stopping_) break;
    StatusOr<std::unique_ptr<EtcdWatchStream>> opened = client_->OpenWatch(create);
    if (!opened.ok()) {
      SetConnectionError("etcd center: cannot watch " + Describe() + ": " +
                         opened.status().message() + "; retrying");
      if (!WaitBackoff(Jittered(backoff))) break;
      backoff = std::min(backoff * 2, options_.backoff_max);
      continue;
    }
    std::unique_ptr<EtcdWatchStream> watch = std::move(opened).value();
    {
      std::lock_guard lock(mu_);
      watch_ = watch.get();
      if (stopping_) watch->context->TryCancel();
    }
    bool compacted = false;
    bool ended = false;  // Read() returned false: the RPC ended by itself
    std::string cancel_reason;
    etcdserverpb::WatchResponse response;
    while (!(ended = !watch->stream->Read(&response))) {
      if (response.compact_revision() != 0) {
        compacted = true;
        spdlog::warn("etcd center: revision {} is compacted (etcd keeps from {}); reading {} again",
                     create.start_revision(), response.compact_revision(), prefix_dir_);
        break;
      }
      if (response.canceled()) {
        cancel_reason = response.cancel_reason().empty() ? "the watch was cancelled by etcd"
                                                         : response.cancel_reason();
        break;
      }
      if (response.created()) {
        {
          std::lock_guard lock(mu_);
          connected_ = true;
        }
        SetConnectionError("");
        backoff = options_.backoff_initial;
        continue;
      }
      std::lock_guard deliver(deliver_mu_);
      std::vector<ConfigChange> changes;
      {
        std::lock_guard lock(mu_);
        if (response.events_size() == 0) {
          revision_ = std::max(revision_, response.header().revision());
          continue;
        }
        for (const mvccpb::Event& event : response.events()) {
          // A Resync() may have read past these already.
          if (event.kv().mod_revision() <= revision_) continue;
          if (event.type() == mvccpb::Event::DELETE) {
            ApplyDelete(event.kv().key(), &changes);
          } else {
            ApplyPut(event.kv(), &changes);
          }
        }
        revision_ =
            std::max(revision_, response.events(response.events_size() - 1).kv().mod_revision());
      }
      Deliver(std::move(changes), false);
    }
    {
      std::lock_guard lock(mu_);
      watch_ = nullptr;
      connected_ = false;
    }
    if (!ended) watch->context->TryCancel();
    grpc::Status finished = watch->stream->Finish();
    if (stopping_) break;
    if (compacted) {
      std::lock_guard deliver(deliver_mu_);
      Status read = FullRead(false);
      if (read.ok()) continue;
      SetConnectionError("etcd center: re-reading " + Describe() +
                         " after compaction failed: " + read.message() + "; retrying");
    } else {
      std::string why = !cancel_reason.empty()
                            ? cancel_reason
                            : EtcdStatus(finished, watch->endpoint, "Watch").message();
      SetConnectionError("etcd center: the watch on " + watch->endpoint + " broke: " + why +
                         "; reconnecting");
    }
    if (cancel_reason.find("auth token") != std::string::npos ||
        finished.error_message().find("auth token") != std::string::npos) {
      client_->ForgetToken(watch->endpoint);  // expired: authenticate again
    }
    client_->Failed(watch->endpoint);
    if (!WaitBackoff(Jittered(backoff))) break;
    backoff = std::min(backoff * 2, options_.backoff_max);
  }
}

std::vector<ConfigError> EtcdConfigCenter::Errors() const {
  std::vector<ConfigError> out;
  std::lock_guard lock(mu_);
  if (!connection_error_.empty()) {
    out.push_back(ConfigError{SourceLocation{client_->Describe(), 0}, "", connection_error_});
  }
  for (const auto& [key, state] : keys_) {
    if (state.error) out.push_back(*state.error);
  }
  return out;
}

Status EtcdConfigCenter::Apply(std::string_view documents) {
  PORTICO_ASSIGN_OR_RETURN(std::vector<YamlDocument> docs,
                           ParseYamlDocuments(documents, "apply", options_.limits));
  std::vector<EtcdWrite> writes;
  std::string errors;
  for (size_t i = 0; i < docs.size(); ++i) {
    std::string where =
        "document " + std::to_string(i + 1) + " (line " + std::to_string(docs[i].line) + ")";
    const rapidjson::Value& doc = docs[i].json;
    StatusOr<sdk::ObjectRef> ref =
        doc.IsObject() ? IdentifyDocument(doc, options_.identifier)
                       : StatusOr<sdk::ObjectRef>(InvalidArgumentError("not an object"));
    if (!ref.ok()) {
      errors += "\n" + where + ": " + ref.status().message();
      continue;
    }
    StatusOr<std::optional<int64_t>> given = ResourceVersionOf(doc, where + ": " + ref->Display());
    if (!given.ok()) {
      errors += "\n" + given.status().message();
      continue;
    }
    EtcdWrite w;
    w.ref = *ref;
    w.key = EtcdKey(prefix_dir_, *ref);
    w.value = EtcdStoredValue(doc);
    std::lock_guard lock(mu_);
    auto it = keys_.find(w.key);
    int64_t known = it == keys_.end() ? 0 : it->second.mod_revision;
    w.expected = given->value_or(known);
    if (it != keys_.end() && !it->second.error && it->second.stored == w.value &&
        w.expected == known) {
      continue;  // unchanged: no new revision
    }
    writes.push_back(std::move(w));
  }
  if (!errors.empty()) return InvalidArgumentError("apply refused, nothing was written:" + errors);
  if (writes.empty()) return OkStatus();
  return CommitEtcdWrites(*client_, writes).status();
}

Status EtcdConfigCenter::Delete(const sdk::ObjectRef& ref) {
  EtcdWrite w;
  w.ref = ref;
  w.key = EtcdKey(prefix_dir_, ref);
  w.remove = true;
  {
    std::lock_guard lock(mu_);
    auto it = keys_.find(w.key);
    if (it == keys_.end())
      return NotFoundError(ref.Display() + " not found in etcd (" + w.key + ")");
    w.expected = it->second.mod_revision;
  }
  return CommitEtcdWrites(*client_, {w}).status();
}

Status EtcdConfigCenter::Resync() {
  std::lock_guard deliver(deliver_mu_);
  return FullRead(false);
}

std::string EtcdConfigCenter::Describe() const {
  return client_->Describe() + " prefix " + prefix_dir_;
}

int64_t EtcdConfigCenter::Revision() const {
  std::lock_guard lock(mu_);
  return revision_;
}

bool EtcdConfigCenter::Connected() const {
  std::lock_guard lock(mu_);
  return connected_;
}

uint64_t EtcdConfigCenter::FullReads() const {
  std::lock_guard lock(mu_);
  return full_reads_;
}

}  // namespace portico::controller
