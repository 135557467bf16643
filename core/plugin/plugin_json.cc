#include "core/plugin/plugin_json.h"

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string_view>

#include "core/plugin/manifest.h"

namespace portico::core {
namespace {

uint32_t CapabilityBits(const PluginRecord& record) {
  uint32_t bits = 0;
  if (record.manifest) {
    for (const auto& k : record.manifest->kinds) bits |= k.capability_bits;
  }
  return bits;
}

template <typename Writer>
void WriteStrings(Writer& w, const char* key, const std::vector<std::string>& items) {
  w.Key(key);
  w.StartArray();
  for (const auto& item : items) w.String(item);
  w.EndArray();
}

template <typename Writer>
void WriteRecords(Writer& w, const std::vector<PluginRecord>& records) {
  w.StartArray();
  for (const PluginRecord& r : records) {
    w.StartObject();
    w.Key("name");
    w.String(r.DisplayName());
    if (r.manifest) {
      const PluginManifest& m = *r.manifest;
      w.Key("version");
      w.String(m.version);
      w.Key("description");
      w.String(m.description);
      w.Key("manifestVersion");
      w.Int64(m.manifest_version);
      w.Key("abi");
      w.StartObject();
      w.Key("major");
      w.Uint(m.abi_major);
      w.Key("minor");
      w.Uint(m.abi_minor);
      w.EndObject();
      w.Key("sdkVersion");
      w.String(m.sdk_version);
    }
    w.Key("abiVerdict");
    w.String(r.AbiVerdict());
    w.Key("kinds");
    w.StartArray();
    if (r.manifest) {
      for (const auto& k : r.manifest->kinds) {
        w.StartObject();
        w.Key("group");
        w.String(k.id.group);
        w.Key("kind");
        w.String(k.id.kind);
        WriteStrings(w, "versions", k.versions);
        w.Key("plural");
        w.String(k.plural);
        WriteStrings(w, "shortNames", k.short_names);
        w.Key("scope");
        w.String(std::string(ScopeName(k.scope)));
        std::vector<std::string> reads;
        for (const auto& read : k.reads) reads.push_back(read.ToString());
        WriteStrings(w, "reads", reads);
        WriteStrings(w, "capabilities", CapabilityNames(k.capability_bits));
        w.Key("sync");
        w.String(std::string(SyncPolicyName(k.sync_policy)));
        w.EndObject();
      }
    }
    w.EndArray();
    WriteStrings(w, "capabilities", CapabilityNames(CapabilityBits(r)));
    w.Key("status");
    w.String(r.ok() ? "ok" : "rejected");
    if (!r.ok()) {
      w.Key("reason");
      w.String(r.reason);
    }
    w.Key("sha256");
    w.String(r.sha256);
    w.Key("path");
    w.String(r.path);
    w.EndObject();
  }
  w.EndArray();
}

Status FieldError(size_t index, std::string_view field, std::string_view want) {
  return InvalidArgumentError("plugins[" + std::to_string(index) + "]." + std::string(field) +
                              ": " + std::string(want));
}

StatusOr<std::vector<std::string>> Strings(const rapidjson::Value& v, size_t index,
                                           std::string_view field) {
  std::vector<std::string> out;
  const rapidjson::Value* list = json::Find(v, field);
  if (list == nullptr) return out;
  if (!list->IsArray()) return FieldError(index, field, "not an array");
  for (const auto& item : list->GetArray()) {
    if (!item.IsString()) return FieldError(index, field, "holds a non-string");
    out.emplace_back(item.GetString(), item.GetStringLength());
  }
  return out;
}

StatusOr<ManifestKind> ParseKind(const rapidjson::Value& v, size_t index) {
  if (!v.IsObject()) return FieldError(index, "kinds", "holds a non-object");
  ManifestKind k;
  k.id.group = json::GetString(v, "group");
  k.id.kind = json::GetString(v, "kind");
  k.plural = json::GetString(v, "plural");
  PORTICO_ASSIGN_OR_RETURN(k.versions, Strings(v, index, "versions"));
  PORTICO_ASSIGN_OR_RETURN(k.short_names, Strings(v, index, "shortNames"));
  PORTICO_ASSIGN_OR_RETURN(std::vector<std::string> reads, Strings(v, index, "reads"));
  for (const auto& read : reads) k.reads.push_back(KindId::Parse(read));
  PORTICO_ASSIGN_OR_RETURN(k.capabilities, Strings(v, index, "capabilities"));
  for (const auto& cap : k.capabilities) k.capability_bits |= CapabilityBit(cap);
  k.scope = json::GetString(v, "scope") == ScopeName(PORTICO_SCOPE_CLUSTER)
                ? PORTICO_SCOPE_CLUSTER
                : PORTICO_SCOPE_NAMESPACED;
  std::string sync = json::GetString(v, "sync");
  for (portico_sync_policy policy : {PORTICO_SYNC_NEVER, PORTICO_SYNC_ALWAYS,
                                     PORTICO_SYNC_TO_REFERRERS, PORTICO_SYNC_ATTACHED}) {
    if (SyncPolicyName(policy) == sync) k.sync_policy = policy;
  }
  return k;
}

}  // namespace

std::string RenderPluginsJson(const std::vector<PluginRecord>& records, bool pretty) {
  rapidjson::StringBuffer buffer;
  if (pretty) {
    rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
    w.SetIndent(' ', 2);
    WriteRecords(w, records);
  } else {
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    WriteRecords(w, records);
  }
  return std::string(buffer.GetString(), buffer.GetSize());
}

StatusOr<std::vector<PluginRecord>> ParsePluginsJson(const rapidjson::Value& array) {
  if (!array.IsArray()) return InvalidArgumentError("plugins: not an array");
  std::vector<PluginRecord> out;
  size_t index = 0;
  for (const auto& v : array.GetArray()) {
    if (!v.IsObject()) return FieldError(index, "", "not an object");
    PluginRecord r;
    r.path = json::GetString(v, "path");
    r.sha256 = json::GetString(v, "sha256");
    if (json::Find(v, "version") != nullptr) {
      PluginManifest m;
      m.name = json::GetString(v, "name");
      m.version = json::GetString(v, "version");
      m.description = json::GetString(v, "description");
      m.sdk_version = json::GetString(v, "sdkVersion");
      m.manifest_version = json::GetInt(v, "manifestVersion").value_or(0);
      m.abi_major = static_cast<uint32_t>(json::GetInt(v, "abi.major").value_or(0));
      m.abi_minor = static_cast<uint32_t>(json::GetInt(v, "abi.minor").value_or(0));
      if (const rapidjson::Value* kinds = json::Find(v, "kinds"); kinds != nullptr) {
        if (!kinds->IsArray()) return FieldError(index, "kinds", "not an array");
        for (const auto& k : kinds->GetArray()) {
          PORTICO_ASSIGN_OR_RETURN(ManifestKind kind, ParseKind(k, index));
          m.kinds.push_back(std::move(kind));
        }
      }
      r.manifest = std::move(m);
    }
    if (json::GetString(v, "status") != "ok") {
      r.verdict = core::PluginVerdict::kRejected;
      r.reason = json::GetString(v, "reason");
    }
    out.push_back(std::move(r));
    ++index;
  }
  return out;
}

}  // namespace portico::core
