#include "controller/admin/metrics_text.h"

#include <map>

#include "core/plugin/kind_id.h"

namespace portico::controller::admin {
namespace {

void Header(std::string* out, std::string_view name, std::string_view type, std::string_view help) {
  *out += "# HELP ";
  *out += name;
  *out += ' ';
  *out += help;
  *out += "\n# TYPE ";
  *out += name;
  *out += ' ';
  *out += type;
  *out += '\n';
}

void Sample(std::string* out, std::string_view name, uint64_t value) {
  *out += name;
  *out += ' ';
  *out += std::to_string(value);
  *out += '\n';
}

void Scalar(std::string* out, std::string_view name, std::string_view type, std::string_view help,
            uint64_t value) {
  Header(out, name, type, help);
  Sample(out, name, value);
}

std::string KindLabels(const core::KindId& id) {
  return "{kind=\"" + EscapeLabelValue(id.kind) + "\",group=\"" + EscapeLabelValue(id.group) +
         "\"}";
}

// PerKind emits one sample per registered kind (0 when absent from `values`), then any kind
// `values` holds that the registry does not (kept, not hidden).
void PerKind(std::string* out, std::string_view name, std::string_view type, std::string_view help,
             const std::map<std::string, uint64_t>& values, const core::KindRegistry& registry) {
  Header(out, name, type, help);
  std::map<core::KindId, uint64_t> samples;
  for (const core::KindInfo* kind : registry.Kinds()) samples[kind->id] = 0;
  for (const auto& [key, value] : values) samples[core::KindId::Parse(key)] = value;
  for (const auto& [id, value] : samples) {
    *out += name;
    *out += KindLabels(id);
    *out += ' ';
    *out += std::to_string(value);
    *out += '\n';
  }
}

}  // namespace

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string RenderMetrics(const ControllerStats& stats, const core::KindRegistry& registry) {
  std::string out;
  out.reserve(4096);
  Scalar(&out, "portico_controller_ready", "gauge",
         "1 once the initial configuration was processed and the queue drained.",
         stats.ready ? 1 : 0);
  std::map<std::string, uint64_t> objects(stats.objects_by_kind.begin(),
                                          stats.objects_by_kind.end());
  PerKind(&out, "portico_controller_objects", "gauge", "Objects held by the controller, by kind.",
          objects, registry);
  PerKind(&out, "portico_controller_processed_total", "counter", "Processor runs, by kind.",
          stats.reconciler.processed_by_kind, registry);
  Scalar(&out, "portico_controller_processing_failures_total", "counter",
         "Processor runs that returned an error.", stats.reconciler.failed);
  Scalar(&out, "portico_controller_requeues_total", "counter",
         "Objects requeued because something they read changed.",
         stats.reconciler.requeued_by_dependency);
  Scalar(&out, "portico_controller_status_aggregations_total", "counter",
         "Target statuses recomputed from contributions.", stats.reconciler.status_aggregations);
  Scalar(&out, "portico_controller_isolated_runs_total", "counter",
         "Processor runs in a forked child ([plugins] isolate).", stats.reconciler.isolated_runs);
  Scalar(&out, "portico_controller_isolated_failures_total", "counter",
         "Isolated processor runs that crashed, hung or could not be started.",
         stats.reconciler.isolated_failures);
  Scalar(&out, "portico_controller_queue_depth", "gauge", "Objects waiting to be processed.",
         stats.reconciler.queue_depth);
  Scalar(&out, "portico_controller_store_head", "gauge",
         "Version of the newest change in the synced store.", stats.head);
  Scalar(&out, "portico_controller_plugins_loaded", "gauge", "Plugins accepted at start-up.",
         stats.plugins_loaded);
  Scalar(&out, "portico_controller_plugins_refused", "gauge", "Plugins refused at start-up.",
         stats.plugins_refused);
  Scalar(&out, "portico_controller_config_errors", "gauge",
         "Current problems of the config source (files that do not parse, bad documents).",
         stats.config_errors);
  Scalar(&out, "portico_controller_reloads_total", "counter", "Reloads of the config source.",
         stats.reloads);
  Scalar(&out, "portico_controller_sync_gateways", "gauge", "Gateways connected over ConfigSync.",
         stats.sync.connected);
  Scalar(&out, "portico_controller_sync_snapshots_total", "counter",
         "ConfigSync snapshots sent to gateways.", stats.sync.snapshots);
  Scalar(&out, "portico_controller_sync_batches_total", "counter",
         "ConfigSync batches sent to gateways.", stats.sync.batches);
  Scalar(&out, "portico_controller_sync_events_total", "counter",
         "ConfigSync events sent to gateways (snapshots included).", stats.sync.events);
  Scalar(&out, "portico_controller_sync_acks_total", "counter",
         "ConfigSync acks received from gateways.", stats.sync.acks);
  Scalar(&out, "portico_controller_sync_nacks_total", "counter",
         "Objects gateways rejected (nacks).", stats.sync.nacks);
  Scalar(&out, "portico_controller_sync_rejected_streams_total", "counter",
         "ConfigSync streams refused (bad first message, protocol errors).", stats.sync.rejected);
  return out;
}

}  // namespace portico::controller::admin
