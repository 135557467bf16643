// filter_bindings.cc: see filter_bindings.h.
#include "core/runtime/filter/filter_bindings.h"

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
  for (const auto& [id, entry] : *entries) {
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
    table->entries_.emplace(id, Entry{entry.digest, std::move(*filter)});
  }
  return table;
}

const HttpFilter* FilterBindings::Find(std::string_view id) const {
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : it->second.filter.get();
}

}  // namespace portico::core::filter
