// contribution_txn.h: ContributionTxn, the contributions staged by one runtime transaction as an
// overlay over the committed snapshot: put/remove/clear_owner with per-owner ownership, an undo
// journal (a failing stage() call is undone exactly), rollback of owners to the committed state
// (nacks), and the net diff that becomes the next RuntimeSnapshot.
//
// An id belongs to one owner: a put on an id another owner holds is refused (kConflict), so the
// entries stay partitioned by owner; an owner frees an id only by remove or clear_owner.
//
// Thread-safety: none; one transaction on the sync thread. Ownership: it borrows the base
// snapshot and the committed owner index, which must not change while it lives.
#ifndef PORTICO_CORE_RUNTIME_CONTRIBUTION_TXN_H_
#define PORTICO_CORE_RUNTIME_CONTRIBUTION_TXN_H_

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/runtime/runtime_types.h"

namespace portico::core {

// OwnerIndex maps an owner (object key) to the entries it owns; owners without entries are
// absent.
using OwnerIndex = std::unordered_map<std::string, std::set<EntryKey>>;

class ContributionTxn {
 public:
  // EntryChange is one net change: before (committed) and after (staged); either may be null.
  struct EntryChange {
    const std::string* format;
    const std::string* id;
    const RuntimeEntry* before;
    const RuntimeEntry* after;
  };
  // Cascade is an owner rolled back because its staged entry sat on an id a rolled-back owner
  // held before the transaction.
  struct Cascade {
    std::string owner;
    std::string reason;
  };
  enum class PutResult { kStored, kUnchanged, kConflict };

  ContributionTxn(const RuntimeSnapshot& base, const OwnerIndex& owners)
      : base_(base), owners_(owners) {}
  ContributionTxn(const ContributionTxn&) = delete;
  ContributionTxn& operator=(const ContributionTxn&) = delete;

  // Working returns the staged entry (format, id), or nullptr.
  const RuntimeEntry* Working(const std::string& format, const std::string& id) const;
  // Base returns the committed entry (format, id), or nullptr.
  const RuntimeEntry* Base(const std::string& format, const std::string& id) const;

  // Put stores `json` at (format, id) for `owner`. kConflict (nothing stored) when another owner
  // holds the id, its entry in *holder; kUnchanged when the owner already put these bytes.
  PutResult Put(const std::string& owner, const std::string& format, const std::string& id,
                std::string_view json, const RuntimeEntry** holder = nullptr);
  // Remove drops (format, id) when `owner` holds it.
  void Remove(const std::string& owner, const std::string& format, const std::string& id);
  // ClearOwner drops every entry `owner` holds, in every format.
  void ClearOwner(const std::string& owner);
  // WorkingEntries lists what `owner` holds now, sorted.
  std::vector<EntryKey> WorkingEntries(const std::string& owner) const;

  // Mark and UndoTo undo every change made since Mark (one stage() call).
  size_t Mark() const { return journal_.size(); }
  void UndoTo(size_t mark);
  // ForgetJournal drops the undo journal (between calls).
  void ForgetJournal() { journal_.clear(); }

  // Rollback restores `owners` to the committed state: what they staged is dropped and what they
  // held before comes back. An owner whose staged entry sits on such an id is rolled back too
  // and returned (to a fixpoint). Not journaled.
  std::vector<Cascade> Rollback(const std::set<std::string>& owners);

  // Changes is the net diff against the base, sorted by (format, id); pointers stay valid until
  // the next mutation.
  std::vector<EntryChange> Changes() const;
  // Build makes the next snapshot's formats from the base and `changes`: changed formats are
  // copied and patched, the others shared, emptied ones dropped. `fresh`, when given, receives
  // the maps Build made (format -> map): nothing else holds them until the snapshot is published.
  std::map<std::string, std::shared_ptr<const FormatEntries>> Build(
      const std::vector<EntryChange>& changes,
      std::map<std::string, FormatEntries*>* fresh = nullptr) const;

 private:
  // Slot is a staged (format, id): its value (nullopt: removed in this transaction) and the
  // committed entry it replaces (nullptr: none), so diffs need no second lookup.
  struct Slot {
    std::optional<RuntimeEntry> value;
    const RuntimeEntry* base = nullptr;
  };
  struct Undo {
    const std::string* format;  // a key of overlay_
    std::string id;
    std::optional<Slot> prev;  // nullopt: no overlay slot before
  };

  // Drop removes (format, id) when `owner` holds it, journaled.
  void Drop(const std::string& owner, const std::string& format, const std::string& id);
  void Restore(const std::string& format, const std::string& id, std::optional<Slot> slot);

  const RuntimeSnapshot& base_;
  const OwnerIndex& owners_;
  // format -> id -> slot; a format, once added, is never erased.
  std::map<std::string, std::map<std::string, Slot>> overlay_;
  // Ids each owner put in this transaction; may be stale (checked against Working on use).
  std::unordered_map<std::string, std::vector<EntryKey>> added_;
  std::vector<Undo> journal_;
};

}  // namespace portico::core

#endif  // PORTICO_CORE_RUNTIME_CONTRIBUTION_TXN_H_
