#include "core/plugin/registration_stage.h"

#include <spdlog/spdlog.h>

#include <exception>
#include <utility>

#include "portico/sdk/types.h"

namespace portico::core {
namespace {

using sdk::SplitList;
using sdk::View;

std::string Copy(portico_str s) { return std::string(View(s)); }

}  // namespace

RegistrationStage::RegistrationStage(const KindRegistry& registry, std::string plugin_name,
                                     std::string plugin_path)
    : registry_(registry),
      plugin_name_(std::move(plugin_name)),
      plugin_path_(std::move(plugin_path)),
      registrar_{sizeof(portico_registrar),
                 this,
                 &RegistrationStage::AddKind,
                 &RegistrationStage::AddFilterType,
                 &RegistrationStage::SetReferencePolicy,
                 &RegistrationStage::Log} {}

portico_code RegistrationStage::Refuse(Status status, portico_sink* sink) {
  sdk::WriteSink(sink, status.message());
  if (!error_) error_ = status;
  return static_cast<portico_code>(status.code());
}

// The C entry points never let an exception (bad_alloc) unwind into plugin code.
portico_code RegistrationStage::AddKind(void* host, const portico_kind* kind, portico_sink* error) {
  auto* self = static_cast<RegistrationStage*>(host);
  try {
    if (kind == nullptr) return self->Refuse(InvalidArgumentError("add_kind(NULL)"), error);
    Status status = self->StageKind(*kind);
    return status.ok() ? PORTICO_OK : self->Refuse(std::move(status), error);
  } catch (const std::exception& e) {
    return self->Refuse(InternalError(std::string("host add_kind failed: ") + e.what()), error);
  }
}

portico_code RegistrationStage::AddFilterType(void* host, const portico_filter_type* type,
                                              portico_sink* error) {
  auto* self = static_cast<RegistrationStage*>(host);
  try {
    if (type == nullptr) return self->Refuse(InvalidArgumentError("add_filter_type(NULL)"), error);
    Status status = self->StageFilterType(*type);
    return status.ok() ? PORTICO_OK : self->Refuse(std::move(status), error);
  } catch (const std::exception& e) {
    return self->Refuse(InternalError(std::string("host add_filter_type failed: ") + e.what()),
                        error);
  }
}

portico_code RegistrationStage::SetReferencePolicy(void* host,
                                                   const portico_reference_policy* policy,
                                                   portico_sink* error) {
  auto* self = static_cast<RegistrationStage*>(host);
  try {
    if (policy == nullptr) {
      return self->Refuse(InvalidArgumentError("set_reference_policy(NULL)"), error);
    }
    Status status = self->StageReferencePolicy(*policy);
    return status.ok() ? PORTICO_OK : self->Refuse(std::move(status), error);
  } catch (const std::exception& e) {
    return self->Refuse(InternalError(std::string("host set_reference_policy failed: ") + e.what()),
                        error);
  }
}

void RegistrationStage::Log(void* host, portico_log_level level, portico_str message) {
  auto* self = static_cast<RegistrationStage*>(host);
  try {
    spdlog::level::level_enum l = spdlog::level::info;
    switch (level) {
      case PORTICO_LOG_DEBUG:
        l = spdlog::level::debug;
        break;
      case PORTICO_LOG_INFO:
        l = spdlog::level::info;
        break;
      case PORTICO_LOG_WARN:
        l = spdlog::level::warn;
        break;
      case PORTICO_LOG_ERROR:
        l = spdlog::level::err;
        break;
    }
    spdlog::log(l, "plugin {}: {}", self->plugin_name_, View(message));
  } catch (...) {
    // Logging must never fail a registration.
  }
}

Status RegistrationStage::StageKind(const portico_kind& k) {
  if (k.struct_size < kKindV1Size) {
    return InvalidArgumentError("portico_kind struct_size " + std::to_string(k.struct_size) +
                                " smaller than " + std::to_string(kKindV1Size) +
                                " (the ABI 1.0 size)");
  }
  KindInfo info;
  info.id = KindId{Copy(k.group), Copy(k.kind)};
  const std::string name = info.id.ToString();
  if (info.id.kind.empty()) return InvalidArgumentError("portico_kind with an empty kind name");
  info.versions = SplitList(View(k.versions));
  if (info.versions.empty()) return InvalidArgumentError("kind " + name + ": no versions");
  info.plural = Copy(k.plural);
  if (info.plural.empty()) return InvalidArgumentError("kind " + name + ": empty plural");
  info.short_names = SplitList(View(k.short_names));
  if (k.scope != PORTICO_SCOPE_NAMESPACED && k.scope != PORTICO_SCOPE_CLUSTER) {
    return InvalidArgumentError("kind " + name + ": unknown scope " +
                                std::to_string(static_cast<int>(k.scope)));
  }
  info.scope = k.scope;
  info.schema = Copy(k.schema);
  for (const std::string& read : SplitList(View(k.reads)))
    info.reads.push_back(KindId::Parse(read));
  info.capabilities = k.capabilities;
  if (k.sync_policy != PORTICO_SYNC_NEVER && k.sync_policy != PORTICO_SYNC_ALWAYS &&
      k.sync_policy != PORTICO_SYNC_TO_REFERRERS && k.sync_policy != PORTICO_SYNC_ATTACHED) {
    return InvalidArgumentError("kind " + name + ": unknown sync policy " +
                                std::to_string(static_cast<int>(k.sync_policy)));
  }
  info.sync_policy = k.sync_policy;
  info.hooks = KindHooks{k.user, k.process, k.stage};
  info.plugin_name = plugin_name_;
  info.plugin_path = plugin_path_;
  for (const KindInfo& staged : kinds_) {
    if (staged.id == info.id) return AlreadyExistsError("kind " + name + " registered twice");
  }
  PORTICO_RETURN_IF_ERROR(registry_.CheckKind(info.id));
  kinds_.push_back(std::move(info));
  return OkStatus();
}

Status RegistrationStage::StageFilterType(const portico_filter_type& t) {
  if (t.struct_size < kFilterTypeV1Size) {
    return InvalidArgumentError("portico_filter_type struct_size " + std::to_string(t.struct_size) +
                                " smaller than " + std::to_string(kFilterTypeV1Size) +
                                " (the ABI 1.0 size)");
  }
  FilterTypeInfo info;
  info.name = Copy(t.name);
  if (info.name.empty()) return InvalidArgumentError("filter type with an empty name");
  if (t.phase < PORTICO_PHASE_EARLY || t.phase > PORTICO_PHASE_RESPONSE) {
    return InvalidArgumentError("filter type " + info.name + ": unknown phase " +
                                std::to_string(static_cast<int>(t.phase)));
  }
  if (t.create == nullptr) {
    return InvalidArgumentError("filter type " + info.name + ": create is NULL");
  }
  info.phase = t.phase;
  info.order = t.order;
  info.user = t.user;
  info.create = t.create;
  info.destroy = t.destroy;
  info.on_request = t.on_request;
  info.on_response = t.on_response;
  if (PORTICO_HAS_FIELD(&t, portico_filter_type, on_response_body)) {
    if (t.on_request_body != nullptr || t.on_response_body != nullptr) {
      return InvalidArgumentError("filter type " + info.name +
                                  ": body hooks are reserved and must be NULL");
    }
    info.request_create = t.request_create;
    info.request_destroy = t.request_destroy;
    info.cancel = t.cancel;
    info.on_upstream_request = t.on_upstream_request;
    info.on_log = t.on_log;
  }
  info.plugin_name = plugin_name_;
  info.plugin_path = plugin_path_;
  for (const FilterTypeInfo& staged : filters_) {
    if (staged.name == info.name) {
      return AlreadyExistsError("filter type " + info.name + " registered twice");
    }
  }
  PORTICO_RETURN_IF_ERROR(registry_.CheckFilterType(info.name));
  filters_.push_back(std::move(info));
  return OkStatus();
}

Status RegistrationStage::StageReferencePolicy(const portico_reference_policy& p) {
  if (p.struct_size < kReferencePolicyV1Size) {
    return InvalidArgumentError("portico_reference_policy struct_size " +
                                std::to_string(p.struct_size) + " smaller than " +
                                std::to_string(kReferencePolicyV1Size) + " (the ABI 1.0 size)");
  }
  if (p.allowed == nullptr) return InvalidArgumentError("reference policy: allowed is NULL");
  if (policy_) return AlreadyExistsError("reference policy set twice");
  PORTICO_RETURN_IF_ERROR(registry_.CheckReferencePolicy());
  policy_ = ReferencePolicyInfo{p.user, p.allowed, plugin_name_, plugin_path_};
  return OkStatus();
}

Status RegistrationStage::CommitTo(KindRegistry& registry) const {
  for (const KindInfo& kind : kinds_) PORTICO_RETURN_IF_ERROR(registry.CheckKind(kind.id));
  for (const FilterTypeInfo& type : filters_) {
    PORTICO_RETURN_IF_ERROR(registry.CheckFilterType(type.name));
  }
  if (policy_) PORTICO_RETURN_IF_ERROR(registry.CheckReferencePolicy());
  for (const KindInfo& kind : kinds_) PORTICO_RETURN_IF_ERROR(registry.AddKind(kind));
  for (const FilterTypeInfo& type : filters_) {
    PORTICO_RETURN_IF_ERROR(registry.AddFilterType(type));
  }
  if (policy_) PORTICO_RETURN_IF_ERROR(registry.SetReferencePolicy(*policy_));
  return OkStatus();
}

}  // namespace portico::core
