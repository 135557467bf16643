#include "controller/reconcile/host_context.h"

#include <spdlog/spdlog.h>

#include <rapidjson/reader.h>

#include <algorithm>
#include <utility>

namespace portico::controller {
namespace {

std::string Named(std::string_view ns, std::string_view name) {
  return ns.empty() ? std::string(name) : std::string(ns) + "/" + std::string(name);
}

spdlog::level::level_enum SpdlogLevel(portico_log_level level) {
  switch (level) {
    case PORTICO_LOG_DEBUG:
      return spdlog::level::debug;
    case PORTICO_LOG_INFO:
      return spdlog::level::info;
    case PORTICO_LOG_WARN:
      return spdlog::level::warn;
    case PORTICO_LOG_ERROR:
      return spdlog::level::err;
  }
  return spdlog::level::info;
}

// CheckJson checks that `json` is one JSON value (an object when `must_be_object`) without
// building a DOM: the host only stores these texts, it does not read them here.
Status CheckJson(const std::optional<std::string>& json, std::string_view what,
                 const std::string& display, bool must_be_object) {
  if (!json.has_value()) return OkStatus();
  rapidjson::Reader reader;
  rapidjson::BaseReaderHandler<> handler;
  rapidjson::StringStream stream(json->c_str());
  rapidjson::ParseResult ok = reader.Parse(stream, handler);
  if (!ok) {
    return InternalError(display + ": the processor wrote " + std::string(what) +
                         " that is not JSON (offset " + std::to_string(ok.Offset()) + ": " +
                         rapidjson::GetParseError_En(ok.Code()) + ")");
  }
  if (must_be_object) {
    size_t first = json->find_first_not_of(" \t\r\n");
    if (first == std::string::npos || (*json)[first] != '{') {
      return InternalError(display + ": the processor wrote " + std::string(what) +
                           " that is not a JSON object");
    }
  }
  return OkStatus();
}

}  // namespace

void LogToSpdlog(portico_log_level level, std::string_view text) {
  spdlog::log(SpdlogLevel(level), "{}", text);
}

HostContext::HostContext(HostServices& services, ReadRecorder& index, const sdk::ObjectRef& object,
                         const core::KindId& kind)
    : services_(services),
      object_(object),
      index_(index),
      reader_(object.Key()),
      display_(object.Display()),
      kind_(kind),
      ctx_{sizeof(portico_process_context), this,
           &HostContext::GetExport,         &HostContext::ListExports,
           &HostContext::ReferenceAllowed,  &HostContext::ResolveExtensionRef,
           &HostContext::GetSecret,         &HostContext::Log,
           &HostContext::MetricAdd,         &HostContext::NowUnixMs,
           &HostContext::GetPreviousSynced} {}

// Every callback catches everything: no exception may unwind through the plugin's C frames.

int HostContext::GetExport(void* host, const portico_object_ref* ref, portico_sink* out) {
  auto* self = static_cast<HostContext*>(host);
  if (ref == nullptr) return 0;
  try {
    sdk::ObjectRef r = sdk::ObjectRef::FromC(*ref);
    std::string key = r.Key();
    self->index_.AddGet(self->reader_, key);  // before reading: see dependency_index.h
    std::optional<std::string> exported = self->services_.Export(key);
    self->reads_.push_back("get " + r.kind + " " + Named(r.ns, r.name) +
                           (exported ? " hit" : " miss"));
    if (!exported) return 0;
    sdk::WriteSink(out, *exported);
    return 1;
  } catch (...) {
    return 0;
  }
}

int64_t HostContext::ListExports(void* host, portico_str group, portico_str kind, portico_str ns,
                                 portico_str selector, portico_sink* out) {
  auto* self = static_cast<HostContext*>(host);
  try {
    std::string line = "list " + std::string(sdk::View(kind)) + " " +
                       (sdk::View(ns).empty() ? std::string("*") : std::string(sdk::View(ns)));
    if (!sdk::View(selector).empty()) line += " " + std::string(sdk::View(selector));
    auto parsed = sdk::LabelSelector::Parse(sdk::View(selector));
    if (!parsed.ok()) {
      self->reads_.push_back(line + " (invalid selector)");
      self->services_.Log(PORTICO_LOG_WARN, self->display_ + ": " + parsed.status().message());
      return -1;
    }
    self->index_.AddList(self->reader_, sdk::View(group), sdk::View(kind), sdk::View(ns),
                         sdk::View(selector), *parsed);
    int64_t count = 0;
    std::string body = self->services_.ListExports(sdk::View(group), sdk::View(kind), sdk::View(ns),
                                                   *parsed, &count);
    self->reads_.push_back(std::move(line));
    sdk::WriteSink(out, body);
    return count;
  } catch (...) {
    return -1;
  }
}

int HostContext::ReferenceAllowed(void* host, portico_str from_group, portico_str from_kind,
                                  portico_str from_ns, const portico_object_ref* to) {
  auto* self = static_cast<HostContext*>(host);
  if (to == nullptr) return 0;
  try {
    const core::ReferencePolicyInfo* policy = self->services_.ReferencePolicy();
    int allowed = 0;
    if (policy != nullptr && policy->allowed != nullptr) {
      // The same context: the policy's own reads (grants) are recorded against this object.
      allowed = policy->allowed(policy->user, &self->ctx_, from_group, from_kind, from_ns, to);
    }
    sdk::ObjectRef r = sdk::ObjectRef::FromC(*to);
    self->reads_.push_back("reference " + std::string(sdk::View(from_kind)) + " " +
                           std::string(sdk::View(from_ns)) + " -> " + r.kind + " " +
                           Named(r.ns, r.name) + (allowed ? " allowed" : " denied"));
    return allowed != 0 ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

int HostContext::ResolveExtensionRef(void* host, const portico_object_ref* ref, portico_sink* out) {
  auto* self = static_cast<HostContext*>(host);
  if (ref == nullptr) return 0;
  try {
    sdk::ObjectRef r = sdk::ObjectRef::FromC(*ref);
    std::string key = r.Key();
    self->index_.AddGet(self->reader_, key);
    const core::KindInfo* kind = self->services_.FindKind(r.group, r.kind);
    bool filter = kind != nullptr && (kind->capabilities & PORTICO_CAP_ROUTE_FILTER) != 0;
    std::optional<std::string> exported;
    if (filter) exported = self->services_.Export(key);
    self->reads_.push_back("extension " + r.kind + " " + Named(r.ns, r.name) +
                           (exported ? " hit" : " miss"));
    if (!exported) return 0;
    sdk::WriteSink(out, *exported);
    return 1;
  } catch (...) {
    return 0;
  }
}

int HostContext::GetSecret(void* host, portico_str ns, portico_str name, portico_sink* out) {
  auto* self = static_cast<HostContext*>(host);
  try {
    self->index_.AddSecret(self->reader_, sdk::View(ns), sdk::View(name));
    std::optional<std::string> payload = self->services_.Secret(sdk::View(ns), sdk::View(name));
    self->reads_.push_back("secret " + Named(sdk::View(ns), sdk::View(name)) +
                           (payload ? " hit" : " miss"));
    if (!payload) return 0;
    sdk::WriteSink(out, *payload);
    return 1;
  } catch (...) {
    return 0;
  }
}

void HostContext::Log(void* host, portico_log_level level, portico_str message) {
  auto* self = static_cast<HostContext*>(host);
  try {
    self->services_.Log(level, self->display_ + ": " + std::string(sdk::View(message)));
  } catch (...) {
  }
}

void HostContext::MetricAdd(void* host, portico_str name, double delta) {
  auto* self = static_cast<HostContext*>(host);
  try {
    self->services_.AddMetric(sdk::View(name), self->kind_, delta);
  } catch (...) {
  }
}

int64_t HostContext::NowUnixMs(void* host) {
  return static_cast<HostContext*>(host)->services_.NowUnixMs();
}

int HostContext::GetPreviousSynced(void* host, portico_sink* out) {
  auto* self = static_cast<HostContext*>(host);
  try {
    std::optional<std::string> previous = self->services_.PreviousSynced(self->object_);
    self->reads_.push_back(std::string("previous synced ") + (previous ? "hit" : "miss"));
    if (!previous) return 0;
    sdk::WriteSink(out, *previous);
    return 1;
  } catch (...) {
    return 0;
  }
}

ResultCollector::ResultCollector(std::string display)
    : display_(std::move(display)), result_{sizeof(portico_process_result),
                                            *synced_.sink(),
                                            *status_.sink(),
                                            *export_.sink(),
                                            this,
                                            &ResultCollector::Contribute,
                                            &ResultCollector::Link} {}

void ResultCollector::Link(void* host, const portico_object_ref* target, int type) {
  auto* self = static_cast<ResultCollector*>(host);
  try {
    if (target == nullptr) return;
    sdk::ObjectRef t = sdk::ObjectRef::FromC(*target);
    if (t.kind.empty() || t.name.empty()) {
      self->dropped_.push_back(t.Display() + " link: target needs a kind and a name");
      return;
    }
    core::StoreKey key{t.group, t.kind, t.ns, t.name};
    if (type == PORTICO_LINK_PARENT) {
      self->parents_.push_back(std::move(key));
    } else if (type == PORTICO_LINK_REFERENCE) {
      self->references_.push_back(std::move(key));
    } else {
      self->dropped_.push_back(t.Display() + " link: unknown link type " + std::to_string(type));
    }
  } catch (...) {
  }
}

void ResultCollector::Contribute(void* host, const portico_object_ref* target, portico_str topic,
                                 portico_str json) {
  auto* self = static_cast<ResultCollector*>(host);
  try {
    if (target == nullptr) return;
    sdk::ObjectRef t = sdk::ObjectRef::FromC(*target);
    std::string topic_text(sdk::View(topic));
    if (t.kind.empty() || t.name.empty()) {
      self->dropped_.push_back(t.Display() + " " + topic_text + ": target needs a kind and a name");
      return;
    }
    auto parsed = ContributionTopic::Parse(topic_text);
    if (!parsed.ok()) {
      self->dropped_.push_back(t.Display() + " " + topic_text + ": " + parsed.status().message());
      return;
    }
    self->contributions_.push_back(
        Pending{t.Key(), std::move(topic_text), std::string(sdk::View(json))});
  } catch (...) {
  }
}

Status ResultCollector::Check() const {
  PORTICO_RETURN_IF_ERROR(CheckJson(status(), "a status", display_, /*must_be_object=*/true));
  PORTICO_RETURN_IF_ERROR(CheckJson(export_json(), "an export", display_, false));
  return CheckJson(synced(), "a synced view", display_, false);
}

std::optional<std::string> ResultCollector::synced() const {
  if (forced_synced_.has_value()) return forced_synced_;
  return synced_.written() ? std::optional<std::string>(synced_.data()) : std::nullopt;
}

std::optional<std::string> ResultCollector::status() const {
  return status_.written() ? std::optional<std::string>(status_.data()) : std::nullopt;
}

std::optional<std::string> ResultCollector::export_json() const {
  return export_.written() ? std::optional<std::string>(export_.data()) : std::nullopt;
}

ContributionsByTarget ResultCollector::TakeContributions(const std::string& contributor) {
  ContributionsByTarget out;
  for (Pending& p : contributions_) {
    out[p.target].push_back(StatusContribution{contributor, std::move(p.topic), std::move(p.json)});
  }
  contributions_.clear();
  for (auto& [target, list] : out) {
    std::stable_sort(
        list.begin(), list.end(),
        [](const StatusContribution& a, const StatusContribution& b) { return a.topic < b.topic; });
  }
  return out;
}

}  // namespace portico::controller
