// isolated_process.h: running one plugin's processor in a forked child, so that a processor that
// crashes (a signal, an abort) or hangs costs only the child: the controller reports it on the
// object and keeps reconciling everything else, and the last good result keeps serving.
//
// How: the worker forks (core/common/child_run.h) while holding the object table's lock shared,
// so the child's copy-on-write image has a consistent table it can read without a round trip;
// the child runs the processor against a HostContext whose reads go to that image and whose
// results, reads, metrics and logs are recorded into one buffer, written to a pipe; it _exit()s.
// The parent replays the record into the real ResultCollector (through its ABI, so the same
// checks apply), the DependencyIndex, the metrics and the log. A child killed by a signal, one
// that overruns the deadline (killed with SIGKILL) or one that ends without a complete record
// becomes an error naming the object, the plugin and how it ended.
//
// What the child may touch: the table (lock held shared across fork), the registry (immutable
// after loading), the processor's own plugin (isolation is per plugin, so its code never runs in
// the parent's threads and none of its locks can be held by one) and malloc (glibc locks its
// arenas around fork). Not the logger or the synced store: logs are recorded, the previous
// synced view is read by the parent before forking.
//
// Threading: RunProcessIsolated may be called from several workers at once. Ownership: every
// argument is borrowed for the call.
#ifndef PORTICO_CONTROLLER_RECONCILE_ISOLATED_PROCESS_H_
#define PORTICO_CONTROLLER_RECONCILE_ISOLATED_PROCESS_H_

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/reconcile/dependency_index.h"
#include "controller/reconcile/host_context.h"
#include "controller/reconcile/process_isolation.h"
#include "core/common/child_run.h"
#include "core/plugin/kind_registry.h"
#include "portico/sdk/abi.h"
#include "portico/sdk/status.h"
#include "portico/sdk/types.h"

namespace portico::controller {

// IsolatedCall is one processor call to run in a child.
struct IsolatedCall {
  const core::KindInfo* kind = nullptr;
  const sdk::ObjectRef* ref = nullptr;
  const portico_object* object = nullptr;
  std::optional<std::string> previous_synced;  // read by the parent (the store is not safe)
  std::chrono::milliseconds timeout{5000};
  core::ForkHooks hooks;  // make what the child reads safe to read (ObjectTable::HoldForFork)
};

// IsolatedOutcome is how the call ended.
struct IsolatedOutcome {
  // True when the child crashed, hung or could not be started: nothing was replayed, `status`
  // says what happened (UNAVAILABLE when fork failed, DEADLINE_EXCEEDED for a hang, INTERNAL for
  // a crash). False: the processor returned and `status` is what it returned.
  bool contained = false;
  Status status;
  std::vector<std::string> reads;  // HostContext::reads() of the child's run
  // What the run read, to tell whether a change made while it ran escaped it (ReadAnyOf).
  std::vector<std::string> got_keys;     // get and extension reads: object keys
  std::vector<std::string> list_scopes;  // "group/Kind/ns" ("group/Kind/" for all namespaces)
  std::vector<std::string> secret_keys;  // the Secrets' object keys ("/Secret/ns/name")
};

// ReadAnyOf: did the run read (or list the scope of) any of the object keys in `changed`? The
// reconciler registers an isolated run's reads only after the child read the table, so a change
// committed meanwhile did not requeue it; these are reprocessed. Labels are not compared: a
// change in a listed scope counts.
bool ReadAnyOf(const IsolatedOutcome& outcome, const std::vector<std::string>& changed);

// RunProcessIsolated runs `call` in a child reading through `services`; on a clean end it
// replays the result into `out`, the reads into `index` (replacing the object's previous ones)
// and the metrics and logs into `services`. A contained run touches none of them: the object
// keeps its previous reads, so it is still retried when what it read changes.
IsolatedOutcome RunProcessIsolated(const IsolatedCall& call, HostServices& services,
                                   DependencyIndex& index, const ResultCollector& out);

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_RECONCILE_ISOLATED_PROCESS_H_
