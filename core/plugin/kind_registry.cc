#include "core/plugin/kind_registry.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

#include "core/plugin/reads_graph.h"

namespace portico::core {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string Provider(std::string_view name, std::string_view path) {
  return "plugin " + std::string(name) + " (" + std::string(path) + ")";
}

}  // namespace

Status KindRegistry::CheckKind(const KindId& id) const {
  auto it = kinds_.find(id);
  if (it == kinds_.end()) return OkStatus();
  return AlreadyExistsError("kind " + id.ToString() + " already provided by " +
                            Provider(it->second.plugin_name, it->second.plugin_path));
}

Status KindRegistry::CheckFilterType(std::string_view name) const {
  auto it = filters_.find(name);
  if (it == filters_.end()) return OkStatus();
  return AlreadyExistsError("filter type " + std::string(name) + " already provided by " +
                            Provider(it->second.plugin_name, it->second.plugin_path));
}

Status KindRegistry::CheckReferencePolicy() const {
  if (!reference_policy_) return OkStatus();
  return AlreadyExistsError(
      "reference policy already provided by " +
      Provider(reference_policy_->plugin_name, reference_policy_->plugin_path));
}

Status KindRegistry::AddKind(KindInfo kind) {
  PORTICO_RETURN_IF_ERROR(CheckKind(kind.id));
  KindId id = kind.id;
  kinds_.emplace(id, std::move(kind));
  refused_providers_.erase(id);
  order_.clear();
  RebuildNames();
  return OkStatus();
}

Status KindRegistry::AddFilterType(FilterTypeInfo type) {
  PORTICO_RETURN_IF_ERROR(CheckFilterType(type.name));
  std::string name = type.name;
  filters_.emplace(std::move(name), std::move(type));
  return OkStatus();
}

Status KindRegistry::SetReferencePolicy(ReferencePolicyInfo policy) {
  PORTICO_RETURN_IF_ERROR(CheckReferencePolicy());
  reference_policy_ = std::move(policy);
  return OkStatus();
}

