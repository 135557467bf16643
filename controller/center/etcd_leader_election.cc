#include "controller/center/etcd_leader_election.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "controller/center/etcd_keys.h"
#include "core/common/jitter.h"
#include "core/common/time_format.h"

namespace portico::controller {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

std::chrono::milliseconds LeaderRenewInterval(const LeaderElectionOptions& o) {
  if (o.renew.count() > 0) return o.renew;
  return std::max(std::chrono::milliseconds(100),
                  std::chrono::duration_cast<std::chrono::milliseconds>(o.ttl) / 3);
}

EtcdLeaderElection::EtcdLeaderElection(EtcdClient* client, LeaderElectionOptions options,
                                       std::function<void(const LeaderState&)> on_change)
    : client_(client),
      options_(std::move(options)),
      key_(EtcdLeaderKey(options_.prefix)),
      renew_(LeaderRenewInterval(options_)),
      on_change_(std::move(on_change)) {}

EtcdLeaderElection::~EtcdLeaderElection() { Stop(); }

void EtcdLeaderElection::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { Run(); });
}

void EtcdLeaderElection::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    if (watch_ != nullptr) watch_->context->TryCancel();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

LeaderState EtcdLeaderElection::State() const {
  std::lock_guard lock(mu_);
  return state_;
}

void EtcdLeaderElection::Recheck() {
  {
    std::lock_guard lock(mu_);
    recheck_ = true;
  }
  cv_.notify_all();
}

void EtcdLeaderElection::Update(const std::function<void(LeaderState&)>& change) {
  LeaderState now;
  bool changed;
  {
    std::lock_guard lock(mu_);
    LeaderState before = state_;
    change(state_);
    changed = before.leader != state_.leader || before.leader_id != state_.leader_id ||
              before.epoch != state_.epoch;
    if (changed) state_.since_unix_ms = core::NowUnixMs();
    if (changed && state_.leader) ++state_.transitions;
    now = state_;
  }
  if (!changed) return;
  if (now.leader) {
    spdlog::info("election: {} leads (key {}, lease {:x}, TTL {} s, epoch {})", options_.id, key_,
                 now.lease_id, now.ttl_seconds, now.epoch);
  } else if (!now.leader_id.empty()) {
    spdlog::info("election: {} follows {} (lease {:x}, epoch {})", options_.id, now.leader_id,
                 now.lease_id, now.epoch);
  } else {
    spdlog::warn("election: {} knows no leader{}{}", options_.id, now.error.empty() ? "" : ": ",
                 now.error);
  }
  if (on_change_) on_change_(now);
}

void EtcdLeaderElection::SetError(std::string error) {
  std::lock_guard lock(mu_);
  if (!error.empty() && error != state_.error) spdlog::warn("election: {}", error);
  state_.error = std::move(error);
}

bool EtcdLeaderElection::Wait(std::chrono::milliseconds delay) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, delay, [this] { return stopping_.load() || recheck_; });
  recheck_ = false;
  return !stopping_;
}

void EtcdLeaderElection::Run() {
  std::chrono::milliseconds backoff = options_.backoff_initial;
  while (!stopping_) {
    if (!Campaign()) {
      if (!Wait(core::Jittered(backoff))) break;
      backoff = std::min(backoff * 2, options_.backoff_max);
      continue;
    }
    backoff = options_.backoff_initial;
    if (State().leader) {
      Lead();
    } else {
      Follow();
    }
  }
  Resign();
}

bool EtcdLeaderElection::Campaign() {
  etcdserverpb::LeaseGrantRequest grant;
  grant.set_ttl(options_.ttl.count());
  StatusOr<etcdserverpb::LeaseGrantResponse> lease = client_->LeaseGrant(grant);
  if (!lease.ok() || !lease->error().empty()) {
    SetError("cannot grant a lease: " + (lease.ok() ? lease->error() : lease.status().message()));
    return false;
  }
  etcdserverpb::TxnRequest txn;
  etcdserverpb::Compare* absent = txn.add_compare();
  absent->set_key(key_);
  absent->set_target(etcdserverpb::Compare::CREATE);
  absent->set_result(etcdserverpb::Compare::EQUAL);
  absent->set_create_revision(0);
  etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
  put->set_key(key_);
  put->set_value(options_.id);
  put->set_lease(lease->id());
  txn.add_failure()->mutable_request_range()->set_key(key_);
  StatusOr<etcdserverpb::TxnResponse> taken = client_->Txn(txn);
  auto revoke = [&] {
    etcdserverpb::LeaseRevokeRequest request;
    request.set_id(lease->id());
    (void)client_->LeaseRevoke(request);  // best effort: it expires after its TTL anyway
  };
  if (!taken.ok()) {
    revoke();
    SetError("cannot campaign for " + key_ + ": " + taken.status().message());
    return false;
  }
  SetError("");
  int64_t revision = taken->header().revision();
  if (taken->succeeded()) {
    {
      std::lock_guard lock(mu_);
      own_lease_ = lease->id();
    }
    Update([&](LeaderState& s) {
      s.leader = true;
      s.leader_id = options_.id;
      s.lease_id = lease->id();
      s.ttl_seconds = lease->ttl();
      s.epoch = revision;  // the put's revision: the key's create revision
      s.revision = revision;
    });
    return true;
  }
  revoke();
  const etcdserverpb::RangeResponse& range = taken->responses(0).response_range();
  if (range.kvs_size() == 0) {  // deleted between the compare and the read: campaign again
    Update([&](LeaderState& s) {
      s.leader = false;
      s.leader_id.clear();
      s.revision = revision;
    });
    return false;
  }
  const mvccpb::KeyValue& kv = range.kvs(0);
  int64_t ttl = 0;
  etcdserverpb::LeaseTimeToLiveRequest ttl_request;
  ttl_request.set_id(kv.lease());
  if (auto answer = client_->LeaseTimeToLive(ttl_request); answer.ok()) ttl = answer->grantedttl();
  Update([&](LeaderState& s) {
    s.leader = false;
    s.leader_id = kv.value();
    s.lease_id = kv.lease();
    s.ttl_seconds = ttl;
    s.epoch = kv.create_revision();
    s.revision = revision;
  });
  return true;
}

