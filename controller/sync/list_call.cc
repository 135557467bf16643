#include "controller/sync/list_call.h"

#include <utility>

namespace portico::controller::sync {

namespace pb = portico::sync::v1;

std::vector<OutEvent> ListEvents(core::StoreSnapshot& snapshot, const SyncPolicies& policies,
                                 const pb::ListRequest& request) {
  std::vector<OutEvent> events;
  for (core::StoredObject& object : snapshot.objects) {
    if (object.json == nullptr || !policies.Syncs(object.key)) continue;
    if (!request.namespace_().empty() && !object.key.ns.empty() &&
        object.key.ns != request.namespace_()) {
      continue;
    }
    if (request.kinds_size() > 0) {
      bool wanted = false;
      for (const pb::KindRef& kind : request.kinds()) {
        wanted = wanted || (kind.kind() == object.key.kind && kind.group() == object.key.group);
      }
      if (!wanted) continue;
    }
    OutEvent& e = events.emplace_back();
    e.key = std::move(object.key);
    e.hash = std::move(object.hash);
    e.json = std::move(object.json);
    e.version = object.version;
  }
  return events;
}

ListWriter::ListWriter(std::vector<OutEvent> events, uint64_t version, std::string server_id,
                       size_t max_bytes)
    : chunker_(std::move(events), MessageBudget(max_bytes, 32 + server_id.size())),
      version_(version),
      server_id_(std::move(server_id)) {
  WriteNext();
}

void ListWriter::OnWriteDone(bool ok) {
  if (!ok) {
    Finish(grpc::Status(grpc::StatusCode::CANCELLED, "list: write failed"));
    return;
  }
  WriteNext();
}

void ListWriter::WriteNext() {
  if (sent_any_ && chunker_.Done()) {
    Finish(grpc::Status::OK);
    return;
  }
  out_.Clear();
  chunker_.Fill(out_.mutable_events());
  out_.set_version(version_);
  out_.set_server_id(server_id_);
  sent_any_ = true;
  StartWrite(&out_);
}

}  // namespace portico::controller::sync
