#include "controller/reconcile/object_table.h"

#include <mutex>
#include <utility>

#include "controller/reconcile/object_json.h"

namespace portico::controller {

std::string ObjectTable::SecretKey(std::string_view ns, std::string_view name) {
  std::string out(ns);
  out.append("/").append(name);
  return out;
}

bool ObjectTable::Upsert(const sdk::ObjectRef& ref, const core::KindInfo* kind,
                         std::shared_ptr<const rapidjson::Document> doc, SourceLocation source,
                         std::string_view now) {
  std::string key = ref.Key();
  std::unique_lock lock(mu_);
  auto [it, inserted] = entries_.try_emplace(key);
  Entry& e = it->second;
  if (inserted || e.deleted) {
    e.generation = 1;
    e.creation_timestamp.clear();
  } else if (e.raw == nullptr || !SpecEqual(*e.raw, *doc)) {
    ++e.generation;
  }
  std::string given = json::GetString(*doc, "metadata.creationTimestamp");
  if (!given.empty()) {
    e.creation_timestamp = std::move(given);
  } else if (e.creation_timestamp.empty()) {
    e.creation_timestamp = std::string(now);
  }
  e.ref = ref;
  e.kind = kind;
  e.raw = doc;
  e.source = std::move(source);
  e.deleted = false;
  e.needs_process = true;
  if (!IsSecret(ref)) return false;
  std::string payload = SecretPayload(*doc);
  auto [slot, added] = secrets_.try_emplace(SecretKey(ref.ns, ref.name));
  bool changed = added || slot->second != payload;
  slot->second = std::move(payload);
  if (changed) NoteReadableChangeLocked(key);
  return changed;
}

bool ObjectTable::MarkDeleted(const std::string& key) {
  std::unique_lock lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.deleted) return false;
  Entry& e = it->second;
  e.deleted = true;
  e.needs_process = false;
  if (IsSecret(e.ref) && secrets_.erase(SecretKey(e.ref.ns, e.ref.name)) > 0) {
    NoteReadableChangeLocked(key);
  }
  return true;
}

bool ObjectTable::MarkNeedsProcess(const std::string& key) {
  std::unique_lock lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.deleted) return false;
  it->second.needs_process = true;
  return true;
}

ObjectTable::WorkItem ObjectTable::Begin(const std::string& key) {
  WorkItem item;
  std::unique_lock lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return item;
  Entry& e = it->second;
  item.ref = e.ref;
  item.kind = e.kind;
  item.ever_good = e.good.doc != nullptr;
  if (e.deleted) {
    e.needs_process = false;
    item.action = WorkItem::Action::kDelete;
  } else if (e.needs_process) {
    e.needs_process = false;
    item.action = WorkItem::Action::kProcess;
    item.raw = e.raw;
    item.generation = e.generation;
    item.creation_timestamp = e.creation_timestamp;
  } else {
    item.action = WorkItem::Action::kRender;
  }
  return item;
}

ObjectTable::Removal ObjectTable::Erase(const std::string& key) {
  Removal out;
  std::unique_lock lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end() || !it->second.deleted) return out;
  Entry& e = it->second;
  out.erased = true;
  out.ref = e.ref;
  out.kind = e.kind;
  out.export_json = std::move(e.good.export_json);
  out.labels = std::move(e.good.labels);
  entries_.erase(it);
  NoteReadableChangeLocked(key);
  out.affected_targets = ReplaceContributionsLocked(key, {});
  return out;
}

ObjectTable::Committed ObjectTable::CommitResult(const std::string& key, GoodResult result,
                                                 ContributionsByTarget contributions) {
  Committed out;
  std::unique_lock lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return out;
  Entry& e = it->second;
  out.found = true;
  out.old_export = std::move(e.good.export_json);
  out.old_labels = std::move(e.good.labels);
  if (out.old_export != result.export_json || out.old_labels != result.labels) {
    NoteReadableChangeLocked(key);
  }
  e.good = std::move(result);
  e.error.clear();
  e.refusal.reset();
  out.affected_targets = ReplaceContributionsLocked(key, std::move(contributions));
  return out;
}

