#include "core/plugin/plugin_loader.h"

// Boost 1.74 with GCC 12 in C++20 needs <utility> before its headers (DESIGN.md §9).
#include <utility>

#include <boost/dll/shared_library.hpp>

#include <spdlog/spdlog.h>

#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <set>

#include "core/plugin/plugin_image.h"
#include "core/plugin/registration_stage.h"
#include "portico/sdk/abi.h"
#include "portico/sdk/types.h"
#include "portico/sdk/version.h"

namespace portico::core {
namespace {

using sdk::manifest_detail::kRebuild;

std::mutex& LoadMutex() {
  static auto* mu = new std::mutex();
  return *mu;
}

// KeepForever holds every dlopen'ed library: plugins are never unloaded (their hooks live in
// registries, and unloading C++ code with static destructors is not worth its risks).
// Returns the kept library; a deque keeps references stable. Called under LoadMutex().
boost::dll::shared_library& KeepForever(boost::dll::shared_library library) {
  static auto* libraries = new std::deque<boost::dll::shared_library>();
  return libraries->emplace_back(std::move(library));
}

// DlopenMessage extracts dlerror's text from Boost.DLL's exception message.
std::string DlopenMessage(const std::exception& e) {
  std::string what = e.what();
  constexpr std::string_view kMarker = "dlerror system message: ";
  size_t at = what.find(kMarker);
  if (at == std::string::npos) return what;
  size_t begin = at + kMarker.size();
  size_t end = what.rfind(')');
  return what.substr(begin,
                     end == std::string::npos || end < begin ? std::string::npos : end - begin);
}

using sdk::manifest_detail::KindList;

// Loader loads plugins one by one into `set`; see the file comment of plugin_loader.h.
class Loader {
 public:
  Loader(PluginSet& set, const LoadOptions& options) : set_(set), options_(options) {}

  void Load(PluginRecord& record) {
    if (record.ok()) {
      Status status = LoadRecord(record);
      if (!status.ok()) {
        record.Reject(status.message());
        set_.registry.RemovePlugin(record.path);  // a no-op unless committed; belt and braces
      }
    }
    if (!record.ok()) {
      if (record.manifest) {
        std::vector<KindId> kinds;
        for (const ManifestKind& k : record.manifest->kinds) kinds.push_back(k.id);
        set_.registry.NoteRefusedProvider(record.manifest->name, record.path, kinds);
      }
      spdlog::error("{}", record.RefusalLine());
    }
  }

