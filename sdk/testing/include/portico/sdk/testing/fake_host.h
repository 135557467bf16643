// fake_host.h: FakeHost, an in-process stand-in for portico-controller and portico-gateway that
// loads built plugin .so files and drives their hooks through the real C ABI, for plugin unit
// tests (in-tree and third-party). Header-only; needs only the SDK headers (with RapidJSON, which
// also validates kinds' JSON Schemas as the real host does), the C++ standard library and dlfcn,
// so a GoogleTest binary can use it without any other Portico library.
//
//   portico::sdk::testing::FakeHost host;
//   ASSERT_TRUE(host.Load(PLUGIN_PATH).ok());
//   host.Apply(gateway_json);                       // processes and stores the Gateway's export
//   auto out = host.Process("gateway.networking.k8s.io", "HTTPRoute", route_json);
//   EXPECT_TRUE(out.status.ok()) << out.status;     // out.synced, out.export_json, out.reads ...
//   auto filter = host.CreateFilter("example.io/Limit", *out.synced);  // one instance, kept
//   (*filter)->Run(exchange);                       // as many requests as the test needs;
//   host.AdvanceMs(1000);                           // the fake clock, which filters read too
//
// Loading (plugin_library.h): like the real host, libraries are opened with RTLD_NOW |
// RTLD_LOCAL and never unloaded; each registration is cached process-wide and shared by every
// FakeHost that loads the same library.
//
// Threading and ownership: a FakeHost is not thread-safe; use it from one test thread. It owns
// copies of everything plugins hand it (kind strings, exports, staged contributions); the cached
// registrations are immutable and guarded by a mutex while being created.
#ifndef PORTICO_SDK_TESTING_FAKE_HOST_H_
#define PORTICO_SDK_TESTING_FAKE_HOST_H_

#include <rapidjson/schema.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "portico/sdk/abi.h"
#include "portico/sdk/json.h"
#include "portico/sdk/label_selector.h"
#include "portico/sdk/processor.h"
#include "portico/sdk/secret_data.h"
#include "portico/sdk/status.h"
#include "portico/sdk/testing/fake_filter.h"
#include "portico/sdk/testing/fake_http.h"
#include "portico/sdk/testing/fake_stage.h"
#include "portico/sdk/testing/fake_util.h"
#include "portico/sdk/testing/plugin_library.h"
#include "portico/sdk/types.h"

namespace portico::sdk::testing {

// ProcessOutcome is everything one process() call produced. On error, synced/status/export and
// contributions are empty (the real host keeps the previous result); reads and logs are kept.
struct ProcessOutcome {
  Status status;
  ObjectRef ref;
  std::optional<std::string> synced;
  std::optional<std::string> status_json;
  std::optional<std::string> export_json;
  std::vector<Contribution> contributions;
  // Sync-scope links the processor declared (abi.h, portico_link_type), in call order.
  std::vector<std::pair<ObjectRef, portico_link_type>> links;
  // One line per read, in call order: "get Kind ns/name hit|miss", "list Kind ns|* [selector]",
  // "reference FromKind from_ns -> Kind ns/name allowed|denied", "extension Kind ns/name
  // hit|miss", "secret ns/name hit|miss". Cluster-scoped objects are named without "ns/".
  std::vector<std::string> reads;
  std::vector<std::string> logs;  // "LEVEL message"

  bool ok() const { return status.ok(); }
};

// FakeHost loads plugins and plays the controller's and gateway's side of the ABI.
class FakeHost {
 public:
  FakeHost() = default;
  FakeHost(const FakeHost&) = delete;
  FakeHost& operator=(const FakeHost&) = delete;

  // ------------------------------------------------------------------ loading

