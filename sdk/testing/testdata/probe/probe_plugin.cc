// probe_plugin: a fake host fixture. Probe's processor performs the host reads its spec lists
// and echoes what it got in its synced view; its handler stages what the changes ask for; two
// filter types exercise the request path. Not a real kind: only fake_host_test loads it.
// Threading: stateless; hooks only touch their arguments.
#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "portico/sdk/plugin.h"

namespace {

using portico::Status;
using portico::StatusOr;
using portico::sdk::ObjectRef;

ObjectRef RefOf(const rapidjson::Value& v) {
  return ObjectRef{portico::json::GetString(v, "group"), portico::json::GetString(v, "kind"),
                   portico::json::GetString(v, "namespace"), portico::json::GetString(v, "name")};
}

const rapidjson::Value& Items(const rapidjson::Value& spec, const char* name) {
  static const rapidjson::Value kEmpty(rapidjson::kArrayType);
  const rapidjson::Value* v = portico::json::Find(spec, name);
  return v != nullptr && v->IsArray() ? *v : kEmpty;
}

std::string OrNull(const std::optional<std::string>& v) { return v ? *v : "null"; }

Status ProcessProbe(const portico::sdk::Object& obj, portico::sdk::ProcessContext& ctx,
                    portico::sdk::ProcessResult& result) {
  PORTICO_ASSIGN_OR_RETURN(const rapidjson::Document* doc, obj.doc());
  static const rapidjson::Value kNoSpec(rapidjson::kObjectType);
  const rapidjson::Value* found = portico::json::Find(*doc, "spec");
  const rapidjson::Value& spec = found != nullptr ? *found : kNoSpec;
  if (auto fail = portico::json::GetString(spec, "fail"); !fail.empty()) {
    return portico::InvalidArgumentError(obj.ref().Display() + ": spec.fail: " + fail);
  }
  if (portico::json::Find(spec, "unavailable") != nullptr) {
    return portico::UnavailableError(obj.ref().Display() + ": try again");
  }
  if (auto what = portico::json::GetString(spec, "throw"); !what.empty()) {
    throw std::runtime_error(what);
  }
  std::vector<std::string> results;
  for (const auto& g : Items(spec, "get").GetArray()) {
    results.push_back(OrNull(ctx.GetExport(RefOf(g))));
  }
  for (const auto& l : Items(spec, "list").GetArray()) {
    results.push_back(ctx.ListExports(
        portico::json::GetString(l, "group"), portico::json::GetString(l, "kind"),
        portico::json::GetString(l, "namespace"), portico::json::GetString(l, "selector")));
  }
  for (const auto& r : Items(spec, "reference").GetArray()) {
    const rapidjson::Value* to = portico::json::Find(r, "to");
    bool allowed = to != nullptr &&
                   ctx.ReferenceAllowed(portico::json::GetString(r, "fromGroup"),
                                        portico::json::GetString(r, "fromKind"),
                                        portico::json::GetString(r, "fromNamespace"), RefOf(*to));
    results.push_back(allowed ? "true" : "false");
  }
  for (const auto& e : Items(spec, "extension").GetArray()) {
    results.push_back(OrNull(ctx.ResolveExtensionRef(RefOf(e))));
  }
  for (const auto& s : Items(spec, "secret").GetArray()) {
    results.push_back(OrNull(ctx.GetSecret(portico::json::GetString(s, "namespace"),
                                           portico::json::GetString(s, "name"))));
  }
  if (auto log = portico::json::GetString(spec, "log"); !log.empty()) {
    ctx.Log(PORTICO_LOG_WARN, log);
  }
  if (const rapidjson::Value* m = portico::json::Find(spec, "metric");
      m != nullptr && m->IsNumber()) {
    ctx.MetricAdd("portico_probe_total", m->GetDouble());
  }
  for (const auto& c : Items(spec, "contribute").GetArray()) {
    const rapidjson::Value* target = portico::json::Find(c, "target");
    const rapidjson::Value* value = portico::json::Find(c, "value");
    if (target == nullptr || value == nullptr) continue;
    result.Contribute(RefOf(*target), portico::json::GetString(c, "topic"),
                      portico::json::Serialize(*value));
  }
  if (const rapidjson::Value* e = portico::json::Find(spec, "export"); e != nullptr) {
    result.SetExport(portico::json::Serialize(*e));
  }
  std::string synced = "{\"name\":\"" + obj.ref().name + "\",\"namespace\":\"" + obj.ref().ns +
                       "\",\"version\":\"" + std::string(obj.version()) +
                       "\",\"generation\":" + std::to_string(obj.generation()) + ",\"results\":[";
  for (size_t i = 0; i < results.size(); ++i) synced += (i > 0 ? "," : "") + results[i];
  result.SetSynced(synced + "]}");
  result.SetStatus("{\"now\":" + std::to_string(ctx.NowUnixMs()) + "}");
  return portico::OkStatus();
}

Status StageProbe(const portico::sdk::Txn& txn, const std::vector<portico::sdk::Change>& changes) {
  for (const auto& change : changes) {
    std::string owner = change.ref.Key();
    if (change.op == PORTICO_CHANGE_DELETE) {
      txn.ClearOwner(owner);
      continue;
    }
    PORTICO_ASSIGN_OR_RETURN(rapidjson::Document doc, portico::json::Parse(change.json));
    if (auto reason = portico::json::GetString(doc, "nack"); !reason.empty()) {
      txn.Nack(change.ref, reason);
    }
    if (portico::json::Find(doc, "badFormat") != nullptr) {
      PORTICO_RETURN_IF_ERROR(txn.Put(owner, "nope.v1", change.ref.name, change.json));
    }
    PORTICO_RETURN_IF_ERROR(
        txn.Put(owner, PORTICO_FORMAT_BACKEND, "probe/" + change.ref.name, change.json));
    if (auto peer = portico::json::GetString(doc, "peer"); !peer.empty()) {
      ObjectRef peer_ref{change.ref.group, change.ref.kind, change.ref.ns, peer};
      auto synced = txn.GetSynced(peer_ref);
      if (synced) {
        PORTICO_RETURN_IF_ERROR(
            txn.Put(owner, PORTICO_FORMAT_BACKEND, "peer/" + change.ref.name, *synced));
      } else {
        txn.Log(PORTICO_LOG_WARN, "peer " + peer + " not synced");
      }
    }
    if (portico::json::Find(doc, "dropPeer") != nullptr) {
      txn.Remove(owner, PORTICO_FORMAT_BACKEND, "peer/" + change.ref.name);
    }
  }
  return portico::OkStatus();
}

// HeaderFilter sets a configured request header and tags responses.
class HeaderFilter : public portico::sdk::Filter {
 public:
  HeaderFilter(std::string name, std::string value)
      : name_(std::move(name)), value_(std::move(value)) {}
  portico_filter_status OnRequest(const portico::sdk::HttpView& request,
                                  const portico::sdk::FilterHost& host) override {
    request.SetHeader(name_, value_);
    return PORTICO_FILTER_CONTINUE;
  }
  portico_filter_status OnResponse(const portico::sdk::HttpView& response,
                                   const portico::sdk::FilterHost& host) override {
    response.AddHeader("x-probe-response", std::to_string(response.StatusCode()));
    return PORTICO_FILTER_CONTINUE;
  }

