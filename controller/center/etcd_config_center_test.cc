// etcd_config_center_test: EtcdConfigCenter against a real etcd server started on loopback
// (controller/center/testing/etcd_process.h). Skipped, and counted as skipped, when no etcd is
// installed. Tests never sleep to synchronise: they wait for a condition with a deadline.
#include "controller/center/etcd_config_center.h"

#include <gtest/gtest.h>

#include <stdlib.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "controller/center/etcd_keys.h"
#include "controller/center/testing/etcd_process.h"
#include "controller/center/testing/test_identifier.h"
#include "controller/ctl/gen_certs.h"
#include "portico/sdk/json.h"

namespace portico::controller {
namespace {

using std::chrono_literals::operator""s;
using testing::EtcdProcess;

constexpr auto kDeadline = 20s;

constexpr auto Identify = testing::TestIdentifier;

std::string Route(const std::string& name, const std::string& host) {
  return "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: " + name +
         "\nspec:\n  hostnames: [\"" + host + "\"]\n";
}

std::string RouteKey(const std::string& name) {
  return "/portico/gateway.networking.k8s.io/HTTPRoute/default/" + name;
}

// Recorder keeps the objects the center delivered and every batch.
class Recorder : public ConfigListener {
 public:
  void OnChanges(std::vector<ConfigChange> changes, bool initial) override {
    std::lock_guard lock(mu_);
    ++batches_;
    if (initial) ++initial_batches_;
    for (const ConfigChange& c : changes) {
      std::string name = c.ref.Display();
      if (c.op == ConfigChange::Op::kUpsert) {
        objects_[name] = json::Serialize(*c.doc);
        ++upserts_[name];
      } else {
        objects_.erase(name);
        ++deletes_[name];
      }
    }
    cv_.notify_all();
  }
  template <typename Pred>
  bool WaitFor(Pred pred) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, kDeadline, [&] { return pred(*this); });
  }
  std::string Field(const std::string& object, std::string_view path) const {
    auto it = objects_.find(object);
    if (it == objects_.end()) return "<absent>";
    StatusOr<rapidjson::Document> doc = json::Parse(it->second);
    return doc.ok() ? json::GetString(*doc, path, "<none>") : "<bad json>";
  }
  bool Has(const std::string& object) const { return objects_.contains(object); }
  bool Contains(const std::string& object, const std::string& fragment) const {
    auto it = objects_.find(object);
    return it != objects_.end() && it->second.find(fragment) != std::string::npos;
  }
  int Upserts(const std::string& o) const { return upserts_.contains(o) ? upserts_.at(o) : 0; }
  int Deletes(const std::string& o) const { return deletes_.contains(o) ? deletes_.at(o) : 0; }
  int initial_batches() const { return initial_batches_; }
  std::map<std::string, std::string> Objects() {
    std::lock_guard lock(mu_);
    return objects_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::string> objects_;
  std::map<std::string, int> upserts_, deletes_;
  int batches_ = 0, initial_batches_ = 0;
};

// WaitUntil polls `pred` (state owned by the center, not the recorder) with a deadline.
template <typename Pred>
bool WaitUntil(Pred pred) {
  auto until = std::chrono::steady_clock::now() + kDeadline;
  while (std::chrono::steady_clock::now() < until) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // polling interval
  }
  return pred();
}

class EtcdCenterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (testing::EtcdBinary().empty()) GTEST_SKIP() << "etcd is not installed (etcd-server)";
    Status started = etcd_.Start();
    ASSERT_TRUE(started.ok()) << started.message();
  }
  EtcdConfigCenterOptions Options() {
    EtcdConfigCenterOptions o;
    o.client.endpoints = {etcd_.Endpoint()};
    o.identifier = Identify;
    o.start_timeout = 10s;
    return o;
  }
  std::unique_ptr<EtcdConfigCenter> Make(EtcdConfigCenterOptions o) {
    StatusOr<std::unique_ptr<EtcdConfigCenter>> c = EtcdConfigCenter::Create(std::move(o));
    EXPECT_TRUE(c.ok()) << c.status().message();
    return c.ok() ? std::move(c).value() : nullptr;
  }
  int64_t Put(EtcdClient& client, const std::string& key, const std::string& value) {
    etcdserverpb::PutRequest put;
    put.set_key(key);
    put.set_value(value);
    StatusOr<etcdserverpb::PutResponse> r = client.Put(put);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r->header().revision() : 0;
  }
  int64_t Del(EtcdClient& client, const std::string& key) {
    etcdserverpb::TxnRequest txn;
    txn.add_success()->mutable_request_delete_range()->set_key(key);
    StatusOr<etcdserverpb::TxnResponse> r = client.Txn(txn);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r->header().revision() : 0;
  }

  EtcdProcess etcd_;
  Recorder recorder_;
};

