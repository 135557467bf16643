// isolated_process.cc: see isolated_process.h. The record the child writes is a sequence of
// entries: a tag byte, a field count (u32) and that many fields (u32 length + bytes); the last
// entry is 'R' (the processor's code and error). Tags: S/T/X synced/status/export writes,
// C contribute, L link, G/l/s get/list/secret reads, M metric, g log, d read description.
#include "controller/reconcile/isolated_process.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <span>
#include <utility>

#include "portico/sdk/label_selector.h"

namespace portico::controller {
namespace {

// Record is what the child writes.
class Record {
 public:
  void Put(char tag, std::initializer_list<std::string_view> fields) {
    buffer_.push_back(tag);
    PutU32(static_cast<uint32_t>(fields.size()));
    for (std::string_view f : fields) {
      PutU32(static_cast<uint32_t>(f.size()));
      buffer_.append(f);
    }
  }
  const std::string& buffer() const { return buffer_; }

 private:
  void PutU32(uint32_t v) {
    for (int i = 0; i < 4; ++i) buffer_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  std::string buffer_;
};

struct Entry {
  char tag = 0;
  std::vector<std::string_view> fields;
};

// Parse splits a record; false when it is cut short or malformed.
bool Parse(std::string_view in, std::vector<Entry>* out) {
  auto u32 = [&in](uint32_t* v) {
    if (in.size() < 4) return false;
    *v = 0;
    for (int i = 0; i < 4; ++i) *v |= static_cast<uint32_t>(static_cast<uint8_t>(in[i])) << (8 * i);
    in.remove_prefix(4);
    return true;
  };
  while (!in.empty()) {
    Entry e;
    e.tag = in[0];
    in.remove_prefix(1);
    uint32_t n = 0;
    if (!u32(&n) || n > 16) return false;
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t len = 0;
      if (!u32(&len) || len > in.size()) return false;
      e.fields.push_back(in.substr(0, len));
      in.remove_prefix(len);
    }
    out->push_back(std::move(e));
  }
  return !out->empty() && out->back().tag == 'R' && out->back().fields.size() == 2;
}

std::string Number(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

// ChildHost is the child's side: reads forwarded to the parent's image, everything the
// processor hands back recorded.
class ChildHost final : public HostServices, public ReadRecorder {
 public:
  ChildHost(HostServices& base, std::optional<std::string> previous)
      : base_(base),
        previous_(std::move(previous)),
        result_{sizeof(portico_process_result),
                portico_sink{sizeof(portico_sink), this, &ChildHost::WriteSynced},
                portico_sink{sizeof(portico_sink), this, &ChildHost::WriteStatus},
                portico_sink{sizeof(portico_sink), this, &ChildHost::WriteExport},
                this,
                &ChildHost::Contribute,
                &ChildHost::Link} {}

  const portico_process_result* result() const { return &result_; }
  Record& record() { return record_; }

  // HostServices
  std::optional<std::string> Export(const std::string& key) const override {
    return base_.Export(key);
  }
  std::string ListExports(std::string_view group, std::string_view kind, std::string_view ns,
                          const sdk::LabelSelector& selector, int64_t* count) const override {
    return base_.ListExports(group, kind, ns, selector, count);
  }
  std::optional<std::string> Secret(std::string_view ns, std::string_view name) const override {
    return base_.Secret(ns, name);
  }
  const core::KindInfo* FindKind(std::string_view group, std::string_view kind) const override {
    return base_.FindKind(group, kind);
  }
  const core::ReferencePolicyInfo* ReferencePolicy() const override {
    return base_.ReferencePolicy();
  }
  void AddMetric(std::string_view name, const core::KindId&, double delta) override {
    record_.Put('M', {name, Number(delta)});
  }
  int64_t NowUnixMs() const override { return base_.NowUnixMs(); }
  std::optional<std::string> PreviousSynced(const sdk::ObjectRef&) const override {
    return previous_;
  }
  void Log(portico_log_level level, std::string_view text) override {
    record_.Put('g', {std::to_string(static_cast<int>(level)), text});
  }

  // ReadRecorder (the reader is always the processed object)
  void AddGet(const std::string&, const std::string& key) override { record_.Put('G', {key}); }
  void AddList(const std::string&, std::string_view group, std::string_view kind,
               std::string_view ns, std::string_view selector_text,
               const sdk::LabelSelector&) override {
    record_.Put('l', {group, kind, ns, selector_text});
  }
  void AddSecret(const std::string&, std::string_view ns, std::string_view name) override {
    record_.Put('s', {ns, name});
  }

 private:
  static void WriteSynced(void* host, portico_str bytes) {
    static_cast<ChildHost*>(host)->record_.Put('S', {sdk::View(bytes)});
  }
  static void WriteStatus(void* host, portico_str bytes) {
    static_cast<ChildHost*>(host)->record_.Put('T', {sdk::View(bytes)});
  }
  static void WriteExport(void* host, portico_str bytes) {
    static_cast<ChildHost*>(host)->record_.Put('X', {sdk::View(bytes)});
  }
  static void Contribute(void* host, const portico_object_ref* target, portico_str topic,
                         portico_str json) {
    if (target == nullptr) return;
    static_cast<ChildHost*>(host)->record_.Put(
        'C', {sdk::View(target->group), sdk::View(target->kind), sdk::View(target->ns),
              sdk::View(target->name), sdk::View(topic), sdk::View(json)});
  }
  static void Link(void* host, const portico_object_ref* target, int type) {
    if (target == nullptr) return;
    static_cast<ChildHost*>(host)->record_.Put(
        'L', {sdk::View(target->group), sdk::View(target->kind), sdk::View(target->ns),
              sdk::View(target->name), std::to_string(type)});
  }

  HostServices& base_;
  std::optional<std::string> previous_;
  Record record_;
  portico_process_result result_;
};

int RunChild(const IsolatedCall& call, HostServices& services, int fd) {
  ChildHost host(services, call.previous_synced);
  HostContext ctx(host, host, *call.ref, call.kind->id);
  sdk::StringSink error;
  portico_code code = call.kind->hooks.process(call.kind->hooks.user, call.object, ctx.raw(),
                                               host.result(), error.sink());
  for (const std::string& read : ctx.reads()) host.record().Put('d', {read});
  host.record().Put('R', {std::to_string(static_cast<int>(code)), error.data()});
  return core::WriteAll(fd, host.record().buffer()) ? 0 : 3;
}

void Replay(const std::vector<Entry>& entries, const IsolatedCall& call, HostServices& services,
            DependencyIndex& recorder, const ResultCollector& out, IsolatedOutcome& outcome) {
  const portico_process_result* r = out.raw();
  const std::string reader = call.ref->Key();
  recorder.BeginReads(reader);
  auto ref_of = [](const Entry& e) {
    return sdk::ObjectRef{std::string(e.fields[0]), std::string(e.fields[1]),
                          std::string(e.fields[2]), std::string(e.fields[3])};
  };
  for (const Entry& e : entries) {
    const size_t n = e.fields.size();
    switch (e.tag) {
      case 'S':
        if (n == 1) r->synced.write(r->synced.host, sdk::Str(e.fields[0]));
        break;
      case 'T':
        if (n == 1) r->status.write(r->status.host, sdk::Str(e.fields[0]));
        break;
      case 'X':
        if (n == 1) r->export_.write(r->export_.host, sdk::Str(e.fields[0]));
        break;
      case 'C':
        if (n == 6) {
          sdk::ObjectRef target = ref_of(e);
          portico_object_ref c = target.ToC();
          r->contribute(r->host, &c, sdk::Str(e.fields[4]), sdk::Str(e.fields[5]));
        }
        break;
      case 'L':
        if (n == 5) {
          sdk::ObjectRef target = ref_of(e);
          portico_object_ref c = target.ToC();
          r->link(r->host, &c, std::atoi(std::string(e.fields[4]).c_str()));
        }
        break;
      case 'G':
        if (n == 1) {
          recorder.AddGet(reader, std::string(e.fields[0]));
          outcome.got_keys.emplace_back(e.fields[0]);
        }
        break;
      case 'l':
        if (n == 4) {
          // The child parsed the same text successfully before recording it.
          auto parsed = sdk::LabelSelector::Parse(e.fields[3]);
          if (parsed.ok()) {
            recorder.AddList(reader, e.fields[0], e.fields[1], e.fields[2], e.fields[3], *parsed);
          }
          outcome.list_scopes.push_back(std::string(e.fields[0]) + "/" + std::string(e.fields[1]) +
                                        "/" + std::string(e.fields[2]));
        }
        break;
      case 's':
        if (n == 2) {
          recorder.AddSecret(reader, e.fields[0], e.fields[1]);
          outcome.secret_keys.push_back("/Secret/" + std::string(e.fields[0]) + "/" +
                                        std::string(e.fields[1]));
        }
        break;
      case 'M':
        if (n == 2) {
          services.AddMetric(e.fields[0], call.kind->id,
                             std::strtod(std::string(e.fields[1]).c_str(), nullptr));
        }
        break;
      case 'g':
        if (n == 2) {
          int level = std::atoi(std::string(e.fields[0]).c_str());
          services.Log(static_cast<portico_log_level>(std::clamp(level, 0, 3)), e.fields[1]);
        }
        break;
      case 'd':
        if (n == 1) outcome.reads.emplace_back(e.fields[0]);
        break;
      case 'R': {
        int code = std::atoi(std::string(e.fields[0]).c_str());
        if (code != PORTICO_OK) {
          std::string message(e.fields[1]);
          if (message.empty()) {
            message = call.ref->Display() + ": processor failed with " +
                      std::string(StatusCodeName(static_cast<StatusCode>(code)));
          }
          outcome.status = Status(static_cast<StatusCode>(code), std::move(message));
        }
        break;
      }
      default:
        break;
    }
  }
}

}  // namespace

bool ReadAnyOf(const IsolatedOutcome& outcome, const std::vector<std::string>& changed) {
  auto has = [](const std::vector<std::string>& v, const std::string& k) {
    return std::find(v.begin(), v.end(), k) != v.end();
  };
  for (const std::string& key : changed) {
    if (has(outcome.got_keys, key) || has(outcome.secret_keys, key)) return true;
    // "group/Kind/ns/name": its scope, and the all-namespaces scope of its kind.
    size_t name_at = key.rfind('/');
    if (name_at == std::string::npos) continue;
    std::string scope = key.substr(0, name_at);
    size_t ns_at = scope.rfind('/');
    if (has(outcome.list_scopes, scope)) return true;
    if (ns_at != std::string::npos && has(outcome.list_scopes, scope.substr(0, ns_at + 1))) {
      return true;
    }
  }
  return false;
}

bool ProcessIsolation::Applies(std::string_view plugin) const {
  return all || std::find(plugins.begin(), plugins.end(), plugin) != plugins.end();
}

IsolatedOutcome RunProcessIsolated(const IsolatedCall& call, HostServices& services,
                                   DependencyIndex& index, const ResultCollector& out) {
  IsolatedOutcome outcome;
  core::ChildLimits limits;
  limits.deadline = call.timeout;
  limits.cpu_seconds = static_cast<int>(call.timeout.count() / 1000) + 1;
  limits.scratch_bytes = 64;
  core::ChildOutcome child = core::RunInChild(
      [&](int fd, std::span<char>) { return RunChild(call, services, fd); }, limits, call.hooks);
  const std::string who =
      call.ref->Display() + ": the processor of plugin " + call.kind->plugin_name;
  std::vector<Entry> entries;
  if (!child.started) {
    outcome.contained = true;
    outcome.status = UnavailableError(who + " could not be isolated: fork failed");
  } else if (child.timed_out) {
    outcome.contained = true;
    outcome.status = Status(StatusCode::kDeadlineExceeded,
                            who + " did not return within " + std::to_string(call.timeout.count()) +
                                " ms (process_timeout_ms); its child was killed");
  } else if (!child.ok() || !Parse(child.output, &entries)) {
    outcome.contained = true;
    outcome.status = InternalError(who + " crashed: its child " + child.Describe() +
                                   (child.ok() ? " without a complete result" : ""));
  } else {
    Replay(entries, call, services, index, out, outcome);
  }
  return outcome;
}

}  // namespace portico::controller
