#include "controller/center/etcd_keys.h"

#include <charconv>
#include <vector>

namespace portico::controller {

std::string EtcdPrefixDir(std::string_view prefix) {
  std::string out(prefix);
  while (!out.empty() && out.back() == '/') out.pop_back();
  out += '/';
  return out;
}

std::string EtcdKey(std::string_view prefix, const sdk::ObjectRef& ref) {
  std::string key = EtcdPrefixDir(prefix);
  key.append(ref.group.empty() ? kEtcdCoreGroup : std::string_view(ref.group)).append("/");
  key.append(ref.kind).append("/");
  key.append(ref.ns.empty() ? kEtcdClusterScope : std::string_view(ref.ns)).append("/");
  key.append(ref.name);
  return key;
}

bool EtcdReservedKey(std::string_view prefix, std::string_view key) {
  std::string dir = EtcdPrefixDir(prefix);
  return key.size() > dir.size() && key.starts_with(dir) && key[dir.size()] == '_';
}

std::string EtcdLeaderKey(std::string_view prefix) { return EtcdPrefixDir(prefix) + "_leader"; }

std::string EtcdStatusPrefix(std::string_view prefix) { return EtcdPrefixDir(prefix) + "_status/"; }

std::string EtcdStatusKey(std::string_view prefix, const sdk::ObjectRef& ref) {
  return EtcdKey(EtcdStatusPrefix(prefix), ref);
}

StatusOr<sdk::ObjectRef> EtcdKeyRef(std::string_view prefix, std::string_view key) {
  std::string dir = EtcdPrefixDir(prefix);
  auto bad = [&] {
    return InvalidArgumentError("etcd key " + std::string(key) + " is not " + dir +
                                "<group>/<kind>/<namespace>/<name>");
  };
  if (!key.starts_with(dir)) return bad();
  std::string_view rest = key.substr(dir.size());
  std::vector<std::string> parts;
  for (size_t i = 0; i < 3; ++i) {
    size_t slash = rest.find('/');
    if (slash == std::string_view::npos || slash == 0) return bad();
    parts.emplace_back(rest.substr(0, slash));
    rest.remove_prefix(slash + 1);
  }
  if (rest.empty() || rest.find('/') != std::string_view::npos) return bad();
  sdk::ObjectRef ref;
  ref.group = parts[0] == kEtcdCoreGroup ? "" : parts[0];
  ref.kind = parts[1];
  ref.ns = parts[2] == kEtcdClusterScope ? "" : parts[2];
  ref.name = std::string(rest);
  return ref;
}

StatusOr<ParsedDocument> ParseEtcdValue(std::string_view prefix, const std::string& key,
                                        std::string_view value, const ObjectIdentifier& identifier,
                                        const YamlLimits& limits) {
  std::string where = "etcd key " + key;
  StatusOr<std::vector<YamlDocument>> docs = ParseYamlDocuments(value, where, limits);
  if (!docs.ok()) return InvalidArgumentError(docs.status().message());
  if (docs->size() != 1) {
    return InvalidArgumentError(where + ": holds " + std::to_string(docs->size()) +
                                " documents; a key holds exactly one object");
  }
  YamlDocument& doc = docs->front();
  if (!doc.json.IsObject()) return InvalidArgumentError(where + ": the value is not an object");
  StatusOr<sdk::ObjectRef> ref = IdentifyDocument(doc.json, identifier);
  if (!ref.ok()) return InvalidArgumentError(where + ": " + ref.status().message());
  std::string expected = EtcdKey(prefix, *ref);
  if (expected != key) {
    return InvalidArgumentError(where + ": holds " + ref->Display() + ", whose key is " + expected);
  }
  ParsedDocument parsed;
  parsed.ref = std::move(ref).value();
  parsed.line = 1;
  auto shared = std::make_shared<rapidjson::Document>(std::move(doc.json));
  parsed.json = std::make_shared<const std::string>(json::Serialize(*shared));
  parsed.doc = std::move(shared);
  return parsed;
}

std::string EtcdStoredValue(const rapidjson::Value& doc) {
  const rapidjson::Value* meta = json::Find(doc, "metadata");
  if (meta == nullptr || !meta->IsObject() || !meta->HasMember("resourceVersion")) {
    return json::Serialize(doc);
  }
  rapidjson::Document copy;
  copy.CopyFrom(doc, copy.GetAllocator());
  copy["metadata"].RemoveMember("resourceVersion");
  return json::Serialize(copy);
}

StatusOr<std::optional<int64_t>> ResourceVersionOf(const rapidjson::Value& doc,
                                                   std::string_view what) {
  const rapidjson::Value* v = json::FindPath(doc, "metadata.resourceVersion");
  if (v == nullptr || v->IsNull()) return std::optional<int64_t>();
  if (v->IsInt64() && v->GetInt64() >= 0) return std::optional<int64_t>(v->GetInt64());
  if (v->IsString()) {
    std::string_view s(v->GetString(), v->GetStringLength());
    int64_t out = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (ec == std::errc() && end == s.data() + s.size() && out >= 0 && !s.empty()) {
      return std::optional<int64_t>(out);
    }
  }
  return InvalidArgumentError(std::string(what) +
                              ": metadata.resourceVersion must be a revision (a decimal number "
                              "as returned by get), got " +
                              json::Serialize(*v));
}

}  // namespace portico::controller