TEST_F(EtcdCenterTest, InitialReadThenWatchUpsertsAndDeletes) {
  auto center = Make(Options());
  ASSERT_NE(center, nullptr);
  EtcdClient& client = center->Client();
  int64_t r1 = Put(client, RouteKey("web"), Route("web", "a.example"));
  Put(client, "/portico/gateway.networking.k8s.io/GatewayClass/_/portico",
      R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"GatewayClass",)"
      R"("metadata":{"name":"portico"},"spec":{"controllerName":"portico.io/x"}})");
  Put(client, "/elsewhere/key", "not ours");
  ASSERT_TRUE(center->Start(&recorder_).ok());
  ASSERT_EQ(recorder_.initial_batches(), 1);
  ASSERT_TRUE(recorder_.Has("HTTPRoute default/web"));
  ASSERT_TRUE(recorder_.Has("GatewayClass portico"));
  EXPECT_EQ(recorder_.Objects().size(), 2u);
  EXPECT_EQ(recorder_.Field("HTTPRoute default/web", "metadata.resourceVersion"),
            std::to_string(r1));
  std::string created = recorder_.Field("HTTPRoute default/web", "metadata.creationTimestamp");
  EXPECT_NE(created, "<none>");

  int64_t r2 = Put(client, RouteKey("web"), Route("web", "b.example"));
  ASSERT_TRUE(recorder_.WaitFor([&](const Recorder& r) {
    return r.Field("HTTPRoute default/web", "metadata.resourceVersion") == std::to_string(r2);
  }));
  EXPECT_NE(recorder_.Objects()["HTTPRoute default/web"].find("b.example"), std::string::npos);
  // The create revision did not change: creationTimestamp is kept.
  EXPECT_EQ(recorder_.Field("HTTPRoute default/web", "metadata.creationTimestamp"), created);

  Put(client, RouteKey("api"), Route("api", "api.example"));
  Del(client, RouteKey("web"));
  ASSERT_TRUE(recorder_.WaitFor([](const Recorder& r) {
    return !r.Has("HTTPRoute default/web") && r.Has("HTTPRoute default/api");
  }));
  EXPECT_EQ(recorder_.Deletes("HTTPRoute default/web"), 1);
  EXPECT_EQ(center->Revision(), r2 + 2);
  center->Stop();
}

TEST_F(EtcdCenterTest, BadValueKeepsTheLastGoodObjectAndIsReported) {
  auto center = Make(Options());
  ASSERT_NE(center, nullptr);
  ASSERT_TRUE(center->Start(&recorder_).ok());
  EtcdClient& client = center->Client();
  Put(client, RouteKey("web"), Route("web", "a.example"));
  ASSERT_TRUE(recorder_.WaitFor([](const Recorder& r) { return r.Has("HTTPRoute default/web"); }));
  Put(client, RouteKey("web"), "spec: [unclosed");
  // A value naming another object than its key is refused too.
  Put(client, RouteKey("other"), Route("not-other", "x.example"));
  ASSERT_TRUE(WaitUntil([&] { return center->Errors().size() == 2; }));
  std::vector<ConfigError> errors = center->Errors();
  std::string all;
  for (const ConfigError& e : errors) all += e.source.file + ": " + e.message + "\n";
  EXPECT_NE(all.find("etcd key " + RouteKey("web")), std::string::npos) << all;
  EXPECT_NE(all.find("keeps its last good version"), std::string::npos) << all;
  EXPECT_NE(all.find("holds HTTPRoute default/not-other, whose key is " + RouteKey("not-other")),
            std::string::npos)
      << all;
  EXPECT_TRUE(recorder_.Has("HTTPRoute default/web"));
  EXPECT_EQ(recorder_.Deletes("HTTPRoute default/web"), 0);
  EXPECT_FALSE(recorder_.Has("HTTPRoute default/not-other"));
  // Fixing the value clears the error.
  Put(client, RouteKey("web"), Route("web", "fixed.example"));
  ASSERT_TRUE(WaitUntil([&] { return center->Errors().size() == 1; }));
  center->Stop();
}

