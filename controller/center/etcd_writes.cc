#include "controller/center/etcd_writes.h"

#include <algorithm>

namespace portico::controller {
namespace {

std::string Against(int64_t revision) {
  return revision == 0 ? "written as new" : "written against revision " + std::to_string(revision);
}

}  // namespace

StatusOr<int64_t> CommitEtcdWrites(EtcdClient& client, const std::vector<EtcdWrite>& writes) {
  int64_t revision = 0;
  size_t written = 0;
  for (size_t begin = 0; begin < writes.size(); begin += kEtcdWritesPerTxn) {
    size_t end = std::min(writes.size(), begin + kEtcdWritesPerTxn);
    etcdserverpb::TxnRequest txn;
    for (size_t i = begin; i < end; ++i) {
      const EtcdWrite& w = writes[i];
      etcdserverpb::Compare* compare = txn.add_compare();
      compare->set_result(etcdserverpb::Compare::EQUAL);
      compare->set_target(etcdserverpb::Compare::MOD);
      compare->set_key(w.key);
      compare->set_mod_revision(w.expected);
      if (w.remove) {
        txn.add_success()->mutable_request_delete_range()->set_key(w.key);
      } else {
        etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
        put->set_key(w.key);
        put->set_value(w.value);
      }
      etcdserverpb::RangeRequest* read = txn.add_failure()->mutable_request_range();
      read->set_key(w.key);
      read->set_keys_only(true);
    }
    StatusOr<etcdserverpb::TxnResponse> answered = client.Txn(txn);
    if (!answered.ok()) {
      StatusCode code = answered.status().code();
      if (code != StatusCode::kUnavailable && code != StatusCode::kDeadlineExceeded) {
        return answered.status();
      }
      // No member answered within the deadline (no quorum, or none reachable): not ready for
      // writes, while the controller keeps serving the last state it read.
      return UnavailableError(
          "etcd is not taking writes (no quorum, or no member reachable): the write was not "
          "confirmed" +
          (written == 0 ? std::string() : " (" + std::to_string(written) + " objects were)") +
          "; the controller keeps serving the last state it read: " + answered.status().message());
    }
    etcdserverpb::TxnResponse& response = *answered;
    revision = response.header().revision();
    if (response.succeeded()) {
      written += end - begin;
      continue;
    }
    std::string conflicts;
    for (size_t i = begin; i < end; ++i) {
      const etcdserverpb::ResponseOp& op = response.responses(static_cast<int>(i - begin));
      int64_t actual =
          op.response_range().kvs_size() > 0 ? op.response_range().kvs(0).mod_revision() : 0;
      if (actual == writes[i].expected) continue;
      conflicts += "\n" + writes[i].ref.Display() + " was " + Against(writes[i].expected) +
                   ", but etcd holds " +
                   (actual == 0 ? std::string("no such object (deleted)")
                                : "revision " + std::to_string(actual)) +
                   " (get it again and re-apply)";
    }
    std::string head = written == 0 ? "conflict, nothing was written:"
                                    : "conflict after " + std::to_string(written) +
                                          " objects were written; these were not:";
    return AbortedError(head + conflicts);
  }
  return revision;
}

}  // namespace portico::controller
