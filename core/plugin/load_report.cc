#include "core/plugin/load_report.h"

namespace portico::core {

std::string FormatLoadReport(const PluginSet& set) {
  std::string out;
  for (const PluginRecord& record : set.plugins) {
    if (!record.ok()) {
      out += record.RefusalLine() + "\n";
      continue;
    }
    out += "loaded " + record.DisplayName();
    if (record.manifest) out += " " + record.manifest->version;
    out += ":";
    for (const KindInfo* kind : set.registry.Kinds()) {
      if (kind->plugin_path == record.path) out += " " + kind->id.ToString();
    }
    out += " (" + record.path + ")\n";
  }
  out += "order:";
  const char* sep = " ";
  for (const KindId& id : set.registry.Order()) {
    out += sep + id.ToString();
    sep = ", ";
  }
  out += "\n";
  return out;
}

}  // namespace portico::core
