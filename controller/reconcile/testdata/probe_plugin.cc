// probe_plugin: test-only kinds (group test.portico.io) whose processor follows the object's
// spec, so reconciler tests control reads, exports, contributions and failures exactly:
//   spec.gets:       [{group,kind,namespace,name}]          -> status.got: [bool]
//   spec.lists:      [{group,kind,namespace,selector}]      -> status.listed: [["ns/name",..]]
//   spec.secrets:    [{namespace,name}]                     -> status.secrets: [{found,type,keys}]
//   spec.references: [{fromGroup,fromKind,fromNamespace,to}] -> status.allowed: [bool]
//   spec.extensions: [{group,kind,namespace,name}]          -> status.extensions: [bool]
//   spec.contribute: [{target,topic,json}]                  -> contributions (json: any value)
//   spec.export / spec.synced: any value                    -> export / synced view
//   spec.status: object                                     -> the base of the status
//   spec.failCode (+ spec.failTimes)                         -> fail (the first failTimes runs)
//   spec.metric / spec.log: string                          -> metric_add(name, 1) / log(info)
//   spec.fault: "throw" | "crash" | "abort" | "hang"          -> throws std::runtime_error, writes
//                                                              through a null pointer, calls
//                                                              abort() or never returns
// Every status also carries seq (a process-wide run counter), run (this object's run count),
// generation, and violations (runs that overlapped another run of the same object).
// Threading: global state under a mutex; process() may run concurrently.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>

#include "portico/sdk/plugin.h"

namespace portico::test_probe {
namespace {

std::atomic<int64_t> g_seq{0};
std::atomic<int64_t> g_violations{0};
std::mutex g_mu;
std::map<std::string, int64_t> g_runs;  // guarded by g_mu
std::set<std::string> g_in_flight;      // guarded by g_mu

using Allocator = rapidjson::Document::AllocatorType;

sdk::ObjectRef RefOf(const rapidjson::Value& v) {
  return sdk::ObjectRef{json::GetString(v, "group"), json::GetString(v, "kind"),
                        json::GetString(v, "namespace"), json::GetString(v, "name")};
}

const rapidjson::Value* ArrayAt(const rapidjson::Value& spec, const char* name) {
  const rapidjson::Value* a = json::Find(spec, name);
  return a != nullptr && a->IsArray() ? a : nullptr;
}

rapidjson::Value Str(const std::string& s, Allocator& a) { return rapidjson::Value(s.c_str(), a); }

// InFlight marks one run of an object and counts overlapping runs of the same object.
class InFlight {
 public:
  explicit InFlight(std::string key) : key_(std::move(key)) {
    std::lock_guard lock(g_mu);
    if (!g_in_flight.insert(key_).second) g_violations.fetch_add(1);
  }
  ~InFlight() {
    std::lock_guard lock(g_mu);
    g_in_flight.erase(key_);
  }