  // Load opens a built plugin and adds its kinds, filter types and reference policy. Loading
  // the same library twice is a no-op; a kind or policy another loaded plugin owns is refused.
  Status Load(const std::string& path) {
    PORTICO_ASSIGN_OR_RETURN(std::shared_ptr<const LoadedPlugin> plugin, detail::LoadLibrary(path));
    for (const auto& p : plugins_) {
      if (p == plugin) return OkStatus();
    }
    for (const RegisteredKind& k : plugin->kinds) {
      if (const RegisteredKind* other = FindKind(k.group, k.kind)) {
        return AlreadyExistsError("plugin " + plugin->name + ": kind " + k.kind + "." + k.group +
                                  " is already provided by plugin " + other->plugin);
      }
    }
    if (plugin->reference_policy && policy_ != nullptr) {
      return AlreadyExistsError("plugin " + plugin->name +
                                ": a reference policy is already provided by plugin " +
                                policy_plugin_);
    }
    for (const RegisteredKind& k : plugin->kinds) kinds_[{k.group, k.kind}] = &k;
    for (const RegisteredFilterType& f : plugin->filter_types) filters_[f.name] = &f;
    if (plugin->reference_policy) {
      policy_ = &*plugin->reference_policy;
      policy_plugin_ = plugin->name;
    }
    plugins_.push_back(std::move(plugin));
    return OkStatus();
  }

  const std::vector<std::shared_ptr<const LoadedPlugin>>& plugins() const { return plugins_; }

  // FindKind returns a loaded kind, or nullptr.
  const RegisteredKind* FindKind(std::string_view group, std::string_view kind) const {
    auto it = kinds_.find({std::string(group), std::string(kind)});
    return it == kinds_.end() ? nullptr : it->second;
  }
  const RegisteredFilterType* FindFilterType(std::string_view name) const {
    auto it = filters_.find(std::string(name));
    return it == filters_.end() ? nullptr : it->second;
  }
  bool has_reference_policy() const { return policy_ != nullptr; }

  // ------------------------------------------------------------------ world state

  // Schema validation before process() is on by default, as in the real host; tests of a
  // processor's own cross-field rules may switch it off to reach the processor directly.
  void set_validate_schema(bool on) { validate_schema_ = on; }

  // SetExport stores another object's export (and labels, for label selectors).
  void SetExport(const ObjectRef& ref, std::string json,
                 std::map<std::string, std::string> labels = {}) {
    exports_[ref] = Stored{std::move(json), std::move(labels)};
  }
  std::optional<std::string> GetExport(const ObjectRef& ref) const {
    auto it = exports_.find(ref);
    if (it == exports_.end()) return std::nullopt;
    return it->second.json;
  }
  // SetSecret stores a Secret for get_secret(); `data` values are base64 already.
  void SetSecret(std::string_view ns, std::string_view name, std::string_view type,
                 const std::map<std::string, std::string>& data) {
    std::string out = "{\"type\":" + detail::Quote(type) + ",\"data\":{";
    bool first = true;
    for (const auto& [k, v] : data) {
      if (!first) out += ",";
      first = false;
      out += detail::Quote(k) + ":" + detail::Quote(v);
    }
    secrets_[{std::string(ns), std::string(name)}] = out + "}}";
  }
  // SetSynced stores a synced view for the gateway side's get_synced().
  void SetSynced(const ObjectRef& ref, std::string json) { synced_[ref] = std::move(json); }

  // Delete forgets an object: its export, synced view and (for a core Secret) its data.
  void Delete(const ObjectRef& ref) {
    exports_.erase(ref);
    synced_.erase(ref);
    if (ref.group.empty() && ref.kind == "Secret") secrets_.erase({ref.ns, ref.name});
  }

  // The fake clock: processors read it as now_unix_ms, filters as their monotonic clock.
  void SetNowUnixMs(int64_t ms) { now_ms_ = ms; }
  void AdvanceMs(int64_t ms) { now_ms_ += ms; }
  int64_t now_unix_ms() const { return now_ms_; }

  // Metric returns a counter's sum; with `kind` empty, summed over every kind.
  double Metric(std::string_view name, std::string_view kind = "") const {
    double sum = 0;
    for (const auto& [key, value] : metrics_) {
      if (key.first == name && (kind.empty() || key.second == kind)) sum += value;
    }
    return sum;
  }
  // logs returns every log line of every call so far ("LEVEL message").
  const std::vector<std::string>& logs() const { return logs_; }

  // ------------------------------------------------------------------ controller side

