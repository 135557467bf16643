// reconciler_test_util.h: a harness for Reconciler tests: the real in-tree plugins plus the
// reconcile-probe test plugin (testdata/), loaded once per process, and a started Reconciler
// fed with JSON documents through OnChanges, with a settable wall clock.
//
// Threading: a Harness is used from the test thread; the reconciler's workers run inside it.
#ifndef PORTICO_CONTROLLER_RECONCILE_RECONCILER_TEST_UTIL_H_
#define PORTICO_CONTROLLER_RECONCILE_RECONCILER_TEST_UTIL_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/reconcile/reconciler.h"
#include "core/plugin/plugin_loader.h"
#include "core/store/object_store.h"

namespace portico::controller::testing {

inline constexpr char kProbeGroup[] = "test.portico.io";
inline constexpr char kGatewayGroup[] = "gateway.networking.k8s.io";
// 2026-11-30T12:00:00Z
inline constexpr int64_t kT0Ms = 1796040000000;

// TestPlugins loads every plugin of PORTICO_PLUGIN_OUTPUT_DIR and the probe plugin, once per
// process (a plugin library registers only once per process).
const core::PluginSet& TestPlugins();

// ProbeDoc builds a probe-kind object: `spec` and `labels` are JSON texts ("" leaves them out).
std::string ProbeDoc(std::string_view kind, std::string_view ns, std::string_view name,
                     std::string_view spec, std::string_view labels = "");
sdk::ObjectRef ProbeRef(std::string_view kind, std::string_view ns, std::string_view name);
// ProbeKind is the processed_by_kind key of a probe kind ("Target.test.portico.io").
std::string ProbeKind(std::string_view kind);

// TargetRef is the JSON of a probe object reference, as probe specs take it.
std::string TargetRef(std::string_view kind, std::string_view ns, std::string_view name);

// Gateway API documents for the real plugins.
std::string GatewayClassDoc(std::string_view name);
std::string GatewayDoc(std::string_view ns, std::string_view name, std::string_view class_name);
std::string ServiceDoc(std::string_view ns, std::string_view name);
std::string RouteDoc(std::string_view ns, std::string_view name, std::string_view gateway,
                     std::string_view service, std::string_view path);

class Harness {
 public:
  explicit Harness(int workers = 2, bool start = true, ProcessIsolation isolation = {});
  ~Harness();

  Reconciler& reconciler() { return *reconciler_; }
  core::ObjectStore& store() { return store_; }
  void SetWallClock(int64_t unix_ms) { wall_ms_.store(unix_ms); }

  // Change builds an upsert from a JSON document (identity from the reconciler's identifier).
  ConfigChange Change(std::string_view json) const;
  // Apply delivers upserts as one non-initial batch; Initial as the initial batch.
  void Apply(const std::vector<std::string>& docs);
  void Initial(const std::vector<std::string>& docs);
  void Remove(const std::vector<sdk::ObjectRef>& refs);

  // Idle waits until nothing is queued or in flight (20 s deadline).
  bool Idle();
  // WaitFor waits until `done` holds (delayed retries included), up to `timeout`.
  bool WaitFor(const std::function<bool()>& done,
               std::chrono::milliseconds timeout = std::chrono::seconds(20));

  std::optional<ObjectView> Get(const sdk::ObjectRef& ref) const;
  // View parses Get(ref)->json (an empty object when absent).
  rapidjson::Document View(const sdk::ObjectRef& ref) const;
  // ProbeStatus is View(ref)["status"] serialized ("" when absent); ProbeInt reads an integer
  // at a dotted path of the view.
  std::optional<int64_t> Int(const sdk::ObjectRef& ref, std::string_view path) const;
  uint64_t Processed(std::string_view kind_id) const;

 private:
  std::atomic<int64_t> wall_ms_{kT0Ms};
  core::ObjectStore store_;
  std::unique_ptr<ObjectValidator> validator_;
  std::unique_ptr<Reconciler> reconciler_;
};

// At returns the JSON at a JSON Pointer ("/status/got/0") of the object's view, "<none>" when
// absent.
std::string At(const Harness& h, const sdk::ObjectRef& ref, const char* pointer);

}  // namespace portico::controller::testing

#endif  // PORTICO_CONTROLLER_RECONCILE_RECONCILER_TEST_UTIL_H_