 private:
  std::string key_;
};

Status Probe(const sdk::Object& obj, sdk::ProcessContext& ctx, sdk::ProcessResult& result) {
  PORTICO_ASSIGN_OR_RETURN(const rapidjson::Document* doc, obj.doc());
  InFlight in_flight(obj.ref().Key());
  static const rapidjson::Value kEmpty(rapidjson::kObjectType);
  const rapidjson::Value* spec = json::Find(*doc, "spec");
  if (spec == nullptr || !spec->IsObject()) spec = &kEmpty;
  int64_t seq = g_seq.fetch_add(1) + 1;
  int64_t run = 0;
  {
    std::lock_guard lock(g_mu);
    run = ++g_runs[obj.ref().Key()];
  }
  if (std::optional<int64_t> code = json::GetInt(*spec, "failCode")) {
    int64_t times = json::GetInt(*spec, "failTimes").value_or(INT64_MAX);
    if (run <= times) {
      return Status(static_cast<StatusCode>(*code),
                    obj.ref().Display() + ": spec.failCode: failing run " + std::to_string(run));
    }
  }

  if (std::string fault = json::GetString(*spec, "fault"); !fault.empty()) {
    if (fault == "throw") throw std::runtime_error("probe fault: thrown on purpose");
    if (fault == "crash") {
      int* volatile nowhere = nullptr;
      *nowhere = 1;
    }
    if (fault == "abort") std::abort();
    if (fault == "hang") {
      volatile bool forever = true;
      while (forever) {
      }
    }
  }

  rapidjson::Document status(rapidjson::kObjectType);
  Allocator& a = status.GetAllocator();
  if (const rapidjson::Value* base = json::Find(*spec, "status"); base != nullptr) {
    if (base->IsObject()) status.CopyFrom(*base, a);
  }
  status.AddMember("seq", seq, a);
  status.AddMember("run", run, a);
  status.AddMember("generation", obj.generation(), a);

  if (const rapidjson::Value* gets = ArrayAt(*spec, "gets")) {
    rapidjson::Value got(rapidjson::kArrayType);
    for (const auto& g : gets->GetArray()) got.PushBack(ctx.GetExport(RefOf(g)).has_value(), a);
    status.AddMember("got", got, a);
  }
  if (const rapidjson::Value* lists = ArrayAt(*spec, "lists")) {
    rapidjson::Value listed(rapidjson::kArrayType);
    for (const auto& l : lists->GetArray()) {
      std::string body =
          ctx.ListExports(json::GetString(l, "group"), json::GetString(l, "kind"),
                          json::GetString(l, "namespace"), json::GetString(l, "selector"));
      rapidjson::Value names(rapidjson::kArrayType);
      auto parsed = json::Parse(body, "list");
      if (parsed.ok() && parsed->IsArray()) {
        for (const auto& item : parsed->GetArray()) {
          std::string ns = json::GetString(item, "namespace");
          std::string name = (ns.empty() ? "" : ns + "/") + json::GetString(item, "name");
          names.PushBack(Str(name, a), a);
        }
      }
      listed.PushBack(names, a);
    }
    status.AddMember("listed", listed, a);
  }
  if (const rapidjson::Value* secrets = ArrayAt(*spec, "secrets")) {
    rapidjson::Value out(rapidjson::kArrayType);
    for (const auto& s : secrets->GetArray()) {
      rapidjson::Value entry(rapidjson::kObjectType);
      auto secret = ctx.GetSecret(json::GetString(s, "namespace"), json::GetString(s, "name"));
      entry.AddMember("found", secret.has_value(), a);
      if (secret.has_value()) {
        auto parsed = json::Parse(*secret, "secret");
        if (parsed.ok()) {
          entry.AddMember("type", Str(json::GetString(*parsed, "type"), a), a);
          rapidjson::Value keys(rapidjson::kArrayType);
          if (const rapidjson::Value* data = json::Find(*parsed, "data");
              data != nullptr && data->IsObject()) {
            for (const auto& m : data->GetObject()) {
              keys.PushBack(rapidjson::Value(m.name.GetString(), a), a);
            }
          }
          entry.AddMember("keys", keys, a);
          entry.AddMember("bytes", static_cast<int64_t>(secret->size()), a);
        }
      }
      out.PushBack(entry, a);
    }
    status.AddMember("secrets", out, a);
  }
  if (const rapidjson::Value* refs = ArrayAt(*spec, "references")) {
    rapidjson::Value out(rapidjson::kArrayType);
    for (const auto& r : refs->GetArray()) {
      const rapidjson::Value* to = json::Find(r, "to");
      bool allowed =
          to != nullptr &&
          ctx.ReferenceAllowed(json::GetString(r, "fromGroup"), json::GetString(r, "fromKind"),
                               json::GetString(r, "fromNamespace"), RefOf(*to));
      out.PushBack(allowed, a);
    }
    status.AddMember("allowed", out, a);
  }
  if (const rapidjson::Value* exts = ArrayAt(*spec, "extensions")) {
    rapidjson::Value out(rapidjson::kArrayType);
    for (const auto& e : exts->GetArray()) {
      out.PushBack(ctx.ResolveExtensionRef(RefOf(e)).has_value(), a);
    }
    status.AddMember("extensions", out, a);
  }
  if (const rapidjson::Value* contribute = ArrayAt(*spec, "contribute")) {
    for (const auto& c : contribute->GetArray()) {
      const rapidjson::Value* target = json::Find(c, "target");
      const rapidjson::Value* value = json::Find(c, "json");
      if (target == nullptr) continue;
      result.Contribute(RefOf(*target), json::GetString(c, "topic"),
                        value != nullptr ? json::Serialize(*value) : "");
    }
  }
  if (std::string metric = json::GetString(*spec, "metric"); !metric.empty()) {
    ctx.MetricAdd(metric, 1);
  }
  if (std::string message = json::GetString(*spec, "log"); !message.empty()) {
    ctx.Log(PORTICO_LOG_INFO, message);
  }
  if (const rapidjson::Value* e = json::Find(*spec, "export"); e != nullptr) {
    result.SetExport(json::Serialize(*e));
  }
  if (const rapidjson::Value* s = json::Find(*spec, "synced"); s != nullptr) {
    result.SetSynced(json::Serialize(*s));
  }
  status.AddMember("violations", g_violations.load(), a);
  result.SetStatus(json::Serialize(status));
  return OkStatus();
}

void Setup(sdk::Plugin& p) {
  for (const char* kind : {"Target", "Source", "Leaf", "Filter"}) {
    p.Kind("test.portico.io", kind).Process(&Probe);
  }
}

}  // namespace
}  // namespace portico::test_probe

PORTICO_PLUGIN(portico::test_probe::Setup)
