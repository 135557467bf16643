// runtime_test_util.h: helpers for the gateway runtime's tests: the plugins (service and the
// runtime-probe test plugin) loaded through the real loader, synced changes, snapshot lookups and
// a recording RuntimeConsumer.
//
// Threading: test thread only, except TestPlugins() (loaded once, then read-only).
#ifndef PORTICO_CORE_RUNTIME_RUNTIME_TEST_UTIL_H_
#define PORTICO_CORE_RUNTIME_RUNTIME_TEST_UTIL_H_

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/plugin/plugin_loader.h"
#include "core/runtime/gateway_runtime.h"

namespace portico::core::testing {

inline constexpr char kProbeGroup[] = "runtime.test.portico.io";

// TestPlugins is the service plugin and the runtime-probe plugin, loaded once per process.
const PluginSet& TestPlugins();

// ProbeKey names a runtime-probe object ("Apex", "Base" or "Inert") in namespace "ns".
StoreKey ProbeKey(std::string_view kind, std::string_view name);
// Owner is the owner string of `key` ("group/Kind/ns/name").
std::string Owner(const StoreKey& key);

// Upsert is an upsert of `json` with its real content hash; Delete a delete.
SyncedChange Upsert(const StoreKey& key, std::string json);
SyncedChange Delete(const StoreKey& key);

// Put renders one probe "puts" item.
std::string Put(std::string_view format, std::string_view id, std::string_view json,
                std::string_view owner = "");

// EntryJson returns the JSON of (format, id) in `snapshot`, or nullopt.
std::optional<std::string> EntryJson(const RuntimeSnapshot& snapshot, const std::string& format,
                                     const std::string& id);
// EntryOwner returns the owner of (format, id), or "".
std::string EntryOwner(const RuntimeSnapshot& snapshot, const std::string& format,
                       const std::string& id);
// Ids lists "format id" of every entry, sorted.
std::vector<std::string> Ids(const RuntimeSnapshot& snapshot);

// ExpectEmptyStats checks every residue-sensitive field of `stats` is at the empty baseline.
void ExpectEmptyStats(const RuntimeStats& stats);

// RecordingConsumer records Prepare/Commit/Abort calls; `refuse` decides refusals per Prepare.
class RecordingConsumer : public RuntimeConsumer {
 public:
  bool KeepsCompiled(const std::string& format) const override {
    return keeps_compiled.count(format) > 0;
  }
  std::vector<SyncNack> Prepare(const RuntimeSnapshot& next) override;
  void Abort() override { ++aborts; }
  void Commit(std::shared_ptr<const RuntimeSnapshot> snapshot) override {
    commits.push_back(std::move(snapshot));
  }

  std::set<std::string> keeps_compiled;  // formats KeepsCompiled names
  std::function<std::vector<SyncNack>(const RuntimeSnapshot&)> refuse;
  std::vector<uint64_t> prepared_generations;
  std::vector<std::vector<std::string>> prepared_ids;
  std::vector<std::shared_ptr<const RuntimeSnapshot>> commits;
  int aborts = 0;
};

}  // namespace portico::core::testing

#endif  // PORTICO_CORE_RUNTIME_RUNTIME_TEST_UTIL_H_
