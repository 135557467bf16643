// fake_stage.h: the gateway side of the fake host's types: FakeChange, one synced object handed
// to a handler's stage(), and StageOutcome, what one FakeHost::Stage call left in the fake
// runtime. Part of the SDK's testing package; header-only, std + SDK headers.
// Threading: value types.
#ifndef PORTICO_SDK_TESTING_FAKE_STAGE_H_
#define PORTICO_SDK_TESTING_FAKE_STAGE_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "portico/sdk/abi.h"
#include "portico/sdk/status.h"
#include "portico/sdk/testing/fake_util.h"
#include "portico/sdk/types.h"

namespace portico::sdk::testing {

// FakeChange is one synced object handed to a handler's stage().
struct FakeChange {
  portico_change_op op = PORTICO_CHANGE_UPSERT;
  ObjectRef ref;
  std::string json;
  std::string hash;  // a fake content hash (FNV-1a, hex) unless set

  static FakeChange Upsert(ObjectRef ref, std::string json);
  static FakeChange Delete(ObjectRef ref) {
    return FakeChange{PORTICO_CHANGE_DELETE, std::move(ref), "", ""};
  }
};

// StagedEntry is one runtime contribution: the owner's key and the JSON it put.
struct StagedEntry {
  std::string owner;
  std::string json;
  friend bool operator==(const StagedEntry&, const StagedEntry&) = default;
};

// StagedKey is (format, id), e.g. ("backend.v1", "ports/default/web").
using StagedKey = std::pair<std::string, std::string>;

// StageOutcome is the result of one stage() call. `puts` is the whole fake runtime after the
// call: on error it is rolled back, and the contributions of nacked objects are restored.
struct StageOutcome {
  Status status;
  std::map<StagedKey, StagedEntry> puts;
  std::vector<std::pair<ObjectRef, std::string>> nacks;
  std::vector<std::string> logs;

  bool ok() const { return status.ok(); }
};

inline FakeChange FakeChange::Upsert(ObjectRef ref, std::string json) {
  std::string hash = detail::Fnv1aHex(json);
  return FakeChange{PORTICO_CHANGE_UPSERT, std::move(ref), std::move(json), std::move(hash)};
}

}  // namespace portico::sdk::testing

#endif  // PORTICO_SDK_TESTING_FAKE_STAGE_H_
