// metrics_text.h: RenderMetrics, the controller's /metrics in the Prometheus text exposition
// format (0.0.4). Per-kind series carry kind="HTTPRoute" and group="gateway.networking.k8s.io"
// labels and are emitted for every registered kind (zero included), so a delta is always
// computable:
//   portico_controller_ready, portico_controller_objects{kind,group},
//   portico_controller_processed_total{kind,group}, portico_controller_processing_failures_total,
//   portico_controller_requeues_total, portico_controller_status_aggregations_total,
//   portico_controller_queue_depth, portico_controller_store_head,
//   portico_controller_plugins_loaded, portico_controller_plugins_refused,
//   portico_controller_config_errors, portico_controller_reloads_total,
//   portico_controller_sync_gateways, portico_controller_sync_{snapshots,batches,events,acks,
//   nacks,rejected_streams}_total (ConfigSync).
//
// Thread-safety: pure function.
#ifndef PORTICO_CONTROLLER_ADMIN_METRICS_TEXT_H_
#define PORTICO_CONTROLLER_ADMIN_METRICS_TEXT_H_

#include <string>
#include <string_view>

#include "controller/admin/admin_backend.h"
#include "core/plugin/kind_registry.h"

namespace portico::controller::admin {

// kMetricsContentType is the Content-Type of RenderMetrics' output.
inline constexpr char kMetricsContentType[] = "text/plain; version=0.0.4; charset=utf-8";

std::string RenderMetrics(const ControllerStats& stats, const core::KindRegistry& registry);

// EscapeLabelValue escapes '\\', '"' and newlines for a Prometheus label value.
std::string EscapeLabelValue(std::string_view value);

}  // namespace portico::controller::admin

#endif  // PORTICO_CONTROLLER_ADMIN_METRICS_TEXT_H_