TEST_F(EtcdCenterTest, CompactionWhileDisconnectedIsRecoveredByAFullRead) {
  std::mutex mu;
  std::condition_variable cv;
  int attempts = 0;
  bool release = false;
  EtcdConfigCenterOptions o = Options();
  o.before_watch = [&] {
    std::unique_lock lock(mu);
    ++attempts;
    cv.notify_all();
    if (attempts >= 2) cv.wait(lock, [&] { return release; });  // hold the reconnect
  };
  auto center = Make(std::move(o));
  ASSERT_NE(center, nullptr);
  EtcdClient& client = center->Client();
  Put(client, RouteKey("kept"), Route("kept", "kept.example"));
  Put(client, RouteKey("changed"), Route("changed", "old.example"));
  Put(client, RouteKey("removed"), Route("removed", "removed.example"));
  ASSERT_TRUE(center->Start(&recorder_).ok());
  ASSERT_TRUE(WaitUntil([&] { return center->Connected(); }));
  EXPECT_EQ(recorder_.Objects().size(), 3u);

  etcd_.Kill();  // the watch breaks; the reconnect is held
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, kDeadline, [&] { return attempts >= 2; }));
  }
  ASSERT_TRUE(etcd_.Restart().ok());
  Put(client, RouteKey("changed"), Route("changed", "new.example"));
  Del(client, RouteKey("removed"));
  int64_t head = Put(client, RouteKey("added"), Route("added", "added.example"));
  etcdserverpb::CompactionRequest compact;
  compact.set_revision(head);
  compact.set_physical(true);
  StatusOr<etcdserverpb::CompactionResponse> compacted = client.Compact(compact);
  ASSERT_TRUE(compacted.ok()) << compacted.status().message();
  {
    std::lock_guard lock(mu);
    release = true;
  }
  cv.notify_all();

  ASSERT_TRUE(recorder_.WaitFor([](const Recorder& r) {
    return r.Has("HTTPRoute default/added") && !r.Has("HTTPRoute default/removed");
  }));
  EXPECT_EQ(center->FullReads(), 2u);  // the initial read and the compaction recovery
  EXPECT_NE(recorder_.Objects()["HTTPRoute default/changed"].find("new.example"),
            std::string::npos);
  EXPECT_EQ(recorder_.Deletes("HTTPRoute default/removed"), 1);
  EXPECT_EQ(recorder_.Upserts("HTTPRoute default/kept"), 1);  // not delivered again
  EXPECT_EQ(recorder_.Upserts("HTTPRoute default/added"), 1);
  EXPECT_EQ(recorder_.Objects().size(), 3u);
  ASSERT_TRUE(WaitUntil([&] { return center->Connected(); }));
  EXPECT_EQ(center->Revision(), head);
  center->Stop();
}

TEST_F(EtcdCenterTest, ReconnectsWhenEtcdIsKilledAndRestarted) {
  auto center = Make(Options());
  ASSERT_NE(center, nullptr);
  ASSERT_TRUE(center->Start(&recorder_).ok());
  ASSERT_TRUE(WaitUntil([&] { return center->Connected(); }));
  etcd_.Kill();
  ASSERT_TRUE(WaitUntil([&] { return !center->Errors().empty(); }));
  EXPECT_NE(center->Errors()[0].message.find("broke"), std::string::npos)
      << center->Errors()[0].message;
  EXPECT_FALSE(center->Connected());
  ASSERT_TRUE(etcd_.Restart().ok());
  Put(center->Client(), RouteKey("after"), Route("after", "after.example"));
  ASSERT_TRUE(
      recorder_.WaitFor([](const Recorder& r) { return r.Has("HTTPRoute default/after"); }));
  ASSERT_TRUE(WaitUntil([&] { return center->Errors().empty(); }));
  EXPECT_EQ(center->FullReads(), 1u);  // resumed from its revision, no re-read
  center->Stop();
}

TEST_F(EtcdCenterTest, FailsOverToTheNextEndpoint) {
  EtcdConfigCenterOptions o = Options();
  o.client.endpoints = {"127.0.0.1:" + std::to_string(testing::FreeLoopbackPort()),
                        etcd_.Endpoint()};
  o.client.call_timeout = std::chrono::milliseconds(2000);
  auto center = Make(std::move(o));
  ASSERT_NE(center, nullptr);
  Put(center->Client(), RouteKey("web"), Route("web", "a.example"));
  ASSERT_TRUE(center->Start(&recorder_).ok());
  EXPECT_TRUE(recorder_.Has("HTTPRoute default/web"));
  EXPECT_EQ(center->Client().Endpoint(), etcd_.Endpoint());
  center->Stop();
}

