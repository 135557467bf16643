#include "core/runtime/gateway_runtime.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>
#include <utility>

#include "core/runtime/stage_call.h"
#include "portico/sdk/types.h"

namespace portico::core {
namespace {

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void AddCapped(std::vector<EntryKey>* list, const std::string& format, const std::string& id,
               bool* truncated) {
  if (list->size() < CommitRecord::kMaxIds) {
    list->emplace_back(format, id);
  } else {
    *truncated = true;
  }
}

// OnOwnThread runs `fn` on a new thread and waits for it; an exception `fn` throws is rethrown
// on the calling thread.
void OnOwnThread(const std::function<void()>& fn) {
  std::exception_ptr error;
  std::thread([&] {
    try {
      fn();
    } catch (...) {
      error = std::current_exception();
    }
  }).join();
  if (error != nullptr) std::rethrow_exception(error);
}

}  // namespace

// Transaction is the state of one Apply: the admitted changes (which are also the staged synced
// objects), the staged contributions and the nacks. It is the StageHost of every handler call.
class GatewayRuntime::Transaction final : public StageHost {
 public:
  enum class State { kActive, kSkipped, kNacked };
  struct Item {
    SyncedChange change;
    std::string owner;  // change.key.ToString(): the owner of its contributions
    State state = State::kActive;
    HeldRecord* held = nullptr;  // what is held for the key before this transaction
  };

  Transaction(GatewayRuntime& runtime, std::shared_ptr<const RuntimeSnapshot> base)
      : rt_(runtime), base_(std::move(base)), contrib_(*base_, runtime.owner_index_) {}

  // Admit coalesces `changes` (the last per key wins), adds replace_all's deletes and marks the
  // no-ops skipped. Active items are the staged synced objects get_synced reads.
  void Admit(std::vector<SyncedChange> changes, bool replace_all) {
    // by_key_ points into items_: reserve it all so it never moves.
    items_.reserve(changes.size() + (replace_all ? rt_.held_.size() : 0));
    by_key_.reserve(items_.capacity());
    for (SyncedChange& change : changes) {
      items_.push_back(Item{std::move(change)});
      auto [it, inserted] = by_key_.try_emplace(&items_.back().change.key, items_.size() - 1);
      if (!inserted) {  // the last change of a key wins
        items_[it->second].change = std::move(items_.back().change);
        items_.pop_back();
      }
    }
    if (replace_all) {
      for (auto& [key, held] : rt_.held_) {
        if (by_key_.count(&key) > 0) continue;
        items_.push_back(Item{SyncedChange{PORTICO_CHANGE_DELETE, key, held.hash, nullptr}, "",
                              State::kActive, &held});
        by_key_.emplace(&items_.back().change.key, items_.size() - 1);
      }
    }
    for (Item& item : items_) {
      SyncedChange& change = item.change;
      // A new gateway's first snapshot: no hashing for lookups in an empty map.
      if (item.held == nullptr && !rt_.held_.empty()) {
        auto found = rt_.held_.find(change.key);
        if (found != rt_.held_.end()) item.held = &found->second;
      }
      const HeldRecord* held = item.held;
      bool is_held = held != nullptr;
      if (change.op == PORTICO_CHANGE_UPSERT) {
        if (is_held && held->hash == change.hash && !held->nacked) {
          item.state = State::kSkipped;
          continue;
        }
      } else {
        if (!is_held) {
          item.state = State::kSkipped;
          continue;
        }
        if (change.hash.empty()) change.hash = held->hash;
        change.json = nullptr;
      }
      item.owner = change.key.ToString();
      if (change.op == PORTICO_CHANGE_UPSERT && change.json == nullptr) {
        item.state = State::kNacked;
        nacked_.emplace(item.owner, "upsert without a synced view");
      }
    }
  }

  // RunHandlers calls each kind's handler once, in reads order, with its changes.
  void RunHandlers() {
    std::map<std::pair<std::string_view, std::string_view>, std::vector<size_t>> by_kind;
    for (size_t i = 0; i < items_.size(); ++i) {
      if (items_[i].state != State::kActive) continue;
      const StoreKey& key = items_[i].change.key;
      by_kind[{key.group, key.kind}].push_back(i);
    }
    if (by_kind.empty()) return;
    for (const KindInfo* kind : rt_.plugins_.registry.KindsInOrder()) {
      if (kind->hooks.stage == nullptr) continue;
      auto it = by_kind.find({kind->id.group, kind->id.kind});
      if (it == by_kind.end()) continue;
      std::stable_partition(it->second.begin(), it->second.end(),
                            [&](size_t i) { return items_[i].change.op == PORTICO_CHANGE_DELETE; });
      CallHandler(*kind, it->second);
    }
    // A later handler may have staged under an owner nacked earlier: roll every nacked owner back.
    for (const auto& [owner, reason] : nacked_) pending_.insert(owner);
    RollbackPending();
  }