 private:
  std::string name_;
  std::string value_;
};

// CallFilter asks a configured URL and lets the request through only on a 200.
class CallFilter : public portico::sdk::Filter {
 public:
  explicit CallFilter(std::string url) : url_(std::move(url)) {}
  portico_filter_status OnRequest(const portico::sdk::HttpView& request,
                                  const portico::sdk::FilterHost& host) override {
    portico_http_call call{
        sizeof(portico_http_call), portico::sdk::Str("GET"), portico::sdk::Str(url_), {}, {}, 1000};
    if (!host.HttpCall(call, &Done, this).ok()) {
      request.Respond(500, "call failed");
      return PORTICO_FILTER_RESPOND;
    }
    return PORTICO_FILTER_PENDING;
  }

 private:
  static portico_filter_status Done(void* cookie, int status, portico_str headers, portico_str body,
                                    const portico_http_view* view) {
    portico::sdk::HttpView request(view);
    if (status == 200) {
      request.SetHeader("x-call-body", portico::sdk::View(body));
      return PORTICO_FILTER_CONTINUE;
    }
    request.Respond(403, "denied");
    return PORTICO_FILTER_RESPOND;
  }
  std::string url_;
};

// ThrowFilter throws for requests whose path starts with "/throw": the SDK turns that into an
// error, which the host answers with 500 for that request only.
class ThrowFilter : public portico::sdk::Filter {
 public:
  portico_filter_status OnRequest(const portico::sdk::HttpView& request,
                                  const portico::sdk::FilterHost& host) override {
    if (request.Path().rfind("/throw", 0) == 0) throw std::runtime_error("probe filter failure");
    return PORTICO_FILTER_CONTINUE;
  }
};

// ClockFilter numbers the requests its instance has seen and stamps the host's monotonic clock
// on each: x-probe-count and x-probe-now (state across requests, and the fake clock).
class ClockFilter : public portico::sdk::Filter {
 public:
  portico_filter_status OnRequest(const portico::sdk::HttpView& request,
                                  const portico::sdk::FilterHost& host) override {
    request.SetHeader("x-probe-count", std::to_string(++count_));
    request.SetHeader("x-probe-now", std::to_string(host.NowMonotonicMs()));
    return PORTICO_FILTER_CONTINUE;
  }

