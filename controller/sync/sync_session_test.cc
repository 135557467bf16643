#include "controller/sync/sync_session.h"

#include <gtest/gtest.h>

#include "controller/sync/sync_test_util.h"

namespace portico::controller::sync {
namespace {

using namespace testing;  // NOLINT: the test helpers
namespace pb = portico::sync::v1;

// Sent is what a run of Next() produced, flattened.
struct Sent {
  std::vector<pb::WatchResponse> messages;
  std::map<std::string, pb::Event> events;  // by key
  bool snapshot = false;
  std::optional<pb::BatchEnd> batch_end;
  std::optional<pb::SnapshotEnd> snapshot_end;
  int heartbeats = 0;
};

class SessionTest : public ::testing::Test {
 protected:
  std::unique_ptr<SyncSession> NewSession(const HelloOptions& hello,
                                          std::optional<ResumeState> resume = std::nullopt) {
    SessionSources sources;
    sources.store = &store_;
    sources.links = &links_;
    sources.policies = &policies_;
    sources.counters = &counters_;
    auto scope = GatewayScope::FromHello(MakeHello(hello));
    EXPECT_TRUE(scope.ok());
    SessionIdentity identity;
    identity.name = hello.name;
    identity.client_id = hello.client_id;
    return std::make_unique<SyncSession>(sources, *scope, identity, hello.from_version,
                                         hello.expected_server_id, std::move(resume));
  }

  // Drain calls Next until it returns nothing.
  Sent Drain(SyncSession& session, bool heartbeat = false, const std::string& id = "server-a") {
    Sent sent;
    bool due = heartbeat;
    while (auto m = session.Next(id, true, &due)) {
      if (m->has_snapshot()) {
        sent.snapshot = true;
        for (const auto& e : m->snapshot().events()) sent.events[KeyString(e.key())] = e;
      } else if (m->has_batch()) {
        for (const auto& e : m->batch().events()) sent.events[KeyString(e.key())] = e;
      } else if (m->has_batch_end()) {
        sent.batch_end = m->batch_end();
      } else if (m->has_snapshot_end()) {
        sent.snapshot_end = m->snapshot_end();
      } else if (m->has_heartbeat()) {
        ++sent.heartbeats;
      }
      sent.messages.push_back(*m);
    }
    return sent;
  }

  void Ack(SyncSession& session, uint64_t version, std::vector<pb::Nack> nacks = {}) {
    pb::Ack ack;
    ack.set_version(version);
    for (auto& n : nacks) *ack.add_nacks() = n;
    ASSERT_TRUE(session.OnAck(ack).ok());
  }

  static pb::Nack NackOf(const pb::Event& event, std::string reason) {
    pb::Nack n;
    *n.mutable_key() = event.key();
    n.set_hash(event.hash());
    n.set_reason(std::move(reason));
    return n;
  }