  // Prepare has the consumer refuse owners until it refuses no new one. Returns the snapshot to
  // commit, or null when nothing changed.
  std::shared_ptr<RuntimeSnapshot> Prepare(RuntimeConsumer* consumer, uint64_t version) {
    bool prepared = false;
    for (;;) {
      changes_ = contrib_.Changes();
      if (changes_.empty() && CountHeldChanges() == 0) {
        if (prepared) consumer->Abort();
        return nullptr;
      }
      auto next = std::make_shared<RuntimeSnapshot>();
      next->generation = base_->generation + 1;
      next->version = version;
      next->formats = contrib_.Build(changes_, &fresh_);
      if (consumer == nullptr) return next;
      std::vector<SyncNack> refused = consumer->Prepare(*next);
      prepared = true;
      bool more = false;
      for (SyncNack& nack : refused) {
        std::string owner = nack.key.ToString();
        if (nacked_.count(owner) > 0) continue;
        AddNack(owner, nack.reason.empty() ? "refused by the data plane" : std::move(nack.reason));
        more = true;
      }
      if (!more) return next;
      RollbackPending();
    }
  }

  // CountHeldChanges counts the active items that change what is held.
  size_t CountHeldChanges() const {
    size_t n = 0;
    for (const Item& item : items_) {
      if (item.state != State::kActive) continue;
      if (item.change.op == PORTICO_CHANGE_DELETE) {
        ++n;  // only held objects are deleted
        continue;
      }
      if (item.held == nullptr || item.held->hash != item.change.hash) ++n;
    }
    return n;
  }

  // Nacks lists the nacks of changes in this batch; rejections of other objects are logged.
  std::vector<SyncNack> Nacks() const {
    std::vector<SyncNack> out;
    for (const auto& [owner, reason] : nacked_) {
      const Item* item = Find(owner);
      if (item == nullptr || item->state != State::kNacked) {
        spdlog::warn(
            "runtime: rejection of {} ignored, it is not in this batch and keeps its "
            "current version: {}",
            owner, reason);
        continue;
      }
      spdlog::info("runtime: {} {} nacked: {}", owner, item->change.hash, reason);
      out.push_back(SyncNack{item->change.key, item->change.hash, reason});
    }
    std::sort(out.begin(), out.end(),
              [](const SyncNack& a, const SyncNack& b) { return a.key < b.key; });
    return out;
  }

  // DropCompiledJson drops the JSON of the entries of `next` (the snapshot Prepare returned, not
  // yet published) in the formats `consumer` keeps compiled. Only maps this transaction built are
  // touched, in place, so they keep their identity (consumers compare maps by pointer) and no
  // published snapshot changes.
  void DropCompiledJson(const RuntimeConsumer& consumer) {
    for (auto& [format, entries] : fresh_) {
      if (!consumer.KeepsCompiled(format)) continue;
      for (auto& [id, entry] : *entries) entry.json = nullptr;
    }
  }

  // items may be moved from by the commit, after everything else.
  std::vector<Item>& items() { return items_; }
  const std::vector<ContributionTxn::EntryChange>& changes() const { return changes_; }

  // ------------------------------------------------------------------ StageHost

  Status Put(std::string_view owner, std::string_view format, std::string_view id,
             std::string_view json) override {
    PORTICO_RETURN_IF_ERROR(CheckContribution(owner, format, id, json));
    const std::string& f = *ContributionFormat(format);
    std::string o(owner), i(id);
    const RuntimeEntry* holder = nullptr;
    if (contrib_.Put(o, f, i, json, &holder) == ContributionTxn::PutResult::kConflict) {
      AddNack(o, f + " id \"" + i + "\" is already owned by " + holder->owner);
    }
    return OkStatus();
  }

  void Remove(std::string_view owner, std::string_view format, std::string_view id) override {
    const std::string* f = ContributionFormat(format);
    if (f != nullptr) contrib_.Remove(std::string(owner), *f, std::string(id));
  }

  void ClearOwner(std::string_view owner) override { contrib_.ClearOwner(std::string(owner)); }

