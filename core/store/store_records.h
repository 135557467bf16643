// store_records.h: StoredObject and StoreEvent, the values the processed store hands out.
//
// Thread-safety: value types. The JSON bodies are shared, immutable strings
// (shared_ptr<const std::string>), so copies are cheap and may be read from any thread.
#ifndef PORTICO_CORE_STORE_STORE_RECORDS_H_
#define PORTICO_CORE_STORE_STORE_RECORDS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "core/store/store_key.h"

namespace portico::core {

// StoredObject is an object's current state: its synced JSON (null when the object has no
// synced view), the hex SHA-256 of that JSON (empty when null), and the store version at which
// it last changed.
struct StoredObject {
  StoreKey key;
  std::shared_ptr<const std::string> json;
  std::string hash;
  uint64_t version = 0;
};

enum class StoreOp { kUpsert, kDelete };

// StoreEvent is one entry of the change log. An upsert carries the new JSON (or null) and its
// hash; a delete carries no JSON and the hash of the content it removed.
struct StoreEvent {
  uint64_t version = 0;
  StoreOp op = StoreOp::kUpsert;
  StoreKey key;
  std::string hash;
  std::shared_ptr<const std::string> json;
};

}  // namespace portico::core

#endif  // PORTICO_CORE_STORE_STORE_RECORDS_H_
