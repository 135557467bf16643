// load_report.h: FormatLoadReport, the human-readable account of a plugin load that
// portico-controller and portico-gateway print at start-up and with --check.
//
// Thread-safety: pure function over a built PluginSet.
#ifndef PORTICO_CORE_PLUGIN_LOAD_REPORT_H_
#define PORTICO_CORE_PLUGIN_LOAD_REPORT_H_

#include <string>

#include "core/plugin/plugin_loader.h"

namespace portico::core {

// FormatLoadReport renders one line per plugin ("loaded NAME VERSION: KINDS (PATH)" or its
// refusal line) and the kinds in `reads` order ("order: Namespace, Secret, ...").
std::string FormatLoadReport(const PluginSet& set);

}  // namespace portico::core

#endif  // PORTICO_CORE_PLUGIN_LOAD_REPORT_H_