 private:
  Status LoadRecord(PluginRecord& record) {
    const PluginManifest& manifest = *record.manifest;
    if (auto it = names_.find(manifest.name); it != names_.end()) {
      return FailedPreconditionError("plugin name " + manifest.name + " already loaded from " +
                                     it->second + "; remove one of the two files");
    }
    for (const ManifestKind& kind : manifest.kinds) {
      Status taken = set_.registry.CheckKind(kind.id);
      if (!taken.ok()) {
        return AlreadyExistsError(taken.message() + "; remove one of the two plugins");
      }
    }

    // The bytes the pre-flight hashed, from a private copy: the file on disk may change later.
    StatusOr<PluginImage> image = CopyPluginImage(record.path, record.sha256);
    if (!image.ok()) return image.status();
    if (options_.trial_load_in_child) {
      PORTICO_RETURN_IF_ERROR(TrialLoadInChild(image->load_path, PORTICO_ENTRY_V1));
    }
    boost::dll::shared_library library;
    try {
      library = boost::dll::shared_library(
          image->load_path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
    } catch (const std::exception& e) {
      return UnavailableError("dlopen failed: " + DlopenMessage(e) +
                              "; check its library dependencies (ldd) or " + std::string(kRebuild));
    }
    // From here on the library stays loaded, whatever the verdict.
    boost::dll::shared_library& lib = KeepForever(std::move(library));
    record.load_path = image->load_path;

    if (!lib.has(PORTICO_ENTRY_V1)) {
      return NotFoundError("missing entry " PORTICO_ENTRY_V1
                           " (the manifest is there but the entry is not exported); define it "
                           "with PORTICO_PLUGIN(Setup) from portico/sdk/plugin.h");
    }
    const portico_plugin_v1_descriptor* descriptor = nullptr;
    try {
      auto& entry = lib.get<const portico_plugin_v1_descriptor*()>(PORTICO_ENTRY_V1);
      descriptor = entry();
    } catch (const std::exception& e) {
      return InternalError(std::string(PORTICO_ENTRY_V1 "() threw: ") + e.what() +
                           "; fix the plugin");
    } catch (...) {
      return InternalError(PORTICO_ENTRY_V1 "() threw; fix the plugin");
    }
    PORTICO_RETURN_IF_ERROR(CheckDescriptor(descriptor, manifest));

    RegistrationStage stage(set_.registry, manifest.name, record.path);
    sdk::StringSink error;
    portico_code code = PORTICO_UNKNOWN;
    try {
      code = descriptor->register_plugin(stage.registrar(), error.sink());
    } catch (...) {
      return InternalError("register_plugin let an exception escape; " + std::string(kRebuild) +
                           " (the SDK catches exceptions at the boundary)");
    }
    if (stage.error()) {
      const Status& refused = *stage.error();
      return Status(refused.code(),
                    "registration refused: " + refused.message() +
                        (refused.code() == StatusCode::kAlreadyExists
                             ? "; remove one of the two plugins"
                             : "; fix the plugin's registration or " + std::string(kRebuild)));
    }
    if (code != PORTICO_OK) {
      std::string message = error.data().empty() ? "(no message)" : error.data();
      return Status(
          static_cast<StatusCode>(code),
          "registration failed: " + std::string(StatusCodeName(static_cast<StatusCode>(code))) +
              ": " + message + "; fix what the plugin reports or remove it");
    }
    PORTICO_RETURN_IF_ERROR(CrossCheck(stage, manifest));
    Status committed = stage.CommitTo(set_.registry);
    if (!committed.ok()) return committed.WithPrefix("registration refused");

    names_.emplace(manifest.name, record.path);
    record.loaded = true;
    std::set<KindId> kinds;
    for (const KindInfo& k : stage.kinds()) kinds.insert(k.id);
    spdlog::debug("registered plugin {} {} from {} (kinds: {})", manifest.name, manifest.version,
                  record.path, kinds.empty() ? "none" : KindList(kinds));
    return OkStatus();
  }

  static Status CheckDescriptor(const portico_plugin_v1_descriptor* d,
                                const PluginManifest& manifest) {
    return sdk::CheckDescriptor(d, manifest);
  }

  static Status CrossCheck(const RegistrationStage& stage, const PluginManifest& manifest) {
    std::set<KindId> registered;
    for (const KindInfo& k : stage.kinds()) registered.insert(k.id);
    return sdk::CrossCheckKinds(registered, manifest);
  }

  PluginSet& set_;
  LoadOptions options_;
  std::map<std::string, std::string> names_;  // accepted plugin name -> path
};

}  // namespace

std::vector<std::string> PluginSet::RefusalLines() const {
  std::vector<std::string> out;
  for (const PluginRecord& record : plugins) {
    if (!record.ok()) out.push_back(record.RefusalLine());
  }
  return out;
}

const PluginRecord* PluginSet::FindPlugin(std::string_view path) const {
  for (const PluginRecord& record : plugins) {
    if (record.path == path) return &record;
  }
  return nullptr;
}

PluginSet LoadPluginFiles(const std::vector<std::filesystem::path>& files,
                          const LoadOptions& options) {
  std::lock_guard<std::mutex> lock(LoadMutex());
  PluginSet set;
  set.plugins.reserve(files.size());
  Loader loader(set, options);
  for (const auto& file : files) {
    set.plugins.push_back(PreflightPlugin(file));
    loader.Load(set.plugins.back());
  }
  std::vector<PluginRefusal> refusals;
  if (options.resolve_reads) refusals = set.registry.ResolveReads();
  for (PluginRefusal& refusal : refusals) {
    for (PluginRecord& record : set.plugins) {
      if (record.path != refusal.plugin_path) continue;
      record.loaded = false;
      record.Reject(std::move(refusal.reason));
      spdlog::error("{}", record.RefusalLine());
    }
  }
  size_t accepted = 0;
  for (const PluginRecord& record : set.plugins) {
    if (!record.ok()) continue;
    ++accepted;
    spdlog::info("loaded plugin {} {} from {}", record.manifest->name, record.manifest->version,
                 record.path);
  }
  std::string order;
  for (const KindId& id : set.registry.Order())
    order += (order.empty() ? "" : ", ") + id.ToString();
  spdlog::info("plugins: {} loaded, {} refused; kinds in start-up order: {}", accepted,
               set.plugins.size() - accepted, order.empty() ? "none" : order);
  return set;
}

StatusOr<PluginSet> LoadPluginDir(const std::filesystem::path& dir, const LoadOptions& options) {
  PORTICO_ASSIGN_OR_RETURN(std::vector<std::filesystem::path> files, ListPluginFiles(dir));
  return LoadPluginFiles(files, options);
}

}  // namespace portico::core