  // Process runs the processor of (group, kind) on `object_json`, as the controller would after
  // parsing: ref from the JSON's apiVersion, kind and metadata; generation from
  // metadata.generation (default 1); namespace "default" when a namespaced object has none.
  ProcessOutcome Process(std::string_view group, std::string_view kind,
                         std::string_view object_json) {
    ProcessOutcome out;
    const RegisteredKind* k = FindKind(group, kind);
    if (k == nullptr) {
      out.status =
          NotFoundError("kind " + std::string(kind) + "." + std::string(group) + " is not loaded");
      return out;
    }
    auto doc = json::Parse(object_json, std::string(kind));
    if (!doc.ok()) {
      out.status = doc.status();
      return out;
    }
    std::string version;
    out.status = Prepare(*k, *doc, &out.ref, &version);
    if (!out.status.ok()) return out;
    out.status = ValidateSchema(*k, *doc, out.ref);
    if (!out.status.ok() || k->process == nullptr) return out;

    // The host hands the object over without status, as the real controller does.
    std::string object_text(object_json);
    if (doc->HasMember("status")) {
      doc->RemoveMember("status");
      object_text = json::Serialize(*doc);
    }
    portico_object obj{sizeof(portico_object), out.ref.ToC(), Str(version), Str(object_text),
                       json::GetInt(*doc, "metadata.generation").value_or(1)};
    Call call{this, &out.reads, &out.logs, k->kind, nullptr, &out.ref};
    portico_process_context ctx = MakeContext(&call);
    call.ctx = &ctx;
    StringSink synced, status, export_view;
    portico_process_result result{sizeof(portico_process_result),
                                  *synced.sink(),
                                  *status.sink(),
                                  *export_view.sink(),
                                  &out,
                                  &OnContribute,
                                  &OnLink};
    StringSink error;
    portico_code code = k->process(k->user, &obj, &ctx, &result, error.sink());
    if (code != PORTICO_OK) {
      out.status = Status(static_cast<StatusCode>(code), error.take());
      out.contributions.clear();
      out.links.clear();
      return out;
    }
    if (synced.written()) out.synced = synced.take();
    if (status.written()) out.status_json = status.take();
    if (export_view.written()) out.export_json = export_view.take();
    return out;
  }

  // Apply processes an object (group and kind from its JSON) and, when it succeeds, stores its
  // export (with its labels), its synced view and, for a core Secret, its data, so that objects
  // processed later read it. On failure the previous state is kept, as in the real host.
  ProcessOutcome Apply(std::string_view object_json) {
    auto doc = json::Parse(object_json, "object");
    if (!doc.ok()) {
      ProcessOutcome out;
      out.status = doc.status();
      return out;
    }
    auto [group, version] = detail::SplitApiVersion(json::GetString(*doc, "apiVersion"));
    std::string kind = json::GetString(*doc, "kind");
    ProcessOutcome out = Process(group, kind, object_json);
    if (!out.ok()) return out;
    if (out.export_json) {
      SetExport(out.ref, *out.export_json, detail::LabelsOf(*doc));
    } else {
      exports_.erase(out.ref);
    }
    if (out.synced) {
      synced_[out.ref] = *out.synced;
    } else {
      synced_.erase(out.ref);
    }
    if (group.empty() && kind == "Secret") StoreSecret(out.ref, *doc);
    return out;
  }

  // ReferenceAllowed asks the loaded reference policy directly (outside any process() call);
  // denied when no plugin provides one. Reads the policy made are appended to `reads`.
  bool ReferenceAllowed(std::string_view from_group, std::string_view from_kind,
                        std::string_view from_ns, const ObjectRef& to,
                        std::vector<std::string>* reads = nullptr) {
    std::vector<std::string> local_reads, local_logs;
    Call call{this, reads != nullptr ? reads : &local_reads, &local_logs, "", nullptr};
    portico_process_context ctx = MakeContext(&call);
    call.ctx = &ctx;
    portico_object_ref c = to.ToC();
    return OnReferenceAllowed(&call, Str(from_group), Str(from_kind), Str(from_ns), &c) != 0;
  }

  // ------------------------------------------------------------------ gateway side

