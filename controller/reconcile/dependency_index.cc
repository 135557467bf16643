#include "controller/reconcile/dependency_index.h"

#include <algorithm>

namespace portico::controller {
namespace {

constexpr std::string_view kSecretPrefix = "secret ";

const std::map<std::string, std::string>& LabelsOrEmpty(
    const std::map<std::string, std::string>* labels) {
  static const std::map<std::string, std::string> kEmpty;
  return labels != nullptr ? *labels : kEmpty;
}

bool HasExport(const std::optional<std::string>* e) { return e != nullptr && e->has_value(); }

}  // namespace

std::string DependencyIndex::Scope(std::string_view group, std::string_view kind,
                                   std::string_view ns) {
  std::string out;
  out.reserve(group.size() + kind.size() + ns.size() + 2);
  out.append(group).append("/").append(kind).append("/").append(ns);
  return out;
}

std::string DependencyIndex::SecretKey(std::string_view ns, std::string_view name) {
  std::string out(kSecretPrefix);
  out.append(ns).append("/").append(name);
  return out;
}

void DependencyIndex::RemoveReader(const std::string& reader) {
  std::lock_guard lock(mu_);
  auto it = by_reader_.find(reader);
  if (it == by_reader_.end()) return;
  for (const std::string& key : it->second.gets) {
    auto g = getters_.find(key);
    if (g == getters_.end()) continue;
    g->second.erase(reader);
    if (g->second.empty()) getters_.erase(g);
  }
  for (const auto& [scope, text] : it->second.lists) {
    auto l = listers_.find(scope);
    if (l == listers_.end()) continue;
    l->second.erase(reader);
    if (l->second.empty()) listers_.erase(l);
  }
  by_reader_.erase(it);
}

void DependencyIndex::AddGet(const std::string& reader, const std::string& key) {
  std::lock_guard lock(mu_);
  if (by_reader_[reader].gets.insert(key).second) getters_[key].insert(reader);
}

void DependencyIndex::AddSecret(const std::string& reader, std::string_view ns,
                                std::string_view name) {
  std::string key = SecretKey(ns, name);
  std::lock_guard lock(mu_);
  if (by_reader_[reader].gets.insert(key).second) getters_[key].insert(reader);
}

void DependencyIndex::AddList(const std::string& reader, std::string_view group,
                              std::string_view kind, std::string_view ns,
                              std::string_view selector_text, const sdk::LabelSelector& selector) {
  std::string scope = Scope(group, kind, ns);
  std::lock_guard lock(mu_);
  if (!by_reader_[reader].lists.emplace(scope, std::string(selector_text)).second) return;
  listers_[scope][reader].push_back(Selector{std::string(selector_text), selector});
}

std::vector<std::string> DependencyIndex::ReadersOf(const ObjectChange& change) const {
  const bool had = HasExport(change.export_before);
  const bool has = HasExport(change.export_after);
  const bool export_changed =
      had != has || (had && **change.export_before != **change.export_after);
  const auto& before = LabelsOrEmpty(change.labels_before);
  const auto& after = LabelsOrEmpty(change.labels_after);
  const bool labels_changed = before != after;

  std::set<std::string> out;
  std::lock_guard lock(mu_);
  if (export_changed) {
    if (auto g = getters_.find(change.key); g != getters_.end()) {
      out.insert(g->second.begin(), g->second.end());
    }
  }
  if (export_changed || labels_changed) {
    std::string scopes[2] = {Scope(change.group, change.kind, change.ns),
                             Scope(change.group, change.kind, "")};
    int n = change.ns.empty() ? 1 : 2;  // cluster-scoped: both scopes are the same
    for (int s = 0; s < n; ++s) {
      auto l = listers_.find(scopes[s]);
      if (l == listers_.end()) continue;
      for (const auto& [reader, selectors] : l->second) {
        for (const Selector& sel : selectors) {
          bool matched_before = had && sel.parsed.Matches(before);
          bool matches_after = has && sel.parsed.Matches(after);
          if (matched_before || matches_after) {
            out.insert(reader);
            break;
          }
        }
      }
    }
  }
  return std::vector<std::string>(out.begin(), out.end());
}

std::vector<std::string> DependencyIndex::ReadersOfSecret(std::string_view ns,
                                                          std::string_view name) const {
  std::lock_guard lock(mu_);
  auto g = getters_.find(SecretKey(ns, name));
  if (g == getters_.end()) return {};
  std::vector<std::string> out(g->second.begin(), g->second.end());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> DependencyIndex::ReadsOf(const std::string& reader) const {
  std::vector<std::string> out;
  std::lock_guard lock(mu_);
  auto it = by_reader_.find(reader);
  if (it == by_reader_.end()) return out;
  for (const std::string& key : it->second.gets) {
    out.push_back(key.starts_with(kSecretPrefix) ? key : "get " + key);
  }
  for (const auto& [scope, text] : it->second.lists) {
    out.push_back("list " + scope + (text.empty() ? "" : " " + text));
  }
  std::sort(out.begin(), out.end());
  return out;
}

size_t DependencyIndex::ReaderCount() const {
  std::lock_guard lock(mu_);
  return by_reader_.size();
}

}  // namespace portico::controller
