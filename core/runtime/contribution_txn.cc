#include "core/runtime/contribution_txn.h"

#include <algorithm>

namespace portico::core {
namespace {

bool SameEntry(const RuntimeEntry& a, const RuntimeEntry& b) {
  return a.owner == b.owner && (a.json == b.json || (a.size == b.size && a.digest == b.digest));
}

}  // namespace

const RuntimeEntry* ContributionTxn::Base(const std::string& format, const std::string& id) const {
  return base_.Find(format, id);
}

const RuntimeEntry* ContributionTxn::Working(const std::string& format,
                                             const std::string& id) const {
  if (auto f = overlay_.find(format); f != overlay_.end()) {
    if (auto e = f->second.find(id); e != f->second.end()) {
      return e->second.value.has_value() ? &*e->second.value : nullptr;
    }
  }
  return Base(format, id);
}

ContributionTxn::PutResult ContributionTxn::Put(const std::string& owner, const std::string& format,
                                                const std::string& id, std::string_view json,
                                                const RuntimeEntry** holder) {
  // One overlay lookup and at most one base lookup: the hot path of a full snapshot.
  auto formats = overlay_.try_emplace(format).first;  // never erased: journal_ points at its key
  auto& slots = formats->second;
  auto it = slots.lower_bound(id);
  bool in_overlay = it != slots.end() && it->first == id;
  const RuntimeEntry* base = in_overlay ? it->second.base : Base(format, id);
  const RuntimeEntry* working =
      in_overlay ? (it->second.value.has_value() ? &*it->second.value : nullptr) : base;
  if (working != nullptr) {
    if (working->owner != owner) {
      if (holder != nullptr) *holder = working;
      return PutResult::kConflict;
    }
    if (working->SameBytes(json)) return PutResult::kUnchanged;
  }
  // Putting back what was committed (clear_owner, then the same put) drops the slot: the
  // committed bytes stay shared.
  bool equals_base = base != nullptr && base->owner == owner && base->SameBytes(json);
  std::optional<Slot> prev;  // empty: there was no slot
  if (in_overlay) prev.emplace(std::move(it->second));
  journal_.push_back(Undo{&formats->first, id, std::move(prev)});
  if (equals_base) {
    if (in_overlay) slots.erase(it);
  } else {
    Slot slot{RuntimeEntry{owner, std::make_shared<const std::string>(json)}, base};
    if (in_overlay) {
      it->second = std::move(slot);
    } else {
      slots.emplace_hint(it, id, std::move(slot));
    }
  }
  // An entry the owner already held is tracked (committed index or added_) already.
  if (working == nullptr) added_[owner].emplace_back(format, id);
  return PutResult::kStored;
}

void ContributionTxn::Remove(const std::string& owner, const std::string& format,
                             const std::string& id) {
  Drop(owner, format, id);
}

void ContributionTxn::ClearOwner(const std::string& owner) {
  // Candidates may repeat or be stale: Drop checks the working owner.
  if (auto held = owners_.find(owner); held != owners_.end()) {
    for (const EntryKey& key : held->second) Drop(owner, key.first, key.second);
  }
  if (auto added = added_.find(owner); added != added_.end()) {
    for (const EntryKey& key : added->second) Drop(owner, key.first, key.second);
  }
}

std::vector<EntryKey> ContributionTxn::WorkingEntries(const std::string& owner) const {
  std::vector<EntryKey> out;
  auto collect = [&](const EntryKey& key) {
    const RuntimeEntry* working = Working(key.first, key.second);
    if (working != nullptr && working->owner == owner) out.push_back(key);
  };
  auto held = owners_.find(owner);
  if (held != owners_.end()) {
    for (const EntryKey& key : held->second) collect(key);
  }
  auto added = added_.find(owner);
  if (added != added_.end()) {
    for (const EntryKey& key : added->second) collect(key);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
  return out;
}

void ContributionTxn::Drop(const std::string& owner, const std::string& format,
                           const std::string& id) {
  auto formats = overlay_.try_emplace(format).first;
  auto& slots = formats->second;
  auto it = slots.lower_bound(id);
  bool in_overlay = it != slots.end() && it->first == id;
  const RuntimeEntry* base = in_overlay ? it->second.base : Base(format, id);
  const RuntimeEntry* working =
      in_overlay ? (it->second.value.has_value() ? &*it->second.value : nullptr) : base;
  if (working == nullptr || working->owner != owner) return;
  std::optional<Slot> prev;  // empty: there was no slot
  if (in_overlay) prev.emplace(std::move(it->second));
  journal_.push_back(Undo{&formats->first, id, std::move(prev)});
  if (base == nullptr) {
    if (in_overlay) slots.erase(it);  // absent, as committed
  } else if (in_overlay) {
    it->second = Slot{std::nullopt, base};
  } else {
    slots.emplace_hint(it, id, Slot{std::nullopt, base});
  }
}

void ContributionTxn::Restore(const std::string& format, const std::string& id,
                              std::optional<Slot> slot) {
  auto& slots = overlay_[format];
  if (!slot.has_value()) {
    slots.erase(id);
  } else {
    slots.insert_or_assign(id, std::move(*slot));
  }
}

void ContributionTxn::UndoTo(size_t mark) {
  while (journal_.size() > mark) {
    Undo undo = std::move(journal_.back());
    journal_.pop_back();
    Restore(*undo.format, undo.id, std::move(undo.prev));
  }
}

std::vector<ContributionTxn::Cascade> ContributionTxn::Rollback(
    const std::set<std::string>& owners) {
  std::set<std::string> all(owners);
  std::vector<std::string> queue(owners.begin(), owners.end());
  std::vector<Cascade> cascades;
  // Closure: an owner now sitting on an id a rolled-back owner held before must give it back.
  while (!queue.empty()) {
    std::string owner = std::move(queue.back());
    queue.pop_back();
    auto held = owners_.find(owner);
    if (held == owners_.end()) continue;
    for (const EntryKey& key : held->second) {
      const RuntimeEntry* working = Working(key.first, key.second);
      if (working == nullptr || working->owner == owner || all.count(working->owner) > 0) continue;
      all.insert(working->owner);
      queue.push_back(working->owner);
      cascades.push_back(Cascade{working->owner, key.first + " id \"" + key.second +
                                                     "\" is restored for " + owner +
                                                     ", whose change was rejected"});
    }
  }
  std::set<EntryKey> keys;
  for (const std::string& owner : all) {
    for (EntryKey& key : WorkingEntries(owner)) keys.insert(std::move(key));
    if (auto held = owners_.find(owner); held != owners_.end()) {
      keys.insert(held->second.begin(), held->second.end());
    }
  }
  for (const EntryKey& key : keys) {
    const RuntimeEntry* base = Base(key.first, key.second);
    if (base != nullptr && all.count(base->owner) > 0) {
      Restore(key.first, key.second, std::nullopt);  // the committed entry again
      continue;
    }
    const RuntimeEntry* working = Working(key.first, key.second);
    if (working == nullptr || all.count(working->owner) == 0) continue;
    // Staged by a rolled-back owner on an id that was free, or that its committed owner (not
    // rolled back) freed in this transaction: free again.
    std::optional<Slot> freed;  // a removed slot over a committed entry; no slot over nothing
    if (base != nullptr) freed.emplace(Slot{std::nullopt, base});
    Restore(key.first, key.second, std::move(freed));
  }
  for (const std::string& owner : all) added_.erase(owner);
  return cascades;
}

std::vector<ContributionTxn::EntryChange> ContributionTxn::Changes() const {
  std::vector<EntryChange> out;
  for (const auto& [format, slots] : overlay_) {
    for (const auto& [id, slot] : slots) {
      const RuntimeEntry* before = slot.base;
      const RuntimeEntry* after = slot.value.has_value() ? &*slot.value : nullptr;
      if (before == nullptr && after == nullptr) continue;
      if (before != nullptr && after != nullptr && SameEntry(*before, *after)) continue;
      out.push_back(EntryChange{&format, &id, before, after});
    }
  }
  return out;
}

std::map<std::string, std::shared_ptr<const FormatEntries>> ContributionTxn::Build(
    const std::vector<EntryChange>& changes, std::map<std::string, FormatEntries*>* fresh) const {
  if (fresh != nullptr) fresh->clear();
  auto formats = base_.formats;
  size_t i = 0;
  while (i < changes.size()) {
    const std::string& format = *changes[i].format;
    size_t end = i;
    while (end < changes.size() && *changes[end].format == format) ++end;
    auto existing = formats.find(format);
    const FormatEntries* base = existing != formats.end() ? existing->second.get() : nullptr;
    std::shared_ptr<FormatEntries> entries;
    if (base != nullptr && (end - i) * 8 < base->size()) {
      // Few changes: copy and patch.
      entries = std::make_shared<FormatEntries>(*base);
      for (; i < end; ++i) {
        if (changes[i].after != nullptr) {
          entries->insert_or_assign(*changes[i].id, *changes[i].after);
        } else {
          entries->erase(*changes[i].id);
        }
      }
    } else {
      // Many changes: merge the sorted base and the sorted changes, appending in order.
      entries = std::make_shared<FormatEntries>();
      auto b = base != nullptr ? base->begin() : FormatEntries::const_iterator();
      auto b_end = base != nullptr ? base->end() : FormatEntries::const_iterator();
      for (; i < end; ++i) {
        const std::string& id = *changes[i].id;
        for (; b != b_end && b->first < id; ++b) entries->emplace_hint(entries->end(), *b);
        if (b != b_end && b->first == id) ++b;  // replaced or removed
        if (changes[i].after != nullptr) {
          entries->emplace_hint(entries->end(), id, *changes[i].after);
        }
      }
      for (; b != b_end; ++b) entries->emplace_hint(entries->end(), *b);
    }
    if (entries->empty()) {
      formats.erase(format);
    } else {
      if (fresh != nullptr) (*fresh)[format] = entries.get();
      formats[format] = std::move(entries);
    }
  }
  return formats;
}

}  // namespace portico::core
