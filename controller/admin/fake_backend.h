// fake_backend.h: FakeBackend, an in-memory AdminBackend for the admin API's tests: a hand-built
// kind registry (GatewayClass, Gateway, HTTPRoute, Secret, Service), objects held in a map,
// apply validated by the real PrepareApply, and switches for readiness and testing mode.
//
// Thread-safety: every method locks one mutex. Test-only.
#ifndef PORTICO_CONTROLLER_ADMIN_FAKE_BACKEND_H_
#define PORTICO_CONTROLLER_ADMIN_FAKE_BACKEND_H_

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "controller/admin/admin_backend.h"
#include "controller/reconcile/object_validator.h"

namespace portico::controller::admin {

class FakeBackend : public AdminBackend {
 public:
  FakeBackend();

  std::atomic<bool> ready{false};
  std::atomic<bool> testing{false};
  // Arguments of the last Apply / Delete calls.
  std::atomic<bool> last_wait{false};
  std::vector<ConfigError> errors;                                   // set before serving
  std::vector<sync::ConnectedGateway> gateways;                      // set before serving
  std::map<std::string, std::map<std::string, std::string>> synced;  // by gateway name

  bool Ready() const override { return ready; }
  ServerInfo Info() const override;
  ControllerStats Stats() const override;
  const core::PluginSet& Plugins() const override { return plugins_; }
  std::vector<ObjectView> List(const core::KindInfo* kind, std::string_view ns) const override;
  std::optional<ObjectView> Get(const sdk::ObjectRef& ref) const override;
  StatusOr<std::vector<AppliedObject>> Apply(std::string_view documents, bool wait) override;
  Status Delete(const sdk::ObjectRef& ref, bool wait) override;
  std::vector<ConfigError> Errors() const override { return errors; }
  Status Reload() override;
  StatusOr<size_t> WipeAll() override;
  std::vector<sync::ConnectedGateway> Gateways() const override { return gateways; }
  std::optional<std::map<std::string, std::string>> GatewaySynced(
      std::string_view name) const override;

 private:
  core::PluginSet plugins_;
  std::unique_ptr<ObjectValidator> validator_;
  mutable std::mutex mu_;
  std::map<sdk::ObjectRef, ObjectView> objects_;
  std::string server_id_ = "00000000000000aa";
  uint64_t reloads_ = 0;
};

}  // namespace portico::controller::admin

#endif  // PORTICO_CONTROLLER_ADMIN_FAKE_BACKEND_H_
