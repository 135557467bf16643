// probe_plugin: test-only kinds (group runtime.test.portico.io) whose gateway handler follows
// each synced view, so the runtime's tests control exactly what a handler does:
//   keep: true                          -> no clear_owner before the rest (default: cleared)
//   puts: [{format, id, json | raw, owner}] -> txn.put (owner defaults to the object's key; raw
//                                          is put as-is, e.g. invalid JSON); a put error fails
//                                          the call
//   removes: [{format, id, owner}]      -> txn.remove
//   clearOwners: [owner]                -> txn.clear_owner
//   getSynced: [{group, kind, namespace, name}] -> put filter_binding.v1
//                                          "synced/<kind>/<namespace>/<name>" =
//                                          {"found": bool, "view": <view or null>}
//   stamp: true                         -> put filter_binding.v1 "stamp/<kind>/<ns>/<name>" =
//                                          {"call": n, "count": changes in the call}, n counting
//                                          stage() calls process-wide
//   nack: "reason"                      -> txn.nack(this object)
//   nackRef: {group, kind, namespace, name, reason} -> txn.nack(that object)
//   fail: "message"                     -> stage() returns INTERNAL with the message, after this
//                                          change's other commands
// A delete clears the object's owner. Threading: the sync thread only (abi.h); the call counter
// is atomic anyway.
#include <atomic>
#include <cstdint>
#include <string>

#include "portico/sdk/plugin.h"

namespace portico::test_runtime_probe {
namespace {

std::atomic<int64_t> g_calls{0};

sdk::ObjectRef RefOf(const rapidjson::Value& v) {
  return sdk::ObjectRef{json::GetString(v, "group"), json::GetString(v, "kind"),
                        json::GetString(v, "namespace"), json::GetString(v, "name")};
}

bool Flag(const rapidjson::Value& view, const char* name) {
  const rapidjson::Value* v = json::Find(view, name);
  return v != nullptr && v->IsBool() && v->GetBool();
}

const rapidjson::Value* ArrayAt(const rapidjson::Value& view, const char* name) {
  const rapidjson::Value* a = json::Find(view, name);
  return a != nullptr && a->IsArray() ? a : nullptr;
}

Status StageOne(const sdk::Txn& txn, const sdk::Change& change, int64_t call, size_t count) {
  const std::string self = change.ref.Key();
  if (change.op == PORTICO_CHANGE_DELETE) {
    txn.ClearOwner(self);
    return OkStatus();
  }
  auto parsed = json::Parse(change.json, change.ref.Display());
  if (!parsed.ok() || !parsed->IsObject()) {
    txn.Nack(change.ref, "synced view is not a JSON object");
    return OkStatus();
  }
  const rapidjson::Document& view = *parsed;
  if (!Flag(view, "keep")) txn.ClearOwner(self);
  if (const rapidjson::Value* owners = ArrayAt(view, "clearOwners")) {
    for (const auto& o : owners->GetArray()) {
      if (o.IsString()) txn.ClearOwner(o.GetString());
    }
  }
  if (const rapidjson::Value* removes = ArrayAt(view, "removes")) {
    for (const auto& r : removes->GetArray()) {
      txn.Remove(json::GetString(r, "owner", self), json::GetString(r, "format"),
                 json::GetString(r, "id"));
    }
  }
  if (const rapidjson::Value* puts = ArrayAt(view, "puts")) {
    for (const auto& p : puts->GetArray()) {
      std::string body = "{}";
      if (const rapidjson::Value* raw = json::Find(p, "raw"); raw != nullptr && raw->IsString()) {
        body.assign(raw->GetString(), raw->GetStringLength());
      } else if (const rapidjson::Value* j = json::Find(p, "json"); j != nullptr) {
        body = json::Serialize(*j);
      }
      PORTICO_RETURN_IF_ERROR(txn.Put(json::GetString(p, "owner", self),
                                      json::GetString(p, "format"), json::GetString(p, "id"),
                                      body));
    }
  }
  if (const rapidjson::Value* reads = ArrayAt(view, "getSynced")) {
    for (const auto& r : reads->GetArray()) {
      sdk::ObjectRef ref = RefOf(r);
      std::optional<std::string> synced = txn.GetSynced(ref);
      std::string body = std::string("{\"found\":") + (synced ? "true" : "false") +
                         ",\"view\":" + (synced ? *synced : std::string("null")) + "}";
      PORTICO_RETURN_IF_ERROR(txn.Put(self, PORTICO_FORMAT_FILTER_BINDING,
                                      "synced/" + ref.kind + "/" + ref.ns + "/" + ref.name, body));
    }
  }
  if (Flag(view, "stamp")) {
    PORTICO_RETURN_IF_ERROR(
        txn.Put(self, PORTICO_FORMAT_FILTER_BINDING,
                "stamp/" + change.ref.kind + "/" + change.ref.ns + "/" + change.ref.name,
                "{\"call\":" + std::to_string(call) + ",\"count\":" + std::to_string(count) + "}"));
  }
  if (std::string reason = json::GetString(view, "nack"); !reason.empty()) {
    txn.Nack(change.ref, reason);
  }
  if (const rapidjson::Value* other = json::Find(view, "nackRef"); other != nullptr) {
    txn.Nack(RefOf(*other), json::GetString(*other, "reason", "nacked by " + change.ref.Display()));
  }
  if (std::string message = json::GetString(view, "fail"); !message.empty()) {
    return InternalError(message);
  }
  return OkStatus();
}

Status Stage(const sdk::Txn& txn, const std::vector<sdk::Change>& changes) {
  int64_t call = g_calls.fetch_add(1) + 1;
  for (const sdk::Change& change : changes) {
    PORTICO_RETURN_IF_ERROR(StageOne(txn, change, call, changes.size()));
  }
  return OkStatus();
}

void Setup(sdk::Plugin& p) {
  p.Kind("runtime.test.portico.io", "Apex").Stage(&Stage);
  p.Kind("runtime.test.portico.io", "Base").Stage(&Stage);
}

}  // namespace
}  // namespace portico::test_runtime_probe

PORTICO_PLUGIN(portico::test_runtime_probe::Setup)