 private:
  std::atomic<int64_t> count_{0};
};

void Setup(portico::sdk::Plugin& p) {
  p.Kind("test.portico.io", "Probe").Process(&ProcessProbe).Stage(&StageProbe);
  p.Kind("test.portico.io", "ClusterProbe").Process(&ProcessProbe);
  p.Kind("test.portico.io", "ProbeFilter").Process(&ProcessProbe);
  p.AddFilterType({"test.portico.io/Header", PORTICO_PHASE_TRANSFORM, 10,
                   [](std::string_view config) -> StatusOr<std::unique_ptr<portico::sdk::Filter>> {
                     PORTICO_ASSIGN_OR_RETURN(rapidjson::Document doc,
                                              portico::json::Parse(config));
                     std::string name = portico::json::GetString(doc, "header");
                     if (name.empty()) {
                       return portico::InvalidArgumentError("config: header is required");
                     }
                     return std::unique_ptr<portico::sdk::Filter>(
                         new HeaderFilter(name, portico::json::GetString(doc, "value")));
                   }});
  p.AddFilterType({"test.portico.io/Clock", PORTICO_PHASE_EARLY, 1,
                   [](std::string_view) -> StatusOr<std::unique_ptr<portico::sdk::Filter>> {
                     return std::unique_ptr<portico::sdk::Filter>(new ClockFilter());
                   }});
  p.AddFilterType({"test.portico.io/Throw", PORTICO_PHASE_EARLY, 0,
                   [](std::string_view) -> StatusOr<std::unique_ptr<portico::sdk::Filter>> {
                     return std::unique_ptr<portico::sdk::Filter>(new ThrowFilter());
                   }});
  p.AddFilterType({"test.portico.io/Call", PORTICO_PHASE_AUTHZ, 0,
                   [](std::string_view config) -> StatusOr<std::unique_ptr<portico::sdk::Filter>> {
                     PORTICO_ASSIGN_OR_RETURN(rapidjson::Document doc,
                                              portico::json::Parse(config));
                     return std::unique_ptr<portico::sdk::Filter>(
                         new CallFilter(portico::json::GetString(doc, "url")));
                   }});
}

}  // namespace

PORTICO_PLUGIN(Setup)
