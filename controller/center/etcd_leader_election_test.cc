// etcd_leader_election_test: EtcdLeaderElection and EtcdStatusWriter against a real etcd server
// on loopback (testing/etcd_process.h); skipped, and counted as skipped, without etcd. Tests
// wait for conditions with deadlines, never sleep to synchronise.
#include "controller/center/etcd_leader_election.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "controller/center/etcd_config_center.h"
#include "controller/center/etcd_keys.h"
#include "controller/center/etcd_status_writer.h"
#include "controller/center/testing/etcd_process.h"
#include "controller/center/testing/test_identifier.h"

namespace portico::controller {
namespace {

using std::chrono_literals::operator""s;
using std::chrono_literals::operator""ms;
using testing::EtcdProcess;

constexpr auto kDeadline = 20s;

template <typename Pred>
bool WaitUntil(Pred pred, std::chrono::milliseconds deadline = kDeadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < until) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // polling interval
  }
  return pred();
}

class LeaderElectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (testing::EtcdBinary().empty()) GTEST_SKIP() << "etcd is not installed (etcd-server)";
    Status started = etcd_.Start();
    ASSERT_TRUE(started.ok()) << started.message();
    client_ = NewClient();
  }
  std::unique_ptr<EtcdClient> NewClient() {
    EtcdClientOptions o;
    o.endpoints = {etcd_.Endpoint()};
    o.call_timeout = 1s;
    StatusOr<std::unique_ptr<EtcdClient>> c = EtcdClient::Create(o);
    EXPECT_TRUE(c.ok()) << c.status().message();
    return std::move(c).value();
  }
  std::unique_ptr<EtcdLeaderElection> Elect(const std::string& id, EtcdClient* client) {
    LeaderElectionOptions o;
    o.id = id;
    o.ttl = 2s;
    auto e = std::make_unique<EtcdLeaderElection>(client, o, nullptr);
    e->Start();
    return e;
  }
  // LeaderKey reads /portico/_leader: (value, create revision, lease); value "" when absent.
  mvccpb::KeyValue LeaderKey() {
    etcdserverpb::RangeRequest read;
    read.set_key("/portico/_leader");
    StatusOr<etcdserverpb::RangeResponse> r = client_->Range(read);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() && r->kvs_size() > 0 ? r->kvs(0) : mvccpb::KeyValue();
  }
  std::string Get(const std::string& key) {
    etcdserverpb::RangeRequest read;
    read.set_key(key);
    StatusOr<etcdserverpb::RangeResponse> r = client_->Range(read);
    return r.ok() && r->kvs_size() > 0 ? r->kvs(0).value() : "<absent>";
  }

  // LeaderAndFollower starts "a" (which leads) and then "b" (which follows a).
  void LeaderAndFollower() {
    ca_ = NewClient();
    cb_ = NewClient();
    a_ = Elect("a", ca_.get());
    ASSERT_TRUE(WaitUntil([&] { return a_->State().leader; })) << a_->State().error;
    b_ = Elect("b", cb_.get());
    ASSERT_TRUE(WaitUntil([&] { return b_->State().leader_id == "a"; })) << b_->State().error;
  }

  EtcdProcess etcd_;
  std::unique_ptr<EtcdClient> client_, ca_, cb_;
  std::unique_ptr<EtcdLeaderElection> a_, b_;  // destroyed before their clients
};

TEST_F(LeaderElectionTest, OneOfTwoLeadsAndTheOtherKnowsItsEpoch) {
  ASSERT_NO_FATAL_FAILURE(LeaderAndFollower());
  auto& a = a_;
  auto& b = b_;
  LeaderState la = a->State(), lb = b->State();
  EXPECT_FALSE(lb.leader);
  mvccpb::KeyValue key = LeaderKey();
  EXPECT_EQ(key.value(), "a");
  EXPECT_EQ(la.epoch, key.create_revision());
  EXPECT_EQ(lb.epoch, la.epoch);
  EXPECT_EQ(la.lease_id, key.lease());
  EXPECT_EQ(lb.lease_id, key.lease());
  EXPECT_EQ(la.ttl_seconds, 2);
  EXPECT_EQ(lb.ttl_seconds, 2);  // read from the leader's lease (LeaseTimeToLive)
  // The leader keeps its lease alive past several TTLs.
  auto renewed_until = std::chrono::steady_clock::now() + 5s;
  EXPECT_FALSE(WaitUntil([&] { return !a->State().leader || b->State().leader; }, 5s));
  EXPECT_GE(std::chrono::steady_clock::now(), renewed_until);
  EXPECT_EQ(LeaderKey().create_revision(), la.epoch);
}

