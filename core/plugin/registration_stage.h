// registration_stage.h: RegistrationStage, the host side of portico_registrar. While a plugin's
// register_plugin() runs, everything it registers is copied into the stage; the loader commits
// the stage into the KindRegistry only when the whole registration succeeded, so a refused
// plugin leaves nothing behind.
//
// Thread-safety and ownership: one stage per registration, used on the loading thread only. The
// registrar returned by registrar() points at this stage and is valid while the stage lives.
#ifndef PORTICO_CORE_PLUGIN_REGISTRATION_STAGE_H_
#define PORTICO_CORE_PLUGIN_REGISTRATION_STAGE_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/plugin/kind_registry.h"
#include "portico/sdk/abi.h"
#include "portico/sdk/status.h"

namespace portico::core {

// Sizes of the ABI 1.0 structs: a plugin may send larger structs (a newer minor), never smaller.
inline constexpr size_t kKindV1Size = offsetof(portico_kind, stage) + sizeof(portico_stage_fn);
inline constexpr size_t kFilterTypeV1Size =
    offsetof(portico_filter_type, on_response) + sizeof(portico_filter_type::on_response);
inline constexpr size_t kReferencePolicyV1Size =
    offsetof(portico_reference_policy, allowed) + sizeof(portico_reference_policy::allowed);
inline constexpr size_t kDescriptorV1Size =
    offsetof(portico_plugin_v1_descriptor, register_plugin) +
    sizeof(portico_plugin_v1_descriptor::register_plugin);

// RegistrationStage collects one plugin's registration; see the file comment.
class RegistrationStage {
 public:
  // `registry` is consulted for conflicts (kinds, filter names, the reference policy) and must
  // outlive the stage.
  RegistrationStage(const KindRegistry& registry, std::string plugin_name, std::string plugin_path);
  RegistrationStage(const RegistrationStage&) = delete;
  RegistrationStage& operator=(const RegistrationStage&) = delete;

  // registrar is what register_plugin() receives.
  const portico_registrar* registrar() const { return &registrar_; }

  // error is the first thing the host refused during registration (the plugin may ignore the
  // refusal and still return OK; the loader refuses the plugin anyway).
  const std::optional<Status>& error() const { return error_; }
  const std::vector<KindInfo>& kinds() const { return kinds_; }
  const std::vector<FilterTypeInfo>& filter_types() const { return filters_; }
  const std::optional<ReferencePolicyInfo>& reference_policy() const { return policy_; }

  // CommitTo adds everything staged to `registry`; on a conflict nothing is added.
  Status CommitTo(KindRegistry& registry) const;

 private:
  static portico_code AddKind(void* host, const portico_kind* kind, portico_sink* error);
  static portico_code AddFilterType(void* host, const portico_filter_type* type,
                                    portico_sink* error);
  static portico_code SetReferencePolicy(void* host, const portico_reference_policy* policy,
                                         portico_sink* error);
  static void Log(void* host, portico_log_level level, portico_str message);

  portico_code Refuse(Status status, portico_sink* sink);
  Status StageKind(const portico_kind& kind);
  Status StageFilterType(const portico_filter_type& type);
  Status StageReferencePolicy(const portico_reference_policy& policy);

  const KindRegistry& registry_;
  std::string plugin_name_;
  std::string plugin_path_;
  portico_registrar registrar_;
  std::optional<Status> error_;
  std::vector<KindInfo> kinds_;
  std::vector<FilterTypeInfo> filters_;
  std::optional<ReferencePolicyInfo> policy_;
};

}  // namespace portico::core

#endif  // PORTICO_CORE_PLUGIN_REGISTRATION_STAGE_H_