TEST_F(EtcdCenterTest, ApplyAndDeleteCompareAndSwapOnTheModRevision) {
  auto center = Make(Options());
  ASSERT_NE(center, nullptr);
  ASSERT_TRUE(center->Start(&recorder_).ok());
  ASSERT_TRUE(center->Apply(Route("web", "a.example")).ok());
  ASSERT_TRUE(recorder_.WaitFor([](const Recorder& r) { return r.Has("HTTPRoute default/web"); }));
  std::string rv = recorder_.Field("HTTPRoute default/web", "metadata.resourceVersion");
  // The stored value is the object without resourceVersion.
  etcdserverpb::RangeRequest get;
  get.set_key(RouteKey("web"));
  StatusOr<etcdserverpb::RangeResponse> stored = center->Client().Range(get);
  ASSERT_TRUE(stored.ok() && stored->kvs_size() == 1);
  EXPECT_EQ(stored->kvs(0).value().find("resourceVersion"), std::string::npos);
  EXPECT_EQ(std::to_string(stored->kvs(0).mod_revision()), rv);

  // Applying the same object again writes nothing.
  ASSERT_TRUE(center->Apply(Route("web", "a.example")).ok());
  stored = center->Client().Range(get);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(std::to_string(stored->kvs(0).mod_revision()), rv);

  // Someone else writes; a write against the old revision is refused naming both.
  int64_t theirs = Put(center->Client(), RouteKey("web"), Route("web", "theirs.example"));
  std::string mine = Route("web", "mine.example");
  mine.insert(mine.find("  name:"), "  resourceVersion: \"" + rv + "\"\n");
  Status refused = center->Apply(mine);
  EXPECT_EQ(refused.code(), StatusCode::kAborted) << refused.message();
  EXPECT_NE(refused.message().find("HTTPRoute default/web was written against revision " + rv +
                                   ", but etcd holds revision " + std::to_string(theirs)),
            std::string::npos)
      << refused.message();
  // A new object applied as new while the key exists is refused too.
  Put(center->Client(), RouteKey("race"), Route("race", "x.example"));
  EtcdConfigCenterOptions blind = Options();
  auto other = Make(std::move(blind));  // a center that never read: it thinks "race" is new
  ASSERT_NE(other, nullptr);
  Status as_new = other->Apply(Route("race", "y.example"));
  EXPECT_NE(as_new.message().find("HTTPRoute default/race was written as new, but etcd holds "
                                  "revision"),
            std::string::npos)
      << as_new.message();

  // With the current revision the write goes through; delete then removes it.
  ASSERT_TRUE(recorder_.WaitFor([&](const Recorder& r) {
    return r.Field("HTTPRoute default/web", "metadata.resourceVersion") == std::to_string(theirs);
  }));
  ASSERT_TRUE(center->Apply(Route("web", "mine.example")).ok());
  ASSERT_TRUE(recorder_.WaitFor(
      [](const Recorder& r) { return r.Contains("HTTPRoute default/web", "mine.example"); }));
  ASSERT_TRUE(center
                  ->Delete(Identify(*json::Parse(R"({"apiVersion":"gateway.networking.k8s.io/v1",
      "kind":"HTTPRoute","metadata":{"name":"web"}})"))
                               .value())
                  .ok());
  ASSERT_TRUE(recorder_.WaitFor([](const Recorder& r) { return !r.Has("HTTPRoute default/web"); }));
  center->Stop();
}