void KindRegistry::RemovePlugin(std::string_view plugin_path) {
  std::vector<KindId> removed;
  std::string name;
  for (auto it = kinds_.begin(); it != kinds_.end();) {
    if (it->second.plugin_path == plugin_path) {
      name = it->second.plugin_name;
      removed.push_back(it->first);
      it = kinds_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = filters_.begin(); it != filters_.end();) {
    it = it->second.plugin_path == plugin_path ? filters_.erase(it) : std::next(it);
  }
  if (reference_policy_ && reference_policy_->plugin_path == plugin_path) {
    reference_policy_.reset();
  }
  if (!removed.empty()) NoteRefusedProvider(name, plugin_path, removed);
  order_.clear();
  RebuildNames();
}

void KindRegistry::NoteRefusedProvider(std::string_view plugin_name, std::string_view plugin_path,
                                       const std::vector<KindId>& kinds) {
  for (const KindId& id : kinds) {
    if (kinds_.contains(id)) continue;  // provided by someone else after all
    refused_providers_.insert_or_assign(
        id, RefusedProvider{std::string(plugin_name), std::string(plugin_path)});
  }
}

std::vector<PluginRefusal> KindRegistry::ResolveReads() {
  std::vector<PluginRefusal> refusals;
  for (;;) {
    // 1. Reads of kinds nobody provides: refuse the reader's plugin (first problem per plugin).
    std::map<std::string, PluginRefusal> unresolved;  // by plugin path
    std::map<std::string, int> extra;
    std::vector<std::string> decided;  // plugin paths in decision order
    for (const auto& [id, kind] : kinds_) {
      for (const KindId& read : kind.reads) {
        if (read == id || kinds_.contains(read)) continue;
        if (unresolved.contains(kind.plugin_path)) {
          ++extra[kind.plugin_path];
          continue;
        }
        std::string reason = "kind " + id.kind + " reads " + read.ToString();
        auto refused = refused_providers_.find(read);
        if (refused != refused_providers_.end()) {
          reason += ", whose " +
                    Provider(refused->second.plugin_name, refused->second.plugin_path) +
                    " was refused; fix that plugin first";
        } else {
          reason += ", which no loaded plugin provides; add the plugin that provides " +
                    read.ToString() + " (or drop it from reads)";
        }
        unresolved.emplace(kind.plugin_path,
                           PluginRefusal{kind.plugin_name, kind.plugin_path, std::move(reason)});
        decided.push_back(kind.plugin_path);
      }
    }
    if (!unresolved.empty()) {
      for (const std::string& path : decided) {
        PluginRefusal refusal = std::move(unresolved.at(path));
        if (int more = extra[path]; more > 0) {
          refusal.reason += " [and " + std::to_string(more) + " more unresolved reads]";
        }
        RemovePlugin(path);
        refusals.push_back(std::move(refusal));
      }
      continue;
    }

    // 2. Order by reads; refuse every plugin with a kind on a cycle.
    std::map<KindId, std::vector<KindId>> graph;
    for (const auto& [id, kind] : kinds_) graph.emplace(id, kind.reads);
    ReadsOrder ordered = OrderByReads(graph);
    if (ordered.cycles.empty()) {
      order_ = std::move(ordered.order);
      return refusals;
    }
    std::set<std::string> refused_paths;
    for (const auto& cycle : ordered.cycles) {
      for (size_t i = 0; i + 1 < cycle.size(); ++i) {
        const KindInfo& kind = kinds_.at(cycle[i]);
        if (!refused_paths.insert(kind.plugin_path).second) continue;
        refusals.push_back(PluginRefusal{kind.plugin_name, kind.plugin_path,
                                         "kind " + kind.id.kind + " is on a reads cycle " +
                                             CycleString(cycle) +
                                             "; reads must be acyclic: remove one of these reads"});
      }
    }
    for (const std::string& path : refused_paths) RemovePlugin(path);
  }
}

const KindInfo* KindRegistry::Find(std::string_view group, std::string_view kind) const {
  return Find(KindId{std::string(group), std::string(kind)});
}

const KindInfo* KindRegistry::Find(const KindId& id) const {
  auto it = kinds_.find(id);
  return it == kinds_.end() ? nullptr : &it->second;
}

StatusOr<const KindInfo*> KindRegistry::Resolve(std::string_view name) const {
  auto it = names_.find(Lower(name));
  if (it == names_.end() || it->second.empty()) {
    return NotFoundError("no loaded plugin provides a kind named \"" + std::string(name) + "\"");
  }
  if (it->second.size() > 1) {
    std::string which;
    for (const KindId& id : it->second) {
      if (!which.empty()) which += ", ";
      which += id.ToString();
    }
    return InvalidArgumentError("\"" + std::string(name) + "\" is ambiguous (" + which +
                                "); qualify it with the group, e.g. \"" +
                                it->second.front().ToString() + "\"");
  }
  return Find(it->second.front());
}

std::vector<const KindInfo*> KindRegistry::Kinds() const {
  std::vector<const KindInfo*> out;
  out.reserve(kinds_.size());
  for (const auto& [id, kind] : kinds_) out.push_back(&kind);
  return out;
}

std::vector<const KindInfo*> KindRegistry::KindsInOrder() const {
  std::vector<const KindInfo*> out;
  out.reserve(order_.size());
  for (const KindId& id : order_) {
    if (const KindInfo* kind = Find(id)) out.push_back(kind);
  }
  return out;
}

const FilterTypeInfo* KindRegistry::FindFilterType(std::string_view name) const {
  auto it = filters_.find(name);
  return it == filters_.end() ? nullptr : &it->second;
}

std::vector<const FilterTypeInfo*> KindRegistry::FilterTypes() const {
  std::vector<const FilterTypeInfo*> out;
  for (const auto& [name, type] : filters_) out.push_back(&type);
  return out;
}

const ReferencePolicyInfo* KindRegistry::ReferencePolicy() const {
  return reference_policy_ ? &*reference_policy_ : nullptr;
}

void KindRegistry::RebuildNames() {
  names_.clear();
  auto add = [this](std::string alias, const KindId& id) {
    auto& ids = names_[Lower(alias)];
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  };
  for (const auto& [id, kind] : kinds_) {
    std::vector<std::string> bare{kind.plural, id.kind};
    bare.insert(bare.end(), kind.short_names.begin(), kind.short_names.end());
    for (const std::string& name : bare) {
      if (name.empty()) continue;
      add(name, id);
      if (id.group.empty()) continue;
      add(name + "." + id.group, id);
      for (const std::string& version : kind.versions) {
        add(name + "." + version + "." + id.group, id);
      }
    }
  }
}

}  // namespace portico::core
