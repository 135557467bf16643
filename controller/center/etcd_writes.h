// etcd_writes.h: CommitEtcdWrites, compare-and-swap writes of objects to etcd (the etcd config
// center's Apply and Delete, and `portico-ctl import`).
//
// Every write names the mod revision it was made against (0: the key must not exist). Writes go
// in transactions of at most kEtcdWritesPerTxn keys (etcd refuses more than --max-txn-ops,
// 128 by default): each compares every key's mod_revision with the expected one and either puts
// or deletes all of them, or, when any compare fails, writes nothing and reads the keys back so
// that the refusal names every conflict with both revisions:
//   conflict, nothing was written: HTTPRoute default/web was written against revision 5, but
//   etcd holds revision 7 (get it again and re-apply)
// A refused transaction after an accepted one leaves the earlier ones written; the error says
// how many objects were.
//
// Thread-safety: as EtcdClient.
#ifndef PORTICO_CONTROLLER_CENTER_ETCD_WRITES_H_
#define PORTICO_CONTROLLER_CENTER_ETCD_WRITES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "controller/center/etcd_client.h"
#include "portico/sdk/status.h"
#include "portico/sdk/types.h"

namespace portico::controller {

inline constexpr size_t kEtcdWritesPerTxn = 100;

struct EtcdWrite {
  sdk::ObjectRef ref;  // for messages
  std::string key;
  std::string value;     // ignored for a delete
  int64_t expected = 0;  // mod revision written against; 0: must not exist
  bool remove = false;   // delete instead of put
};

// CommitEtcdWrites: see the file comment. Returns etcd's revision after the last transaction.
// ABORTED on a conflict; the client's error otherwise.
StatusOr<int64_t> CommitEtcdWrites(EtcdClient& client, const std::vector<EtcdWrite>& writes);

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_CENTER_ETCD_WRITES_H_
