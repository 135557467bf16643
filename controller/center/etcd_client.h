// etcd_client.h: EtcdClient, a small client of etcd's v3 gRPC API (proto/etcd/) for the etcd
// config center and portico-ctl: several endpoints, TLS, user/password authentication, and the
// calls the center and the leader election need (Range, Txn, Compact, Watch, Lease).
//
// Endpoints: "host:port", "http://host:port" or "https://host:port". https, or a ca_file, means
// TLS (ca_file: the roots; cert_file/key_file: a client certificate, optional). One gRPC channel
// per endpoint; calls go to the current endpoint, and a call that fails with UNAVAILABLE or a
// deadline moves to the next endpoint and is retried there, each endpoint once per call. The
// failed endpoint stays out of turn until the others fail too.
//
// Authentication: with a user, Auth.Authenticate(user, password) gets a token, sent as the
// "token" metadata of every call (as etcd's clients do); it is fetched again on the next
// endpoint and when etcd answers that the token is invalid (it expires after etcd's
// --auth-token-ttl of idleness).
//
// Errors are Status values naming the endpoint and the call: "etcd 127.0.0.1:2379: Range:
// UNAVAILABLE: failed to connect to all addresses", codes mapped from gRPC's.
//
// Thread-safety: every method may be called from any thread, concurrently. Ownership: the client
// owns its channels; a WatchStream keeps its channel alive and must be finished or cancelled by
// its owner.
#ifndef PORTICO_CONTROLLER_CENTER_ETCD_CLIENT_H_
#define PORTICO_CONTROLLER_CENTER_ETCD_CLIENT_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "etcd/etcdserverpb/rpc.grpc.pb.h"
#include "portico/sdk/status.h"

namespace portico::controller {

struct EtcdClientOptions {
  std::vector<std::string> endpoints;  // at least one
  std::filesystem::path ca_file, cert_file, key_file;
  std::string user, password;  // no user: no authentication
  std::chrono::milliseconds call_timeout{5000};
};

// EtcdWatchStream is one open Watch RPC. Cancel() (from any thread) makes a blocked Read()
// return false; then Finish() gives the RPC's status.
struct EtcdWatchStream {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<grpc::ClientContext> context;
  std::unique_ptr<etcdserverpb::Watch::Stub> stub;
  std::unique_ptr<grpc::ClientReaderWriter<etcdserverpb::WatchRequest, etcdserverpb::WatchResponse>>
      stream;
  std::string endpoint;
};

class EtcdClient {
 public:
  // Create checks the options and reads the TLS files (no connection is made yet).
  static StatusOr<std::unique_ptr<EtcdClient>> Create(EtcdClientOptions options);

  StatusOr<etcdserverpb::RangeResponse> Range(const etcdserverpb::RangeRequest& request);
  StatusOr<etcdserverpb::TxnResponse> Txn(const etcdserverpb::TxnRequest& request);
  StatusOr<etcdserverpb::PutResponse> Put(const etcdserverpb::PutRequest& request);
  StatusOr<etcdserverpb::CompactionResponse> Compact(
      const etcdserverpb::CompactionRequest& request);
  StatusOr<etcdserverpb::LeaseGrantResponse> LeaseGrant(
      const etcdserverpb::LeaseGrantRequest& request);
  StatusOr<etcdserverpb::LeaseRevokeResponse> LeaseRevoke(
      const etcdserverpb::LeaseRevokeRequest& request);
  StatusOr<etcdserverpb::LeaseTimeToLiveResponse> LeaseTimeToLive(
      const etcdserverpb::LeaseTimeToLiveRequest& request);
  // LeaseKeepAliveOnce renews `lease_id` once (a LeaseKeepAlive stream with one request and its
  // answer, as `etcdctl lease keep-alive --once`). The answer's TTL is 0 when etcd no longer
  // knows the lease (it expired).
  StatusOr<etcdserverpb::LeaseKeepAliveResponse> LeaseKeepAliveOnce(int64_t lease_id);

  // OpenWatch starts a Watch RPC on the current endpoint (authenticating first when needed) and
  // sends `create`. The stream has no deadline; the caller cancels it.
  StatusOr<std::unique_ptr<EtcdWatchStream>> OpenWatch(
      const etcdserverpb::WatchCreateRequest& create);
  // Failed moves to the next endpoint after `endpoint` failed (a watch that broke); no-op when
  // the current endpoint is already another one.
  void Failed(const std::string& endpoint);

  // ForgetToken drops `endpoint`'s token (a watch refused it): the next call authenticates.
  void ForgetToken(const std::string& endpoint);

  // Endpoint is the endpoint calls go to now.
  std::string Endpoint() const;
  // Describe: "etcd:127.0.0.1:2379,127.0.0.1:22379".
  std::string Describe() const;

  // KeyRangeEnd is the range_end that makes [prefix, end) every key starting with `prefix`.
  static std::string PrefixRangeEnd(const std::string& prefix);

 private:
  struct Member {
    std::string target;  // host:port
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<etcdserverpb::KV::Stub> kv;  // over `channel`, made once
    std::unique_ptr<etcdserverpb::Lease::Stub> lease;
    std::string token;  // guarded by mu_
  };
  explicit EtcdClient(EtcdClientOptions options) : options_(std::move(options)) {}

  // Call runs `rpc(member, context, response)` with failover; `name` is for errors.
  template <typename Response, typename Rpc>
  StatusOr<Response> Call(const char* name, Rpc rpc);
  // Prepare fills `context` (deadline, token) for endpoint `index`; authenticates when needed.
  Status Prepare(size_t index, grpc::ClientContext* context, bool deadline);
  Status Authenticate(size_t index);
  void Rotate(size_t from);

  EtcdClientOptions options_;
  std::vector<Member> endpoints_;
  mutable std::mutex mu_;
  size_t current_ = 0;  // guarded by mu_
};

// RangePrefix reads every key starting with `prefix` in pages of `page_size`, all at one
// revision (the first page's), which it stores in *revision.
StatusOr<std::vector<mvccpb::KeyValue>> RangePrefix(EtcdClient& client, const std::string& prefix,
                                                    int64_t page_size, int64_t* revision);

// ReadEtcdPassword is `password`, or the first line of `password_file` when that is given
// (INVALID_ARGUMENT naming the file when it cannot be read).
StatusOr<std::string> ReadEtcdPassword(const std::string& password,
                                       const std::filesystem::path& password_file);

// EtcdStatus turns a failed RPC into a Status naming the endpoint and call.
Status EtcdStatus(const grpc::Status& status, const std::string& endpoint, const char* call);

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_CENTER_ETCD_CLIENT_H_
