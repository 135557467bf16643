// plugin.h: the registration builder and the exported entry of a plugin (PORTICO_PLUGIN).
//
// A plugin's identity (kinds, versions, plural, short names, scope, reads, capabilities, sync
// policy, schema) is written once in its manifest.json; portico_add_plugin() embeds it in the
// .so (readable without loading) and the builder below reads it back, so C++ code only attaches
// behaviour:
//
//   static void Setup(portico::sdk::Plugin& p) {
//     p.Kind("gateway.networking.k8s.io", "Gateway").Process(&ProcessGateway).Stage(&StageGateway);
//   }
//   PORTICO_PLUGIN(Setup)
//
// Every call from the host goes through a trampoline that catches every exception and turns it
// into a status, so no exception crosses the C boundary.
// Threading: Setup runs once per process that loads the plugin (controller, gateway,
// `portico-ctl plugin verify`), on the loading thread; the registered hooks follow abi.h's rules
// (processor.h, handler.h, filter.h).
// Ownership: the Plugin builder is the plugin's own, created once and never destroyed (hosts
// never unload plugins), so the specs and functions hooks point into live as long as the
// process; the registrar is valid only during registration and the host copies every kind and
// filter type it is given.
#ifndef PORTICO_SDK_PLUGIN_H_
#define PORTICO_SDK_PLUGIN_H_

#include <deque>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "portico/sdk/abi.h"
#include "portico/sdk/filter.h"
#include "portico/sdk/handler.h"
#include "portico/sdk/json.h"
#include "portico/sdk/manifest.h"
#include "portico/sdk/processor.h"
#include "portico/sdk/status.h"
#include "portico/sdk/types.h"
#include "portico/sdk/version.h"

// Emitted by portico_add_plugin() into a generated source of the plugin. Weak so a plugin built
// without it (a hand-written fixture) still links; it then declares everything in C++.
extern "C" {
__attribute__((weak, visibility("hidden"))) extern const char portico_embedded_manifest[];
__attribute__((weak, visibility("hidden"))) const char* portico_embedded_schema(const char* kind);
}

namespace portico::sdk {

// ReferencePolicyFn answers "may (from_group, from_kind, from_ns) reference `to`?".
using ReferencePolicyFn = std::function<bool(ProcessContext&, std::string_view from_group,
                                             std::string_view from_kind, std::string_view from_ns,
                                             const ObjectRef& to)>;

// KindSpec describes one kind; filled from the manifest, adjustable by the builder methods.
struct KindSpec {
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
  ProcessFn process;
  StageFn stage;