  // Stage runs the handler of (group, kind) on one batch in a fake transaction. Upserts and
  // deletes update the synced views get_synced() reads before the handler runs.
  StageOutcome Stage(std::string_view group, std::string_view kind,
                     const std::vector<FakeChange>& changes) {
    StageOutcome out;
    const RegisteredKind* k = FindKind(group, kind);
    if (k == nullptr || k->stage == nullptr) {
      out.status = FailedPreconditionError("kind " + std::string(kind) + "." + std::string(group) +
                                           " has no loaded handler");
      out.puts = runtime_;
      return out;
    }
    auto runtime_before = runtime_;
    auto synced_before = synced_;
    std::vector<portico_change> raw;
    for (const FakeChange& c : changes) {
      raw.push_back(
          portico_change{sizeof(portico_change), c.op, c.ref.ToC(), Str(c.json), Str(c.hash)});
      if (c.op == PORTICO_CHANGE_UPSERT) {
        synced_[c.ref] = c.json;
      } else {
        synced_.erase(c.ref);
      }
    }
    TxnCall call{this, &out};
    portico_txn txn{sizeof(portico_txn), &call,        &OnPut,  &OnRemove,
                    &OnClearOwner,       &OnGetSynced, &OnNack, &OnTxnLog};
    StringSink error;
    portico_code code = k->stage(k->user, &txn, raw.data(), raw.size(), error.sink());
    if (code != PORTICO_OK) {
      out.status = Status(static_cast<StatusCode>(code), error.take());
      runtime_ = std::move(runtime_before);
      synced_ = std::move(synced_before);
    } else {
      for (const auto& [ref, reason] : out.nacks) RestoreOwner(ref, runtime_before, synced_before);
    }
    out.puts = runtime_;
    return out;
  }

  // runtime is the fake gateway runtime: every staged (format, id) -> (owner, json).
  const std::map<StagedKey, StagedEntry>& runtime() const { return runtime_; }

  // ------------------------------------------------------------------ filters

  // SetHttpResponder answers filters' outbound calls (without one, calls fail with status 0).
  void SetHttpResponder(std::function<FakeHttpResponse(const portico_http_call&)> responder) {
    responder_ = std::move(responder);
  }

  // CreateFilter makes an instance of filter type `name` from `config_json` (its create()), to
  // Run as many requests through as a test needs.
  StatusOr<std::unique_ptr<FakeFilter>> CreateFilter(std::string_view name,
                                                     std::string_view config_json) {
    const RegisteredFilterType* f = FindFilterType(name);
    if (f == nullptr) return NotFoundError("filter type " + std::string(name) + " is not loaded");
    void* instance = nullptr;
    StringSink error;
    portico_code code = f->create(f->user, Str(config_json), &instance, error.sink());
    if (code != PORTICO_OK) return Status(static_cast<StatusCode>(code), error.take());
    return std::make_unique<FakeFilter>(FakeFilterEnv{&responder_, &now_ms_, &logs_}, f, instance);
  }

  // RunFilter runs one request through a fresh instance (CreateFilter, FakeFilter::Run) and
  // destroys it; a create() failure is the outcome's status.
  FilterOutcome RunFilter(std::string_view name, std::string_view config_json,
                          FakeHttpExchange exchange,
                          std::optional<FakeHttpExchange> response = std::nullopt) {
    StatusOr<std::unique_ptr<FakeFilter>> filter = CreateFilter(name, config_json);
    if (!filter.ok()) {
      FilterOutcome out;
      out.status = filter.status();
      out.exchange = std::move(exchange);
      return out;
    }
    return (*filter)->Run(std::move(exchange), std::move(response));
  }

 private:
  struct Stored {
    std::string json;
    std::map<std::string, std::string> labels;
  };
  // Call is the host pointer of one process() context.
  struct Call {
    FakeHost* self;
    std::vector<std::string>* reads;
    std::vector<std::string>* logs;
    std::string kind;
    const portico_process_context* ctx;
    const ObjectRef* object;  // the object being processed
  };
  struct TxnCall {
    FakeHost* self;
    StageOutcome* out;
  };
  struct CompiledSchema {
    rapidjson::Document doc;
    std::unique_ptr<rapidjson::SchemaDocument> schema;
  };

