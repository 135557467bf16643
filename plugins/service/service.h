// service.h: the Service kind (core/v1): processor and gateway handler.
//
// The processor validates ports (numbers, unique names, named target ports, no duplicate
// port/protocol pairs), the type and its fields, and produces a normalised synced view that
// carries only what a gateway needs (type, ports with defaults, externalName), so selector or
// annotation edits never reach gateways. The handler stages it as a backend.v1 "ports" entry.
// Threading: stateless; process() may run concurrently; stage() on the gateway's sync thread.
#ifndef PORTICO_PLUGINS_SERVICE_SERVICE_H_
#define PORTICO_PLUGINS_SERVICE_SERVICE_H_

#include <vector>

#include "portico/sdk/handler.h"
#include "portico/sdk/processor.h"

namespace portico::plugins::service {

Status ProcessService(const sdk::Object& obj, sdk::ProcessContext& ctx, sdk::ProcessResult& result);
Status StageService(const sdk::Txn& txn, const std::vector<sdk::Change>& changes);

}  // namespace portico::plugins::service

#endif  // PORTICO_PLUGINS_SERVICE_SERVICE_H_