TEST_F(LeaderElectionTest, StopResignsAndTheFollowerTakesOverWithAHigherEpoch) {
  ASSERT_NO_FATAL_FAILURE(LeaderAndFollower());
  auto& a = a_;
  auto& b = b_;
  int64_t old_epoch = a->State().epoch;
  auto stopped = std::chrono::steady_clock::now();
  a->Stop();
  // Revoking the lease deletes the key at once: no waiting for the TTL.
  ASSERT_TRUE(WaitUntil([&] { return b->State().leader; }, 1500ms)) << b->State().error;
  auto took = std::chrono::steady_clock::now() - stopped;
  EXPECT_LT(took, 1500ms);
  EXPECT_GT(b->State().epoch, old_epoch);
  EXPECT_EQ(LeaderKey().value(), "b");
  EXPECT_EQ(b->State().transitions, 1u);
}

TEST_F(LeaderElectionTest, AnExpiredLeaseDeposesTheLeader) {
  ASSERT_NO_FATAL_FAILURE(LeaderAndFollower());
  auto& a = a_;
  auto& b = b_;
  int64_t old_epoch = a->State().epoch;
  // What etcd does when a crashed leader stops renewing: the lease goes, and the key with it.
  etcdserverpb::LeaseRevokeRequest revoke;
  revoke.set_id(a->State().lease_id);
  ASSERT_TRUE(client_->LeaseRevoke(revoke).ok());
  ASSERT_TRUE(WaitUntil([&] { return b->State().leader; })) << b->State().error;
  // a learns it at its next renewal (TTL 0), steps down and follows b.
  ASSERT_TRUE(WaitUntil([&] { return !a->State().leader && a->State().leader_id == "b"; }))
      << a->State().error;
  EXPECT_GT(b->State().epoch, old_epoch);
  EXPECT_EQ(a->State().epoch, b->State().epoch);
}

TEST_F(LeaderElectionTest, ALeaderWhoseKeyWasReplacedStepsDown) {
  ca_ = NewClient();
  auto a = Elect("a", ca_.get());
  ASSERT_TRUE(WaitUntil([&] { return a->State().leader; }));
  // Someone overwrites the key (an operator, a misconfigured peer).
  etcdserverpb::PutRequest put;
  put.set_key("/portico/_leader");
  put.set_value("intruder");
  ASSERT_TRUE(client_->Put(put).ok());
  // a notices at its next renewal, steps down and follows whoever holds the key now.
  ASSERT_TRUE(WaitUntil([&] { return !a->State().leader && a->State().leader_id == "intruder"; }))
      << "a still leads";
}

// A status writer over `client`, collecting from `statuses` (guarded by `mu`).
struct WriterFixture {
  std::mutex mu;
  std::map<sdk::ObjectRef, std::string> statuses;
  int fenced_calls = 0;
  std::unique_ptr<EtcdStatusWriter> writer;

  WriterFixture(EtcdClient* client, const std::string& id) {
    StatusWriterOptions o;
    o.id = id;
    o.ops_per_txn = 2;  // several Txns per write
    o.debounce = 1ms;
    o.retry = 50ms;
    o.collect = [this] {
      std::lock_guard lock(mu);
      return statuses;
    };
    writer = std::make_unique<EtcdStatusWriter>(client, o, [this] {
      std::lock_guard lock(mu);
      ++fenced_calls;
    });
    writer->Start();
  }
  void Set(const std::string& name, const std::string& status) {
    std::lock_guard lock(mu);
    statuses[sdk::ObjectRef{"gateway.networking.k8s.io", "HTTPRoute", "default", name}] = status;
  }
  void Erase(const std::string& name) {
    std::lock_guard lock(mu);
    statuses.erase(sdk::ObjectRef{"gateway.networking.k8s.io", "HTTPRoute", "default", name});
  }
};

std::string StatusKey(const std::string& name) {
  return "/portico/_status/gateway.networking.k8s.io/HTTPRoute/default/" + name;
}

