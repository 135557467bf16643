#include "core/runtime/runtime_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/common/sha256.h"

namespace portico::core::testing {

const PluginSet& TestPlugins() {
  static const PluginSet* plugins = [] {
    auto* set =
        new PluginSet(LoadPluginFiles({PORTICO_SERVICE_PLUGIN, PORTICO_RUNTIME_PROBE_PLUGIN}));
    for (const std::string& line : set->RefusalLines()) ADD_FAILURE() << line;
    return set;  // lives for the process, like the libraries
  }();
  return *plugins;
}

StoreKey ProbeKey(std::string_view kind, std::string_view name) {
  return StoreKey{kProbeGroup, std::string(kind), "ns", std::string(name)};
}

std::string Owner(const StoreKey& key) { return key.ToString(); }

SyncedChange Upsert(const StoreKey& key, std::string json) {
  std::string hash = Sha256Hex(json);
  return SyncedChange{PORTICO_CHANGE_UPSERT, key, std::move(hash),
                      std::make_shared<const std::string>(std::move(json))};
}

SyncedChange Delete(const StoreKey& key) {
  return SyncedChange{PORTICO_CHANGE_DELETE, key, "", nullptr};
}

std::string Put(std::string_view format, std::string_view id, std::string_view json,
                std::string_view owner) {
  std::string out = "{\"format\":\"" + std::string(format) + "\",\"id\":\"" + std::string(id) +
                    "\",\"json\":" + std::string(json);
  if (!owner.empty()) out += ",\"owner\":\"" + std::string(owner) + "\"";
  return out + "}";
}

std::optional<std::string> EntryJson(const RuntimeSnapshot& snapshot, const std::string& format,
                                     const std::string& id) {
  const RuntimeEntry* entry = snapshot.Find(format, id);
  if (entry == nullptr) return std::nullopt;
  return *entry->json;
}

std::string EntryOwner(const RuntimeSnapshot& snapshot, const std::string& format,
                       const std::string& id) {
  const RuntimeEntry* entry = snapshot.Find(format, id);
  return entry == nullptr ? "" : entry->owner;
}

std::vector<std::string> Ids(const RuntimeSnapshot& snapshot) {
  std::vector<std::string> out;
  for (const auto& [format, entries] : snapshot.formats) {
    for (const auto& [id, entry] : *entries) out.push_back(format + " " + id);
  }
  return out;
}

void ExpectEmptyStats(const RuntimeStats& stats) {
  EXPECT_EQ(stats.synced_objects, 0u);
  EXPECT_TRUE(stats.synced_by_kind.empty());
  EXPECT_EQ(stats.entries, 0u);
  EXPECT_TRUE(stats.entries_by_format.empty());
  EXPECT_EQ(stats.owners, 0u);
  EXPECT_EQ(stats.bytes, 0u);
}

std::vector<SyncNack> RecordingConsumer::Prepare(const RuntimeSnapshot& next) {
  prepared_generations.push_back(next.generation);
  prepared_ids.push_back(Ids(next));
  return refuse ? refuse(next) : std::vector<SyncNack>{};
}

}  // namespace portico::core::testing