bool ObjectTable::SetError(const std::string& key, std::string error,
                           std::optional<Refusal> refusal) {
  std::unique_lock lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return false;
  it->second.error = std::move(error);
  it->second.refusal = std::move(refusal);
  return it->second.good.doc != nullptr;
}

std::optional<RenderInput> ObjectTable::RenderSnapshot(const std::string& key) const {
  std::shared_lock lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.deleted || it->second.good.doc == nullptr) {
    return std::nullopt;
  }
  const Entry& e = it->second;
  RenderInput in;
  in.ref = e.ref;
  in.doc = e.good.doc;
  in.generation = e.good.generation;
  in.status = e.good.status_json;
  in.previous_status = e.rendered_status;
  in.feedback = e.feedback;
  in.refusal = e.refusal;
  if (auto t = by_target_.find(key); t != by_target_.end()) {
    for (const auto& [contributor, list] : t->second) {
      in.contributions.insert(in.contributions.end(), list.begin(), list.end());
    }
  }
  return in;
}

bool ObjectTable::SetFeedback(const std::string& key, std::optional<SyncFeedback> feedback) {
  std::unique_lock lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.deleted || it->second.feedback == feedback) return false;
  it->second.feedback = std::move(feedback);
  return true;
}

void ObjectTable::SetRendered(const std::string& key, RenderedObject rendered) {
  std::unique_lock lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  it->second.rendered_status = std::move(rendered.status);
  it->second.view_json = std::move(rendered.json);
}

std::optional<std::string> ObjectTable::Export(const std::string& key) const {
  std::shared_lock lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second.good.export_json;
}

std::string ObjectTable::ListExports(std::string_view group, std::string_view kind,
                                     std::string_view ns, const sdk::LabelSelector& selector,
                                     int64_t* count) const {
  std::string prefix;
  prefix.append(group).append("/").append(kind).append("/");
  if (!ns.empty()) prefix.append(ns).append("/");
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  int64_t n = 0;
  w.StartArray();
  {
    std::shared_lock lock(mu_);
    for (auto it = entries_.lower_bound(prefix);
         it != entries_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
      const Entry& e = it->second;
      if (!e.good.export_json.has_value() || !selector.Matches(e.good.labels)) continue;
      ++n;
      w.StartObject();
      w.Key("namespace");
      w.String(e.ref.ns.data(), static_cast<rapidjson::SizeType>(e.ref.ns.size()));
      w.Key("name");
      w.String(e.ref.name.data(), static_cast<rapidjson::SizeType>(e.ref.name.size()));
      w.Key("labels");
      w.StartObject();
      for (const auto& [k, v] : e.good.labels) {
        w.Key(k.data(), static_cast<rapidjson::SizeType>(k.size()));
        w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
      }
      w.EndObject();
      w.Key("export");
      const std::string& exported = *e.good.export_json;
      w.RawValue(exported.data(), exported.size(), rapidjson::kObjectType);
      w.EndObject();
    }
  }
  w.EndArray();
  if (count != nullptr) *count = n;
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::optional<std::string> ObjectTable::Secret(std::string_view ns, std::string_view name) const {
  std::shared_lock lock(mu_);
  auto it = secrets_.find(SecretKey(ns, name));
  if (it == secrets_.end()) return std::nullopt;
  return it->second;
}

ObjectView ObjectTable::ViewLocked(const Entry& e) const {
  ObjectView view;
  view.ref = e.ref;
  if (!e.view_json.empty()) {
    view.json = e.view_json;
  } else if (e.raw != nullptr) {
    view.json = RenderRaw(e.ref, *e.raw, e.generation, e.creation_timestamp,
                          e.refusal.has_value() ? &*e.refusal : nullptr);
  }
  view.source = e.source;
  view.generation = e.generation;
  view.synced_hash = e.good.synced_hash;
  view.error = e.error;
  view.refusal = e.refusal;
  view.serving_generation = e.good.doc != nullptr ? e.good.generation : 0;
  return view;
}

std::optional<ObjectView> ObjectTable::View(const std::string& key) const {
  std::shared_lock lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.deleted) return std::nullopt;
  return ViewLocked(it->second);
}

