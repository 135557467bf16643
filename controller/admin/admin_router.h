// admin_router.h: AdminRouter, the admin API's routes (DESIGN.md §6): it maps a request to
// the AdminBackend and renders the answer. Errors are {"error", "reason", "code"} with the
// matching HTTP status (admin_http.h).
//
//   GET    /healthz                      200 while serving
//   GET    /readyz                       200 once ready, else 503
//   GET    /api/v1/info                  server id, version, start, source, head, counts
//   GET    /api/v1/plugins               the plugin records (as list-plugins -o json)
//   GET    /api/v1/kinds                 registered kinds in `reads` order
//   GET    /api/v1/objects/KIND          ?namespace=NS; KIND as kubectl resolves it
//   GET    /api/v1/objects/KIND/NS/NAME  (namespaced) or /api/v1/objects/KIND/NAME (cluster
//                                        scoped; for a namespaced kind ?namespace= or default)
//   DELETE the same object paths         ?wait=true waits until the object is gone
//   POST   /api/v1/apply                 YAML/JSON documents; ?wait=true
//   GET    /api/v1/errors                config source errors
//   POST   /api/v1/reload                re-read the source
//   GET    /api/v1/gateways              gateways connected over ConfigSync
//   GET    /api/v1/gateways/NAME/synced  key -> hash the controller believes NAME holds
//   GET    /metrics                      Prometheus text
//   POST   /api/v1/admin/wipe-all        only with `testing` (else 404)
//
// Thread-safety: Handle may run on several threads at once (the backend synchronises).
// Ownership: the backend must outlive the router.
#ifndef PORTICO_CONTROLLER_ADMIN_ADMIN_ROUTER_H_
#define PORTICO_CONTROLLER_ADMIN_ADMIN_ROUTER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "controller/admin/admin_backend.h"
#include "core/admin/admin_http.h"

namespace portico::controller::admin {

// The HTTP exchange types and helpers live in core/admin (shared with the gateway).
using core::admin::AdminRequest;
using core::admin::AdminResponse;
using core::admin::ErrorFor;
using core::admin::ErrorResponse;
using core::admin::HttpStatusFor;
using core::admin::JsonResponse;
using core::admin::ParseTarget;
using core::admin::ReasonFor;

class AdminRouter {
 public:
  // `now_unix_ms` is the wall clock (uptime in /api/v1/info); empty: the system clock.
  explicit AdminRouter(AdminBackend* backend, std::function<int64_t()> now_unix_ms = {});

  AdminResponse Handle(const AdminRequest& request) const;

 private:
  AdminResponse Objects(const AdminRequest& request, const std::vector<std::string>& parts) const;
  AdminResponse Apply(const AdminRequest& request) const;

  AdminBackend* backend_;
  std::function<int64_t()> now_unix_ms_;
};

}  // namespace portico::controller::admin

#endif  // PORTICO_CONTROLLER_ADMIN_ADMIN_ROUTER_H_
