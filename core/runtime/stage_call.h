// stage_call.h: CallStage, one call of a kind's stage() hook through the C ABI, with a
// portico_txn whose callbacks reach a StageHost (the runtime transaction). The host side of the
// ABI rules: every callback catches everything, strings are copied, logs go to spdlog tagged with
// the plugin's name.
//
// Threading: the sync thread; the portico_txn lives only during the call.
#ifndef PORTICO_CORE_RUNTIME_STAGE_CALL_H_
#define PORTICO_CORE_RUNTIME_STAGE_CALL_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/plugin/kind_registry.h"
#include "core/store/store_key.h"
#include "portico/sdk/abi.h"
#include "portico/sdk/status.h"

namespace portico::core {

// StageHost is what a handler's txn calls reach (see portico_txn in abi.h).
class StageHost {
 public:
  // Put stores a contribution; an error status is returned to the handler.
  virtual Status Put(std::string_view owner, std::string_view format, std::string_view id,
                     std::string_view json) = 0;
  virtual void Remove(std::string_view owner, std::string_view format, std::string_view id) = 0;
  virtual void ClearOwner(std::string_view owner) = 0;
  // GetSynced returns the synced view of `key` as staged in this transaction, or nullptr.
  virtual const std::string* GetSynced(const StoreKey& key) = 0;
  virtual void Nack(const StoreKey& key, std::string reason) = 0;

 protected:
  ~StageHost() = default;
};

// CallStage runs `kind`'s stage hook once with `changes` against `host`. Returns the hook's
// status (an error carries the plugin's message, or says the hook failed or threw nothing else).
Status CallStage(const KindInfo& kind, const std::vector<portico_change>& changes, StageHost& host);

// ContributionFormat returns the process-wide copy of `format` when it is one of abi.h's
// PORTICO_FORMAT_* names (so callers need not allocate one), or nullptr.
const std::string* ContributionFormat(std::string_view format);

// CheckContribution validates a put: a known format, an owner that is an object key
// ("group/Kind/namespace/name"), a non-empty id and JSON that parses.
Status CheckContribution(std::string_view owner, std::string_view format, std::string_view id,
                         std::string_view json);

}  // namespace portico::core

#endif  // PORTICO_CORE_RUNTIME_STAGE_CALL_H_
