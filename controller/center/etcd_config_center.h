// etcd_config_center.h: EtcdConfigCenter, the ConfigCenter of resources kept in etcd (DESIGN.md
// §6) under a key prefix (layout: etcd_keys.h), read with etcd's v3 gRPC API (etcd_client.h).
//
// Reading: Start() ranges over the prefix (paginated, at one revision R) and delivers the initial
// batch, retrying across endpoints for `start_timeout`; then a watcher thread watches the prefix
// from R+1 and delivers every watch response's events as one batch. When the watch breaks (etcd
// killed, network) it reconnects with exponential backoff and jitter, going round the endpoints,
// and resumes from the revision after the last one it delivered, so no event is lost or
// repeated. When that revision was compacted (a watch response with compact_revision, etcd's
// ErrCompacted), it reads everything again and delivers the difference: upserts for what changed
// and deletes for what disappeared while it was away. While it is disconnected Errors() says so.
//
// Every delivered document carries metadata.resourceVersion = the key's mod revision and, when
// the value has none, metadata.creationTimestamp = when this center first saw the key's create
// revision (kept across re-reads; a deleted and re-created key gets a new one). So a put of an
// identical value is delivered too: its resourceVersion changed (processors see no spec change,
// generation stays).
//
// Bad values follow the contract of config_center.h: a key whose value stops parsing (or names
// another object than its key) keeps the object it last produced and is reported; a key removed
// deletes its object.
//
// Writing: Apply() and Delete() are compare-and-swap transactions (etcd_writes.h) against the
// mod revision in the document's metadata.resourceVersion when given, else the one this center
// last saw for the key (none: the key must not exist). A conflicting write is refused (ABORTED)
// naming both revisions. A document equal to what the key holds is not written. The change comes
// back through the watch like any other edit.
//
// Thread-safety: as ConfigCenter: OnChanges() is called from one thread at a time (Start()'s
// caller, the watcher thread, or Resync()'s caller); Errors(), Apply(), Delete(), Resync(),
// Describe() and Revision() may be called from any thread, but not from inside OnChanges().
// Ownership: the listener must outlive Stop(); the destructor stops.
#ifndef PORTICO_CONTROLLER_CENTER_ETCD_CONFIG_CENTER_H_
#define PORTICO_CONTROLLER_CENTER_ETCD_CONFIG_CENTER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "controller/center/config_center.h"
#include "controller/center/etcd_client.h"
#include "controller/center/yaml_to_json.h"

namespace portico::controller {

struct EtcdConfigCenterOptions {
  EtcdClientOptions client;
  std::string prefix = "/portico";
  ObjectIdentifier identifier;  // required; thread-safe
  YamlLimits limits;
  // How long Start() keeps trying to read etcd before it fails.
  std::chrono::milliseconds start_timeout{10'000};
  // Reconnect backoff: doubles from `backoff_initial` up to `backoff_max`, +-20% jitter.
  std::chrono::milliseconds backoff_initial{100};
  std::chrono::milliseconds backoff_max{5'000};
  // Keys per Range page of a full read.
  int64_t page_size = 1000;
  // Wall clock in Unix ms for creationTimestamp (tests may inject one).
  std::function<int64_t()> now_unix_ms;
  // Test seam: called on the watcher thread before every attempt to open the watch (the first
  // one and every reconnect), e.g. to hold a reconnect while a test compacts etcd.
  std::function<void()> before_watch;
};

class EtcdConfigCenter : public ConfigCenter {
 public:
  static StatusOr<std::unique_ptr<EtcdConfigCenter>> Create(EtcdConfigCenterOptions options);
  ~EtcdConfigCenter() override;
  EtcdConfigCenter(const EtcdConfigCenter&) = delete;
  EtcdConfigCenter& operator=(const EtcdConfigCenter&) = delete;

  // Start fails (UNAVAILABLE naming every endpoint's error) when etcd cannot be read within
  // start_timeout; once only.
  Status Start(ConfigListener* listener) override;
  void Stop() override;

  std::vector<ConfigError> Errors() const override;
  Status Apply(std::string_view documents) override;
  Status Delete(const sdk::ObjectRef& ref) override;
  Status Resync() override;
  std::string Describe() const override;

  // Revision is the etcd revision delivered up to (0 before Start()).
  int64_t Revision() const;
  // Connected tells whether the watch is established.
  bool Connected() const;
  // FullReads counts initial reads, compaction recoveries and resyncs.
  uint64_t FullReads() const;
  EtcdClient& Client() { return *client_; }

 private:
  // KeyState is what one key last held.
  struct KeyState {
    int64_t mod_revision = 0;
    int64_t create_revision = 0;
    std::string creation_timestamp;                // first sighting of create_revision
    std::optional<sdk::ObjectRef> ref;             // the object it produced (kept on a bad value)
    std::shared_ptr<const std::string> delivered;  // JSON delivered for it (with stamps)
    std::string stored;                            // EtcdStoredValue of the last good value
    std::optional<ConfigError> error;
  };

  explicit EtcdConfigCenter(EtcdConfigCenterOptions options);
  void Run();
  // FullRead ranges over the prefix and delivers the difference. Requires deliver_mu_.
  Status FullRead(bool initial);
  // ApplyPut / ApplyDelete update keys_ and append the change, if any. Require mu_.
  void ApplyPut(const mvccpb::KeyValue& kv, std::vector<ConfigChange>* out);
  void ApplyDelete(const std::string& key, std::vector<ConfigChange>* out);
  void Deliver(std::vector<ConfigChange> changes, bool initial);  // requires deliver_mu_
  void SetConnectionError(std::string message);
  // WaitBackoff sleeps `delay` or until Stop(); false when stopping.
  bool WaitBackoff(std::chrono::milliseconds delay);
  int64_t NowMs() const;

  EtcdConfigCenterOptions options_;
  std::unique_ptr<EtcdClient> client_;
  std::string prefix_dir_;  // "/portico/"

  std::mutex deliver_mu_;               // held across a read and its delivery; taken before mu_
  ConfigListener* listener_ = nullptr;  // guarded by deliver_mu_

  mutable std::mutex mu_;
  std::map<std::string, KeyState> keys_;
  int64_t revision_ = 0;  // delivered up to
  std::string connection_error_;
  bool connected_ = false;
  uint64_t full_reads_ = 0;
  EtcdWatchStream* watch_ = nullptr;  // the open watch, for Stop() to cancel
  std::condition_variable stop_cv_;

  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> running_{false};
};

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_CENTER_ETCD_CONFIG_CENTER_H_
