// plugin_library.h: loading a built plugin .so for the fake host: the hosts' own checks
// (portico/sdk/manifest.h: the embedded manifest read without loading and validated, its ABI,
// the descriptor, the registered kinds against the manifest; a plugin the hosts refuse is
// refused here with their message), dlopen (RTLD_NOW | RTLD_LOCAL, never closed, like the real
// host), and a fake registrar that copies everything register_plugin() hands over (kinds, filter
// types, the reference policy). Part of the SDK's testing package; header-only, std + dlfcn +
// SDK headers.
//
// A plugin registers once per process (the SDK refuses a second registration), so LoadLibrary
// caches each canonical path's registration (or failure) process-wide; every FakeHost loading
// that path shares the same immutable LoadedPlugin.
// Threading: LoadLibrary is thread-safe (one mutex); LoadedPlugin values are immutable once
// returned.
#ifndef PORTICO_SDK_TESTING_PLUGIN_LIBRARY_H_
#define PORTICO_SDK_TESTING_PLUGIN_LIBRARY_H_

#include <dlfcn.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "portico/sdk/abi.h"
#include "portico/sdk/elf_manifest.h"
#include "portico/sdk/manifest.h"
#include "portico/sdk/status.h"
#include "portico/sdk/types.h"

namespace portico::sdk::testing {

// RegisteredKind is a kind as a plugin registered it (strings copied from portico_kind).
struct RegisteredKind {
  std::string plugin;
  std::string group;
  std::string kind;
  std::vector<std::string> versions;
  std::string plural;
  std::vector<std::string> short_names;
  portico_kind_scope scope = PORTICO_SCOPE_NAMESPACED;
  std::string schema;
  std::vector<std::string> reads;
  uint32_t capabilities = 0;
  portico_sync_policy sync_policy = PORTICO_SYNC_NEVER;
  void* user = nullptr;
  portico_process_fn process = nullptr;
  portico_stage_fn stage = nullptr;
};

// RegisteredFilterType is a filter type as a plugin registered it.
struct RegisteredFilterType {
  std::string plugin;
  std::string name;
  portico_filter_phase phase = PORTICO_PHASE_EARLY;
  int32_t order = 0;
  void* user = nullptr;
  decltype(portico_filter_type::create) create = nullptr;
  decltype(portico_filter_type::destroy) destroy = nullptr;
  decltype(portico_filter_type::on_request) on_request = nullptr;
  decltype(portico_filter_type::on_response) on_response = nullptr;
  // ABI 1.2 (null for a 1.1 plugin).
  decltype(portico_filter_type::request_create) request_create = nullptr;
  decltype(portico_filter_type::request_destroy) request_destroy = nullptr;
  decltype(portico_filter_type::cancel) cancel = nullptr;
};

// LoadedPlugin is one registered library: its descriptor fields and what it registered.
struct LoadedPlugin {
  std::string path;
  std::string name;
  std::string version;
  std::string sdk_version;
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;
  std::vector<RegisteredKind> kinds;
  std::vector<RegisteredFilterType> filter_types;
  std::optional<portico_reference_policy> reference_policy;
  std::vector<std::string> logs;  // registrar log lines
  PluginManifest manifest;        // the embedded manifest, as the hosts parse it
};

namespace detail {

inline const char* LevelName(portico_log_level level) {
  switch (level) {
    case PORTICO_LOG_DEBUG:
      return "DEBUG";
    case PORTICO_LOG_INFO:
      return "INFO";
    case PORTICO_LOG_WARN:
      return "WARN";
    case PORTICO_LOG_ERROR:
      return "ERROR";
  }
  return "INFO";
}

// LibraryCache holds every registration made in this process, keyed by canonical path.
struct LibraryCache {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<const LoadedPlugin>> loaded;
  std::map<std::string, Status> failed;
};
inline LibraryCache& Libraries() {
  static LibraryCache* cache = new LibraryCache();  // never destroyed, like the libraries
  return *cache;
}

// Registrar records what register_plugin() hands over, copying every string.
struct Registrar {
  LoadedPlugin* plugin;

