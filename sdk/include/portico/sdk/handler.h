// handler.h: the gateway-side C++ API of a kind: Change, Txn and StageFn, wrapping the C ABI's
// stage hook. A handler translates its kind's synced views into runtime contributions in the
// versioned formats of abi.h (PORTICO_FORMAT_*); it never publishes.
//
// Threading: stage runs one batch at a time, on a thread the gateway runtime starts for the
// batch (so no thread-local state survives between batches).
// Ownership: a Txn and every Change (its ref, json and hash are borrowed from the host) are
// valid only during that call; Txn::Put copies what it is given. A handler owns only the entries
// it put, keyed by owner (the object key, ObjectRef::Key()); the runtime, not the handler,
// commits the batch, and a returned error undoes everything that call staged.
#ifndef PORTICO_SDK_HANDLER_H_
#define PORTICO_SDK_HANDLER_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "portico/sdk/json.h"
#include "portico/sdk/json_writer.h"
#include "portico/sdk/status.h"
#include "portico/sdk/types.h"

namespace portico::sdk {

// Change is one synced object in a batch (json empty on delete).
struct Change {
  portico_change_op op;
  ObjectRef ref;
  std::string_view json;
  std::string_view hash;
};

// Txn stages contributions owned by object keys into the runtime transaction.
class Txn {
 public:
  explicit Txn(const portico_txn* raw) : raw_(raw) {}

  Status Put(std::string_view owner, std::string_view format, std::string_view id,
             std::string_view json) const {
    if (raw_->put == nullptr) return UnimplementedError("host has no txn.put");
    StringSink error;
    portico_code code =
        raw_->put(raw_->host, Str(owner), Str(format), Str(id), Str(json), error.sink());
    if (code == PORTICO_OK) return OkStatus();
    return Status(static_cast<StatusCode>(code), error.take());
  }
  void Remove(std::string_view owner, std::string_view format, std::string_view id) const {
    if (raw_->remove != nullptr) raw_->remove(raw_->host, Str(owner), Str(format), Str(id));
  }
  void ClearOwner(std::string_view owner) const {
    if (raw_->clear_owner != nullptr) raw_->clear_owner(raw_->host, Str(owner));
  }
  std::optional<std::string> GetSynced(const ObjectRef& ref) const {
    if (raw_->get_synced == nullptr) return std::nullopt;
    StringSink out;
    portico_object_ref c = ref.ToC();
    if (raw_->get_synced(raw_->host, &c, out.sink()) == 0) return std::nullopt;
    return out.take();
  }
  void Nack(const ObjectRef& ref, std::string_view reason) const {
    portico_object_ref c = ref.ToC();
    if (raw_->nack != nullptr) raw_->nack(raw_->host, &c, Str(reason));
  }
  void Log(portico_log_level level, std::string_view message) const {
    if (raw_->log != nullptr) raw_->log(raw_->host, level, Str(message));
  }

 private:
  const portico_txn* raw_;
};

// StageFn translates a kind's changes of one batch into contributions.
using StageFn = std::function<Status(const Txn&, const std::vector<Change>&)>;

// StageEachView is the idempotent staging loop most handlers want: for every change it drops
// what the object contributed before (ClearOwner); on an upsert it parses the synced view (a view
// that is not a JSON object nacks that object) and calls `fn(change, view)` to put the object's
// contributions again under owner change.ref.Key(). An error from `fn` fails the batch.
template <typename Fn>
Status StageEachView(const Txn& txn, const std::vector<Change>& changes, Fn&& fn) {
  for (const Change& change : changes) {
    txn.ClearOwner(change.ref.Key());
    if (change.op == PORTICO_CHANGE_DELETE) continue;
    auto view = json::Parse(change.json, change.ref.Display());
    if (!view.ok() || !view->IsObject()) {
      txn.Nack(change.ref, "synced view is not a JSON object");
      continue;
    }
    PORTICO_RETURN_IF_ERROR(fn(change, static_cast<const rapidjson::Document&>(*view)));
  }
  return OkStatus();
}

// StageFilterBindings is the whole handler of a kind that configures a filter of its own type
// `filter_type` (FilterTypeSpec::name): per object, one filter_binding.v1 entry
// (docs/contributions.md) whose id and owner are the object key, whose config is the synced view,
// and, when the view has an "attach" object ({"targets": [...], "created": ...}: the policy
// attachment a processor wrote), that attachment. Without "attach" the instance runs only where
// a route rule names it (ExtensionRef). A view whose "attach" is not an object is nacked.
inline Status StageFilterBindings(const Txn& txn, const std::vector<Change>& changes,
                                  std::string_view filter_type) {
  return StageEachView(txn, changes, [&](const Change& change, const rapidjson::Document& view) {
    const rapidjson::Value* attach = json::Find(view, "attach");
    if (attach != nullptr && !attach->IsObject()) {
      txn.Nack(change.ref, "synced view: \"attach\" is not an object");
      return OkStatus();
    }
    JsonWriter w;
    w.BeginObject().Field("filterType", filter_type).Key("config").Value(view);
    if (attach != nullptr) w.Key("attach").Value(*attach);
    const std::string key = change.ref.Key();
    return txn.Put(key, PORTICO_FORMAT_FILTER_BINDING, key, w.EndObject().Take());
  });
}

}  // namespace portico::sdk

#endif  // PORTICO_SDK_HANDLER_H_