  // Prepare derives the object's ref and version and checks what the real host checks before
  // the schema: kind, group, served version, name, scope.
  Status Prepare(const RegisteredKind& k, const rapidjson::Document& doc, ObjectRef* ref,
                 std::string* version) const {
    auto [group, v] = detail::SplitApiVersion(json::GetString(doc, "apiVersion"));
    ref->group = group;
    ref->kind = json::GetString(doc, "kind");
    ref->name = json::GetString(doc, "metadata.name");
    ref->ns = json::GetString(doc, "metadata.namespace");
    if (k.scope == PORTICO_SCOPE_CLUSTER) {
      ref->ns.clear();
    } else if (ref->ns.empty()) {
      ref->ns = "default";
    }
    *version = v;
    if (ref->group != k.group || ref->kind != k.kind) {
      return InvalidArgumentError("object of apiVersion \"" + json::GetString(doc, "apiVersion") +
                                  "\", kind \"" + ref->kind + "\" handed to kind " + k.kind + "." +
                                  k.group);
    }
    if (ref->name.empty()) return InvalidArgumentError(k.kind + ": metadata.name is required");
    if (std::find(k.versions.begin(), k.versions.end(), v) == k.versions.end()) {
      return InvalidArgumentError(ref->Display() + ": apiVersion \"" +
                                  json::GetString(doc, "apiVersion") +
                                  "\" is not served (served: " + JoinList(k.versions) + ")");
    }
    return OkStatus();
  }

  Status ValidateSchema(const RegisteredKind& k, const rapidjson::Document& doc,
                        const ObjectRef& ref) {
    if (!validate_schema_ || k.schema.empty()) return OkStatus();
    auto key = std::make_pair(k.group, k.kind);
    auto it = schemas_.find(key);
    if (it == schemas_.end()) {
      auto compiled = std::make_unique<CompiledSchema>();
      compiled->doc.Parse(k.schema.data(), k.schema.size());
      if (compiled->doc.HasParseError()) {
        return InternalError("kind " + k.kind + ": its JSON Schema does not parse");
      }
      compiled->schema = std::make_unique<rapidjson::SchemaDocument>(compiled->doc);
      it = schemas_.emplace(key, std::move(compiled)).first;
    }
    rapidjson::SchemaValidator validator(*it->second->schema);
    if (doc.Accept(validator)) return OkStatus();
    return InvalidArgumentError(
        ref.Display() + ": schema: " + detail::PointerPath(validator.GetInvalidDocumentPointer()) +
        ": violates \"" + validator.GetInvalidSchemaKeyword() + "\"");
  }

  void StoreSecret(const ObjectRef& ref, const rapidjson::Value& doc) {
    SetSecret(ref.ns, ref.name, json::GetString(doc, "type", "Opaque"), SecretData(doc));
  }

  void RestoreOwner(const ObjectRef& ref, const std::map<StagedKey, StagedEntry>& before,
                    const std::map<ObjectRef, std::string>& synced_before) {
    std::string owner = ref.Key();
    std::erase_if(runtime_, [&](const auto& kv) { return kv.second.owner == owner; });
    for (const auto& [key, entry] : before) {
      if (entry.owner == owner) runtime_[key] = entry;
    }
    if (auto it = synced_before.find(ref); it != synced_before.end()) {
      synced_[ref] = it->second;
    } else {
      synced_.erase(ref);
    }
  }

  void AddLog(std::vector<std::string>* call_logs, portico_log_level level, std::string_view m) {
    std::string line = std::string(detail::LevelName(level)) + " " + std::string(m);
    if (call_logs != nullptr) call_logs->push_back(line);
    logs_.push_back(std::move(line));
  }

  // ---------------------------------------------------------------- process context callbacks

  static portico_process_context MakeContext(Call* call) {
    return portico_process_context{sizeof(portico_process_context),
                                   call,
                                   &OnGetExport,
                                   &OnListExports,
                                   &OnReferenceAllowed,
                                   &OnResolveExtensionRef,
                                   &OnGetSecret,
                                   &OnLog,
                                   &OnMetricAdd,
                                   &OnNow,
                                   &OnPreviousSynced};
  }

  static int OnGetExport(void* host, const portico_object_ref* ref, portico_sink* out) {
    auto* call = static_cast<Call*>(host);
    ObjectRef r = ObjectRef::FromC(*ref);
    auto it = call->self->exports_.find(r);
    bool hit = it != call->self->exports_.end();
    call->reads->push_back("get " + r.kind + " " + detail::Name(r.ns, r.name) +
                           (hit ? " hit" : " miss"));
    if (!hit) return 0;
    WriteSink(out, it->second.json);
    return 1;
  }