  static portico_code AddKind(void* host, const portico_kind* k, portico_sink* error) {
    auto* self = static_cast<Registrar*>(host);
    if (k == nullptr || k->struct_size < sizeof(portico_kind)) {
      WriteSink(error, "portico_kind too small");
      return PORTICO_INVALID_ARGUMENT;
    }
    RegisteredKind r;
    r.plugin = self->plugin->name;
    r.group = std::string(View(k->group));
    r.kind = std::string(View(k->kind));
    if (r.kind.empty()) {
      WriteSink(error, "kind without a name");
      return PORTICO_INVALID_ARGUMENT;
    }
    for (const RegisteredKind& other : self->plugin->kinds) {
      if (other.group == r.group && other.kind == r.kind) {
        WriteSink(error, "kind " + r.kind + "." + r.group + " registered twice");
        return PORTICO_ALREADY_EXISTS;
      }
    }
    r.versions = SplitList(View(k->versions));
    if (r.versions.empty()) {
      WriteSink(error, "kind " + r.kind + ": no versions");
      return PORTICO_INVALID_ARGUMENT;
    }
    r.plural = std::string(View(k->plural));
    r.short_names = SplitList(View(k->short_names));
    r.scope = k->scope;
    r.schema = std::string(View(k->schema));
    r.reads = SplitList(View(k->reads));
    r.capabilities = k->capabilities;
    r.sync_policy = k->sync_policy;
    r.user = k->user;
    r.process = k->process;
    r.stage = k->stage;
    self->plugin->kinds.push_back(std::move(r));
    return PORTICO_OK;
  }

  static portico_code AddFilterType(void* host, const portico_filter_type* t, portico_sink* error) {
    auto* self = static_cast<Registrar*>(host);
    if (t == nullptr || t->struct_size < sizeof(portico_filter_type) || t->create == nullptr) {
      WriteSink(error, "invalid portico_filter_type");
      return PORTICO_INVALID_ARGUMENT;
    }
    RegisteredFilterType r;
    r.plugin = self->plugin->name;
    r.name = std::string(View(t->name));
    r.phase = t->phase;
    r.order = t->order;
    r.user = t->user;
    r.create = t->create;
    r.destroy = t->destroy;
    r.on_request = t->on_request;
    r.on_response = t->on_response;
    if (PORTICO_HAS_FIELD(t, portico_filter_type, on_response_body)) {
      if (t->on_request_body != nullptr || t->on_response_body != nullptr) {
        WriteSink(error, "filter type " + r.name + ": body hooks are reserved and must be NULL");
        return PORTICO_INVALID_ARGUMENT;
      }
      r.request_create = t->request_create;
      r.request_destroy = t->request_destroy;
      r.cancel = t->cancel;
    }
    self->plugin->filter_types.push_back(std::move(r));
    return PORTICO_OK;
  }

  static portico_code SetReferencePolicy(void* host, const portico_reference_policy* p,
                                         portico_sink* error) {
    auto* self = static_cast<Registrar*>(host);
    if (p == nullptr || p->allowed == nullptr) {
      WriteSink(error, "reference policy without allowed()");
      return PORTICO_INVALID_ARGUMENT;
    }
    if (self->plugin->reference_policy) {
      WriteSink(error, "reference policy set twice");
      return PORTICO_ALREADY_EXISTS;
    }
    self->plugin->reference_policy = *p;
    return PORTICO_OK;
  }

