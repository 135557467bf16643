// processor.h: the controller-side C++ API of a kind: Object, ProcessContext, ProcessResult and
// ProcessFn, wrapping the C ABI's process hook.
//
// Threading: a ProcessFn runs on controller workers, concurrently for different objects of the
// kind but never twice at once for the same object (the work queue hands a key to one worker at
// a time); it keeps no mutable global state without its own lock.
// Ownership: Object, ProcessContext and ProcessResult belong to one call and must not be kept
// after it returns; an Object's strings are borrowed from the host for that call; what a
// ProcessResult collects is copied by the host when the call returns. An error keeps the
// object's previous result (abi.h, portico_process_fn).
#ifndef PORTICO_SDK_PROCESSOR_H_
#define PORTICO_SDK_PROCESSOR_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "portico/sdk/json.h"
#include "portico/sdk/status.h"
#include "portico/sdk/types.h"

namespace portico::sdk {

// Object is a read-only view of the resource being processed.
class Object {
 public:
  explicit Object(const portico_object* raw) : raw_(raw), ref_(ObjectRef::FromC(raw->ref)) {}

  const ObjectRef& ref() const { return ref_; }
  std::string_view version() const { return View(raw_->version); }
  std::string_view json() const { return View(raw_->json); }
  int64_t generation() const { return raw_->generation; }

  // doc parses the object once; the host validated it, so a parse failure is an internal error.
  StatusOr<const rapidjson::Document*> doc() const {
    if (!parsed_) {
      auto parsed = json::Parse(json(), ref_.Display());
      if (!parsed.ok()) return parsed.status();
      doc_ = std::move(parsed).value();
      parsed_ = true;
    }
    return &doc_;
  }

 private:
  const portico_object* raw_;
  ObjectRef ref_;
  mutable rapidjson::Document doc_;
  mutable bool parsed_ = false;
};

// ProcessContext gives a processor the host's services; every read is recorded by the host.
class ProcessContext {
 public:
  explicit ProcessContext(const portico_process_context* raw) : raw_(raw) {}

  const portico_process_context* raw() const { return raw_; }

  // GetExport returns another object's export JSON, or nullopt when it does not exist.
  std::optional<std::string> GetExport(const ObjectRef& ref) const {
    if (raw_->get_export == nullptr) return std::nullopt;
    StringSink out;
    portico_object_ref c = ref.ToC();
    if (raw_->get_export(raw_->host, &c, out.sink()) == 0) return std::nullopt;
    return out.take();
  }

  // ListExports returns the JSON array of exports of (group, kind) in `ns` matching the selector.
  std::string ListExports(std::string_view group, std::string_view kind, std::string_view ns = "",
                          std::string_view label_selector = "") const {
    if (raw_->list_exports == nullptr) return "[]";
    StringSink out;
    raw_->list_exports(raw_->host, Str(group), Str(kind), Str(ns), Str(label_selector), out.sink());
    return out.written() ? out.take() : std::string("[]");
  }

  // ReferenceAllowed asks the reference policy; false when no policy plugin is loaded.
  bool ReferenceAllowed(std::string_view from_group, std::string_view from_kind,
                        std::string_view from_ns, const ObjectRef& to) const {
    if (raw_->reference_allowed == nullptr) return false;
    portico_object_ref c = to.ToC();
    return raw_->reference_allowed(raw_->host, Str(from_group), Str(from_kind), Str(from_ns), &c) != 0;
  }

  // ResolveExtensionRef returns the export of a filter object owned by another kind.
  std::optional<std::string> ResolveExtensionRef(const ObjectRef& ref) const {
    if (raw_->resolve_extension_ref == nullptr) return std::nullopt;
    StringSink out;
    portico_object_ref c = ref.ToC();
    if (raw_->resolve_extension_ref(raw_->host, &c, out.sink()) == 0) return std::nullopt;
    return out.take();
  }

  // GetSecret returns {"type":..,"data":{..}} of a Secret, or nullopt.
  std::optional<std::string> GetSecret(std::string_view ns, std::string_view name) const {
    if (raw_->get_secret == nullptr) return std::nullopt;
    StringSink out;
    if (raw_->get_secret(raw_->host, Str(ns), Str(name), out.sink()) == 0) return std::nullopt;
    return out.take();
  }

  void Log(portico_log_level level, std::string_view message) const {
    if (raw_->log != nullptr) raw_->log(raw_->host, level, Str(message));
  }
  void MetricAdd(std::string_view name, double delta) const {
    if (raw_->metric_add != nullptr) raw_->metric_add(raw_->host, Str(name), delta);
  }
  int64_t NowUnixMs() const { return raw_->now_unix_ms != nullptr ? raw_->now_unix_ms(raw_->host) : 0; }
  // PreviousSynced is the synced view this object's last successful run produced (nullopt:
  // none, or a host older than ABI 1.2). See abi.h, get_previous_synced.
  std::optional<std::string> PreviousSynced() const {
    if (!PORTICO_HAS_FIELD(raw_, portico_process_context, get_previous_synced) ||
        raw_->get_previous_synced == nullptr) {
      return std::nullopt;
    }
    StringSink out;
    if (raw_->get_previous_synced(raw_->host, out.sink()) == 0) return std::nullopt;
    return out.take();
  }

 private:
  const portico_process_context* raw_;
};

// Contribution is a fact about another object, aggregated into its status by the host.
struct Contribution {
  ObjectRef target;
  std::string topic;
  std::string json;
};

// ProcessResult collects the four parts of a processing result.
class ProcessResult {
 public:
  void SetSynced(std::string json) { synced_ = std::move(json); }
  void SetStatus(std::string json) { status_ = std::move(json); }
  void SetExport(std::string json) { export_ = std::move(json); }
  void Contribute(ObjectRef target, std::string topic, std::string json) {
    contributions_.push_back({std::move(target), std::move(topic), std::move(json)});
  }
  // LinkParent: this object goes to every gateway that holds `parent` (abi.h, portico_link_type).
  void LinkParent(ObjectRef parent) { links_.push_back({std::move(parent), PORTICO_LINK_PARENT}); }
  // LinkReference: `target` (synced "toReferrers") goes to every gateway that holds this object.
  void LinkReference(ObjectRef target) {
    links_.push_back({std::move(target), PORTICO_LINK_REFERENCE});
  }

  const std::optional<std::string>& synced() const { return synced_; }
  const std::optional<std::string>& status() const { return status_; }
  const std::optional<std::string>& export_view() const { return export_; }
  const std::vector<Contribution>& contributions() const { return contributions_; }
  const std::vector<std::pair<ObjectRef, portico_link_type>>& links() const { return links_; }

 private:
  std::optional<std::string> synced_;
  std::optional<std::string> status_;
  std::optional<std::string> export_;
  std::vector<Contribution> contributions_;
  std::vector<std::pair<ObjectRef, portico_link_type>> links_;
};

// ProcessFn validates and resolves one object into a ProcessResult.
using ProcessFn = std::function<Status(const Object&, ProcessContext&, ProcessResult&)>;

}  // namespace portico::sdk

#endif  // PORTICO_SDK_PROCESSOR_H_
