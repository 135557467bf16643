// host_context.h: the host side of one process() call (abi.h): HostContext implements
// portico_process_context over HostServices (the reconciler's object table, registry, metrics
// and clock) and records every read in the DependencyIndex against the object being processed;
// ResultCollector implements portico_process_result's sinks and contribute().
//
// Threading and ownership: both belong to one processing run on one worker thread and must not
// outlive it; the raw ABI structs they hand out point into them. HostServices must be safe to
// call from several workers at once.
#ifndef PORTICO_CONTROLLER_RECONCILE_HOST_CONTEXT_H_
#define PORTICO_CONTROLLER_RECONCILE_HOST_CONTEXT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/reconcile/dependency_index.h"
#include "controller/reconcile/object_table.h"
#include "core/plugin/kind_registry.h"
#include "core/store/store_key.h"
#include "portico/sdk/abi.h"
#include "portico/sdk/label_selector.h"
#include "portico/sdk/status.h"
#include "portico/sdk/types.h"

namespace portico::controller {

// HostServices is what a process context reads from and reports to.
class HostServices {
 public:
  virtual ~HostServices() = default;
  virtual std::optional<std::string> Export(const std::string& key) const = 0;
  virtual std::string ListExports(std::string_view group, std::string_view kind,
                                  std::string_view ns, const sdk::LabelSelector& selector,
                                  int64_t* count) const = 0;
  virtual std::optional<std::string> Secret(std::string_view ns, std::string_view name) const = 0;
  virtual const core::KindInfo* FindKind(std::string_view group, std::string_view kind) const = 0;
  // ReferencePolicy returns the registered policy, or nullptr (references are denied).
  virtual const core::ReferencePolicyInfo* ReferencePolicy() const = 0;
  virtual void AddMetric(std::string_view name, const core::KindId& kind, double delta) = 0;
  virtual int64_t NowUnixMs() const = 0;
  // PreviousSynced is the synced view committed for `object` (nullopt: none).
  virtual std::optional<std::string> PreviousSynced(const sdk::ObjectRef& object) const = 0;
  // Log writes a processor's log line (`text` already names the object).
  virtual void Log(portico_log_level level, std::string_view text) = 0;
};

// LogToSpdlog is the usual HostServices::Log.
void LogToSpdlog(portico_log_level level, std::string_view text);

// HostContext is the portico_process_context of one run for `object` (of kind `kind`).
class HostContext {
 public:
  HostContext(HostServices& services, ReadRecorder& index, const sdk::ObjectRef& object,
              const core::KindId& kind);
  HostContext(const HostContext&) = delete;
  HostContext& operator=(const HostContext&) = delete;

  const portico_process_context* raw() const { return &ctx_; }
  // reads describes this run's reads in call order, like the fake host: "get Kind ns/name
  // hit|miss", "list Kind ns|* [selector]", "reference ...", "extension ...", "secret ...".
  const std::vector<std::string>& reads() const { return reads_; }

 private:
  static int GetExport(void* host, const portico_object_ref* ref, portico_sink* out);
  static int64_t ListExports(void* host, portico_str group, portico_str kind, portico_str ns,
                             portico_str selector, portico_sink* out);
  static int ReferenceAllowed(void* host, portico_str from_group, portico_str from_kind,
                              portico_str from_ns, const portico_object_ref* to);
  static int ResolveExtensionRef(void* host, const portico_object_ref* ref, portico_sink* out);
  static int GetSecret(void* host, portico_str ns, portico_str name, portico_sink* out);
  static void Log(void* host, portico_log_level level, portico_str message);
  static void MetricAdd(void* host, portico_str name, double delta);
  static int64_t NowUnixMs(void* host);
  static int GetPreviousSynced(void* host, portico_sink* out);

  HostServices& services_;
  const sdk::ObjectRef object_;
  ReadRecorder& index_;
  const std::string reader_;   // the processed object's key
  const std::string display_;  // "HTTPRoute default/web", for logs
  const core::KindId kind_;
  std::vector<std::string> reads_;
  portico_process_context ctx_;
};

// ResultCollector is the portico_process_result of one run. Its raw() sinks and callbacks are
// also how an isolated run's recorded result is replayed into it (isolated_process.h).
class ResultCollector {
 public:
  explicit ResultCollector(std::string display);
  ResultCollector(const ResultCollector&) = delete;
  ResultCollector& operator=(const ResultCollector&) = delete;

  const portico_process_result* raw() const { return &result_; }

  // Check validates what the processor wrote: status must be a JSON object, export and synced
  // JSON values; an error names the object and the part.
  Status Check() const;

  std::optional<std::string> synced() const;
  std::optional<std::string> status() const;
  std::optional<std::string> export_json() const;
  void SetSynced(std::string json) { forced_synced_ = std::move(json); }
  // TakeContributions groups the contributions by target, each list sorted by topic (stable);
  // `contributor` is this object's key.
  ContributionsByTarget TakeContributions(const std::string& contributor);
  // Links are the sync-scope links the processor declared (abi.h, portico_link_type).
  const std::vector<core::StoreKey>& parent_links() const { return parents_; }
  const std::vector<core::StoreKey>& reference_links() const { return references_; }
  // dropped lists contributions refused for a bad topic or target ("<target> <topic>: why").
  const std::vector<std::string>& dropped() const { return dropped_; }

 private:
  struct Pending {
    std::string target;
    std::string topic;
    std::string json;
  };
  static void Contribute(void* host, const portico_object_ref* target, portico_str topic,
                         portico_str json);
  static void Link(void* host, const portico_object_ref* target, int type);

  std::string display_;
  sdk::StringSink synced_;
  sdk::StringSink status_;
  sdk::StringSink export_;
  std::optional<std::string> forced_synced_;
  std::vector<Pending> contributions_;
  std::vector<core::StoreKey> parents_;
  std::vector<core::StoreKey> references_;
  std::vector<std::string> dropped_;
  portico_process_result result_;
};

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_RECONCILE_HOST_CONTEXT_H_
