#include "controller/sync/sync_test_util.h"

#include <thread>

namespace portico::controller::sync::testing {

core::StoreKey GatewayKey(const std::string& name, const std::string& ns) {
  return {kGatewayApi, "Gateway", ns, name};
}
core::StoreKey RouteKey(const std::string& name, const std::string& ns) {
  return {kGatewayApi, "HTTPRoute", ns, name};
}
core::StoreKey ServiceKey(const std::string& name, const std::string& ns) {
  return {"", "Service", ns, name};
}
core::StoreKey SecretKey(const std::string& name, const std::string& ns) {
  return {"", "Secret", ns, name};
}
core::StoreKey PolicyKey(const std::string& name, const std::string& ns) {
  return {kPorticoApi, "TLSPolicy", ns, name};
}
core::StoreKey WebhookKey(const std::string& name, const std::string& ns) {
  return {kPorticoApi, "Webhook", ns, name};
}
core::StoreKey GrantKey(const std::string& name, const std::string& ns) {
  return {kGatewayApi, "ReferenceGrant", ns, name};
}
core::StoreKey ClassKey(const std::string& name) { return {kGatewayApi, "GatewayClass", "", name}; }

SyncPolicies TestPolicies() {
  SyncPolicies p;
  p.Set(kGatewayApi, "Gateway", PORTICO_SYNC_ATTACHED);
  p.Set(kGatewayApi, "HTTPRoute", PORTICO_SYNC_ATTACHED);
  p.Set(kPorticoApi, "TLSPolicy", PORTICO_SYNC_ATTACHED);
  p.Set("", "Service", PORTICO_SYNC_ALWAYS);
  p.Set("", "Secret", PORTICO_SYNC_TO_REFERRERS);
  p.Set(kPorticoApi, "Webhook", PORTICO_SYNC_ATTACHED);
  p.Set(kGatewayApi, "GatewayClass", PORTICO_SYNC_NEVER);
  p.Set(kGatewayApi, "ReferenceGrant", PORTICO_SYNC_NEVER);
  return p;
}

portico::sync::v1::Hello MakeHello(const HelloOptions& options) {
  portico::sync::v1::Hello hello;
  hello.set_client_id(options.client_id);
  hello.set_name(options.name);
  for (const core::StoreKey& g : options.gateways) {
    auto* k = hello.add_gateways();
    k->set_group(g.group);
    k->set_kind(g.kind);
    k->set_namespace_(g.ns);
    k->set_name(g.name);
  }
  hello.set_gateway_class(options.gateway_class);
  hello.set_from_version(options.from_version);
  hello.set_expected_server_id(options.expected_server_id);
  for (const std::string& a : options.addresses) hello.add_addresses(a);
  auto* plugin = hello.add_plugins();
  plugin->set_name("test-plugins");
  plugin->set_version("1.0.0");
  std::vector<std::pair<std::string, std::string>> kinds = {{kGatewayApi, "Gateway"},
                                                            {kGatewayApi, "HTTPRoute"},
                                                            {kPorticoApi, "TLSPolicy"},
                                                            {"", "Service"},
                                                            {"", "Secret"},
                                                            {kPorticoApi, "Webhook"}};
  for (const auto& [group, kind] : kinds) {
    bool skip = false;
    for (const core::StoreKey& w : options.without)
      skip = skip || (w.group == group && w.kind == kind);
    if (skip) continue;
    auto* h = plugin->add_kinds();
    h->set_group(group);
    h->set_kind(kind);
    h->add_versions("v1");
    h->set_capabilities(PORTICO_CAP_HANDLER | PORTICO_CAP_PROCESSOR);
  }
  // A kind announced without the handler bit does not count.
  auto* processor_only = plugin->add_kinds();
  processor_only->set_group(kGatewayApi);
  processor_only->set_kind("GatewayClass");
  processor_only->set_capabilities(PORTICO_CAP_PROCESSOR);
  auto* filter = plugin->add_filter_types();
  filter->set_name("webhook");
  filter->set_phase("authz");
  return hello;
}

uint64_t Put(core::ObjectStore& store, SyncLinks& links, const core::StoreKey& key,
             const std::string& body, std::vector<core::StoreKey> parents,
             std::vector<core::StoreKey> references) {
  links.Set(key, std::move(parents), std::move(references));
  auto written = store.Put(key, body);
  return written.ok() ? written->version : 0;
}

uint64_t Remove(core::ObjectStore& store, SyncLinks& links, const core::StoreKey& key) {
  links.Remove(key);
  auto written = store.Delete(key);
  return written.ok() ? written->version : 0;
}

std::string Body(const std::string& text) { return "{\"v\":\"" + text + "\"}"; }

std::string KeyString(const portico::sync::v1::ObjectKey& key) {
  return core::StoreKey{key.group(), key.kind(), key.namespace_(), key.name()}.ToString();
}

void FakeSink::SetSyncFeedback(const core::StoreKey& key, std::optional<SyncFeedback> feedback) {
  {
    std::lock_guard lock(mu_);
    ++calls_;
    if (feedback) {
      feedback_[key] = std::move(*feedback);
    } else {
      feedback_.erase(key);
    }
  }
  cv_.notify_all();
}

std::optional<SyncFeedback> FakeSink::Get(const core::StoreKey& key) const {
  std::lock_guard lock(mu_);
  auto it = feedback_.find(key);
  if (it == feedback_.end()) return std::nullopt;
  return it->second;
}

size_t FakeSink::calls() const {
  std::lock_guard lock(mu_);
  return calls_;
}

bool FakeSink::WaitFor(const core::StoreKey& key,
                       const std::function<bool(const std::optional<SyncFeedback>&)>& done,
                       std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] {
    auto it = feedback_.find(key);
    return done(it == feedback_.end() ? std::nullopt : std::optional<SyncFeedback>(it->second));
  });
}

std::string FakeHost::ServerId() const {
  std::lock_guard lock(mu_);
  return server_id_;
}

void FakeHost::SetServerId(std::string id) {
  std::lock_guard lock(mu_);
  server_id_ = std::move(id);
}

bool WaitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a poll, not a sync point
  }
  return true;
}

}  // namespace portico::controller::sync::testing
