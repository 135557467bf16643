// runtime_types.h: the values the gateway runtime (gateway_runtime.h) takes and hands out:
// synced changes and nacks (ConfigSync's side), contributions and the immutable RuntimeSnapshot
// (the data plane's side), held synced objects, statistics and commit records (admin, tests).
//
// Thread-safety: value types. A RuntimeSnapshot is immutable once published and may be read from
// any thread for as long as a shared_ptr to it is held; its per-format maps are shared between
// consecutive snapshots when unchanged, so never const_cast them.
#ifndef PORTICO_CORE_RUNTIME_RUNTIME_TYPES_H_
#define PORTICO_CORE_RUNTIME_RUNTIME_TYPES_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/common/sha256.h"
#include "core/store/store_key.h"
#include "portico/sdk/abi.h"

namespace portico::core {

// EntryKey names one contribution: (format, id), e.g. ("backend.v1", "ports/infra/web").
using EntryKey = std::pair<std::string, std::string>;

// SyncedChange is one synced object in a batch or snapshot.
struct SyncedChange {
  portico_change_op op = PORTICO_CHANGE_UPSERT;
  StoreKey key;
  std::string hash;                         // hex sha256 of json (delete: hash of the last body)
  std::shared_ptr<const std::string> json;  // null on delete
};

// SyncNack rejects one synced object: it keeps its last good version on this gateway. `hash` is
// the hash of the rejected change.
struct SyncNack {
  StoreKey key;
  std::string hash;
  std::string reason;
};

// RuntimeEntry is one contribution: the owning object's key ("group/Kind/ns/name"), its JSON and
// the JSON's digest and size. In a committed snapshot, the entries of a format the consumer keeps
// compiled (RuntimeConsumer::KeepsCompiled) carry no JSON: their digest names the bytes.
struct RuntimeEntry {
  std::string owner;
  std::shared_ptr<const std::string> json;  // null: dropped once compiled (see above)
  Digest128 digest;                         // of the JSON
  uint32_t size = 0;                        // of the JSON, in bytes

  RuntimeEntry() = default;
  // This constructor computes the digest and size of `json` (not null).
  RuntimeEntry(std::string owner_key, std::shared_ptr<const std::string> json_bytes)
      : owner(std::move(owner_key)),
        json(std::move(json_bytes)),
        digest(Sha256Digest128(*json)),
        size(static_cast<uint32_t>(json->size())) {}

  // SameBytes reports whether this entry's JSON is `bytes` (by digest when the JSON is dropped).
  bool SameBytes(std::string_view bytes) const {
    if (json != nullptr) return *json == bytes;
    return size == bytes.size() && digest == Sha256Digest128(bytes);
  }
};

// FormatEntries are the contributions of one format, keyed by id.
using FormatEntries = std::map<std::string, RuntimeEntry>;

// RuntimeSnapshot is what the data plane reads: the contributions per format, keyed by id. A
// format without entries is absent. Formats unchanged by a commit share their map with the
// previous snapshot (compare the shared_ptrs to skip rebuilding what did not change).
struct RuntimeSnapshot {
  uint64_t generation = 0;  // 0 = the empty initial snapshot; +1 per commit
  uint64_t version = 0;     // the sync version it reflects
  std::map<std::string, std::shared_ptr<const FormatEntries>> formats;

  // Find returns the entry (format, id), or nullptr.
  const RuntimeEntry* Find(const std::string& format, const std::string& id) const {
    auto f = formats.find(format);
    if (f == formats.end()) return nullptr;
    auto e = f->second->find(id);
    return e == f->second->end() ? nullptr : &e->second;
  }
  // Entries returns the map of `format`, or nullptr when it has no entries.
  const FormatEntries* Entries(const std::string& format) const {
    auto f = formats.find(format);
    return f == formats.end() ? nullptr : f->second.get();
  }
  // size is the number of entries over every format.
  size_t size() const {
    size_t n = 0;
    for (const auto& [format, entries] : formats) n += entries->size();
    return n;
  }
};

// HeldObject is one synced object the gateway holds (last good version), for admin and the
// snapshot file.
struct HeldObject {
  StoreKey key;
  std::string hash;
  std::shared_ptr<const std::string> json;
};

// RuntimeStats are the runtime's store statistics. After every object is deleted, every field
// but the four counters at the end is back to zero/empty (tests prove no residue).
struct RuntimeStats {
  size_t synced_objects = 0;
  std::map<std::string, size_t> synced_by_kind;  // "Kind.group" ("Service" for the core group)
  size_t entries = 0;
  std::map<std::string, size_t> entries_by_format;
  size_t owners = 0;        // objects owning at least one entry
  size_t bytes = 0;         // JSON bytes held: synced objects plus entries
  uint64_t generation = 0;  // of the current snapshot
  uint64_t version = 0;     // the last version applied (committed or not)
  uint64_t commits = 0;
  uint64_t nacks = 0;  // total nacks returned by Apply
};

// CommitRecord describes one commit. Each id list is capped at kMaxIds; `truncated` says one was.
struct CommitRecord {
  static constexpr size_t kMaxIds = 2000;

  uint64_t generation = 0;
  uint64_t version = 0;
  int64_t time_unix_ms = 0;
  bool replace_all = false;
  size_t changes = 0;  // synced objects whose held version changed (upserted or deleted)
  size_t nacks = 0;
  std::vector<EntryKey> added;
  std::vector<EntryKey> removed;
  std::vector<EntryKey> changed;  // same id, new owner or JSON
  bool truncated = false;
};

}  // namespace portico::core

#endif  // PORTICO_CORE_RUNTIME_RUNTIME_TYPES_H_
