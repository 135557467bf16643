#include "controller/ctl/plugin_exercise.h"

#include <dlfcn.h>

#include <cstring>
#include <map>
#include <optional>

#include "controller/ctl/object_fuzzer.h"
#include "controller/reconcile/dependency_index.h"
#include "controller/reconcile/host_context.h"
#include "controller/reconcile/object_json.h"
#include "controller/reconcile/object_validator.h"
#include "core/plugin/plugin_loader.h"
#include "core/store/store_key.h"
#include "portico/sdk/types.h"

namespace portico::ctl {
namespace {

using core::VerifyFinding;

// VerifyWorld is the process context's world: no other objects but what this run's own objects
// exported, no Secrets, the plugin's own reference policy (if any), a fixed clock.
class VerifyWorld : public controller::HostServices {
 public:
  explicit VerifyWorld(const core::KindRegistry& registry) : registry_(registry) {}

  std::optional<std::string> Export(const std::string& key) const override {
    auto it = exports_.find(key);
    if (it == exports_.end()) return std::nullopt;
    return it->second;
  }
  std::string ListExports(std::string_view, std::string_view, std::string_view,
                          const sdk::LabelSelector&, int64_t* count) const override {
    *count = 0;
    return "[]";
  }
  std::optional<std::string> Secret(std::string_view, std::string_view) const override {
    return std::nullopt;
  }
  const core::KindInfo* FindKind(std::string_view group, std::string_view kind) const override {
    return registry_.Find(group, kind);
  }
  const core::ReferencePolicyInfo* ReferencePolicy() const override {
    return registry_.ReferencePolicy();
  }
  void AddMetric(std::string_view, const core::KindId&, double) override {}
  int64_t NowUnixMs() const override { return 1'780'000'000'000; }
  // A world of one run: nothing was synced before.
  std::optional<std::string> PreviousSynced(const sdk::ObjectRef&) const override {
    return std::nullopt;
  }
  void Log(portico_log_level level, std::string_view text) override {
    controller::LogToSpdlog(level, text);
  }

  void SetExport(const std::string& key, std::string json) { exports_[key] = std::move(json); }

 private:
  const core::KindRegistry& registry_;
  std::map<std::string, std::string> exports_;
};

// Scratch writes `what` (cut to fit) into the shared buffer, NUL-terminated.
void Scratch(std::span<char> scratch, std::string_view what) {
  if (scratch.empty()) return;
  size_t n = std::min(what.size(), scratch.size() - 1);
  std::memcpy(scratch.data(), what.data(), n);
  scratch[n] = '\0';
}

// KindExercise runs the inputs of one kind.
class KindExercise {
 public:
  KindExercise(const core::KindInfo& kind, const controller::ObjectValidator& validator,
               VerifyWorld& world, std::span<char> scratch, const ExerciseReport& report)
      : kind_(kind), validator_(validator), world_(world), scratch_(scratch), report_(report) {}

  void Run(const ExerciseOptions& options) {
    ObjectFuzzer fuzzer(kind_, options.seed);
    for (int i = 0; i < options.iterations && !failed_; ++i) {
      int pick = i % 10;
      std::string text = pick < 5   ? fuzzer.Generated()
                         : pick < 8 ? fuzzer.Mutated()
                                    : fuzzer.Malformed();
      Feed(text);
    }
    report_.note(
        kind_.id.ToString() + ": " + std::to_string(options.iterations) + " inputs, " +
        std::to_string(valid_) + " passed the schema and reached the processor, " +
        std::to_string(raw_) + " malformed ones went to it directly" +
        (valid_ == 0 && !refusal_.empty() ? " (the schema refused e.g. " + refusal_ + ")" : ""));
  }

 private:
  void Feed(const std::string& text) {
    Scratch(scratch_, "validating " + kind_.id.ToString() + " input " + text);
    auto parsed = json::Parse(text, "input");
    if (!parsed.ok() || !parsed->IsObject()) {
      // Never from the host, but the ABI carries bytes: the SDK must refuse them cleanly.
      ++raw_;
      Process(sdk::ObjectRef{kind_.id.group, kind_.id.kind, "default", "malformed"},
              kind_.versions.empty() ? "v1" : kind_.versions.front(), text);
      return;
    }
    rapidjson::Document& doc = *parsed;
    auto validated = validator_.Validate(doc);
    if (!validated.ok()) {
      if (refusal_.empty()) refusal_ = OneLine(validated.status().message(), 200);
      return;
    }
    ++valid_;
    controller::SetMetadataStamps(doc, doc.GetAllocator(), 1, "2026-01-01T00:00:00Z");
    controller::AddNamespaceNameLabel(validated->ref, doc, doc.GetAllocator());
    doc.RemoveMember("status");
    Process(validated->ref, validated->version, json::Serialize(doc));
  }

