#include "controller/admin/fake_backend.h"

#include "controller/admin/apply_documents.h"
#include "core/plugin/manifest.h"

namespace portico::controller::admin {
namespace {

constexpr char kGatewayApi[] = "gateway.networking.k8s.io";

core::KindInfo Kind(std::string group, std::string kind, std::string plural,
                    std::vector<std::string> short_names, portico_kind_scope scope,
                    std::vector<std::string> reads, std::string plugin) {
  core::KindInfo info;
  info.id = core::KindId{std::move(group), std::move(kind)};
  info.versions = {"v1"};
  info.plural = std::move(plural);
  info.short_names = std::move(short_names);
  info.scope = scope;
  for (const auto& r : reads) info.reads.push_back(core::KindId::Parse(r));
  info.capabilities = core::CapabilityBit("processor");
  info.sync_policy = PORTICO_SYNC_ALWAYS;
  info.plugin_name = plugin;
  info.plugin_path = "/plugins/libportico-" + plugin + ".so";
  return info;
}

// Redacted mirrors what the reconciler shows of a Secret: data values replaced.
void Redact(rapidjson::Document& doc) {
  for (const char* field : {"data", "stringData"}) {
    auto it = doc.FindMember(field);
    if (it == doc.MemberEnd() || !it->value.IsObject()) continue;
    for (auto& member : it->value.GetObject()) member.value.SetString("<redacted>");
  }
}

}  // namespace

FakeBackend::FakeBackend() {
  core::KindRegistry& r = plugins_.registry;
  (void)r.AddKind(Kind(kGatewayApi, "GatewayClass", "gatewayclasses", {"gc"}, PORTICO_SCOPE_CLUSTER,
                       {}, "gateway"));
  (void)r.AddKind(Kind(kGatewayApi, "Gateway", "gateways", {"gtw"}, PORTICO_SCOPE_NAMESPACED,
                       {"GatewayClass.gateway.networking.k8s.io", "Secret"}, "gateway"));
  (void)r.AddKind(Kind(kGatewayApi, "HTTPRoute", "httproutes", {}, PORTICO_SCOPE_NAMESPACED,
                       {"Gateway.gateway.networking.k8s.io", "Service"}, "httproute"));
  (void)r.AddKind(Kind("", "Secret", "secrets", {}, PORTICO_SCOPE_NAMESPACED, {}, "secret"));
  (void)r.AddKind(
      Kind("", "Service", "services", {"svc"}, PORTICO_SCOPE_NAMESPACED, {}, "service"));
  r.ResolveReads();

  core::PluginRecord good;
  good.path = "/plugins/libportico-gateway.so";
  good.sha256 = std::string(64, 'b');
  core::PluginManifest m;
  m.name = "gateway";
  m.version = "0.1.0";
  m.sdk_version = "0.1.0";
  m.manifest_version = 1;
  m.abi_major = 1;
  core::ManifestKind k;
  k.id = core::KindId{kGatewayApi, "Gateway"};
  k.versions = {"v1"};
  k.plural = "gateways";
  k.capabilities = {"processor"};
  k.capability_bits = core::CapabilityBit("processor");
  m.kinds.push_back(k);
  good.manifest = m;
  good.loaded = true;
  core::PluginRecord refused;
  refused.path = "/plugins/libbroken.so";
  refused.Reject("no manifest; rebuild with portico_add_plugin()");
  plugins_.plugins = {good, refused};
  validator_ = std::make_unique<ObjectValidator>(std::move(ObjectValidator::Create(r)).value());
}

ServerInfo FakeBackend::Info() const {
  std::lock_guard lock(mu_);
  ServerInfo info;
  info.server_id = server_id_;
  info.version = "9.9.9";
  info.started_unix_ms = 1'700'000'000'000;
  info.config_source = "file:/fake";
  info.testing = testing;
  return info;
}

ControllerStats FakeBackend::Stats() const {
  std::lock_guard lock(mu_);
  ControllerStats stats;
  stats.ready = ready;
  stats.head = 42;
  stats.reconciler.processed = 7;
  stats.reconciler.processed_by_kind["HTTPRoute.gateway.networking.k8s.io"] = 5;
  stats.reconciler.failed = 1;
  for (const auto& [ref, view] : objects_) {
    ++stats.objects_by_kind[core::KindId{ref.group, ref.kind}.ToString()];
  }
  stats.plugins_loaded = 1;
  stats.plugins_refused = 1;
  stats.sync.connected = gateways.size();
  stats.sync.acks = 9;
  stats.config_errors = errors.size();
  stats.reloads = reloads_;
  return stats;
}

std::vector<ObjectView> FakeBackend::List(const core::KindInfo* kind, std::string_view ns) const {
  std::lock_guard lock(mu_);
  std::vector<ObjectView> out;
  for (const auto& [ref, view] : objects_) {
    if (kind != nullptr && (ref.group != kind->id.group || ref.kind != kind->id.kind)) continue;
    if (!ns.empty() && ref.ns != ns) continue;
    out.push_back(view);
  }
  return out;
}

std::optional<ObjectView> FakeBackend::Get(const sdk::ObjectRef& ref) const {
  std::lock_guard lock(mu_);
  auto it = objects_.find(ref);
  if (it == objects_.end()) return std::nullopt;
  return it->second;
}

StatusOr<std::vector<AppliedObject>> FakeBackend::Apply(std::string_view documents, bool wait) {
  last_wait = wait;
  PORTICO_ASSIGN_OR_RETURN(std::vector<PreparedObject> prepared,
                           PrepareApply(documents, *validator_));
  PORTICO_ASSIGN_OR_RETURN(std::vector<YamlDocument> docs,
                           ParseYamlDocuments(documents, "request body"));
  std::lock_guard lock(mu_);
  std::vector<AppliedObject> out;
  for (size_t i = 0; i < prepared.size(); ++i) {
    const PreparedObject& p = prepared[i];
    rapidjson::Document& doc = docs[i].json;
    (void)validator_->Validate(doc);  // defaults, like the reconciler
    Redact(doc);
    rapidjson::Document status;
    status.Parse(R"({"conditions":[{"type":"Accepted","status":"True","reason":"Accepted"}]})");
    doc.AddMember("status", rapidjson::Value(status, doc.GetAllocator()), doc.GetAllocator());
    AppliedObject a;
    a.ref = p.validated.ref;
    a.api_version = p.api_version;
    a.plural = p.validated.kind->plural;
    a.result = objects_.contains(a.ref) ? "configured" : "created";
    ObjectView view;
    view.ref = a.ref;
    view.json = json::Serialize(doc);
    view.source = SourceLocation{"applied.yaml", docs[i].line};
    view.generation = 1;
    objects_[a.ref] = std::move(view);
    out.push_back(std::move(a));
  }
  return out;
}

Status FakeBackend::Delete(const sdk::ObjectRef& ref, bool wait) {
  last_wait = wait;
  std::lock_guard lock(mu_);
  if (objects_.erase(ref) == 0) return NotFoundError(ref.Display() + " not found");
  return OkStatus();
}

Status FakeBackend::Reload() {
  std::lock_guard lock(mu_);
  ++reloads_;
  server_id_ = "00000000000000b" + std::to_string(reloads_ % 10);
  return OkStatus();
}

StatusOr<size_t> FakeBackend::WipeAll() {
  std::lock_guard lock(mu_);
  size_t n = objects_.size();
  objects_.clear();
  return n;
}

std::optional<std::map<std::string, std::string>> FakeBackend::GatewaySynced(
    std::string_view name) const {
  auto it = synced.find(std::string(name));
  if (it == synced.end()) return std::nullopt;
  return it->second;
}

}  // namespace portico::controller::admin
