#include "core/runtime/stage_call.h"

#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <spdlog/spdlog.h>

#include <exception>

#include "portico/sdk/types.h"

namespace portico::core {
namespace {

using sdk::View;

// CallState is the host pointer of one call's portico_txn.
struct CallState {
  const KindInfo* kind;
  StageHost* host;
};

StoreKey KeyOf(const portico_object_ref* ref) {
  return StoreKey{std::string(View(ref->group)), std::string(View(ref->kind)),
                  std::string(View(ref->ns)), std::string(View(ref->name))};
}

void LogFromPlugin(const KindInfo& kind, portico_log_level level, std::string_view message) {
  spdlog::level::level_enum spd = spdlog::level::info;
  switch (level) {
    case PORTICO_LOG_DEBUG:
      spd = spdlog::level::debug;
      break;
    case PORTICO_LOG_INFO:
      spd = spdlog::level::info;
      break;
    case PORTICO_LOG_WARN:
      spd = spdlog::level::warn;
      break;
    case PORTICO_LOG_ERROR:
      spd = spdlog::level::err;
      break;
  }
  spdlog::log(spd, "[{}] handler of {}: {}", kind.plugin_name, kind.id.ToString(), message);
}

portico_code OnPut(void* host, portico_str owner, portico_str format, portico_str id,
                   portico_str json, portico_sink* error) {
  auto* call = static_cast<CallState*>(host);
  try {
    Status status = call->host->Put(View(owner), View(format), View(id), View(json));
    if (status.ok()) return PORTICO_OK;
    sdk::WriteSink(error, status.message());
    return static_cast<portico_code>(status.code());
  } catch (const std::exception& e) {
    sdk::WriteSink(error, std::string("runtime put failed: ") + e.what());
    return PORTICO_INTERNAL;
  }
}

void OnRemove(void* host, portico_str owner, portico_str format, portico_str id) {
  auto* call = static_cast<CallState*>(host);
  try {
    call->host->Remove(View(owner), View(format), View(id));
  } catch (const std::exception& e) {
    LogFromPlugin(*call->kind, PORTICO_LOG_ERROR,
                  std::string("runtime remove failed: ") + e.what());
  }
}

void OnClearOwner(void* host, portico_str owner) {
  auto* call = static_cast<CallState*>(host);
  try {
    call->host->ClearOwner(View(owner));
  } catch (const std::exception& e) {
    LogFromPlugin(*call->kind, PORTICO_LOG_ERROR,
                  std::string("runtime clear_owner failed: ") + e.what());
  }
}

int OnGetSynced(void* host, const portico_object_ref* ref, portico_sink* out) {
  auto* call = static_cast<CallState*>(host);
  if (ref == nullptr) return 0;
  try {
    const std::string* json = call->host->GetSynced(KeyOf(ref));
    if (json == nullptr) return 0;
    sdk::WriteSink(out, *json);
    return 1;
  } catch (const std::exception& e) {
    LogFromPlugin(*call->kind, PORTICO_LOG_ERROR,
                  std::string("runtime get_synced failed: ") + e.what());
    return 0;
  }
}

void OnNack(void* host, const portico_object_ref* ref, portico_str reason) {
  auto* call = static_cast<CallState*>(host);
  if (ref == nullptr) return;
  try {
    call->host->Nack(KeyOf(ref), std::string(View(reason)));
  } catch (const std::exception& e) {
    LogFromPlugin(*call->kind, PORTICO_LOG_ERROR, std::string("runtime nack failed: ") + e.what());
  }
}

void OnLog(void* host, portico_log_level level, portico_str message) {
  auto* call = static_cast<CallState*>(host);
  try {
    LogFromPlugin(*call->kind, level, View(message));
  } catch (...) {
  }
}

// ValidOwner: "group/Kind/namespace/name" with a kind and a name and no further '/'.
bool ValidOwner(std::string_view owner) {
  size_t slashes[3];
  size_t n = 0;
  for (size_t i = 0; i < owner.size(); ++i) {
    if (owner[i] != '/') continue;
    if (n == 3) return false;
    slashes[n++] = i;
  }
  if (n != 3) return false;
  return slashes[1] > slashes[0] + 1 && owner.size() > slashes[2] + 1;
}

}  // namespace

const std::string* ContributionFormat(std::string_view format) {
  static const std::string* const kFormats = new std::string[5]{
      PORTICO_FORMAT_LISTENER_SET, PORTICO_FORMAT_ROUTE_RULES, PORTICO_FORMAT_BACKEND,
      PORTICO_FORMAT_CERTIFICATE, PORTICO_FORMAT_FILTER_BINDING};
  for (int i = 0; i < 5; ++i) {
    if (kFormats[i] == format) return &kFormats[i];
  }
  return nullptr;
}

Status CheckContribution(std::string_view owner, std::string_view format, std::string_view id,
                         std::string_view json) {
  if (ContributionFormat(format) == nullptr) {
    return InvalidArgumentError(
        "unknown contribution format \"" + std::string(format) + "\" (formats: " +
        PORTICO_FORMAT_LISTENER_SET ", " PORTICO_FORMAT_ROUTE_RULES ", " PORTICO_FORMAT_BACKEND
                                    ", " PORTICO_FORMAT_CERTIFICATE
                                    ", " PORTICO_FORMAT_FILTER_BINDING ")");
  }
  if (!ValidOwner(owner)) {
    return InvalidArgumentError("put " + std::string(format) + " \"" + std::string(id) +
                                "\": owner \"" + std::string(owner) +
                                "\" is not an object key group/Kind/namespace/name");
  }
  if (id.empty()) {
    return InvalidArgumentError("put " + std::string(format) + " for " + std::string(owner) +
                                ": empty id");
  }
  // Validate without building a DOM.
  rapidjson::MemoryStream stream(json.data(), json.size());
  rapidjson::BaseReaderHandler<> handler;
  rapidjson::Reader reader;
  rapidjson::ParseResult parsed = reader.Parse(stream, handler);
  if (parsed.IsError()) {
    return InvalidArgumentError(std::string(format) + " \"" + std::string(id) +
                                "\": invalid JSON at offset " + std::to_string(parsed.Offset()) +
                                ": " + rapidjson::GetParseError_En(parsed.Code()));
  }
  return OkStatus();
}

Status CallStage(const KindInfo& kind, const std::vector<portico_change>& changes,
                 StageHost& host) {
  if (kind.hooks.stage == nullptr) {
    return FailedPreconditionError("kind " + kind.id.ToString() + " has no handler");
  }
  CallState state{&kind, &host};
  portico_txn txn{sizeof(portico_txn), &state,       &OnPut,  &OnRemove,
                  &OnClearOwner,       &OnGetSynced, &OnNack, &OnLog};
  sdk::StringSink error;
  portico_code code =
      kind.hooks.stage(kind.hooks.user, &txn, changes.data(), changes.size(), error.sink());
  if (code == PORTICO_OK) return OkStatus();
  std::string message = error.take();
  if (message.empty()) {
    message = "handler of " + kind.id.ToString() + " (plugin " + kind.plugin_name +
              ") failed without a message";
  }
  return Status(static_cast<StatusCode>(code), std::move(message));
}

}  // namespace portico::core