std::vector<ObjectView> ObjectTable::List(const core::KindInfo* kind, std::string_view ns) const {
  std::string prefix;
  if (kind != nullptr) prefix = kind->id.group + "/" + kind->id.kind + "/";
  std::vector<ObjectView> out;
  std::shared_lock lock(mu_);
  for (auto it = entries_.lower_bound(prefix);
       it != entries_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    const Entry& e = it->second;
    if (e.deleted || (!ns.empty() && e.ref.ns != ns)) continue;
    out.push_back(ViewLocked(e));
  }
  return out;
}

std::vector<ObjectView> ObjectTable::Refused() const {
  std::vector<ObjectView> out;
  std::shared_lock lock(mu_);
  for (const auto& [key, e] : entries_) {
    if (!e.deleted && e.refusal.has_value()) out.push_back(ViewLocked(e));
  }
  return out;
}

size_t ObjectTable::Size() const {
  std::shared_lock lock(mu_);
  size_t n = 0;
  for (const auto& [key, e] : entries_) n += e.deleted ? 0 : 1;
  return n;
}

void ObjectTable::NoteReadableChangeLocked(const std::string& key) {
  uint64_t epoch = readable_epoch_.fetch_add(1, std::memory_order_release) + 1;
  readable_changes_.emplace_back(epoch, key);
  if (readable_changes_.size() > kReadableChangesKept) readable_changes_.pop_front();
}

bool ObjectTable::ChangedSince(uint64_t epoch, std::vector<std::string>* keys) const {
  std::shared_lock lock(mu_);
  uint64_t now = readable_epoch_.load(std::memory_order_acquire);
  if (now == epoch) return true;
  if (readable_changes_.empty() || readable_changes_.front().first > epoch + 1) return false;
  for (auto it = readable_changes_.rbegin(); it != readable_changes_.rend() && it->first > epoch;
       ++it) {
    keys->push_back(it->second);
  }
  return true;
}

std::vector<std::string> ObjectTable::ReplaceContributionsLocked(const std::string& contributor,
                                                                 ContributionsByTarget next) {
  std::set<std::string> targets;
  if (auto old = targets_of_.find(contributor); old != targets_of_.end()) {
    targets = std::move(old->second);
    targets_of_.erase(old);
  }
  std::set<std::string> next_targets;
  for (const auto& [target, list] : next) {
    if (!list.empty()) next_targets.insert(target);
  }
  targets.insert(next_targets.begin(), next_targets.end());

  std::vector<std::string> affected;
  for (const std::string& target : targets) {
    auto per_target = by_target_.find(target);
    auto replacement = next.find(target);
    bool has_new = replacement != next.end() && !replacement->second.empty();
    bool changed = false;
    if (per_target == by_target_.end()) {
      if (has_new) {
        by_target_[target].emplace(contributor, std::move(replacement->second));
        changed = true;
      }
    } else {
      auto old = per_target->second.find(contributor);
      if (!has_new) {
        if (old != per_target->second.end()) {
          per_target->second.erase(old);
          changed = true;
        }
      } else if (old == per_target->second.end()) {
        per_target->second.emplace(contributor, std::move(replacement->second));
        changed = true;
      } else if (old->second != replacement->second) {
        old->second = std::move(replacement->second);
        changed = true;
      }
      if (per_target->second.empty()) by_target_.erase(per_target);
    }
    if (!changed) continue;
    auto e = entries_.find(target);
    if (e != entries_.end() && !e->second.deleted) affected.push_back(target);
  }
  if (!next_targets.empty()) targets_of_.emplace(contributor, std::move(next_targets));
  return affected;
}

}  // namespace portico::controller