TEST_F(EtcdCenterTest, AuthenticatesWithUserAndPassword) {
  if (testing::EtcdctlBinary().empty()) GTEST_SKIP() << "etcdctl is not installed (etcd-client)";
  ASSERT_TRUE(etcd_.Etcdctl({"user", "add", "root:s3cret"}).ok());
  ASSERT_TRUE(etcd_.Etcdctl({"user", "add", "portico:p0rtico"}).ok());
  ASSERT_TRUE(etcd_.Etcdctl({"role", "add", "portico"}).ok());
  ASSERT_TRUE(etcd_
                  .Etcdctl({"role", "grant-permission", "portico", "--prefix=true", "readwrite",
                            "/portico/"})
                  .ok());
  ASSERT_TRUE(etcd_.Etcdctl({"user", "grant-role", "portico", "portico"}).ok());
  StatusOr<std::string> enabled = etcd_.Etcdctl({"auth", "enable"});
  ASSERT_TRUE(enabled.ok()) << enabled.status().message();

  EtcdConfigCenterOptions wrong = Options();
  wrong.client.user = "portico";
  wrong.client.password = "wrong";
  wrong.start_timeout = std::chrono::milliseconds(500);
  auto refused = Make(std::move(wrong));
  ASSERT_NE(refused, nullptr);
  Recorder unused;
  Status failed = refused->Start(&unused);
  EXPECT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("authentication failed"), std::string::npos) << failed.message();

  EtcdConfigCenterOptions anonymous = Options();
  anonymous.start_timeout = std::chrono::milliseconds(500);
  auto nobody = Make(std::move(anonymous));
  ASSERT_NE(nobody, nullptr);
  EXPECT_FALSE(nobody->Start(&unused).ok());

  EtcdConfigCenterOptions o = Options();
  o.client.user = "portico";
  o.client.password = "p0rtico";
  auto center = Make(std::move(o));
  ASSERT_NE(center, nullptr);
  ASSERT_TRUE(center->Start(&recorder_).ok());
  ASSERT_TRUE(center->Apply(Route("web", "a.example")).ok());
  ASSERT_TRUE(recorder_.WaitFor([](const Recorder& r) { return r.Has("HTTPRoute default/web"); }));
  center->Stop();
}

TEST(EtcdTlsTest, TalksTlsWithAClientCertificate) {
  if (testing::EtcdBinary().empty()) GTEST_SKIP() << "etcd is not installed (etcd-server)";
  std::string dir = (std::filesystem::temp_directory_path() / "portico-etcd-tls-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  ctl::GenCertsOptions certs;
  certs.cert_name = "etcd";
  certs.out_dir = dir;
  ASSERT_TRUE(ctl::GenerateSyncCerts(certs).ok());
  std::filesystem::path set = ctl::CertSetDir(certs);
  auto file = [&](std::string_view name) { return (set / name).string(); };
  EtcdProcess etcd;
  etcd.UseTls({file(ctl::kCaCertFile), file(ctl::kServerCertFile), file(ctl::kServerKeyFile),
               file(ctl::kClientCertFile), file(ctl::kClientKeyFile)});
  Status started = etcd.Start();
  ASSERT_TRUE(started.ok()) << started.message();

  auto options = [&](bool client_cert) {
    EtcdConfigCenterOptions o;
    o.client.endpoints = {etcd.Endpoint()};
    o.client.ca_file = file(ctl::kCaCertFile);
    if (client_cert) {
      o.client.cert_file = file(ctl::kClientCertFile);
      o.client.key_file = file(ctl::kClientKeyFile);
    }
    o.identifier = Identify;
    o.start_timeout = std::chrono::milliseconds(client_cert ? 10000 : 500);
    return o;
  };
  Recorder recorder;
  auto center = EtcdConfigCenter::Create(options(true));
  ASSERT_TRUE(center.ok()) << center.status().message();
  ASSERT_TRUE((*center)->Start(&recorder).ok());
  ASSERT_TRUE((*center)->Apply(Route("web", "tls.example")).ok());
  ASSERT_TRUE(recorder.WaitFor([](const Recorder& r) { return r.Has("HTTPRoute default/web"); }));
  (*center)->Stop();

  // etcd requires a client certificate: without one nothing is read.
  auto refused = EtcdConfigCenter::Create(options(false));
  ASSERT_TRUE(refused.ok());
  Recorder unused;
  EXPECT_FALSE((*refused)->Start(&unused).ok());
  std::filesystem::remove_all(dir);
}

TEST(EtcdKeysTest, LayoutOfKeys) {
  sdk::ObjectRef route{"gateway.networking.k8s.io", "HTTPRoute", "default", "web"};
  EXPECT_EQ(EtcdKey("/portico", route), "/portico/gateway.networking.k8s.io/HTTPRoute/default/web");
  EXPECT_EQ(EtcdKey("/portico/", route),
            "/portico/gateway.networking.k8s.io/HTTPRoute/default/web");
  sdk::ObjectRef ns{"", "Namespace", "", "prod"};
  EXPECT_EQ(EtcdKey("/p", ns), "/p/core/Namespace/_/prod");
  EXPECT_EQ(EtcdClient::PrefixRangeEnd("/portico/"), "/portico0");
}

}  // namespace
}  // namespace portico::controller
