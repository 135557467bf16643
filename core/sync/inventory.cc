#include "core/sync/inventory.h"

#include <string>

namespace portico::core {

std::vector<sync::v1::PluginInfo> BuildInventory(const PluginSet& set) {
  std::vector<sync::v1::PluginInfo> out;
  for (const PluginRecord& record : set.plugins) {
    if (!record.ok() || !record.manifest) continue;
    sync::v1::PluginInfo& info = out.emplace_back();
    info.set_name(record.manifest->name);
    info.set_version(record.manifest->version);
    info.set_sdk_version(record.manifest->sdk_version);
    info.set_abi_major(record.manifest->abi_major);
    info.set_abi_minor(record.manifest->abi_minor);
    info.set_sha256(record.sha256);
    for (const KindInfo* kind : set.registry.Kinds()) {
      if (kind->plugin_path != record.path) continue;
      sync::v1::KindHandler* handler = info.add_kinds();
      handler->set_group(kind->id.group);
      handler->set_kind(kind->id.kind);
      for (const auto& v : kind->versions) handler->add_versions(v);
      handler->set_capabilities(kind->capabilities);
    }
    for (const FilterTypeInfo* type : set.registry.FilterTypes()) {
      if (type->plugin_path != record.path) continue;
      sync::v1::FilterType* filter = info.add_filter_types();
      filter->set_name(type->name);
      filter->set_phase(std::string(FilterPhaseName(type->phase)));
      filter->set_order(type->order);
    }
  }
  return out;
}

}  // namespace portico::core
