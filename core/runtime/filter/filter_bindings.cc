// filter_bindings.cc: see filter_bindings.h.
#include "core/runtime/filter/filter_bindings.h"

#include <algorithm>
#include <tuple>

#include "portico/sdk/abi.h"
#include "portico/sdk/json.h"

namespace portico::core::filter {

std::shared_ptr<const FilterBindings> FilterBindings::Build(const RuntimeSnapshot& next,
                                                            const KindRegistry& registry,
                                                            const FilterBindings* previous,
                                                            std::vector<BindingRefusal>* refusals) {
  auto table = std::make_shared<FilterBindings>();
  const FormatEntries* entries = next.Entries(PORTICO_FORMAT_FILTER_BINDING);
  if (entries == nullptr) return table;
  for (const auto& item : *entries) {
    // Named, not a structured binding: the lambda below captures them (clang 14 cannot).
    const std::string& id = item.first;
    const RuntimeEntry& entry = item.second;
    if (previous != nullptr) {
      auto old = previous->entries_.find(id);
      if (old != previous->entries_.end() && old->second.digest == entry.digest) {
        table->entries_.emplace(id, old->second);
        continue;
      }
    }
    auto refuse = [&](const std::string& reason) {
      refusals->push_back({entry.owner, "filter_binding.v1 " + id + ": " + reason});
    };
    if (entry.json == nullptr) {
      refuse("entry without JSON");
      continue;
    }
    auto doc = json::Parse(*entry.json, "filter_binding.v1 " + id);
    if (!doc.ok()) {
      refuse(std::string(doc.status().message()));
      continue;
    }
    std::string type_name = json::GetString(*doc, "filterType", "");
    const rapidjson::Value* config = json::Find(*doc, "config");
    if (type_name.empty() || config == nullptr) {
      refuse("needs filterType and config");
      continue;
    }
    const FilterTypeInfo* type = registry.FindFilterType(type_name);
    if (type == nullptr) {
      refuse("filter type " + type_name + " is not provided by any plugin this gateway loaded");
      continue;
    }
    auto filter = PluginFilter::Create(*type, json::Serialize(*config));
    if (!filter.ok()) {
      refuse(std::string(filter.status().message()));
      continue;
    }
    Entry made{entry.digest, std::move(*filter), {}, {}};
    if (const rapidjson::Value* attach = json::Find(*doc, "attach"); attach && attach->IsObject()) {
      made.created = json::GetString(*attach, "created", "");
      const rapidjson::Value* targets = json::Find(*attach, "targets");
      for (rapidjson::SizeType i = 0;
           targets != nullptr && targets->IsArray() && i < targets->Size(); ++i) {
        const rapidjson::Value& t = (*targets)[i];
        if (const rapidjson::Value* g = json::Find(t, "gateway")) {
          made.targets.push_back("gateway:" + json::GetString(*g, "namespace") + "/" +
                                 json::GetString(*g, "name"));
        } else if (const rapidjson::Value* r = json::Find(t, "route")) {
          std::string route = json::GetString(*r, "namespace") + "/" + json::GetString(*r, "name");
          std::string rule = json::GetString(t, "rule", "");
          made.targets.push_back(rule.empty() ? "route:" + route : "rule:" + route + "/" + rule);
        }
      }
    }
    table->entries_.emplace(id, std::move(made));
  }
  // The attachment index, each list in chain order.
  for (const auto& [id, entry] : table->entries_) {
    for (const std::string& target : entry.targets) {
      const int specificity = target.rfind("rule:", 0) == 0    ? 0
                              : target.rfind("route:", 0) == 0 ? 1
                                                               : 2;
      table->attached_[target].push_back(
          Attached{entry.filter.get(), static_cast<int>(entry.filter->type().phase),
                   entry.filter->type().order, specificity, &entry.created, &id});
    }
  }
  return table;
}

void FilterBindings::AttachedTo(std::string_view route_key, std::string_view rule_name,
                                const std::vector<std::string_view>& gateway_keys,
                                std::vector<const HttpFilter*>* out) const {
  if (attached_.empty()) return;
  std::vector<const Attached*> found;
  auto collect = [&](const std::string& key) {
    auto it = attached_.find(key);
    if (it == attached_.end()) return;
    for (const Attached& a : it->second) found.push_back(&a);
  };
  if (!rule_name.empty()) {
    collect("rule:" + std::string(route_key) + "/" + std::string(rule_name));
  }
  collect("route:" + std::string(route_key));
  for (std::string_view g : gateway_keys) collect("gateway:" + std::string(g));
  std::sort(found.begin(), found.end(), [](const Attached* a, const Attached* b) {
    return std::tie(a->phase, a->order, a->specificity, *a->created, *a->id) <
           std::tie(b->phase, b->order, b->specificity, *b->created, *b->id);
  });
  for (const Attached* a : found) {
    // A filter attached twice (to a route and its Gateway) runs once, at its first place.
    if (std::find(out->begin(), out->end(), a->filter) == out->end()) out->push_back(a->filter);
  }
}

const HttpFilter* FilterBindings::Find(std::string_view id) const {
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : it->second.filter.get();
}

}  // namespace portico::core::filter