TEST_F(LeaderElectionTest, OnlyTheLeaderWritesStatusAndANewLeaderRewritesAll) {
  ASSERT_NO_FATAL_FAILURE(LeaderAndFollower());
  auto& a = a_;
  auto& b = b_;
  WriterFixture wa(ca_.get(), "a"), wb(cb_.get(), "b");
  for (const char* name : {"r1", "r2", "r3"}) {
    wa.Set(name, std::string("{\"by\":\"a\",\"n\":\"") + name + "\"}");
    wb.Set(name, std::string("{\"by\":\"b\",\"n\":\"") + name + "\"}");
  }
  wa.Set("gone", "{\"by\":\"a\"}");
  int64_t epoch_a = a->State().epoch;
  wa.writer->SetEpoch(epoch_a);
  ASSERT_TRUE(WaitUntil([&] { return Get(StatusKey("r3")) == "{\"by\":\"a\",\"n\":\"r3\"}"; }));
  EXPECT_EQ(Get(StatusKey("gone")), "{\"by\":\"a\"}");
  // b writing under a's epoch is fenced: its id is not the key's value.
  wb.writer->SetEpoch(epoch_a);
  ASSERT_TRUE(WaitUntil([&] { return wb.writer->Stats().fenced > 0; }));
  EXPECT_EQ(Get(StatusKey("r1")), "{\"by\":\"a\",\"n\":\"r1\"}");
  {
    std::lock_guard lock(wb.mu);
    EXPECT_GT(wb.fenced_calls, 0);
  }
  wb.writer->SetEpoch(0);
  // Only what changed is written.
  uint64_t puts = wa.writer->Stats().puts;
  wa.Set("r2", "{\"by\":\"a\",\"n\":\"r2\",\"changed\":true}");
  wa.writer->Poke();
  ASSERT_TRUE(WaitUntil([&] { return Get(StatusKey("r2")).find("changed") != std::string::npos; }));
  EXPECT_EQ(wa.writer->Stats().puts, puts + 1);

  // a's lease goes; b leads under a new epoch, a's writer is fenced, b rewrites everything and
  // deletes the status of an object it does not hold.
  etcdserverpb::LeaseRevokeRequest revoke;
  revoke.set_id(a->State().lease_id);
  ASSERT_TRUE(client_->LeaseRevoke(revoke).ok());
  ASSERT_TRUE(WaitUntil([&] { return b->State().leader; }));
  wa.Set("r1", "{\"by\":\"a\",\"late\":true}");
  wa.writer->Poke();
  ASSERT_TRUE(WaitUntil([&] { return wa.writer->Stats().fenced > 0; }));
  wb.writer->SetEpoch(b->State().epoch);
  ASSERT_TRUE(WaitUntil([&] { return Get(StatusKey("r1")) == "{\"by\":\"b\",\"n\":\"r1\"}"; }));
  EXPECT_TRUE(WaitUntil([&] { return Get(StatusKey("gone")) == "<absent>"; }));
  EXPECT_EQ(Get(StatusKey("r2")), "{\"by\":\"b\",\"n\":\"r2\"}");
  EXPECT_EQ(wb.writer->Stats().full_writes, 1u);
  // An object removed under b: its status key goes.
  wb.Erase("r3");
  wb.writer->Poke();
  EXPECT_TRUE(WaitUntil([&] { return Get(StatusKey("r3")) == "<absent>"; }));
}

TEST_F(LeaderElectionTest, TheCenterIgnoresTheControllersOwnKeys) {
  auto a = Elect("a", client_.get());
  ASSERT_TRUE(WaitUntil([&] { return a->State().leader; }));
  etcdserverpb::PutRequest put;
  put.set_key(StatusKey("web"));
  put.set_value("{\"parents\":[]}");
  ASSERT_TRUE(client_->Put(put).ok());
  EtcdConfigCenterOptions o;
  o.client.endpoints = {etcd_.Endpoint()};
  o.identifier = testing::TestIdentifier;
  StatusOr<std::unique_ptr<EtcdConfigCenter>> center = EtcdConfigCenter::Create(o);
  ASSERT_TRUE(center.ok());
  struct Count : ConfigListener {
    std::atomic<size_t> changes{0};
    void OnChanges(std::vector<ConfigChange> c, bool) override { changes += c.size(); }
  } listener;
  ASSERT_TRUE((*center)->Start(&listener).ok());
  int64_t before = (*center)->Revision();
  put.set_value("{\"parents\":[1]}");
  ASSERT_TRUE(client_->Put(put).ok());
  ASSERT_TRUE(WaitUntil([&] { return (*center)->Revision() > before; }));
  EXPECT_EQ(listener.changes.load(), 0u);
  EXPECT_TRUE((*center)->Errors().empty()) << (*center)->Errors().front().message;
  (*center)->Stop();
}

}  // namespace
}  // namespace portico::controller
