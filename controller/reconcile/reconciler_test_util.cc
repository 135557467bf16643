#include "controller/reconcile/reconciler_test_util.h"

#include <gtest/gtest.h>
#include <rapidjson/pointer.h>

#include <algorithm>
#include <filesystem>
#include <thread>

namespace portico::controller::testing {

const core::PluginSet& TestPlugins() {
  static const core::PluginSet* plugins = [] {
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(PORTICO_PLUGIN_OUTPUT_DIR)) {
      if (entry.path().extension() == ".so") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    files.emplace_back(PORTICO_PROBE_PLUGIN);
    auto* set = new core::PluginSet(core::LoadPluginFiles(files));  // lives for the process
    for (const std::string& line : set->RefusalLines()) ADD_FAILURE() << line;
    return set;
  }();
  return *plugins;
}

std::string ProbeDoc(std::string_view kind, std::string_view ns, std::string_view name,
                     std::string_view spec, std::string_view labels) {
  std::string doc = R"({"apiVersion":"test.portico.io/v1","kind":")" + std::string(kind) +
                    R"(","metadata":{"name":")" + std::string(name) + R"(","namespace":")" +
                    std::string(ns) + "\"";
  if (!labels.empty()) doc += ",\"labels\":" + std::string(labels);
  doc += "}";
  if (!spec.empty()) doc += ",\"spec\":" + std::string(spec);
  return doc + "}";
}

sdk::ObjectRef ProbeRef(std::string_view kind, std::string_view ns, std::string_view name) {
  return sdk::ObjectRef{kProbeGroup, std::string(kind), std::string(ns), std::string(name)};
}

std::string ProbeKind(std::string_view kind) { return std::string(kind) + "." + kProbeGroup; }

std::string GatewayClassDoc(std::string_view name) {
  return R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"GatewayClass","metadata":)"
         R"({"name":")" +
         std::string(name) + R"("},"spec":{"controllerName":"portico.io/gateway-controller"}})";
}

std::string GatewayDoc(std::string_view ns, std::string_view name, std::string_view class_name) {
  return R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway","metadata":{"name":")" +
         std::string(name) + R"(","namespace":")" + std::string(ns) +
         R"("},"spec":{"gatewayClassName":")" + std::string(class_name) +
         R"(","listeners":[{"name":"http","port":80,"protocol":"HTTP",)"
         R"("allowedRoutes":{"namespaces":{"from":"Same"}}}]}})";
}

std::string ServiceDoc(std::string_view ns, std::string_view name) {
  return R"({"apiVersion":"v1","kind":"Service","metadata":{"name":")" + std::string(name) +
         R"(","namespace":")" + std::string(ns) +
         R"("},"spec":{"selector":{"app":"web"},"ports":[{"protocol":"TCP","port":8080,)"
         R"("targetPort":3000}]}})";
}

std::string RouteDoc(std::string_view ns, std::string_view name, std::string_view gateway,
                     std::string_view service, std::string_view path) {
  return R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":")" +
         std::string(name) + R"(","namespace":")" + std::string(ns) +
         R"("},"spec":{"parentRefs":[{"name":")" + std::string(gateway) +
         R"("}],"rules":[{"matches":[{"path":{"type":"PathPrefix","value":")" + std::string(path) +
         R"("}}],"backendRefs":[{"name":")" + std::string(service) + R"(","port":8080}]}]}})";
}

Harness::Harness(int workers, bool start, ProcessIsolation isolation) {
  auto validator = ObjectValidator::Create(TestPlugins().registry);
  EXPECT_TRUE(validator.ok()) << validator.status();
  validator_ = std::make_unique<ObjectValidator>(std::move(validator).value());
  ReconcilerOptions options;
  options.workers = workers;
  options.isolation = std::move(isolation);
  options.wall_clock_ms = [this] { return wall_ms_.load(); };
  reconciler_ = std::make_unique<Reconciler>(TestPlugins(), *validator_, store_, options);
  if (start) {
    EXPECT_TRUE(reconciler_->Start().ok());
  }
}

Harness::~Harness() {
  reconciler_->Stop();
  reconciler_.reset();
  validator_.reset();  // before exit: LeakSanitizer and RapidJSON's tagged pointers
}

ConfigChange Harness::Change(std::string_view json) const {
  auto doc = std::make_shared<rapidjson::Document>();
  doc->Parse(json.data(), json.size());
  EXPECT_FALSE(doc->HasParseError()) << json;
  ConfigChange change;
  auto ref = reconciler_->Identifier()(*doc);
  EXPECT_TRUE(ref.ok()) << ref.status() << " in " << json;
  if (ref.ok()) change.ref = *ref;
  change.doc = std::move(doc);
  change.source = SourceLocation{"test.yaml", 1};
  return change;
}

void Harness::Apply(const std::vector<std::string>& docs) {
  std::vector<ConfigChange> changes;
  for (const std::string& d : docs) changes.push_back(Change(d));
  reconciler_->OnChanges(std::move(changes), /*initial=*/false);
}

void Harness::Initial(const std::vector<std::string>& docs) {
  std::vector<ConfigChange> changes;
  for (const std::string& d : docs) changes.push_back(Change(d));
  reconciler_->OnChanges(std::move(changes), /*initial=*/true);
}

void Harness::Remove(const std::vector<sdk::ObjectRef>& refs) {
  std::vector<ConfigChange> changes;
  for (const sdk::ObjectRef& ref : refs) {
    ConfigChange change;
    change.op = ConfigChange::Op::kDelete;
    change.ref = ref;
    changes.push_back(std::move(change));
  }
  reconciler_->OnChanges(std::move(changes), /*initial=*/false);
}

bool Harness::Idle() { return reconciler_->WaitIdle(std::chrono::seconds(20)); }

bool Harness::WaitFor(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    reconciler_->WaitIdle(std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now()));
    if (done()) return true;
    std::this_thread::yield();  // a retry is delayed by its backoff: poll until it ran
  }
  return done();
}

std::optional<ObjectView> Harness::Get(const sdk::ObjectRef& ref) const {
  return reconciler_->Get(ref);
}

rapidjson::Document Harness::View(const sdk::ObjectRef& ref) const {
  rapidjson::Document doc;
  std::optional<ObjectView> view = Get(ref);
  if (!view.has_value()) {
    doc.SetObject();
    return doc;
  }
  doc.Parse(view->json.c_str());
  EXPECT_FALSE(doc.HasParseError()) << view->json;
  return doc;
}

std::optional<int64_t> Harness::Int(const sdk::ObjectRef& ref, std::string_view path) const {
  rapidjson::Document doc = View(ref);
  return json::GetInt(doc, path);
}

uint64_t Harness::Processed(std::string_view kind_id) const {
  ReconcilerMetrics m = reconciler_->Metrics();
  auto it = m.processed_by_kind.find(std::string(kind_id));
  return it == m.processed_by_kind.end() ? 0 : it->second;
}

std::string TargetRef(std::string_view kind, std::string_view ns, std::string_view name) {
  return R"({"group":"test.portico.io","kind":")" + std::string(kind) + R"(","namespace":")" +
         std::string(ns) + R"(","name":")" + std::string(name) + R"("})";
}

std::string At(const Harness& h, const sdk::ObjectRef& ref, const char* pointer) {
  rapidjson::Document doc = h.View(ref);
  const rapidjson::Value* v = rapidjson::Pointer(pointer).Get(doc);
  return v == nullptr ? "<none>" : json::Serialize(*v);
}

}  // namespace portico::controller::testing
