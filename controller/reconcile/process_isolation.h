// process_isolation.h: ProcessIsolation, which plugins' processors the reconciler runs in a
// forked child (isolated_process.h) and under what deadline; set from the controller config
// (`[plugins] isolate`, `isolate_all`, `process_timeout_ms`). A plain value; copy it freely.
#ifndef PORTICO_CONTROLLER_RECONCILE_PROCESS_ISOLATION_H_
#define PORTICO_CONTROLLER_RECONCILE_PROCESS_ISOLATION_H_

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace portico::controller {

struct ProcessIsolation {
  std::vector<std::string> plugins;  // manifest names
  bool all = false;
  std::chrono::milliseconds timeout{5000};  // per call, wall clock, from fork

  bool Applies(std::string_view plugin) const;
  bool Enabled() const { return all || !plugins.empty(); }
};

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_RECONCILE_PROCESS_ISOLATION_H_
