#include "controller/center/etcd_status_writer.h"

#include <spdlog/spdlog.h>

#include <utility>
#include <vector>

#include "controller/center/etcd_keys.h"
#include "core/common/time_format.h"

namespace portico::controller {
EtcdStatusWriter::EtcdStatusWriter(EtcdClient* client, StatusWriterOptions options,
                                   std::function<void()> on_fenced)
    : client_(client),
      options_(std::move(options)),
      leader_key_(EtcdLeaderKey(options_.prefix)),
      on_fenced_(std::move(on_fenced)) {}

EtcdStatusWriter::~EtcdStatusWriter() { Stop(); }

void EtcdStatusWriter::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { Run(); });
}

void EtcdStatusWriter::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void EtcdStatusWriter::SetEpoch(int64_t epoch) {
  {
    std::lock_guard lock(mu_);
    if (epoch_ == epoch) return;
    epoch_ = epoch;
    poked_ = true;
  }
  cv_.notify_all();
}

void EtcdStatusWriter::Poke() {
  {
    std::lock_guard lock(mu_);
    poked_ = true;
  }
  cv_.notify_all();
}

StatusWriterStats EtcdStatusWriter::Stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void EtcdStatusWriter::Run() {
  while (true) {
    int64_t epoch;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || poked_; });
      if (stopping_) return;
      // Debounce: a burst of changes is written once.
      cv_.wait_for(lock, options_.debounce, [this] { return stopping_; });
      if (stopping_) return;
      poked_ = false;
      epoch = epoch_;
    }
    if (epoch == 0) {
      written_epoch_ = 0;
      written_.clear();
      std::lock_guard lock(mu_);
      stats_.epoch = 0;
      stats_.written = 0;
      continue;
    }
    bool full = epoch != written_epoch_;
    if (full) {
      written_.clear();
      written_epoch_ = epoch;
    }
    if (!WriteOnce(epoch, full)) {
      if (full) written_epoch_ = 0;  // start over under this epoch
      std::unique_lock lock(mu_);
      if (epoch_ == epoch) {
        cv_.wait_for(lock, options_.retry, [this] { return stopping_; });
        poked_ = true;  // retry
      }
    }
  }
}

Status EtcdStatusWriter::Commit(int64_t epoch, std::vector<etcdserverpb::RequestOp>& ops,
                                bool* fenced) {
  etcdserverpb::TxnRequest txn;
  etcdserverpb::Compare* held = txn.add_compare();
  held->set_key(leader_key_);
  held->set_target(etcdserverpb::Compare::CREATE);
  held->set_result(etcdserverpb::Compare::EQUAL);
  held->set_create_revision(epoch);
  etcdserverpb::Compare* mine = txn.add_compare();
  mine->set_key(leader_key_);
  mine->set_target(etcdserverpb::Compare::VALUE);
  mine->set_result(etcdserverpb::Compare::EQUAL);
  mine->set_value(options_.id);
  for (etcdserverpb::RequestOp& op : ops) *txn.add_success() = std::move(op);
  ops.clear();
  PORTICO_ASSIGN_OR_RETURN(etcdserverpb::TxnResponse response, client_->Txn(txn));
  *fenced = !response.succeeded();
  std::lock_guard lock(mu_);
  stats_.revision = response.header().revision();
  return OkStatus();
}

bool EtcdStatusWriter::WriteOnce(int64_t epoch, bool full) {
  std::map<std::string, std::string> desired;
  for (auto& [ref, status] : options_.collect()) {
    desired.emplace(EtcdStatusKey(options_.prefix, ref), std::move(status));
  }
  std::vector<std::pair<std::string, const std::string*>> puts;  // nullptr: delete
  if (full) {
    // Status keys of objects that went while no one led (or under an older leader).
    etcdserverpb::RangeRequest range;
    std::string prefix = EtcdStatusPrefix(options_.prefix);
    range.set_key(prefix);
    range.set_range_end(EtcdClient::PrefixRangeEnd(prefix));
    range.set_keys_only(true);
    StatusOr<etcdserverpb::RangeResponse> existing = client_->Range(range);
    if (!existing.ok()) {
      std::lock_guard lock(mu_);
      stats_.error = "status: cannot read " + prefix + ": " + existing.status().message();
      return false;
    }
    for (const mvccpb::KeyValue& kv : existing->kvs()) {
      if (!desired.contains(kv.key())) puts.emplace_back(kv.key(), nullptr);
    }
  }
  for (const auto& [key, status] : desired) {
    auto it = written_.find(key);
    if (it == written_.end() || it->second != status) puts.emplace_back(key, &status);
  }
  for (const auto& [key, status] : written_) {
    if (!desired.contains(key)) puts.emplace_back(key, nullptr);
  }
  size_t put_count = 0, delete_count = 0;
  bool failed = false, fenced = false;
  std::vector<etcdserverpb::RequestOp> ops;
  std::vector<std::pair<std::string, const std::string*>> pending;
  auto flush = [&] {
    if (ops.empty()) return;
    Status committed = Commit(epoch, ops, &fenced);
    std::lock_guard lock(mu_);
    if (!committed.ok() || fenced) {
      failed = true;
      stats_.error = fenced ? "status: " + leader_key_ + " no longer holds epoch " +
                                  std::to_string(epoch) + " of this controller; not writing"
                            : "status: " + committed.message();
      if (fenced) ++stats_.fenced;
      return;
    }
    for (auto& [key, status] : pending) {
      if (status != nullptr) {
        written_[key] = *status;
        ++put_count;
      } else {
        written_.erase(key);
        ++delete_count;
      }
    }
    pending.clear();
    stats_.error.clear();
  };
  for (auto& [key, status] : puts) {
    etcdserverpb::RequestOp op;
    if (status != nullptr) {
      op.mutable_request_put()->set_key(key);
      op.mutable_request_put()->set_value(*status);
    } else {
      op.mutable_request_delete_range()->set_key(key);
    }
    ops.push_back(std::move(op));
    pending.emplace_back(key, status);
    if (ops.size() >= options_.ops_per_txn) {
      flush();
      if (failed) break;
    }
  }
  if (!failed) flush();
  {
    std::lock_guard lock(mu_);
    stats_.epoch = epoch;
    stats_.puts += put_count;
    stats_.deletes += delete_count;
    stats_.written = written_.size();
    if (put_count + delete_count > 0) stats_.last_write_unix_ms = core::NowUnixMs();
    if (!failed && full) ++stats_.full_writes;
  }
  if (put_count + delete_count > 0 || (full && !failed)) {
    spdlog::info("status: wrote {} and deleted {} status keys under epoch {}{}", put_count,
                 delete_count, epoch, full ? " (all status, new epoch)" : "");
  }
  if (fenced) {
    spdlog::warn("status: fenced: {} is no longer held under epoch {}", leader_key_, epoch);
    if (on_fenced_) on_fenced_();  // the election re-checks; SetEpoch follows what it finds
  }
  return !failed;
}

}  // namespace portico::controller