void EtcdLeaderElection::Lead() {
  LeaderState held = State();
  auto last_ok = Clock::now();  // when the last successful renewal was sent
  auto step_down = [&](const std::string& why) {
    spdlog::warn("election: {} steps down: {}", options_.id, why);
    {
      std::lock_guard lock(mu_);
      own_lease_ = 0;
    }
    Update([&](LeaderState& s) {
      s.leader = false;
      s.leader_id.clear();
      s.error = why;
    });
  };
  while (Wait(renew_)) {
    auto sent = Clock::now();
    StatusOr<etcdserverpb::LeaseKeepAliveResponse> renewed =
        client_->LeaseKeepAliveOnce(held.lease_id);
    Status failed;
    if (renewed.ok()) {
      if (renewed->ttl() <= 0) {
        step_down(fmt::format("etcd no longer knows lease {:x} (expired)", held.lease_id));
        return;
      }
      etcdserverpb::RangeRequest read;
      read.set_key(key_);
      StatusOr<etcdserverpb::RangeResponse> key = client_->Range(read);
      if (key.ok()) {
        if (key->kvs_size() == 0 || key->kvs(0).value() != options_.id ||
            key->kvs(0).create_revision() != held.epoch) {
          step_down(key_ + " no longer holds this controller's epoch " +
                    std::to_string(held.epoch));
          return;
        }
        last_ok = sent;
        SetError("");
        std::lock_guard lock(mu_);
        state_.revision = key->header().revision();
        continue;
      }
      failed = key.status();
    } else {
      failed = renewed.status();
    }
    SetError(fmt::format("cannot renew lease {:x}: {}", held.lease_id, failed.message()));
    if (Clock::now() - last_ok >= options_.ttl) {
      step_down("no renewal succeeded for the lease's TTL (" +
                std::to_string(options_.ttl.count()) + " s): " + failed.message());
      return;
    }
  }
}

void EtcdLeaderElection::Follow() {
  LeaderState seen = State();
  etcdserverpb::WatchCreateRequest create;
  create.set_key(key_);
  create.set_start_revision(seen.revision + 1);
  StatusOr<std::unique_ptr<EtcdWatchStream>> opened = client_->OpenWatch(create);
  if (!opened.ok()) {
    SetError("cannot watch " + key_ + ": " + opened.status().message());
    Wait(core::Jittered(options_.backoff_max));
    return;
  }
  std::unique_ptr<EtcdWatchStream> watch = std::move(opened).value();
  {
    std::lock_guard lock(mu_);
    watch_ = watch.get();
    if (stopping_) watch->context->TryCancel();
  }
  bool deleted = false;
  bool ended = false;
  etcdserverpb::WatchResponse response;
  while (!deleted && !(ended = !watch->stream->Read(&response))) {
    if (response.compact_revision() != 0 || response.canceled()) break;  // read it again
    for (const mvccpb::Event& event : response.events()) {
      if (event.type() == mvccpb::Event::DELETE) {
        deleted = true;
        break;
      }
      const mvccpb::KeyValue& kv = event.kv();
      Update([&](LeaderState& s) {
        s.leader_id = kv.value();
        s.lease_id = kv.lease();
        s.epoch = kv.create_revision();
        s.revision = kv.mod_revision();
      });
    }
  }
  {
    std::lock_guard lock(mu_);
    watch_ = nullptr;
  }
  if (!ended) watch->context->TryCancel();
  grpc::Status finished = watch->stream->Finish();
  if (deleted) {
    spdlog::info("election: {} saw leader {} go; campaigning", options_.id, seen.leader_id);
    return;
  }
  if (stopping_) return;
  SetError("the watch on " + key_ + " at " + watch->endpoint +
           " ended: " + EtcdStatus(finished, watch->endpoint, "Watch").message());
  client_->Failed(watch->endpoint);
  Wait(core::Jittered(options_.backoff_initial));
}

void EtcdLeaderElection::Resign() {
  int64_t lease = 0;
  {
    std::lock_guard lock(mu_);
    std::swap(lease, own_lease_);
  }
  if (lease == 0) return;
  etcdserverpb::LeaseRevokeRequest request;
  request.set_id(lease);
  StatusOr<etcdserverpb::LeaseRevokeResponse> revoked = client_->LeaseRevoke(request);
  if (revoked.ok()) {
    spdlog::info("election: {} resigned (lease {:x} revoked)", options_.id, lease);
  } else {
    spdlog::warn("election: {} could not revoke its lease: {}", options_.id,
                 revoked.status().message());
  }
  Update([](LeaderState& s) {
    s.leader = false;
    s.leader_id.clear();
  });
}

}  // namespace portico::controller
