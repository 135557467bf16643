// list_call.h: the ConfigSync List call (proto/portico/sync/v1/sync.proto): ListEvents selects
// what a ListRequest asks for from a store snapshot, and ListWriter streams it, one chunk of at
// most `max_bytes` per message (EventChunker), every message carrying the snapshot's version.
//
// Thread-safety: ListEvents is reentrant. A ListWriter is driven by gRPC's callbacks, one at a
// time. Ownership: a ListWriter deletes itself when gRPC is done with it (OnDone); it owns the
// events it streams.
#ifndef PORTICO_CONTROLLER_SYNC_LIST_CALL_H_
#define PORTICO_CONTROLLER_SYNC_LIST_CALL_H_

#include <grpcpp/grpcpp.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "controller/sync/event_chunker.h"
#include "controller/sync/sync_scope.h"
#include "core/store/object_store.h"
#include "portico/sync/v1/sync.grpc.pb.h"

namespace portico::controller::sync {

// ListEvents returns the synced objects of `snapshot` (moved out of it) that `request` selects
// by namespace and kind.
std::vector<OutEvent> ListEvents(core::StoreSnapshot& snapshot, const SyncPolicies& policies,
                                 const portico::sync::v1::ListRequest& request);

// ListWriter streams List's answer, one chunk per write.
class ListWriter final : public grpc::ServerWriteReactor<portico::sync::v1::ListResponse> {
 public:
  ListWriter(std::vector<OutEvent> events, uint64_t version, std::string server_id,
             size_t max_bytes);

  void OnWriteDone(bool ok) override;
  void OnDone() override { delete this; }

 private:
  void WriteNext();

  EventChunker chunker_;
  uint64_t version_;
  std::string server_id_;
  bool sent_any_ = false;
  portico::sync::v1::ListResponse out_;
};

}  // namespace portico::controller::sync

#endif  // PORTICO_CONTROLLER_SYNC_LIST_CALL_H_
