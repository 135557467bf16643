// etcd_status_writer.h: EtcdStatusWriter, how the leading controller writes objects' status to
// etcd (issue 16): every object's `status` as compact JSON at <prefix>/_status/<group>/<kind>/
// <namespace>/<name> (etcd_keys.h), which `etcdctl get --prefix /portico/_status/` and tools
// outside Portico read. Followers derive the same status in memory (their admin API shows it)
// but never write it.
//
// Writing happens only under an epoch (SetEpoch, from the leader election): every write is a
// Txn fenced on the leader key (its create revision is the epoch and its value this
// controller's id), so a deposed leader cannot overwrite its successor's status. A fenced Txn
// that fails its compare stops writing and calls `on_fenced` (the election re-checks). On a new
// epoch the writer forgets what it wrote, deletes status keys of objects that no longer exist
// and writes every object's status again (a new leader re-derives all status); after that only
// what changed is written (puts and deletes, up to `ops_per_txn` per Txn).
//
// Thread-safety: one thread of its own (Start..Stop) collects and writes; `collect` and
// `on_fenced` run on it. SetEpoch(), Poke() and Stats() may be called from any thread.
// Ownership: borrows the EtcdClient (must outlive Stop()); the destructor stops.
#ifndef PORTICO_CONTROLLER_CENTER_ETCD_STATUS_WRITER_H_
#define PORTICO_CONTROLLER_CENTER_ETCD_STATUS_WRITER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "controller/center/etcd_client.h"
#include "portico/sdk/types.h"

namespace portico::controller {

struct StatusWriterOptions {
  std::string prefix = "/portico";
  std::string id;  // this controller's id, the leader key's value while it leads
  // collect returns every object's status as compact JSON (objects without status omitted).
  std::function<std::map<sdk::ObjectRef, std::string>()> collect;
  size_t ops_per_txn = 100;  // etcd allows 128 by default (--max-txn-ops)
  // Quiet time after a Poke() before collecting, so a burst of changes is written once.
  std::chrono::milliseconds debounce{50};
  std::chrono::milliseconds retry{500};  // after an etcd error
};

struct StatusWriterStats {
  int64_t epoch = 0;         // the epoch written under (0: not writing)
  uint64_t puts = 0;         // status keys written
  uint64_t deletes = 0;      // status keys deleted
  uint64_t full_writes = 0;  // times every status was written (new epochs)
  uint64_t fenced = 0;       // Txns refused because this controller no longer leads
  int64_t revision = 0;      // etcd revision of the last write
  int64_t last_write_unix_ms = 0;
  size_t written = 0;  // status keys held as written under the epoch
  std::string error;   // the last etcd error ("" after a success)
};

class EtcdStatusWriter {
 public:
  EtcdStatusWriter(EtcdClient* client, StatusWriterOptions options,
                   std::function<void()> on_fenced);
  ~EtcdStatusWriter();
  EtcdStatusWriter(const EtcdStatusWriter&) = delete;
  EtcdStatusWriter& operator=(const EtcdStatusWriter&) = delete;

  void Start();
  void Stop();

  // SetEpoch: 0 stops writing; another epoch than the current one starts a full write.
  void SetEpoch(int64_t epoch);
  // Poke: some status may have changed.
  void Poke();
  StatusWriterStats Stats() const;

 private:
  void Run();
  // WriteOnce writes what changed under `epoch`; false on an error or a fence.
  bool WriteOnce(int64_t epoch, bool full);
  // Commit runs one fenced Txn of `ops`; sets *fenced when the compare failed.
  Status Commit(int64_t epoch, std::vector<etcdserverpb::RequestOp>& ops, bool* fenced);

  EtcdClient* const client_;
  const StatusWriterOptions options_;
  const std::string leader_key_;
  const std::function<void()> on_fenced_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;    // guarded by mu_
  bool poked_ = false;       // guarded by mu_
  int64_t epoch_ = 0;        // guarded by mu_: the epoch to write under
  StatusWriterStats stats_;  // guarded by mu_

  // Writer thread only: what etcd holds under written_epoch_.
  int64_t written_epoch_ = 0;
  std::map<std::string, std::string> written_;  // key -> status JSON
  std::thread thread_;
};

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_CENTER_ETCD_STATUS_WRITER_H_