  core::ObjectStore store_;
  SyncLinks links_;
  SyncPolicies policies_ = TestPolicies();
  SyncCounters counters_;
};

TEST_F(SessionTest, NothingBeforeReady) {
  Put(store_, links_, ServiceKey("s"), Body("s"));
  auto session = NewSession({});
  bool due = true;
  EXPECT_FALSE(session->Next("server-a", false, &due));
  EXPECT_TRUE(due);
  Sent sent = Drain(*session);
  EXPECT_TRUE(sent.snapshot_end);
}

TEST_F(SessionTest, NackKeepsLastGoodAndIsNotResent) {
  Put(store_, links_, ServiceKey("s"), Body("1"));
  auto session = NewSession({});
  Sent first = Drain(*session);
  ASSERT_TRUE(first.snapshot_end);
  std::string key = ServiceKey("s").ToString();
  std::string good = first.events.at(key).hash();
  Ack(*session, first.snapshot_end->version());

  uint64_t v2 = Put(store_, links_, ServiceKey("s"), Body("2"));
  Sent second = Drain(*session);
  ASSERT_TRUE(second.batch_end);
  ASSERT_EQ(second.events.count(key), 1u);
  EXPECT_EQ(session->StateOf(ServiceKey("s"), second.events.at(key).hash()).status,
            KeyStatus::kPending);
  Ack(*session, v2, {NackOf(second.events.at(key), "port out of range")});
  EXPECT_EQ(session->Synced().at(key), good);  // the gateway kept its last good version
  GatewayKeyState state = session->StateOf(ServiceKey("s"), second.events.at(key).hash());
  EXPECT_EQ(state.status, KeyStatus::kRejected);
  EXPECT_EQ(state.reason, "port out of range");

  // Unrelated changes and a link change (full diff) do not resend it.
  uint64_t v3 = Put(store_, links_, ServiceKey("t"), Body("t"));
  links_.Set(RouteKey("r"), {GatewayKey("x")}, {});
  Sent third = Drain(*session);
  ASSERT_TRUE(third.batch_end);
  EXPECT_EQ(third.events.count(key), 0u);
  EXPECT_EQ(third.events.count(ServiceKey("t").ToString()), 1u);
  Ack(*session, std::max(v3, third.batch_end->to_version()));

  Put(store_, links_, ServiceKey("s"), Body("3"));  // a new hash goes out
  Sent fourth = Drain(*session);
  ASSERT_EQ(fourth.events.count(key), 1u);
  EXPECT_NE(fourth.events.at(key).hash(), second.events.at(key).hash());
  EXPECT_TRUE(session->View().nacks.empty());
}

TEST_F(SessionTest, EmptyBatchesAdvanceTheGatewayAtHeartbeat) {
  HelloOptions hello;
  hello.gateways = {GatewayKey("a")};
  auto session = NewSession(hello);
  Sent first = Drain(*session);
  Ack(*session, first.snapshot_end->version());
  uint64_t v = Put(store_, links_, RouteKey("elsewhere"), Body("x"), {GatewayKey("b")});
  Sent nothing = Drain(*session);
  EXPECT_TRUE(nothing.messages.empty());
  Sent beat = Drain(*session, /*heartbeat=*/true);
  ASSERT_TRUE(beat.batch_end);
  EXPECT_EQ(beat.batch_end->from_version(), first.snapshot_end->version());
  EXPECT_EQ(beat.batch_end->to_version(), v);
  EXPECT_TRUE(beat.events.empty());
  ASSERT_EQ(beat.messages.size(), 2u);  // the empty BatchEnd, then the heartbeat
  EXPECT_TRUE(beat.messages[0].has_batch_end());
  EXPECT_TRUE(beat.messages[1].has_heartbeat());
  Ack(*session, v);
  EXPECT_TRUE(Drain(*session, true).messages[0].has_heartbeat());  // nothing more to advance
}

TEST_F(SessionTest, ResumeWithoutSnapshot) {
  HelloOptions hello;
  hello.gateways = {GatewayKey("a")};
  Put(store_, links_, GatewayKey("a"), Body("a"));
  auto session = NewSession(hello);
  Sent first = Drain(*session);
  uint64_t v1 = first.snapshot_end->version();
  Ack(*session, v1);
  std::optional<ResumeState> state = session->TakeResumeState();
  ASSERT_TRUE(state);

  uint64_t v2 = Put(store_, links_, RouteKey("r"), Body("r"), {GatewayKey("a")});
  hello.from_version = v1;
  hello.expected_server_id = "server-a";
  auto resumed = NewSession(hello, std::move(state));
  Sent next = Drain(*resumed);
  EXPECT_FALSE(next.snapshot);
  ASSERT_TRUE(next.batch_end);
  EXPECT_EQ(next.batch_end->from_version(), v1);
  EXPECT_EQ(next.batch_end->to_version(), v2);
  EXPECT_EQ(next.events.size(), 1u);
  EXPECT_EQ(resumed->Synced().size(), 2u);

  // Another client id, or another version, gets a snapshot.
  auto other = NewSession(hello, resumed->TakeResumeState());
  EXPECT_TRUE(Drain(*other).snapshot);  // not acked yet: nothing to resume from
}

TEST_F(SessionTest, SnapshotAfterRelist) {
  core::ObjectStoreOptions options;
  options.max_log_bytes = 600;  // a few events
  core::ObjectStore small(options);
  SessionSources sources;
  sources.store = &small;
  sources.links = &links_;
  sources.policies = &policies_;
  sources.counters = &counters_;
  auto scope = GatewayScope::FromHello(MakeHello({}));
  SyncSession session(sources, *scope, SessionIdentity{"gw1", "c"}, 0, "");
  Put(small, links_, ServiceKey("s0"), Body("0"));
  Sent first = Drain(session);
  uint64_t v1 = first.snapshot_end->version();
  uint64_t last = 0;
  for (int i = 0; i < 30; ++i)
    last = Put(small, links_, ServiceKey("s" + std::to_string(i)), Body("x" + std::to_string(i)));
  ASSERT_GT(small.Stats().min_from_version, v1);
  Ack(session, v1);
  Sent again = Drain(session);
  EXPECT_TRUE(again.snapshot);
  ASSERT_TRUE(again.snapshot_end);
  EXPECT_EQ(again.snapshot_end->version(), last);
  EXPECT_EQ(again.events.size(), 30u);
}

TEST_F(SessionTest, LinkChangesMoveObjectsInAndOut) {
  HelloOptions hello;
  hello.gateways = {GatewayKey("a")};
  Put(store_, links_, RouteKey("r1"), Body("1"), {GatewayKey("a")});
  Put(store_, links_, RouteKey("r2"), Body("2"), {GatewayKey("b")});
  auto session = NewSession(hello);
  Sent first = Drain(*session);
  EXPECT_EQ(first.events.size(), 1u);
  Ack(*session, first.snapshot_end->version());

  // Links change without any store change: r1 leaves, r2 enters.
  links_.Set(RouteKey("r1"), {GatewayKey("b")}, {});
  links_.Set(RouteKey("r2"), {GatewayKey("a")}, {});
  Sent second = Drain(*session);
  ASSERT_TRUE(second.batch_end);
  ASSERT_EQ(second.events.size(), 2u);
  EXPECT_EQ(second.events.at(RouteKey("r1").ToString()).op(), pb::Event::OP_DELETE);
  EXPECT_EQ(second.events.at(RouteKey("r1").ToString()).hash(),
            first.events.at(RouteKey("r1").ToString()).hash());
  EXPECT_EQ(second.events.at(RouteKey("r2").ToString()).op(), pb::Event::OP_UPSERT);
  EXPECT_EQ(second.events.at(RouteKey("r2").ToString()).body(), Body("2"));
  EXPECT_EQ(session->Synced().count(RouteKey("r1").ToString()), 0u);
}

TEST_F(SessionTest, AckBeyondWhatWasSentIsRefused) {
  auto session = NewSession({});
  Sent first = Drain(*session);
  pb::Ack ack;
  ack.set_version(first.snapshot_end->version() + 5);
  EXPECT_FALSE(session->OnAck(ack).ok());
}

TEST(DigestTest, RoundTrip) {
  std::string hex = "00ff10a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8";
  EXPECT_EQ(ToHex(ToDigest(hex)), hex);
  EXPECT_NE(ToDigest("not hex"), ToDigest(hex));
  EXPECT_EQ(ToDigest("not hex"), ToDigest("not hex"));
}

}  // namespace
}  // namespace portico::controller::sync