  const std::string* GetSynced(const StoreKey& key) override {
    if (auto it = by_key_.find(&key); it != by_key_.end()) {
      const Item& item = items_[it->second];
      if (item.state == State::kActive) {
        return item.change.op == PORTICO_CHANGE_UPSERT ? item.change.json.get() : nullptr;
      }
    }
    auto held = rt_.held_.find(key);
    if (held == rt_.held_.end()) return nullptr;
    if (held->second.json != nullptr) return held->second.json.get();
    std::lock_guard lock(rt_.mu_);  // Held() may read the spool from another thread meanwhile
    std::shared_ptr<const std::string> body = rt_.Body(held->second);
    if (body == nullptr) return nullptr;
    return read_back_.emplace_back(std::move(body)).get();
  }

  void Nack(const StoreKey& key, std::string reason) override {
    AddNack(key.ToString(), reason.empty() ? "rejected by its handler" : std::move(reason));
  }

 private:
  struct KeyPtrHash {
    size_t operator()(const StoreKey* key) const noexcept { return StoreKeyHash()(*key); }
  };
  struct KeyPtrEq {
    bool operator()(const StoreKey* a, const StoreKey* b) const noexcept { return *a == *b; }
  };

  // Find returns the item whose owner string is `owner`, or nullptr.
  const Item* Find(const std::string& owner) const {
    StatusOr<StoreKey> key = StoreKey::Parse(owner);
    if (!key.ok()) return nullptr;
    auto it = by_key_.find(&*key);
    return it == by_key_.end() ? nullptr : &items_[it->second];
  }
  Item* Find(const std::string& owner) {
    return const_cast<Item*>(std::as_const(*this).Find(owner));
  }

  void CallHandler(const KindInfo& kind, const std::vector<size_t>& indices) {
    std::vector<portico_change> raw;
    raw.reserve(indices.size());
    for (size_t i : indices) {
      const SyncedChange& c = items_[i].change;
      raw.push_back(portico_change{
          sizeof(portico_change), c.op,
          portico_object_ref{sizeof(portico_object_ref), sdk::Str(c.key.group),
                             sdk::Str(c.key.kind), sdk::Str(c.key.ns), sdk::Str(c.key.name)},
          c.json != nullptr ? sdk::Str(*c.json) : sdk::Str(""), sdk::Str(c.hash)});
    }
    contrib_.ForgetJournal();
    call_nacks_.clear();
    in_call_ = true;
    Status status = CallStage(kind, raw, *this);
    in_call_ = false;
    if (!status.ok()) {
      spdlog::warn("runtime: handler of {} (plugin {}) failed on {} change(s), all nacked: {}",
                   kind.id.ToString(), kind.plugin_name, indices.size(), status.ToString());
      contrib_.UndoTo(0);
      for (const std::string& owner : call_nacks_) {
        nacked_.erase(owner);
        pending_.erase(owner);
      }
      for (size_t i : indices) AddNack(items_[i].owner, status.message());
    }
    contrib_.ForgetJournal();
    RollbackPending();
  }

  void AddNack(const std::string& owner, std::string reason) {
    if (!nacked_.emplace(owner, std::move(reason)).second) return;  // the first reason stays
    if (in_call_) call_nacks_.push_back(owner);
    pending_.insert(owner);
  }

  // RollbackPending restores the pending nacked owners (and their cascades) to the committed
  // state: contributions and synced objects.
  void RollbackPending() {
    if (pending_.empty()) return;
    std::vector<ContributionTxn::Cascade> cascades = contrib_.Rollback(pending_);
    for (const std::string& owner : pending_) RestoreSynced(owner);
    pending_.clear();
    for (ContributionTxn::Cascade& cascade : cascades) {
      RestoreSynced(cascade.owner);
      nacked_.emplace(cascade.owner, std::move(cascade.reason));
    }
  }

  void RestoreSynced(const std::string& owner) {
    Item* item = Find(owner);
    if (item != nullptr && item->state == State::kActive) item->state = State::kNacked;
  }