  static int64_t OnListExports(void* host, portico_str group, portico_str kind, portico_str ns,
                               portico_str selector, portico_sink* out) {
    auto* call = static_cast<Call*>(host);
    std::string line = "list " + std::string(View(kind)) + " " +
                       (View(ns).empty() ? std::string("*") : std::string(View(ns)));
    if (!View(selector).empty()) line += " " + std::string(View(selector));
    auto parsed = LabelSelector::Parse(View(selector));
    if (!parsed.ok()) {
      call->reads->push_back(line + " (invalid selector)");
      call->self->AddLog(call->logs, PORTICO_LOG_ERROR, parsed.status().message());
      return -1;
    }
    call->reads->push_back(line);
    std::string body = "[";
    int64_t count = 0;
    for (const auto& [ref, stored] : call->self->exports_) {
      if (ref.group != View(group) || ref.kind != View(kind)) continue;
      if (!View(ns).empty() && ref.ns != View(ns)) continue;
      if (!parsed->Matches(stored.labels)) continue;
      if (count++ > 0) body += ",";
      body += "{\"namespace\":" + detail::Quote(ref.ns) + ",\"name\":" + detail::Quote(ref.name) +
              ",\"labels\":{";
      bool first = true;
      for (const auto& [k, v] : stored.labels) {
        if (!first) body += ",";
        first = false;
        body += detail::Quote(k) + ":" + detail::Quote(v);
      }
      body += "},\"export\":" + stored.json + "}";
    }
    WriteSink(out, body + "]");
    return count;
  }

  static int OnReferenceAllowed(void* host, portico_str from_group, portico_str from_kind,
                                portico_str from_ns, const portico_object_ref* to) {
    auto* call = static_cast<Call*>(host);
    const portico_reference_policy* policy = call->self->policy_;
    int allowed = 0;
    if (policy != nullptr) {
      allowed = policy->allowed(policy->user, call->ctx, from_group, from_kind, from_ns, to);
    }
    ObjectRef r = ObjectRef::FromC(*to);
    call->reads->push_back("reference " + std::string(View(from_kind)) + " " +
                           std::string(View(from_ns)) + " -> " + r.kind + " " +
                           detail::Name(r.ns, r.name) + (allowed ? " allowed" : " denied"));
    return allowed;
  }

  static int OnResolveExtensionRef(void* host, const portico_object_ref* ref, portico_sink* out) {
    auto* call = static_cast<Call*>(host);
    ObjectRef r = ObjectRef::FromC(*ref);
    const RegisteredKind* k = call->self->FindKind(r.group, r.kind);
    auto it = call->self->exports_.find(r);
    bool hit = k != nullptr && (k->capabilities & PORTICO_CAP_ROUTE_FILTER) != 0 &&
               it != call->self->exports_.end();
    call->reads->push_back("extension " + r.kind + " " + detail::Name(r.ns, r.name) +
                           (hit ? " hit" : " miss"));
    if (!hit) return 0;
    WriteSink(out, it->second.json);
    return 1;
  }

  static int OnGetSecret(void* host, portico_str ns, portico_str name, portico_sink* out) {
    auto* call = static_cast<Call*>(host);
    auto it = call->self->secrets_.find({std::string(View(ns)), std::string(View(name))});
    bool hit = it != call->self->secrets_.end();
    call->reads->push_back("secret " + detail::Name(View(ns), View(name)) +
                           (hit ? " hit" : " miss"));
    if (!hit) return 0;
    WriteSink(out, it->second);
    return 1;
  }

  static void OnLog(void* host, portico_log_level level, portico_str message) {
    auto* call = static_cast<Call*>(host);
    call->self->AddLog(call->logs, level, View(message));
  }
  static void OnMetricAdd(void* host, portico_str name, double delta) {
    auto* call = static_cast<Call*>(host);
    call->self->metrics_[{std::string(View(name)), call->kind}] += delta;
  }
  static int64_t OnNow(void* host) { return static_cast<Call*>(host)->self->now_ms_; }

  // OnPreviousSynced: the synced view the last successful Apply of this object stored.
  static int OnPreviousSynced(void* host, portico_sink* out) {
    auto* call = static_cast<Call*>(host);
    auto it = call->self->synced_.find(*call->object);
    call->reads->push_back(std::string("previous synced ") +
                           (it != call->self->synced_.end() ? "hit" : "miss"));
    if (it == call->self->synced_.end()) return 0;
    WriteSink(out, it->second);
    return 1;
  }

  static void OnLink(void* host, const portico_object_ref* target, int type) {
    auto* out = static_cast<ProcessOutcome*>(host);
    out->links.emplace_back(ObjectRef::FromC(*target), static_cast<portico_link_type>(type));
  }