  void Process(const sdk::ObjectRef& ref, const std::string& version, const std::string& json) {
    Scratch(scratch_, "processing " + ref.Display() + " " + json);
    controller::DependencyIndex index;
    controller::HostContext ctx(world_, index, ref, kind_.id);
    controller::ResultCollector out(ref.Display());
    portico_object object{sizeof(portico_object), ref.ToC(), sdk::Str(version), sdk::Str(json), 1};
    sdk::StringSink error;
    portico_code code =
        kind_.hooks.process(kind_.hooks.user, &object, ctx.raw(), out.raw(), error.sink());
    if (code != PORTICO_OK) return;  // refusing an input is the processor's right
    Status checked = out.Check();
    if (!checked.ok()) {
      failed_ = true;
      report_.finding({"processor of " + kind_.id.ToString() + " wrote an invalid result (" +
                           checked.message() + ") for input " + OneLine(json),
                       "make it write a JSON object as status and JSON values as export and "
                       "synced view"});
      return;
    }
    if (auto exported = out.export_json(); exported) {
      world_.SetExport(core::StoreKey{ref.group, ref.kind, ref.ns, ref.name}.ToString(), *exported);
    }
  }

  const core::KindInfo& kind_;
  const controller::ObjectValidator& validator_;
  VerifyWorld& world_;
  std::span<char> scratch_;
  const ExerciseReport& report_;
  int valid_ = 0;
  int raw_ = 0;
  bool failed_ = false;
  std::string refusal_;  // the first schema refusal, to explain a kind no input passed
};

}  // namespace

std::string OneLine(std::string_view text, size_t most) {
  std::string out;
  for (char c : text.substr(0, most)) {
    auto u = static_cast<unsigned char>(c);
    out += u < 0x20 || u == 0x7f ? '?' : c;
  }
  if (text.size() > most) out += "...(" + std::to_string(text.size()) + " bytes)";
  return out;
}

int ExercisePlugin(const std::filesystem::path& path, const core::ElfDynamic& dynamic,
                   const ExerciseOptions& options, std::span<char> scratch,
                   const ExerciseReport& report) {
  Scratch(scratch, "loading the plugin (its constructors and register_plugin)");
  core::PluginSet set = core::LoadPluginFiles({path}, core::LoadOptions{.resolve_reads = false});
  const core::PluginRecord& record = set.plugins.front();
  if (!record.ok()) {
    report.finding(VerifyFinding::FromReason(record.reason));
    return 0;
  }
  const core::PluginManifest& manifest = *record.manifest;

  // Where each undefined symbol comes from, as the dynamic linker bound it (the loader mapped
  // a private image of the file: look it up where it was loaded from).
  void* handle = record.load_path.empty()
                     ? nullptr
                     : dlopen(record.load_path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  auto resolve = [handle](const std::string& symbol) -> std::string {
    if (handle == nullptr) return "";
    void* address = dlsym(handle, symbol.c_str());
    Dl_info info{};
    if (address == nullptr || dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "";
    return info.dli_fname;
  };
  for (const VerifyFinding& f : core::CheckSymbolProviders(dynamic, manifest, resolve)) {
    report.finding(f);
  }
  std::vector<VerifyFinding> schemas = core::CheckKindSchemas(set.registry, manifest);
  for (const VerifyFinding& f : schemas) report.finding(f);
  if (!schemas.empty()) return 0;

  for (const core::KindInfo* kind : set.registry.Kinds()) {
    for (const core::KindId& read : kind->reads) {
      if (set.registry.Find(read) == nullptr) {
        report.note(kind->id.ToString() + " reads " + read.ToString() +
                    ", provided by another plugin: its reads miss here");
      }
    }
  }
  auto validator = controller::ObjectValidator::Create(set.registry);
  if (!validator.ok()) {
    report.finding({validator.status().message(), "fix the kind's schema"});
    return 0;
  }
  VerifyWorld world(set.registry);
  int fed = 0;
  for (const core::KindInfo* kind :
       set.registry.KindsInOrder().empty() ? set.registry.Kinds() : set.registry.KindsInOrder()) {
    if (kind->hooks.process == nullptr) continue;
    KindExercise(*kind, *validator, world, scratch, report).Run(options);
    fed += options.iterations;
  }
  Scratch(scratch, "");
  return fed;
}

}  // namespace portico::ctl
