// kind_registry.h: KindRegistry, what loaded plugins registered: kinds (with their hooks), filter
// types and the (at most one) reference policy, plus kubectl-like name resolution and the
// start-up order of kinds by their `reads` edges.
//
// Thread-safety and ownership: a KindRegistry is built on one thread (the loader) and is then
// read-only; concurrent const calls are safe once it is published. Hooks and `user` pointers
// point into plugin libraries, which are never unloaded, so they stay valid for the process.
#ifndef PORTICO_CORE_PLUGIN_KIND_REGISTRY_H_
#define PORTICO_CORE_PLUGIN_KIND_REGISTRY_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/plugin/kind_id.h"
#include "portico/sdk/abi.h"
#include "portico/sdk/status.h"

namespace portico::core {

// KindHooks are the ABI hooks of a kind; NULL when not provided.
struct KindHooks {
  void* user = nullptr;
  portico_process_fn process = nullptr;
  portico_stage_fn stage = nullptr;
};

// KindInfo is one registered kind; strings are the host's copies.
struct KindInfo {
  KindId id;
  std::vector<std::string> versions;
  std::string plural;
  std::vector<std::string> short_names;
  portico_kind_scope scope = PORTICO_SCOPE_NAMESPACED;
  std::string schema;  // JSON Schema (draft-04) text; empty when the plugin gave none
  std::vector<KindId> reads;
  uint32_t capabilities = 0;  // PORTICO_CAP_*
  portico_sync_policy sync_policy = PORTICO_SYNC_NEVER;
  KindHooks hooks;
  std::string plugin_name;
  std::string plugin_path;
};

// FilterTypeInfo is one registered filter type (see portico_filter_type).
struct FilterTypeInfo {
  std::string name;
  portico_filter_phase phase = PORTICO_PHASE_EARLY;
  int32_t order = 0;
  void* user = nullptr;
  portico_code (*create)(void*, portico_str, void**, portico_sink*) = nullptr;
  void (*destroy)(void*, void*) = nullptr;
  portico_filter_status (*on_request)(void*, const portico_http_view*,
                                      const portico_filter_host*) = nullptr;
  portico_filter_status (*on_response)(void*, const portico_http_view*,
                                       const portico_filter_host*) = nullptr;
  // ABI 1.2 hooks (null for a 1.1 plugin).
  void* (*request_create)(void*) = nullptr;
  void (*request_destroy)(void*, void*) = nullptr;
  void (*cancel)(void*, void*, void*) = nullptr;
  portico_filter_status (*on_upstream_request)(void*, const portico_http_view*,
                                               const portico_filter_host*) = nullptr;
  void (*on_log)(void*, const portico_http_view*, const portico_filter_host*) = nullptr;
  std::string plugin_name;
  std::string plugin_path;
};

// ReferencePolicyInfo is the registered reference policy (see portico_reference_policy).
struct ReferencePolicyInfo {
  void* user = nullptr;
  int (*allowed)(void*, const portico_process_context*, portico_str, portico_str, portico_str,
                 const portico_object_ref*) = nullptr;
  std::string plugin_name;
  std::string plugin_path;
};

// PluginRefusal is a plugin the registry turned away after registration (reads checks).
struct PluginRefusal {
  std::string plugin_name;
  std::string plugin_path;
  std::string reason;  // "what was found; the fix", one line
};

// KindRegistry holds what plugins registered. See the file comment for threading.
class KindRegistry {
 public:
  KindRegistry() = default;
  KindRegistry(const KindRegistry&) = default;
  KindRegistry& operator=(const KindRegistry&) = default;
  KindRegistry(KindRegistry&&) = default;
  KindRegistry& operator=(KindRegistry&&) = default;

  // ---- building (loader thread only)

  // AddKind adds a kind; ALREADY_EXISTS "kind X already provided by plugin P (path)" when
  // another plugin registered (group, kind).
  Status AddKind(KindInfo kind);
  // AddFilterType adds a filter type; ALREADY_EXISTS when the name is taken.
  Status AddFilterType(FilterTypeInfo type);
  // SetReferencePolicy installs the reference policy; ALREADY_EXISTS when one is installed.
  Status SetReferencePolicy(ReferencePolicyInfo policy);
  // CheckKind / CheckFilterType / CheckReferencePolicy report what Add/Set would refuse, without
  // changing anything (used to stage a plugin's registration before committing it).
  Status CheckKind(const KindId& id) const;
  Status CheckFilterType(std::string_view name) const;
  Status CheckReferencePolicy() const;
  // RemovePlugin drops everything registered from `plugin_path` and remembers its kinds as
  // "provided by a refused plugin" for later messages.
  void RemovePlugin(std::string_view plugin_path);
  // NoteRefusedProvider records that the refused plugin at `plugin_path` would have provided
  // `kinds`, so a kind reading one of them is told which plugin to fix.
  void NoteRefusedProvider(std::string_view plugin_name, std::string_view plugin_path,
                           const std::vector<KindId>& kinds);
  // ResolveReads refuses (and removes) every plugin with a kind whose `reads` names a kind no
  // remaining plugin provides, and every plugin with a kind on a reads cycle, repeating until
  // nothing changes (refusals cascade); then computes order(). Returns the refusals, one per
  // plugin, in the order they were decided.
  std::vector<PluginRefusal> ResolveReads();

  // ---- lookups (safe concurrently once built)

  // Find returns the kind (group, kind) matched exactly, or nullptr.
  const KindInfo* Find(std::string_view group, std::string_view kind) const;
  const KindInfo* Find(const KindId& id) const;
  // Resolve looks a kind up the way kubectl does, case-insensitively: plural ("gateways"),
  // kind ("gateway"), short name ("gtw"), each optionally qualified with the group
  // ("Gateway.gateway.networking.k8s.io", "httproutes.gateway.networking.k8s.io") or with
  // version and group ("gateways.v1.gateway.networking.k8s.io"). NOT_FOUND when nothing
  // matches; INVALID_ARGUMENT when the name is ambiguous across groups.
  StatusOr<const KindInfo*> Resolve(std::string_view name) const;
  // Kinds lists every kind by (group, kind).
  std::vector<const KindInfo*> Kinds() const;
  // Order is the start-up order computed by ResolveReads (a kind after the kinds it reads);
  // deletion uses it reversed. Empty before ResolveReads.
  const std::vector<KindId>& Order() const { return order_; }
  // KindsInOrder maps Order() to the kinds.
  std::vector<const KindInfo*> KindsInOrder() const;
  const FilterTypeInfo* FindFilterType(std::string_view name) const;
  std::vector<const FilterTypeInfo*> FilterTypes() const;
  // ReferencePolicy returns the installed policy, or nullptr (references are then denied).
  const ReferencePolicyInfo* ReferencePolicy() const;
  size_t size() const { return kinds_.size(); }

 private:
  struct RefusedProvider {
    std::string plugin_name;
    std::string plugin_path;
  };

  void RebuildNames();

  std::map<KindId, KindInfo> kinds_;
  std::map<std::string, FilterTypeInfo, std::less<>> filters_;
  std::optional<ReferencePolicyInfo> reference_policy_;
  // lower-case alias -> the kinds it names (several when ambiguous across groups)
  std::map<std::string, std::vector<KindId>, std::less<>> names_;
  std::map<KindId, RefusedProvider> refused_providers_;
  std::vector<KindId> order_;
};

}  // namespace portico::core

#endif  // PORTICO_CORE_PLUGIN_KIND_REGISTRY_H_