  static void OnContribute(void* host, const portico_object_ref* target, portico_str topic,
                           portico_str json) {
    auto* out = static_cast<ProcessOutcome*>(host);
    out->contributions.push_back(
        Contribution{ObjectRef::FromC(*target), std::string(View(topic)), std::string(View(json))});
  }

  // ---------------------------------------------------------------- txn callbacks

  static bool KnownFormat(std::string_view format) {
    return format == PORTICO_FORMAT_LISTENER_SET || format == PORTICO_FORMAT_ROUTE_RULES ||
           format == PORTICO_FORMAT_BACKEND || format == PORTICO_FORMAT_CERTIFICATE ||
           format == PORTICO_FORMAT_FILTER_BINDING;
  }

  static portico_code OnPut(void* host, portico_str owner, portico_str format, portico_str id,
                            portico_str json, portico_sink* error) {
    auto* call = static_cast<TxnCall*>(host);
    if (!KnownFormat(View(format))) {
      WriteSink(error, "unknown contribution format \"" + std::string(View(format)) + "\"");
      return PORTICO_INVALID_ARGUMENT;
    }
    if (View(owner).empty() || View(id).empty()) {
      WriteSink(error, "put needs an owner and an id");
      return PORTICO_INVALID_ARGUMENT;
    }
    auto parsed = json::Parse(View(json), std::string(View(format)) + " " + std::string(View(id)));
    if (!parsed.ok()) {
      WriteSink(error, parsed.status().message());
      return PORTICO_INVALID_ARGUMENT;
    }
    call->self->runtime_[{std::string(View(format)), std::string(View(id))}] =
        StagedEntry{std::string(View(owner)), std::string(View(json))};
    return PORTICO_OK;
  }

  static void OnRemove(void* host, portico_str owner, portico_str format, portico_str id) {
    auto* call = static_cast<TxnCall*>(host);
    auto it = call->self->runtime_.find({std::string(View(format)), std::string(View(id))});
    if (it != call->self->runtime_.end() && it->second.owner == View(owner)) {
      call->self->runtime_.erase(it);
    }
  }

  static void OnClearOwner(void* host, portico_str owner) {
    auto* call = static_cast<TxnCall*>(host);
    std::erase_if(call->self->runtime_,
                  [&](const auto& kv) { return kv.second.owner == View(owner); });
  }

  static int OnGetSynced(void* host, const portico_object_ref* ref, portico_sink* out) {
    auto* call = static_cast<TxnCall*>(host);
    auto it = call->self->synced_.find(ObjectRef::FromC(*ref));
    if (it == call->self->synced_.end()) return 0;
    WriteSink(out, it->second);
    return 1;
  }

  static void OnNack(void* host, const portico_object_ref* ref, portico_str reason) {
    auto* call = static_cast<TxnCall*>(host);
    call->out->nacks.emplace_back(ObjectRef::FromC(*ref), std::string(View(reason)));
  }

  static void OnTxnLog(void* host, portico_log_level level, portico_str message) {
    auto* call = static_cast<TxnCall*>(host);
    call->self->AddLog(&call->out->logs, level, View(message));
  }

  std::vector<std::shared_ptr<const LoadedPlugin>> plugins_;
  std::map<std::pair<std::string, std::string>, const RegisteredKind*> kinds_;
  std::map<std::string, const RegisteredFilterType*> filters_;
  const portico_reference_policy* policy_ = nullptr;
  std::string policy_plugin_;
  std::map<std::pair<std::string, std::string>, std::unique_ptr<CompiledSchema>> schemas_;
  bool validate_schema_ = true;

  std::map<ObjectRef, Stored> exports_;
  std::map<std::pair<std::string, std::string>, std::string> secrets_;
  std::map<ObjectRef, std::string> synced_;
  std::map<StagedKey, StagedEntry> runtime_;
  std::function<FakeHttpResponse(const portico_http_call&)> responder_;

  int64_t now_ms_ = 1700000000000;  // 2023-11-14T22:13:20Z
  std::map<std::pair<std::string, std::string>, double> metrics_;
  std::vector<std::string> logs_;
};

}  // namespace portico::sdk::testing

#endif  // PORTICO_SDK_TESTING_FAKE_HOST_H_
