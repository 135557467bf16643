// runtime_consumer.h: RuntimeConsumer, the data plane behind the gateway runtime (listeners,
// route tables, backends: issue 5). The runtime asks it to Prepare each snapshot it is about to
// commit (bind new sockets, build SSL contexts, create filter instances) and then Commits it.
//
// Threading: every call comes from the thread running GatewayRuntime::Apply (the sync thread),
// one at a time. Ownership: the runtime does not own its consumer; the consumer outlives it.
#ifndef PORTICO_CORE_RUNTIME_RUNTIME_CONSUMER_H_
#define PORTICO_CORE_RUNTIME_RUNTIME_CONSUMER_H_

#include <memory>
#include <string>
#include <vector>

#include "core/runtime/runtime_types.h"

namespace portico::core {

class RuntimeConsumer {
 public:
  virtual ~RuntimeConsumer() = default;

  // KeepsCompiled reports whether the consumer keeps its own compiled form of every committed
  // entry of `format`, so it needs only the JSON of the entries each snapshot adds or changes.
  // The runtime then drops that format's JSON once committed: in the snapshot passed to Commit,
  // in Current() and in the entries later Prepare calls see unchanged, `json` is null and the
  // digest names the bytes. A consumer must then recognise unchanged entries by digest.
  virtual bool KeepsCompiled(const std::string& format) const { return false; }

  // Prepare readies `next` without publishing it. It returns the owners it refuses (SyncNack.key
  // is the owner's object key, reason says why, e.g. a bind failure; hash is ignored): the
  // runtime nacks them, rolls their contributions back, and calls Prepare again with the
  // corrected snapshot, until nothing more is refused. So Prepare may run several times per
  // Apply; each call supersedes the previous one.
  virtual std::vector<SyncNack> Prepare(const RuntimeSnapshot& next) { return {}; }

  // Abort drops what the last Prepare readied, when rollbacks left nothing to commit.
  virtual void Abort() {}

  // Commit publishes the snapshot last passed to Prepare (now also GatewayRuntime::Current()),
  // without the JSON of the formats it KeepsCompiled.
  virtual void Commit(std::shared_ptr<const RuntimeSnapshot> snapshot) {}
};

}  // namespace portico::core

#endif  // PORTICO_CORE_RUNTIME_RUNTIME_CONSUMER_H_