  static void Log(void* host, portico_log_level level, portico_str message) {
    auto* self = static_cast<Registrar*>(host);
    self->plugin->logs.push_back(std::string(LevelName(level)) + " " + std::string(View(message)));
  }
};

// LoadLibrary opens `path` and runs its registration once per process.
inline StatusOr<std::shared_ptr<const LoadedPlugin>> LoadLibrary(const std::string& path) {
  std::error_code ec;
  std::string canonical = std::filesystem::canonical(path, ec).string();
  if (ec) return NotFoundError("plugin " + path + ": " + ec.message());
  LibraryCache& cache = Libraries();
  std::lock_guard<std::mutex> lock(cache.mu);
  if (auto it = cache.loaded.find(canonical); it != cache.loaded.end()) return it->second;
  if (auto it = cache.failed.find(canonical); it != cache.failed.end()) return it->second;

  auto fail = [&](Status status) -> StatusOr<std::shared_ptr<const LoadedPlugin>> {
    cache.failed[canonical] = status;
    return status;
  };
  // What the hosts check, by the hosts' own code (portico/sdk/manifest.h, elf_manifest.h), with
  // their messages: first the embedded manifest, read without loading the library.
  auto refuse = [&](const std::string& reason) {
    return fail(FailedPreconditionError(path + ": plugin refused: " + reason));
  };
  std::ifstream in(canonical, std::ios::binary);
  std::string bytes;
  char buffer[1 << 16];  // sized reads: a byte-wise copy of a Debug plugin takes a second
  while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
    bytes.append(buffer, static_cast<size_t>(in.gcount()));
  }
  if (in.bad() || bytes.empty()) return refuse("cannot read the file");
  StatusOr<std::string> text = ExtractElfManifest(bytes);
  if (!text.ok()) return refuse(ManifestRefusal(text.status()));
  StatusOr<PluginManifest> manifest = ParseManifest(*text);
  if (!manifest.ok()) return refuse(ManifestRefusal(manifest.status()));
  if (Status abi = CheckAbi(manifest->abi_major, manifest->abi_minor); !abi.ok()) {
    return refuse(abi.message());
  }
  void* handle = dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    return fail(FailedPreconditionError(
        "plugin " + path + ": dlopen failed: " + (err != nullptr ? err : "unknown error")));
  }
  auto entry = reinterpret_cast<portico_plugin_v1_fn>(dlsym(handle, PORTICO_ENTRY_V1));
  if (entry == nullptr) {
    return fail(FailedPreconditionError("plugin " + path +
                                        ": no exported " PORTICO_ENTRY_V1
                                        " (build it with PORTICO_PLUGIN(Setup))"));
  }
  const portico_plugin_v1_descriptor* d = entry();
  if (Status descriptor = CheckDescriptor(d, *manifest); !descriptor.ok()) {
    return refuse(descriptor.message());
  }
  auto plugin = std::make_shared<LoadedPlugin>();
  plugin->path = canonical;
  plugin->name = std::string(View(d->name));
  plugin->version = std::string(View(d->version));
  plugin->sdk_version = std::string(View(d->sdk_version));
  plugin->abi_major = d->abi_major;
  plugin->abi_minor = d->abi_minor;
  Registrar registrar{plugin.get()};
  portico_registrar r{sizeof(portico_registrar),
                      &registrar,
                      &Registrar::AddKind,
                      &Registrar::AddFilterType,
                      &Registrar::SetReferencePolicy,
                      &Registrar::Log};
  StringSink error;
  portico_code code = d->register_plugin(&r, error.sink());
  if (code != PORTICO_OK) {
    return fail(
        Status(static_cast<StatusCode>(code),
               "plugin " + plugin->name + " (" + path + "): registration failed: " + error.take()));
  }
  std::set<KindId> registered;
  for (const RegisteredKind& k : plugin->kinds) registered.insert(KindId{k.group, k.kind});
  if (Status kinds = CrossCheckKinds(registered, *manifest); !kinds.ok()) {
    return refuse(kinds.message());
  }
  plugin->manifest = std::move(manifest).value();
  std::shared_ptr<const LoadedPlugin> done = std::move(plugin);
  cache.loaded[canonical] = done;
  return done;
}

}  // namespace detail
}  // namespace portico::sdk::testing

#endif  // PORTICO_SDK_TESTING_PLUGIN_LIBRARY_H_