  KindSpec& Versions(std::vector<std::string> v) { versions = std::move(v); return *this; }
  KindSpec& Plural(std::string p) { plural = std::move(p); return *this; }
  KindSpec& ShortNames(std::vector<std::string> s) { short_names = std::move(s); return *this; }
  KindSpec& Scope(portico_kind_scope s) { scope = s; return *this; }
  KindSpec& Schema(std::string s) { schema = std::move(s); return *this; }
  KindSpec& Reads(std::vector<std::string> r) { reads = std::move(r); return *this; }
  KindSpec& Capabilities(uint32_t c) { capabilities |= c; return *this; }
  KindSpec& Sync(portico_sync_policy p) { sync_policy = p; return *this; }
  KindSpec& Process(ProcessFn fn) { process = std::move(fn); capabilities |= PORTICO_CAP_PROCESSOR; return *this; }
  KindSpec& Stage(StageFn fn) { stage = std::move(fn); capabilities |= PORTICO_CAP_HANDLER; return *this; }
};

// SyncPolicyFromName maps "never" | "always" | "toReferrers" | "attached".
inline StatusOr<portico_sync_policy> SyncPolicyFromName(std::string_view name) {
  if (name.empty() || name == "never") return PORTICO_SYNC_NEVER;
  if (name == "always") return PORTICO_SYNC_ALWAYS;
  if (name == "toReferrers") return PORTICO_SYNC_TO_REFERRERS;
  if (name == "attached") return PORTICO_SYNC_ATTACHED;
  return InvalidArgumentError("unknown sync policy \"" + std::string(name) +
                              "\" (expected never, always, toReferrers or attached)");
}

namespace detail {
inline std::vector<std::string> StringArray(const rapidjson::Value& obj, const char* name) {
  std::vector<std::string> out;
  const rapidjson::Value* arr = json::Find(obj, name);
  if (arr != nullptr && arr->IsArray()) {
    for (const auto& item : arr->GetArray()) {
      if (item.IsString()) out.emplace_back(item.GetString(), item.GetStringLength());
    }
  }
  return out;
}
}  // namespace detail

// KindSpecFromManifest builds a KindSpec from one entry of a manifest's "kinds" array.
inline StatusOr<KindSpec> KindSpecFromManifest(const rapidjson::Value& entry) {
  KindSpec spec;
  spec.group = json::GetString(entry, "group");
  spec.kind = json::GetString(entry, "kind");
  if (spec.kind.empty()) return InvalidArgumentError("manifest kinds[]: missing \"kind\"");
  spec.versions = detail::StringArray(entry, "versions");
  spec.plural = json::GetString(entry, "plural");
  spec.short_names = detail::StringArray(entry, "shortNames");
  spec.scope = json::GetString(entry, "scope", "Namespaced") == "Cluster" ? PORTICO_SCOPE_CLUSTER
                                                                          : PORTICO_SCOPE_NAMESPACED;
  spec.reads = detail::StringArray(entry, "reads");
  for (const auto& cap : detail::StringArray(entry, "capabilities")) {
    uint32_t bit = CapabilityBit(cap);
    if (bit == 0) return InvalidArgumentError("manifest kind " + spec.kind + ": unknown capability \"" + cap + "\"");
    spec.capabilities |= bit;
  }
  auto policy = SyncPolicyFromName(json::GetString(entry, "sync"));
  if (!policy.ok()) return policy.status().WithPrefix("manifest kind " + spec.kind);
  spec.sync_policy = *policy;
  return spec;
}

// Plugin is the registration builder handed to the plugin's Setup function.
class Plugin {
 public:
  // Kind returns the spec of (group, kind): from the embedded manifest when it lists the kind
  // (with its embedded schema). A plugin with an embedded manifest that lacks (group, kind)
  // fails its registration with a message naming the kind and the fix (the spec returned then
  // is never registered); one without a manifest (a hand-written fixture) gets a fresh spec
  // the caller fills in.
  KindSpec& Kind(std::string_view group, std::string_view kind) {
    for (auto& spec : kinds_) {
      if (spec.group == group && spec.kind == kind) return spec;
    }
    if (manifest_loaded_) {
      std::string listed;
      for (const auto& spec : kinds_) {
        listed += (listed.empty() ? "" : ", ") + spec.kind + "." + spec.group;
      }
      std::string name = std::string(kind) + "." + std::string(group);
      errors_.push_back("Kind(\"" + std::string(group) + "\", \"" + std::string(kind) +
                        "\"): kind " + name + " is not in the plugin's manifest.json (it lists: " +
                        (listed.empty() ? std::string("no kinds") : listed) +
                        "); add it to \"kinds\" there, or fix the group or kind passed to Kind()");
      KindSpec& unlisted = unlisted_.emplace_back();
      unlisted.group = group;
      unlisted.kind = kind;
      return unlisted;
    }
    KindSpec& spec = kinds_.emplace_back();
    spec.group = group;
    spec.kind = kind;
    return spec;
  }
  void AddFilterType(FilterTypeSpec spec) { filters_.push_back(std::move(spec)); }
  void SetReferencePolicy(ReferencePolicyFn fn) { reference_policy_ = std::move(fn); }

  // LoadManifest pre-fills kinds from the embedded manifest; called before Setup.
  Status LoadManifest(std::string_view manifest) {
    auto doc = json::Parse(manifest, "embedded manifest");
    if (!doc.ok()) return doc.status();
    const rapidjson::Value* kinds = json::Find(*doc, "kinds");
    if (kinds == nullptr || !kinds->IsArray()) return OkStatus();
    for (const auto& entry : kinds->GetArray()) {
      auto spec = KindSpecFromManifest(entry);
      if (!spec.ok()) return spec.status();
      if (&portico_embedded_schema != nullptr) {
        const char* schema = portico_embedded_schema(spec->kind.c_str());
        if (schema != nullptr) spec->schema = schema;
      }
      kinds_.push_back(std::move(spec).value());
    }
    manifest_loaded_ = true;
    return OkStatus();
  }