  GatewayRuntime& rt_;
  std::shared_ptr<const RuntimeSnapshot> base_;
  ContributionTxn contrib_;
  std::vector<Item> items_;
  std::unordered_map<const StoreKey*, size_t, KeyPtrHash, KeyPtrEq> by_key_;  // into items_
  std::map<std::string, std::string> nacked_;  // owner -> first reason
  std::set<std::string> pending_;              // nacked, not rolled back yet
  std::vector<std::string> call_nacks_;        // nacks first made by the running handler call
  bool in_call_ = false;
  std::vector<ContributionTxn::EntryChange> changes_;
  std::map<std::string, FormatEntries*> fresh_;  // the maps of the last snapshot Prepare built
  std::vector<std::shared_ptr<const std::string>> read_back_;  // spooled bodies GetSynced read
};

GatewayRuntime::GatewayRuntime(const PluginSet& plugins, RuntimeConsumer* consumer,
                               std::unique_ptr<HeldSpool> spool)
    : plugins_(plugins),
      consumer_(consumer),
      current_(std::make_shared<const RuntimeSnapshot>()),
      spool_(std::move(spool)) {}

std::shared_ptr<const std::string> GatewayRuntime::Body(const HeldRecord& held) const {
  if (held.json != nullptr) return held.json;
  StatusOr<std::string> body = spool_->Read(held.ref);
  if (!body.ok()) {
    spdlog::error("runtime: {}", body.status().message());
    return nullptr;
  }
  return std::make_shared<const std::string>(std::move(*body));
}

void GatewayRuntime::KeepBodies(const std::vector<HeldRecord*>& records) {
  // A body kept in memory gets a block of its own: the change's body may point into a larger
  // buffer (the received message), which it must not keep alive.
  auto in_memory = [&] {
    for (HeldRecord* record : records) {
      record->json = std::make_shared<const std::string>(*record->json);
    }
  };
  if (spool_ == nullptr) return in_memory();
  Status status;
  size_t appended = 0;
  for (; appended < records.size(); ++appended) {
    StatusOr<SpoolRef> ref = spool_->Append(*records[appended]->json);
    if (!ref.ok()) {
      status = ref.status();
      break;
    }
    records[appended]->ref = *ref;
  }
  if (status.ok()) status = spool_->Flush();
  if (!status.ok()) {
    spdlog::error("runtime: {}; the bodies of {} held object(s) stay in memory", status.message(),
                  records.size());
    for (size_t i = 0; i < appended; ++i) spool_->Release(records[i]->ref);
    return in_memory();
  }
  for (HeldRecord* record : records) record->json = nullptr;
  if (!spool_->ShouldCompact()) return;
  std::vector<SpoolRef*> live;
  for (auto& [key, held] : held_) {
    if (held.json == nullptr) live.push_back(&held.ref);
  }
  if (Status compacted = spool_->Compact(live); !compacted.ok()) {
    spdlog::warn("runtime: compacting the held-object spool failed: {}", compacted.message());
  }
}

ApplyResult GatewayRuntime::Apply(std::vector<SyncedChange> changes, bool replace_all,
                                  uint64_t version) {
  // Only this thread writes current_ and held_, so reading them here needs no lock.
  auto start = std::chrono::steady_clock::now();
  Transaction txn(*this, current_);
  std::chrono::steady_clock::time_point staging, staged;
  // Admission and the handlers run on a thread of their own. glibc gives each thread its own heap
  // arena, so the temporaries of staging (the handlers' JSON, the overlay, coalescing maps), all
  // freed when the transaction ends, do not interleave with the long-lived structures Prepare and
  // the commit build on this thread; interleaved, they left the heap fragmented (10,000 routes:
  // 11 MB in 38,000 free holes, RSS 2.5 KB per route instead of 1.4 KB).
  OnOwnThread([&] {
    txn.Admit(std::move(changes), replace_all);
    staging = std::chrono::steady_clock::now();
    txn.RunHandlers();
    staged = std::chrono::steady_clock::now();
  });
  std::shared_ptr<RuntimeSnapshot> next = txn.Prepare(consumer_, version);

  ApplyResult result;
  result.nacks = txn.Nacks();

  CommitRecord record;
  size_t changed_objects = 0;
  if (next != nullptr) {
    if (consumer_ != nullptr) txn.DropCompiledJson(*consumer_);
    record.generation = next->generation;
    record.version = version;
    record.time_unix_ms = NowUnixMs();
    record.replace_all = replace_all;
    record.nacks = result.nacks.size();
    for (const ContributionTxn::EntryChange& c : txn.changes()) {
      EntryKey key(*c.format, *c.id);
      if (c.before != nullptr) {
        entry_bytes_ -= c.before->size;
        if (c.after == nullptr || c.after->owner != c.before->owner) {
          auto owned = owner_index_.find(c.before->owner);
          if (owned != owner_index_.end()) {
            owned->second.erase(key);
            if (owned->second.empty()) owner_index_.erase(owned);
          }
        }
      }
      if (c.after != nullptr) {
        entry_bytes_ += c.after->size;
        if (c.before == nullptr || c.after->owner != c.before->owner) {
          owner_index_[c.after->owner].insert(key);
        }
      }
      std::vector<EntryKey>* list = c.before == nullptr  ? &record.added
                                    : c.after == nullptr ? &record.removed
                                                         : &record.changed;
      AddCapped(list, key.first, key.second, &record.truncated);
    }
  }

  {
    std::lock_guard lock(mu_);
    std::map<std::pair<std::string_view, std::string_view>, int64_t> by_kind;  // count deltas
    held_.reserve(held_.size() + txn.items().size());  // StoreKeyHash is not cached: no rehashes
    std::vector<HeldRecord*> to_keep;                  // stable: the reserve above means no rehash
    for (Transaction::Item& item : txn.items()) {
      if (item.state == Transaction::State::kSkipped) continue;
      const StoreKey& key = item.change.key;
      // item.held stays valid: unordered_map never moves its elements (this loop erases only
      // the item's own key).
      HeldRecord* held = item.held;
      if (item.state == Transaction::State::kNacked) {
        if (held != nullptr) held->nacked = true;
        continue;
      }
      if (held != nullptr) {
        if (held->hash != item.change.hash || item.change.op == PORTICO_CHANGE_DELETE) {
          ++record.changes;
        }
        held_bytes_ -= held->size();
        if (held->json == nullptr) spool_->Release(held->ref);
        if (item.change.op == PORTICO_CHANGE_DELETE) {
          --by_kind[{key.group, key.kind}];
          held_.erase(key);
          continue;
        }
        held_bytes_ += item.change.json->size();
        *held = HeldRecord{std::move(item.change.hash), std::move(item.change.json)};
        to_keep.push_back(held);
      } else {
        ++record.changes;
        held_bytes_ += item.change.json->size();
        // The key moves in; by_kind views the held copy (never erased later in this loop: each
        // key appears once).
        auto added =
            held_.emplace(std::move(item.change.key),
                          HeldRecord{std::move(item.change.hash), std::move(item.change.json)});
        ++by_kind[{added.first->first.group, added.first->first.kind}];
        to_keep.push_back(&added.first->second);
      }
    }
    KeepBodies(to_keep);
    for (const auto& [kind, delta] : by_kind) {
      if (delta == 0) continue;
      std::string name(kind.second);
      if (!kind.first.empty()) name.append(".").append(kind.first);
      size_t& count = stats_.synced_by_kind[name];
      count += delta;
      if (count == 0) stats_.synced_by_kind.erase(name);
    }
    stats_.synced_objects = held_.size();
    stats_.version = version;
    stats_.nacks += result.nacks.size();
    if (next != nullptr) {
      stats_.entries = 0;
      stats_.entries_by_format.clear();
      for (const auto& [format, entries] : next->formats) {
        stats_.entries += entries->size();
        stats_.entries_by_format[format] = entries->size();
      }
      stats_.owners = owner_index_.size();
      stats_.generation = next->generation;
      ++stats_.commits;
      current_ = next;
      generation_.store(next->generation, std::memory_order_release);
      changed_objects = record.changes;
      history_.push_back(std::move(record));
      while (history_.size() > kHistorySize) history_.pop_front();
    }
    stats_.bytes = held_bytes_ + entry_bytes_;
    result.generation = current_->generation;
  }
  if (next != nullptr) {
    result.committed = true;
    spdlog::debug("runtime: committed generation {} (version {}, {} change(s), {} nack(s))",
                  next->generation, version, changed_objects, result.nacks.size());
    if (consumer_ != nullptr) consumer_->Commit(next);
  }
  auto ms = [](auto from, auto to) {
    return std::chrono::duration<double, std::milli>(to - from).count();
  };
  spdlog::debug("runtime: applied {} change(s) in {:.1f} ms (handlers {:.1f} ms), committed: {}",
                txn.items().size(), ms(start, std::chrono::steady_clock::now()),
                ms(staging, staged), result.committed);
  return result;
}

std::shared_ptr<const RuntimeSnapshot> GatewayRuntime::Current() const {
  std::lock_guard lock(mu_);
  return current_;
}

std::vector<HeldObject> GatewayRuntime::Held() const {
  std::vector<HeldObject> out;
  {
    std::lock_guard lock(mu_);
    out.reserve(held_.size());
    for (const auto& [key, held] : held_) out.push_back(HeldObject{key, held.hash, Body(held)});
  }
  std::sort(out.begin(), out.end(),
            [](const HeldObject& a, const HeldObject& b) { return a.key < b.key; });
  return out;
}

RuntimeStats GatewayRuntime::Stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::vector<CommitRecord> GatewayRuntime::History() const {
  std::lock_guard lock(mu_);
  return std::vector<CommitRecord>(history_.begin(), history_.end());
}

}  // namespace portico::core
