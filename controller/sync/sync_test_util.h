// sync_test_util.h: helpers for the ConfigSync server's tests: keys of the usual kinds, their
// test sync policies, Hello messages, writing an object with its links, a recording feedback
// sink and a controllable host.
//
// Thread-safety: FakeSink and FakeHost may be used from any thread; the rest are plain helpers.
#ifndef PORTICO_CONTROLLER_SYNC_SYNC_TEST_UTIL_H_
#define PORTICO_CONTROLLER_SYNC_SYNC_TEST_UTIL_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "controller/sync/object_feedback.h"
#include "controller/sync/sync_links.h"
#include "controller/sync/sync_scope.h"
#include "controller/sync/sync_server.h"
#include "core/store/object_store.h"
#include "portico/sync/v1/sync.pb.h"

namespace portico::controller::sync::testing {

inline constexpr char kGatewayApi[] = "gateway.networking.k8s.io";
inline constexpr char kPorticoApi[] = "portico.dev";

core::StoreKey GatewayKey(const std::string& name, const std::string& ns = "default");
core::StoreKey RouteKey(const std::string& name, const std::string& ns = "default");
core::StoreKey ServiceKey(const std::string& name, const std::string& ns = "default");
core::StoreKey SecretKey(const std::string& name, const std::string& ns = "default");
core::StoreKey PolicyKey(const std::string& name, const std::string& ns = "default");  // TLSPolicy
// A Webhook: synced "attached" (to its targetRefs, or where the routes that reference it go); its
// key sorts after the routes that use it.
core::StoreKey WebhookKey(const std::string& name, const std::string& ns = "default");
core::StoreKey GrantKey(const std::string& name, const std::string& ns = "default");
core::StoreKey ClassKey(const std::string& name);

// TestPolicies: Gateway, HTTPRoute, TLSPolicy attached; Service always; Secret toReferrers;
// GatewayClass, ReferenceGrant never.
SyncPolicies TestPolicies();

// HelloOptions build a Hello.
struct HelloOptions {
  std::string client_id = "client-1";
  std::string name = "gw1";
  std::vector<core::StoreKey> gateways;
  std::string gateway_class;
  // Kinds with a handler; empty: every kind of TestPolicies() except those in `without`.
  std::vector<core::StoreKey> without;  // only group and kind matter
  uint64_t from_version = 0;
  std::string expected_server_id;
  std::vector<std::string> addresses;
};
portico::sync::v1::Hello MakeHello(const HelloOptions& options);

// Put sets `key`'s links, then writes its synced view (the reconciler's order); returns the
// version. Remove drops links and the object.
uint64_t Put(core::ObjectStore& store, SyncLinks& links, const core::StoreKey& key,
             const std::string& body, std::vector<core::StoreKey> parents = {},
             std::vector<core::StoreKey> references = {});
uint64_t Remove(core::ObjectStore& store, SyncLinks& links, const core::StoreKey& key);
// Body: a small JSON document {"v": text}.
std::string Body(const std::string& text);

// KeyString: "group/kind/ns/name" of a proto key.
std::string KeyString(const portico::sync::v1::ObjectKey& key);

// FakeSink records the last feedback per key.
class FakeSink : public SyncFeedbackSink {
 public:
  void SetSyncFeedback(const core::StoreKey& key, std::optional<SyncFeedback> feedback) override;
  std::optional<SyncFeedback> Get(const core::StoreKey& key) const;
  size_t calls() const;
  // WaitFor waits until `done(feedback of key)` holds or `timeout` passes.
  bool WaitFor(const core::StoreKey& key,
               const std::function<bool(const std::optional<SyncFeedback>&)>& done,
               std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::map<core::StoreKey, SyncFeedback> feedback_;
  size_t calls_ = 0;
};

class FakeHost : public SyncHost {
 public:
  bool Ready() const override { return ready_.load(); }
  bool Settled() const override { return settled_.load(); }
  std::string ServerId() const override;
  void SetReady(bool ready) { ready_ = ready; }
  // SetSettled(false) holds batches back while a test makes a change in several steps (as the
  // reconciler is unsettled while it processes); SetSettled(true) then SyncServer::Poke().
  void SetSettled(bool settled) { settled_ = settled; }
  void SetServerId(std::string id);

 private:
  std::atomic<bool> ready_{true};
  std::atomic<bool> settled_{true};
  mutable std::mutex mu_;
  std::string server_id_ = "server-a";
};

// WaitUntil polls `done` (with a short yield) until it holds or `timeout` passes.
bool WaitUntil(const std::function<bool()>& done,
               std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace portico::controller::sync::testing

#endif  // PORTICO_CONTROLLER_SYNC_SYNC_TEST_UTIL_H_