  // errors lists what Setup asked for that the manifest does not declare (Kind()).
  const std::vector<std::string>& errors() const { return errors_; }

  std::deque<KindSpec>& kinds() { return kinds_; }
  std::deque<FilterTypeSpec>& filters() { return filters_; }
  const ReferencePolicyFn& reference_policy() const { return reference_policy_; }

 private:
  // deques: hooks keep pointers to specs, which must never move.
  std::deque<KindSpec> kinds_;
  std::deque<KindSpec> unlisted_;  // Kind() of a kind the manifest lacks: never registered
  std::deque<FilterTypeSpec> filters_;
  ReferencePolicyFn reference_policy_;
  bool manifest_loaded_ = false;
  std::vector<std::string> errors_;
};

namespace detail {

// Guard runs `fn` returning a Status, turning any exception into INTERNAL with its message.
template <typename Fn>
Status Guard(std::string_view where, Fn&& fn) noexcept {
  try {
    return fn();
  } catch (const std::exception& e) {
    return InternalError(std::string(where) + " threw: " + e.what());
  } catch (...) {
    return InternalError(std::string(where) + " threw a non-standard exception");
  }
}

inline portico_code Report(const Status& status, portico_sink* error) {
  if (!status.ok()) WriteSink(error, status.message());
  return static_cast<portico_code>(status.code());
}

inline void WriteResult(const ProcessResult& r, const portico_process_result* out) {
  if (r.synced()) WriteSink(const_cast<portico_sink*>(&out->synced), *r.synced());
  if (r.status()) WriteSink(const_cast<portico_sink*>(&out->status), *r.status());
  if (r.export_view()) WriteSink(const_cast<portico_sink*>(&out->export_), *r.export_view());
  if (out->contribute != nullptr) {
    for (const auto& c : r.contributions()) {
      portico_object_ref target = c.target.ToC();
      out->contribute(out->host, &target, Str(c.topic), Str(c.json));
    }
  }
  if (PORTICO_HAS_FIELD(out, portico_process_result, link) && out->link != nullptr) {
    for (const auto& [target, type] : r.links()) {
      portico_object_ref ref = target.ToC();
      out->link(out->host, &ref, type);
    }
  }
}

inline portico_code ProcessTrampoline(void* user, const portico_object* object,
                                      const portico_process_context* ctx,
                                      const portico_process_result* result, portico_sink* error) noexcept {
  auto* spec = static_cast<KindSpec*>(user);
  Status status = Guard("processor of " + spec->kind, [&]() -> Status {
    Object obj(object);
    ProcessContext context(ctx);
    ProcessResult r;
    PORTICO_RETURN_IF_ERROR(spec->process(obj, context, r));
    WriteResult(r, result);
    return OkStatus();
  });
  return Report(status, error);
}

inline portico_code StageTrampoline(void* user, const portico_txn* txn,
                                    const portico_change* changes, size_t count,
                                    portico_sink* error) noexcept {
  auto* spec = static_cast<KindSpec*>(user);
  Status status = Guard("handler of " + spec->kind, [&]() -> Status {
    std::vector<Change> list;
    list.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      list.push_back(Change{changes[i].op, ObjectRef::FromC(changes[i].ref), View(changes[i].json),
                            View(changes[i].hash)});
    }
    return spec->stage(Txn(txn), list);
  });
  return Report(status, error);
}

inline portico_code FilterCreate(void* user, portico_str config, void** instance,
                                 portico_sink* error) noexcept {
  auto* spec = static_cast<FilterTypeSpec*>(user);
  Status status = Guard("filter " + spec->name, [&]() -> Status {
    PORTICO_ASSIGN_OR_RETURN(std::unique_ptr<Filter> filter, spec->factory(View(config)));
    *instance = filter.release();
    return OkStatus();
  });
  return Report(status, error);
}

inline void FilterDestroy(void*, void* instance) noexcept { delete static_cast<Filter*>(instance); }

inline portico_filter_status FilterOnRequest(void* instance, const portico_http_view* view,
                                             const portico_filter_host* host) noexcept {
  try {
    return static_cast<Filter*>(instance)->OnRequest(HttpView(view), FilterHost(host));
  } catch (...) {
    if (view->respond != nullptr) view->respond(view->host, 500, Str("filter failed"));
    return PORTICO_FILTER_RESPOND;
  }
}

inline portico_filter_status FilterOnResponse(void* instance, const portico_http_view* view,
                                              const portico_filter_host* host) noexcept {
  try {
    return static_cast<Filter*>(instance)->OnResponse(HttpView(view), FilterHost(host));
  } catch (...) {
    return PORTICO_FILTER_CONTINUE;
  }
}

inline portico_filter_status FilterOnUpstreamRequest(void* instance, const portico_http_view* view,
                                                     const portico_filter_host* host) noexcept {
  try {
    return static_cast<Filter*>(instance)->OnUpstreamRequest(HttpView(view), FilterHost(host));
  } catch (...) {
    return PORTICO_FILTER_ERROR;
  }
}

inline void FilterOnLog(void* instance, const portico_http_view* view,
                        const portico_filter_host* host) noexcept {
  try {
    static_cast<Filter*>(instance)->OnLog(HttpView(view), FilterHost(host));
  } catch (...) {
  }
}

inline void* FilterRequestCreate(void* instance) noexcept {
  try {
    return static_cast<Filter*>(instance)->NewState().release();
  } catch (...) {
    return nullptr;
  }
}

inline void FilterRequestDestroy(void*, void* state) noexcept {
  delete static_cast<RequestState*>(state);
}

inline void FilterCancel(void*, void*, void* cookie) noexcept {
  delete static_cast<CallCookie*>(cookie);
}

inline int ReferencePolicyTrampoline(void* user, const portico_process_context* ctx,
                                     portico_str from_group, portico_str from_kind,
                                     portico_str from_ns, const portico_object_ref* to) noexcept {
  try {
    auto* fn = static_cast<ReferencePolicyFn*>(user);
    ProcessContext context(ctx);
    return (*fn)(context, View(from_group), View(from_kind), View(from_ns), ObjectRef::FromC(*to)) ? 1 : 0;
  } catch (...) {
    return 0;  // a failing policy denies
  }
}

// RegisterAll hands every spec to the host registrar.
inline Status RegisterAll(Plugin& plugin, const portico_registrar* reg) {
  if (!plugin.errors().empty()) return InvalidArgumentError(plugin.errors().front());
  for (KindSpec& spec : plugin.kinds()) {
    std::string versions = JoinList(spec.versions);
    std::string short_names = JoinList(spec.short_names);
    std::string reads = JoinList(spec.reads);
    uint32_t caps = spec.capabilities;
    if (spec.sync_policy != PORTICO_SYNC_NEVER) caps |= PORTICO_CAP_SYNC;
    portico_kind k{};
    k.struct_size = sizeof(portico_kind);
    k.group = Str(spec.group);
    k.kind = Str(spec.kind);
    k.versions = Str(versions);
    k.plural = Str(spec.plural);
    k.short_names = Str(short_names);
    k.scope = spec.scope;
    k.schema = Str(spec.schema);
    k.reads = Str(reads);
    k.capabilities = caps;
    k.sync_policy = spec.sync_policy;
    k.user = &spec;
    k.process = spec.process ? &ProcessTrampoline : nullptr;
    k.stage = spec.stage ? &StageTrampoline : nullptr;
    StringSink error;
    portico_code code = reg->add_kind(reg->host, &k, error.sink());
    if (code != PORTICO_OK) {
      return Status(static_cast<StatusCode>(code), "kind " + spec.kind + ": " + error.take());
    }
  }
  for (FilterTypeSpec& spec : plugin.filters()) {
    portico_filter_type t{};
    t.struct_size = sizeof(portico_filter_type);
    t.name = Str(spec.name);
    t.phase = spec.phase;
    t.order = spec.order;
    t.user = &spec;
    t.create = &FilterCreate;
    t.destroy = &FilterDestroy;
    t.on_request = &FilterOnRequest;
    t.on_response = &FilterOnResponse;
    t.request_create = &FilterRequestCreate;
    t.request_destroy = &FilterRequestDestroy;
    t.cancel = &FilterCancel;
    t.on_upstream_request = &FilterOnUpstreamRequest;
    t.on_log = &FilterOnLog;
    StringSink error;
    if (reg->add_filter_type == nullptr) return UnimplementedError("host cannot register filters");
    portico_code code = reg->add_filter_type(reg->host, &t, error.sink());
    if (code != PORTICO_OK) return Status(static_cast<StatusCode>(code), "filter " + spec.name + ": " + error.take());
  }
  if (plugin.reference_policy()) {
    static ReferencePolicyFn policy;
    policy = plugin.reference_policy();
    portico_reference_policy p{sizeof(portico_reference_policy), &policy, &ReferencePolicyTrampoline};
    StringSink error;
    if (reg->set_reference_policy == nullptr) return UnimplementedError("host has no reference policy slot");
    portico_code code = reg->set_reference_policy(reg->host, &p, error.sink());
    if (code != PORTICO_OK) return Status(static_cast<StatusCode>(code), "reference policy: " + error.take());
  }
  return OkStatus();
}

// PluginInstance is the one Plugin of this shared object (hidden visibility keeps it private).
inline Plugin& PluginInstance() {
  static Plugin* plugin = new Plugin();  // never destroyed: the host never unloads plugins
  return *plugin;
}

// Register is the body of register_plugin(): manifest, then the user's Setup, then the host.
inline portico_code Register(void (*setup)(Plugin&), const portico_registrar* reg,
                             portico_sink* error) noexcept {
  Status status = Guard("plugin registration", [&]() -> Status {
    static bool done = false;
    if (done) return FailedPreconditionError("plugin registered twice");
    done = true;
    Plugin& plugin = PluginInstance();
    if (&portico_embedded_manifest != nullptr) {
      PORTICO_RETURN_IF_ERROR(plugin.LoadManifest(portico_embedded_manifest));
    }
    setup(plugin);
    return RegisterAll(plugin, reg);
  });
  return Report(status, error);
}

// ManifestField reads a top-level string of the embedded manifest ("" when absent).
inline std::string ManifestField(const char* name) {
  if (&portico_embedded_manifest == nullptr) return "";
  auto doc = json::Parse(portico_embedded_manifest);
  return doc.ok() ? json::GetString(*doc, name) : "";
}

}  // namespace detail
}  // namespace portico::sdk

// PORTICO_PLUGIN(SETUP) defines the exported entry `portico_plugin_v1` whose registration calls
// `void SETUP(portico::sdk::Plugin&)`. Name and version come from the embedded manifest.
#define PORTICO_PLUGIN(SETUP)                                                                   \
  static portico_code portico_register_plugin_(const portico_registrar* reg, portico_sink* err) { \
    return ::portico::sdk::detail::Register(&SETUP, reg, err);                                  \
  }                                                                                             \
  extern "C" PORTICO_EXPORT const portico_plugin_v1_descriptor* portico_plugin_v1(void) {      \
    static const std::string name = ::portico::sdk::detail::ManifestField("name");              \
    static const std::string version = ::portico::sdk::detail::ManifestField("version");        \
    static const portico_plugin_v1_descriptor descriptor = {                                    \
        sizeof(portico_plugin_v1_descriptor), PORTICO_ABI_MAJOR, PORTICO_ABI_MINOR,             \
        {name.data(), name.size()}, {version.data(), version.size()},                            \
        {PORTICO_SDK_VERSION, sizeof(PORTICO_SDK_VERSION) - 1}, &portico_register_plugin_};      \
    return &descriptor;                                                                         \
  }

#endif  // PORTICO_SDK_PLUGIN_H_
