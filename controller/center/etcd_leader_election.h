// etcd_leader_election.h: EtcdLeaderElection, leader election of several controllers on one
// etcd (issue 16): the leader holds the key <prefix>/_leader (etcd_keys.h), whose value is its
// controller id, attached to an etcd lease it keeps alive.
//
// Campaign: grant a lease of `ttl`, then one Txn "if the key's create revision is 0 (absent),
// put id with the lease, else read the key". Won: this controller leads; its epoch is the key's
// create revision (the Txn's revision), which grows with every new leader, so it fences: a
// stream or write from an older epoch is a deposed leader's. Lost: the lease is revoked, the
// leader's id, lease and epoch are recorded, and the key is watched; when it is deleted (the
// leader's lease expired or it resigned) the campaign runs again at once.
//
// Leading: every `renew` (default ttl/3) the lease is renewed (LeaseKeepAlive) and the key is
// read back. The leader steps down when etcd answers the lease is gone (TTL 0), when the key no
// longer holds its id and epoch, or when no renewal succeeded for `ttl` (etcd may have expired
// the lease meanwhile, so another controller may lead). Stop() resigns: it revokes the lease, so
// a follower takes over without waiting for the TTL.
//
// Thread-safety: one thread of its own (Start..Stop) runs the election and calls `on_change` on
// it (must not call Stop()); State() and Recheck() may be called from any thread. Ownership:
// borrows the EtcdClient, which must outlive Stop(); the destructor stops.
#ifndef PORTICO_CONTROLLER_CENTER_ETCD_LEADER_ELECTION_H_
#define PORTICO_CONTROLLER_CENTER_ETCD_LEADER_ELECTION_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "controller/center/etcd_client.h"
#include "portico/sdk/status.h"

namespace portico::controller {

struct LeaderElectionOptions {
  std::string prefix = "/portico";     // the key is <prefix>/_leader
  std::string id;                      // this controller's id: the key's value while it leads
  std::chrono::seconds ttl{5};         // the lease's TTL (etcd counts in seconds)
  std::chrono::milliseconds renew{0};  // 0: ttl / 3
  // Retry after an etcd error: doubles from `backoff_initial` up to `backoff_max`, +-20% jitter.
  std::chrono::milliseconds backoff_initial{100};
  std::chrono::milliseconds backoff_max{1000};
};

// LeaderRenewInterval: options.renew, or ttl / 3 (at least 100 ms) when it is 0.
std::chrono::milliseconds LeaderRenewInterval(const LeaderElectionOptions& options);

// LeaderState is what the election knows now.
struct LeaderState {
  bool leader = false;        // this controller leads
  std::string leader_id;      // the leading controller ("" when none is known)
  int64_t lease_id = 0;       // the leader's lease
  int64_t ttl_seconds = 0;    // the lease's granted TTL (when this controller leads; else asked)
  int64_t epoch = 0;          // the leader key's create revision (0: no leader seen yet)
  int64_t revision = 0;       // the etcd revision of the last answer the election got
  int64_t since_unix_ms = 0;  // when the current leader_id/epoch was first seen here
  uint64_t transitions = 0;   // times this controller became leader
  std::string error;          // the last etcd error ("" once an answer came back)
};

class EtcdLeaderElection {
 public:
  // on_change is called (on the election thread) whenever leader/leader_id/epoch change.
  EtcdLeaderElection(EtcdClient* client, LeaderElectionOptions options,
                     std::function<void(const LeaderState&)> on_change);
  ~EtcdLeaderElection();
  EtcdLeaderElection(const EtcdLeaderElection&) = delete;
  EtcdLeaderElection& operator=(const EtcdLeaderElection&) = delete;

  void Start();
  // Stop resigns (revokes the lease when leading) and joins the thread. Idempotent.
  void Stop();

  LeaderState State() const;
  // Recheck makes the leader verify its key now (a fenced write failed).
  void Recheck();

  std::chrono::milliseconds renew_interval() const { return renew_; }
  const std::string& key() const { return key_; }

 private:
  void Run();
  // Campaign grants a lease and tries to take the key; false on an etcd error.
  bool Campaign();
  // Lead renews until leadership is lost or Stop().
  void Lead();
  // Follow watches the key until it is deleted, the watch breaks, or Stop().
  void Follow();
  void Update(const std::function<void(LeaderState&)>& change);
  void SetError(std::string error);
  bool Wait(std::chrono::milliseconds delay);  // false when stopping
  void Resign();

  EtcdClient* const client_;
  const LeaderElectionOptions options_;
  const std::string key_;
  const std::chrono::milliseconds renew_;
  const std::function<void(const LeaderState&)> on_change_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  LeaderState state_;                 // guarded by mu_
  int64_t own_lease_ = 0;             // guarded by mu_: the lease this controller holds
  bool recheck_ = false;              // guarded by mu_
  EtcdWatchStream* watch_ = nullptr;  // guarded by mu_: the open watch, for Stop()
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_CENTER_ETCD_LEADER_ELECTION_H_
