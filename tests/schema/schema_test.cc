// schema_test: every in-tree kind's JSON Schema (plugins/*/schemas/*.json) against
//  - the manifests of the Gateway API conformance data (/work/shared/conformance/gateway-api,
//    found as ${PROJECT_SOURCE_DIR}/../shared/conformance/gateway-api; skipped when absent), which
//    must all validate, as given and after defaulting;
//  - hand-written invalid objects of each kind, whose errors must name the field path.
// The conformance data is read in place, never copied into the repository.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/pointer.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/common/json_schema.h"

#ifndef PORTICO_SOURCE_DIR
#error "PORTICO_SOURCE_DIR must be defined"
#endif

namespace portico::core {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

struct KindSchema {
  const char* group;  // "" for the core group
  const char* kind;
  const char* file;  // relative to the source tree
};

constexpr KindSchema kKinds[] = {
    {"gateway.networking.k8s.io", "GatewayClass", "plugins/gateway/schemas/gatewayclass.json"},
    {"gateway.networking.k8s.io", "Gateway", "plugins/gateway/schemas/gateway.json"},
    {"gateway.networking.k8s.io", "HTTPRoute", "plugins/httproute/schemas/httproute.json"},
    {"gateway.networking.k8s.io", "ReferenceGrant",
     "plugins/referencegrant/schemas/referencegrant.json"},
    {"", "Secret", "plugins/secret/schemas/secret.json"},
    {"", "ConfigMap", "plugins/configmap/schemas/configmap.json"},
    {"", "Service", "plugins/service/schemas/service.json"},
    {"discovery.k8s.io", "EndpointSlice", "plugins/service/schemas/endpointslice.json"},
    {"", "Namespace", "plugins/namespace/schemas/namespace.json"},
    {"portico.io", "TLSPolicy", "plugins/tls/schemas/tlspolicy.json"},
    {"portico.io", "Webhook", "plugins/webhook/schemas/webhook.json"},
    {"gateway.networking.k8s.io", "BackendTLSPolicy",
     "plugins/backendtlspolicy/schemas/backendtlspolicy.json"},
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string Key(std::string_view group, std::string_view kind) {
  return std::string(group) + "/" + std::string(kind);
}

// GroupOf returns the group of an apiVersion ("gateway.networking.k8s.io/v1" -> group, "v1" -> "").
std::string GroupOf(std::string_view api_version) {
  size_t slash = api_version.find('/');
  return slash == std::string_view::npos ? "" : std::string(api_version.substr(0, slash));
}

// ObjectName renders "Kind namespace/name" (or "Kind name"), as the host names objects.
std::string ObjectName(const rapidjson::Value& obj) {
  std::string ns = json::GetString(obj, "metadata.namespace");
  std::string name = json::GetString(obj, "metadata.name");
  if (name.empty()) name = "(unnamed)";
  return json::GetString(obj, "kind") + " " + (ns.empty() ? name : ns + "/" + name);
}

// Compiled schemas of all kinds, loaded once.
class Schemas {
 public:
  static const Schemas& Get() {
    // Destroyed at exit on purpose: RapidJSON stores pointers in 48 bits with tag bits above,
    // so LeakSanitizer cannot trace a compiled schema that is still alive when it runs.
    static const Schemas schemas;
    return schemas;
  }
  const SchemaValidator* Find(std::string_view group, std::string_view kind) const {
    auto it = by_key_.find(Key(group, kind));
    return it == by_key_.end() ? nullptr : &it->second;
  }
  const std::vector<std::string>& errors() const { return errors_; }

 private:
  Schemas() {
    for (const KindSchema& k : kKinds) {
      fs::path path = fs::path(PORTICO_SOURCE_DIR) / k.file;
      StatusOr<SchemaValidator> v = SchemaValidator::Compile(ReadFile(path), k.file);
      if (!v.ok()) {
        errors_.push_back(v.status().ToString());
        continue;
      }
      by_key_.emplace(Key(k.group, k.kind), std::move(v).value());
    }
  }
  std::map<std::string, SchemaValidator> by_key_;
  std::vector<std::string> errors_;
};

TEST(SchemaFilesTest, AllCompile) {
  EXPECT_THAT(Schemas::Get().errors(), ::testing::IsEmpty());
  for (const KindSchema& k : kKinds) {
    const SchemaValidator* v = Schemas::Get().Find(k.group, k.kind);
    ASSERT_NE(v, nullptr) << k.file;
    EXPECT_EQ(json::GetString(v->schema(), "$schema"), "http://json-schema.org/draft-04/schema#")
        << k.file;
  }
}

// ReplacePlaceholder substitutes the conformance data's "{GATEWAY_CLASS_NAME}" in every string.
void ReplacePlaceholder(rapidjson::Value& v, rapidjson::Document::AllocatorType& a) {
  static const std::string kPlaceholder = "{GATEWAY_CLASS_NAME}";
  if (v.IsString()) {
    std::string s(v.GetString(), v.GetStringLength());
    bool changed = false;
    for (size_t at = s.find(kPlaceholder); at != std::string::npos; at = s.find(kPlaceholder, at)) {
      s.replace(at, kPlaceholder.size(), "portico");
      changed = true;
    }
    if (changed) v.SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
  } else if (v.IsArray()) {
    for (auto& e : v.GetArray()) ReplacePlaceholder(e, a);
  } else if (v.IsObject()) {
    for (auto& m : v.GetObject()) ReplacePlaceholder(m.value, a);
  }
}

TEST(ConformanceManifestsTest, EveryObjectOfAKnownKindValidates) {
  fs::path dir = (fs::path(PORTICO_SOURCE_DIR) / ".." / "shared" / "conformance" / "gateway-api")
                     .lexically_normal();
  if (!fs::is_directory(dir)) {
    GTEST_SKIP() << "Gateway API conformance data not found at " << dir
                 << " (expected beside the source tree as ../shared/conformance/gateway-api)";
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".json" && entry.path().filename() != "index.json") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty()) << dir;

  int validated = 0;
  int failed = 0;
  int skipped = 0;
  std::set<std::string> kinds_without_schema;
  std::map<std::string, int> per_kind;
  for (const fs::path& file : files) {
    StatusOr<rapidjson::Document> data = json::Parse(ReadFile(file), file.filename().string());
    ASSERT_TRUE(data.ok()) << data.status();
    const rapidjson::Value* manifests = json::Find(*data, "manifests");
    if (manifests == nullptr || !manifests->IsArray()) continue;
    for (rapidjson::SizeType i = 0; i < manifests->Size(); ++i) {
      rapidjson::Document obj;
      obj.CopyFrom((*manifests)[i], obj.GetAllocator());
      ReplacePlaceholder(obj, obj.GetAllocator());
      std::string kind = json::GetString(obj, "kind");
      const SchemaValidator* v =
          Schemas::Get().Find(GroupOf(json::GetString(obj, "apiVersion")), kind);
      if (v == nullptr) {
        ++skipped;
        kinds_without_schema.insert(json::GetString(obj, "apiVersion") + " " + kind);
        continue;
      }
      std::string where = file.filename().string() + " manifests[" + std::to_string(i) + "]";
      Status as_given = v->Validate(obj, ObjectName(obj));
      v->ApplyDefaults(obj);
      Status defaulted = v->Validate(obj, ObjectName(obj));
      if (as_given.ok() && defaulted.ok()) {
        ++validated;
        ++per_kind[kind];
        continue;
      }
      ++failed;
      ADD_FAILURE() << where << ": " << (as_given.ok() ? "after defaults: " : "")
                    << (as_given.ok() ? defaulted : as_given);
    }
  }
  std::string without;
  for (const std::string& k : kinds_without_schema) without += (without.empty() ? "" : ", ") + k;
  std::string by_kind;
  for (const auto& [kind, n] : per_kind) {
    by_kind += (by_kind.empty() ? "" : ", ") + kind + " " + std::to_string(n);
  }
  std::cout << "schema: " << validated << " objects validated, " << failed << " failed, " << skipped
            << " skipped (kinds without schema: " << (without.empty() ? "none" : without)
            << ") from " << files.size() << " files in " << dir.string()
            << "\nschema: by kind: " << by_kind << std::endl;
  RecordProperty("validated", validated);
  RecordProperty("skipped", skipped);
  EXPECT_EQ(failed, 0);
  EXPECT_GT(validated, 100);
  for (const char* kind : {"Gateway", "HTTPRoute", "ReferenceGrant", "Service", "Namespace",
                           "Secret", "EndpointSlice"}) {
    EXPECT_GT(per_kind[kind], 0) << "no conformance object of kind " << kind;
  }
}

// ---------------------------------------------------------------- defaults

rapidjson::Document MustParse(std::string_view text) {
  StatusOr<rapidjson::Document> doc = json::Parse(text);
  EXPECT_TRUE(doc.ok()) << doc.status();
  return std::move(doc).value();
}

TEST(SchemaDefaultsTest, HttpRouteGetsGatewayApiDefaults) {
  const SchemaValidator* v = Schemas::Get().Find("gateway.networking.k8s.io", "HTTPRoute");
  ASSERT_NE(v, nullptr);
  rapidjson::Document doc = MustParse(R"({"apiVersion": "gateway.networking.k8s.io/v1",
      "kind": "HTTPRoute", "metadata": {"name": "web"}, "spec": {
        "parentRefs": [{"name": "gw"}],
        "rules": [{"matches": [{"headers": [{"name": "x", "value": "1"}]},
                               {"path": {"value": "/a"}}],
                   "filters": [{"type": "RequestRedirect",
                                "requestRedirect": {"scheme": "https"}}]},
                  {"backendRefs": [{"name": "svc", "port": 80}]}]}})");
  v->ApplyDefaults(doc);
  ASSERT_EQ(v->Validate(doc, "HTTPRoute web"), OkStatus());
  const rapidjson::Value& spec = doc["spec"];
  EXPECT_EQ(json::Serialize(spec["parentRefs"]),
            R"([{"name":"gw","group":"gateway.networking.k8s.io","kind":"Gateway"}])");
  EXPECT_EQ(
      json::Serialize(spec["rules"][0]["matches"]),
      R"([{"headers":[{"name":"x","value":"1","type":"Exact"}],)"
      R"("path":{"type":"PathPrefix","value":"/"}},{"path":{"value":"/a","type":"PathPrefix"}}])");
  EXPECT_EQ(spec["rules"][0]["filters"][0]["requestRedirect"]["statusCode"].GetInt(), 302);
  EXPECT_EQ(json::Serialize(spec["rules"][1]),
            R"({"backendRefs":[{"name":"svc","port":80,"group":"","kind":"Service","weight":1}],)"
            R"("matches":[{"path":{"type":"PathPrefix","value":"/"}}]})");

  rapidjson::Document empty = MustParse(R"({"apiVersion": "gateway.networking.k8s.io/v1",
      "kind": "HTTPRoute", "metadata": {"name": "web"}, "spec": {}})");
  v->ApplyDefaults(empty);
  EXPECT_EQ(json::Serialize(empty["spec"]),
            R"({"rules":[{"matches":[{"path":{"type":"PathPrefix","value":"/"}}]}]})");
}

TEST(SchemaDefaultsTest, GatewayGetsGatewayApiDefaults) {
  const SchemaValidator* v = Schemas::Get().Find("gateway.networking.k8s.io", "Gateway");
  ASSERT_NE(v, nullptr);
  rapidjson::Document doc = MustParse(R"({"apiVersion": "gateway.networking.k8s.io/v1",
      "kind": "Gateway", "metadata": {"name": "gw"}, "spec": {"gatewayClassName": "portico",
        "listeners": [{"name": "https", "port": 443, "protocol": "HTTPS",
                       "tls": {"certificateRefs": [{"name": "cert"}]},
                       "allowedRoutes": {"kinds": [{"kind": "HTTPRoute"}]}}],
        "addresses": [{"value": "10.0.0.1"}]}})");
  v->ApplyDefaults(doc);
  ASSERT_EQ(v->Validate(doc, "Gateway gw"), OkStatus());
  const rapidjson::Value& listener = doc["spec"]["listeners"][0];
  EXPECT_EQ(
      json::Serialize(listener["tls"]),
      R"({"certificateRefs":[{"name":"cert","group":"","kind":"Secret"}],"mode":"Terminate"})");
  EXPECT_EQ(json::Serialize(listener["allowedRoutes"]),
            R"({"kinds":[{"kind":"HTTPRoute","group":"gateway.networking.k8s.io"}],)"
            R"("namespaces":{"from":"Same"}})");
  EXPECT_EQ(json::GetString(doc["spec"]["addresses"][0], "type"), "IPAddress");
}

// ---------------------------------------------------------------- invalid objects

// One valid object per kind; each case below mutates it at a JSON pointer.
const std::map<std::string, std::string>& ValidObjects() {
  static const auto* const kObjects = new std::map<std::string, std::string>{
      {"GatewayClass", R"({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
          "metadata": {"name": "portico"},
          "spec": {"controllerName": "portico.io/gateway-controller", "description": "Portico"}})"},
      {"Gateway", R"({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
          "metadata": {"name": "gw", "namespace": "default", "labels": {"app": "web"}},
          "spec": {"gatewayClassName": "portico", "listeners": [
            {"name": "http", "port": 80, "protocol": "HTTP"},
            {"name": "https", "port": 443, "protocol": "HTTPS", "hostname": "*.example.com",
             "tls": {"certificateRefs": [{"name": "cert"}]}}]}})"},
      {"HTTPRoute", R"({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
          "metadata": {"name": "web", "namespace": "default"},
          "spec": {"parentRefs": [{"name": "gw", "sectionName": "http"}],
            "hostnames": ["example.com"],
            "rules": [{"matches": [{"path": {"type": "PathPrefix", "value": "/api"},
                                    "headers": [{"name": "x-version", "value": "2"}],
                                    "method": "GET"}],
                       "filters": [{"type": "RequestHeaderModifier",
                                    "requestHeaderModifier":
                                        {"set": [{"name": "x-a", "value": "b"}]}}],
                       "backendRefs": [{"name": "svc", "port": 8080, "weight": 10}],
                       "timeouts": {"request": "10s"}}]}})"},
      {"ReferenceGrant", R"({"apiVersion": "gateway.networking.k8s.io/v1beta1",
          "kind": "ReferenceGrant", "metadata": {"name": "allow", "namespace": "backend"},
          "spec": {"from": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute",
                             "namespace": "default"}],
                   "to": [{"group": "", "kind": "Service"}]}})"},
      {"Secret", R"({"apiVersion": "v1", "kind": "Secret",
          "metadata": {"name": "cert", "namespace": "default"}, "type": "kubernetes.io/tls",
          "data": {"tls.crt": "SGVsbG8gd29ybGQK", "tls.key": "SGVsbG8="}})"},
      {"ConfigMap", R"({"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": "ca", "namespace": "default"},
          "data": {"ca.crt": "-----BEGIN CERTIFICATE-----"}, "binaryData": {"blob": "SGVsbG8="},
          "immutable": true})"},
      {"Service", R"({"apiVersion": "v1", "kind": "Service",
          "metadata": {"name": "svc", "namespace": "default"},
          "spec": {"selector": {"app": "web"},
                   "ports": [{"name": "http", "port": 8080, "targetPort": 3000}]}})"},
      {"EndpointSlice", R"({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
          "metadata": {"name": "svc-1", "namespace": "default",
                       "labels": {"kubernetes.io/service-name": "svc"}},
          "addressType": "IPv4",
          "endpoints": [{"addresses": ["10.0.0.1"],
                         "conditions": {"ready": true, "serving": true, "terminating": false},
                         "hostname": "pod-1", "zone": "a",
                         "targetRef": {"kind": "Pod", "name": "pod-1", "namespace": "default"}}],
          "ports": [{"name": "http", "port": 3000, "protocol": "TCP"}]})"},
      {"Namespace", R"({"apiVersion": "v1", "kind": "Namespace",
          "metadata": {"name": "team-a", "labels": {"team": "a"}}})"},
      {"TLSPolicy", R"({"apiVersion": "portico.io/v1alpha1", "kind": "TLSPolicy",
          "metadata": {"name": "tls", "namespace": "default"},
          "spec": {"targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway",
                                   "name": "gw", "sectionName": "https"}],
                   "hostnames": ["*.example.com"], "certificateRef": {"name": "cert"},
                   "minVersion": "TLSv1.2", "maxVersion": "TLSv1.3",
                   "ciphers": ["ECDHE-RSA-AES128-GCM-SHA256", "TLS_AES_128_GCM_SHA256"],
                   "clientCertificate": {"mode": "Optional", "caCertificateRefs": [{"name": "ca"}],
                                         "verifyDepth": 3}}})"},
      {"Webhook", R"({"apiVersion": "portico.io/v1alpha1", "kind": "Webhook",
          "metadata": {"name": "auth", "namespace": "default"},
          "spec": {"service": {"name": "auth", "port": 8080}, "path": "/check", "method": "POST",
                   "timeout": "500ms", "failurePolicy": "Fail",
                   "forwardHeaders": ["Authorization", "Cookie"], "upstreamHeaders": ["X-User"],
                   "responseHeaders": ["Set-Cookie"],
                   "tls": {"insecureSkipVerify": false, "caCertificateRef": {"name": "ca"}}}})"},
      {"BackendTLSPolicy", R"({"apiVersion": "gateway.networking.k8s.io/v1",
          "kind": "BackendTLSPolicy", "metadata": {"name": "web-tls", "namespace": "default"},
          "spec": {"targetRefs": [{"group": "", "kind": "Service", "name": "web",
                                   "sectionName": "https"}],
                   "validation": {"caCertificateRefs": [{"group": "", "kind": "ConfigMap",
                                                         "name": "ca"}],
                                  "hostname": "web.example.com",
                                  "subjectAltNames": [{"type": "URI", "uri": "spiffe://td/ns/x"},
                                                      {"type": "Hostname",
                                                       "hostname": "*.example.com"}]},
                   "options": {"example.com/x": "y"}}})"},
  };
  return *kObjects;
}

const char* GroupOfKind(std::string_view kind) {
  for (const KindSchema& k : kKinds) {
    if (kind == k.kind) return k.group;
  }
  return "?";
}

// Case: set `pointer` of the kind's valid object to `value` (JSON; nullopt deletes it) and
// expect an error containing `expect` ("" expects the object to stay valid).
struct Case {
  std::string kind;
  std::string pointer;
  std::optional<std::string> value;
  std::string expect;
};

// Printed into ctest names: no brackets (CMake drops such tests from the labelled list).
std::ostream& operator<<(std::ostream& os, const Case& c) {
  return os << c.kind << " " << c.pointer << (c.value.has_value() ? " changed" : " deleted")
            << (c.expect.empty() ? ", still valid" : ", rejected");
}

std::string Repeat(std::string_view item, int n) {
  std::string out = "[";
  for (int i = 0; i < n; ++i) out += (i ? "," : "") + std::string(item);
  return out + "]";
}

std::string Listeners(int n) {
  std::string out = "[";
  for (int i = 0; i < n; ++i) {
    out += (i ? "," : "") + std::string(R"({"name": "l)") + std::to_string(i) + R"(", "port": )" +
           std::to_string(8000 + i) + R"(, "protocol": "HTTP"})";
  }
  return out + "]";
}

std::string Options(int n) {
  std::string out = "{";
  for (int i = 0; i < n; ++i) {
    out += (i ? "," : "") + std::string("\"example.com/o") + std::to_string(i) + "\": \"v\"";
  }
  return out + "}";
}

const std::nullopt_t kDelete = std::nullopt;

std::vector<Case> Cases() {
  return {
      // GatewayClass
      {"GatewayClass", "/spec/controllerName", R"("portico")",
       "GatewayClass portico: spec.controllerName: must be a domain-prefixed path"},
      {"GatewayClass", "/spec/controllerName", kDelete,
       "GatewayClass portico: spec: missing required field \"controllerName\""},
      {"GatewayClass", "/spec/controllerName", "5",
       "spec.controllerName: must be a string (got 5)"},
      {"GatewayClass", "/spec/description", R"(")" + std::string(65, 'd') + R"(")",
       "spec.description: must be at most 64 characters long (got 65)"},
      {"GatewayClass", "/spec/parametersRef", R"({"group": "example.com", "kind": "Config"})",
       "spec.parametersRef: missing required field \"name\""},
      {"GatewayClass", "/spec/controller", R"("x")",
       "spec: unknown field \"controller\" (did you mean \"controllerName\"?)"},
      {"GatewayClass", "/apiVersion", R"("gateway.networking.k8s.io/v2")",
       "GatewayClass portico: apiVersion: must be one of \"gateway.networking.k8s.io/v1\", "
       "\"gateway.networking.k8s.io/v1beta1\" (got \"gateway.networking.k8s.io/v2\")"},
      // Gateway
      {"Gateway", "/spec/listeners/1/port", "70000",
       "Gateway default/gw: spec.listeners[1].port: must be <= 65535 (got 70000)"},
      {"Gateway", "/spec/listeners/0/port", "0", "spec.listeners[0].port: must be >= 1 (got 0)"},
      {"Gateway", "/spec/listeners/0/port", R"("80")",
       "spec.listeners[0].port: must be an integer (got \"80\")"},
      {"Gateway", "/spec/listeners/1/tls/mode", R"("terminate")",
       "spec.listeners[1].tls.mode: must be one of \"Terminate\", \"Passthrough\" (got "
       "\"terminate\")"},
      {"Gateway", "/spec/listeners/1/hostname", R"("*.Example.com")",
       "spec.listeners[1].hostname: must be a hostname"},
      {"Gateway", "/spec/listeners/0/name", R"("HTTP_1")",
       "spec.listeners[0].name: must be a section name"},
      {"Gateway", "/spec/listeners/0/protocol", R"("example.com")",
       "spec.listeners[0].protocol: must be a protocol"},
      {"Gateway", "/spec/listeners", "[]", "spec.listeners: must have at least 1 item (got 0)"},
      {"Gateway", "/spec/listeners", Listeners(65),
       "spec.listeners: must have at most 64 items (got 65)"},
      {"Gateway", "/spec/gatewayClassName", kDelete,
       "Gateway default/gw: spec: missing required field \"gatewayClassName\""},
      {"Gateway", "/spec/listeners/0/allowedRoutes", R"({"namespaces": {"from": "Any"}})",
       "spec.listeners[0].allowedRoutes.namespaces.from: must be one of \"All\", \"Selector\", "
       "\"Same\" (got \"Any\")"},
      {"Gateway", "/spec/listeners/0/allowedRoutes",
       R"({"namespaces": {"from": "Selector", "selector":
                          {"matchExpressions": [{"key": "a", "operator": "Equals"}]}}})",
       "spec.listeners[0].allowedRoutes.namespaces.selector.matchExpressions[0].operator: must "
       "be one of"},
      {"Gateway", "/spec/listeners/0/protocl", R"("HTTP")",
       "spec.listeners[0]: unknown field \"protocl\" (did you mean \"protocol\"?)"},
      {"Gateway", "/spec/listeners/1/tls/options", Options(17),
       "spec.listeners[1].tls.options: must have at most 16 entries (got 17)"},
      {"Gateway", "/spec/addresses", R"([{"type": "IP Address", "value": "10.0.0.1"}])",
       "spec.addresses[0].type: must be an address type"},
      {"Gateway", "/metadata/labels/app", R"("bad value!")",
       "Gateway default/gw: metadata.labels.app: must be a label value"},
      {"Gateway", "/metadata/name", R"("Web")", "metadata.name: must be a lower-case RFC 1123"},
      {"Gateway", "/metadata/name", kDelete, "metadata: missing required field \"name\""},
      {"Gateway", "/spec/listeners/1/tls/mode", R"("Passthrough")", ""},
      // HTTPRoute
      {"HTTPRoute", "/spec/rules/0/matches/0/path/type", R"("Prefix")",
       "HTTPRoute default/web: spec.rules[0].matches[0].path.type: must be one of \"Exact\", "
       "\"PathPrefix\", \"RegularExpression\" (got \"Prefix\")"},
      {"HTTPRoute", "/spec/rules/0/matches/0/path/value", R"("api")",
       "HTTPRoute default/web: spec.rules[0].matches[0].path: must satisfy at least one of: type "
       "is \"RegularExpression\"; value is an absolute path"},
      {"HTTPRoute", "/spec/rules/0/matches/0/path/value", R"("/a//b")",
       "spec.rules[0].matches[0].path: must satisfy at least one of"},
      {"HTTPRoute", "/spec/rules/0/matches/0/path/value", R"("/a/%2F")",
       "spec.rules[0].matches[0].path: must satisfy at least one of"},
      {"HTTPRoute", "/spec/rules/0/matches/0/path/value", R"("/a/..")",
       "spec.rules[0].matches[0].path: must satisfy at least one of"},
      {"HTTPRoute", "/spec/rules/0/matches/0/path",
       R"({"type": "RegularExpression", "value": "^/a.*$"})", ""},
      {"HTTPRoute", "/spec/rules/0/matches/0/path/value", R"("/a/b.c/~d:e@f")", ""},
      {"HTTPRoute", "/spec/rules/0/backendRefs/0/weight", "-1",
       "spec.rules[0].backendRefs[0].weight: must be >= 0 (got -1)"},
      {"HTTPRoute", "/spec/rules/0/backendRefs/0/weight", "1000001",
       "spec.rules[0].backendRefs[0].weight: must be <= 1000000 (got 1000001)"},
      {"HTTPRoute", "/spec/rules/0/backendRefs/0/port", "0",
       "spec.rules[0].backendRefs[0].port: must be >= 1 (got 0)"},
      {"HTTPRoute", "/spec/rules/0/backendRefs/0/name", kDelete,
       "spec.rules[0].backendRefs[0]: missing required field \"name\""},
      {"HTTPRoute", "/spec/rules/0/timeouts/request", R"("10 s")",
       "spec.rules[0].timeouts.request: must be a Gateway API duration"},
      {"HTTPRoute", "/spec/rules/0/timeouts/backendRequest", R"("1.5s")",
       "spec.rules[0].timeouts.backendRequest: must be a Gateway API duration"},
      {"HTTPRoute", "/spec/rules/0/matches/0/method", R"("get")",
       "spec.rules[0].matches[0].method: must be one of \"GET\""},
      {"HTTPRoute", "/spec/rules/0/matches/0/headers/0/name", R"("x version")",
       "spec.rules[0].matches[0].headers[0].name: must be an HTTP header name"},
      {"HTTPRoute", "/spec/rules/0/matches/0/headers/0/value", kDelete,
       "spec.rules[0].matches[0].headers[0]: missing required field \"value\""},
      {"HTTPRoute", "/spec/rules/0/filters/0/type", R"("RequestHeaderModifer")",
       "spec.rules[0].filters[0].type: must be one of \"RequestHeaderModifier\""},
      {"HTTPRoute", "/spec/rules/0/filters/0/requestHeaderModifier/set/0/name", R"("bad:name")",
       "spec.rules[0].filters[0].requestHeaderModifier.set[0].name: must be an HTTP header name"},
      {"HTTPRoute", "/spec/rules/0/filters/0",
       R"({"type": "RequestRedirect", "requestRedirect": {"statusCode": 305}})",
       "spec.rules[0].filters[0].requestRedirect.statusCode: must be one of 301, 302, 303, 307, "
       "308 (got 305)"},
      {"HTTPRoute", "/spec/rules/0/filters/0",
       R"({"type": "RequestRedirect", "requestRedirect": {"scheme": "ftp"}})",
       "spec.rules[0].filters[0].requestRedirect.scheme: must be one of \"http\", \"https\" (got "
       "\"ftp\")"},
      {"HTTPRoute", "/spec/rules/0/filters/0",
       R"({"type": "CORS", "cors": {"allowOrigins": ["example.com"]}})",
       "spec.rules[0].filters[0].cors.allowOrigins[0]: must be \"*\" or an origin"},
      {"HTTPRoute", "/spec/rules/0/filters/0",
       R"({"type": "URLRewrite",
           "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/v2"},
                          "hostname": "*.example.com"}})",
       "spec.rules[0].filters[0].urlRewrite.hostname: must be a hostname without wildcard"},
      {"HTTPRoute", "/spec/hostnames/0", R"("Example.com")",
       "HTTPRoute default/web: spec.hostnames[0]: must be a hostname"},
      {"HTTPRoute", "/spec/hostnames/0", R"("*.*.example.com")",
       "spec.hostnames[0]: must be a hostname"},
      {"HTTPRoute", "/spec/parentRefs/0/sectionName", R"("HTTP")",
       "spec.parentRefs[0].sectionName: must be a section name"},
      {"HTTPRoute", "/spec/parentRefs/0/port", "65536",
       "spec.parentRefs[0].port: must be <= 65535 (got 65536)"},
      {"HTTPRoute", "/spec/rules/0/backendRef", "[]",
       "spec.rules[0]: unknown field \"backendRef\" (did you mean \"backendRefs\"?)"},
      {"HTTPRoute", "/spec/rules", Repeat("{}", 17),
       "spec.rules: must have at most 16 items (got 17)"},
      {"HTTPRoute", "/spec/rules", "[]", "spec.rules: must have at least 1 item (got 0)"},
      {"HTTPRoute", "/spec/rules/0/retry", R"({"codes": [503, 200]})",
       "spec.rules[0].retry.codes[1]: must be >= 400 (got 200)"},
      {"HTTPRoute", "/spec/rules/0/sessionPersistence", R"({"type": "cookie"})",
       "spec.rules[0].sessionPersistence.type: must be one of \"Cookie\", \"Header\""},
      {"HTTPRoute", "/spec", kDelete, "HTTPRoute default/web: missing required field \"spec\""},
      // ReferenceGrant
      {"ReferenceGrant", "/spec/from/0/namespace", kDelete,
       "ReferenceGrant backend/allow: spec.from[0]: missing required field \"namespace\""},
      {"ReferenceGrant", "/spec/to", "[]", "spec.to: must have at least 1 item (got 0)"},
      {"ReferenceGrant", "/spec/from/0/namespace", R"("Default")",
       "spec.from[0].namespace: must be a namespace name"},
      {"ReferenceGrant", "/spec/to/0/kind", R"("")",
       "spec.to[0].kind: must be at least 1 character long (got 0: \"\")"},
      {"ReferenceGrant", "/spec/from/0/group", R"("gateway.networking.k8s.io/v1")",
       "spec.from[0].group: must be an API group"},
      {"ReferenceGrant", "/spec/to/0/namespace", R"("default")",
       "spec.to[0]: unknown field \"namespace\""},
      {"ReferenceGrant", "/spec/from",
       Repeat(R"({"group": "", "kind": "Gateway", "namespace": "a"})", 17),
       "spec.from: must have at most 16 items (got 17)"},
      // Secret
      {"Secret", "/data/tls.crt", R"("not base64!")",
       "Secret default/cert: data[\"tls.crt\"]: must be base64 data"},
      {"Secret", "/data/tls.key", "5", "data[\"tls.key\"]: must be a string (got 5)"},
      {"Secret", "/type", "1", "Secret default/cert: type: must be a string (got 1)"},
      {"Secret", "/immutable", R"("yes")", "immutable: must be a boolean (got \"yes\")"},
      {"Secret", "/stringData", R"({"a": {}})", "stringData.a: must be a string (got an object)"},
      {"Secret", "/spec", "{}", "Secret default/cert: unknown field \"spec\""},
      {"Secret", "/data/tls.crt", "\"LS0t\\nLS0t\\n\"", ""},
      // ConfigMap
      {"ConfigMap", "/data/ca.crt", "5",
       "ConfigMap default/ca: data[\"ca.crt\"]: must be a string"},
      {"ConfigMap", "/binaryData/blob", R"("not base64!")",
       "ConfigMap default/ca: binaryData.blob: must be base64 data"},
      {"ConfigMap", "/immutable", R"("yes")", "immutable: must be a boolean (got \"yes\")"},
      {"ConfigMap", "/spec", "{}", "ConfigMap default/ca: unknown field \"spec\""},
      {"ConfigMap", "/kind", R"("Secret")", "kind"},
      // Service
      {"Service", "/spec/ports/0/port", "0",
       "Service default/svc: spec.ports[0].port: must be >= 1"},
      {"Service", "/spec/ports/0/port", "65536", "spec.ports[0].port: must be <= 65535"},
      {"Service", "/spec/ports/0/port", kDelete, "spec.ports[0]: missing required field \"port\""},
      {"Service", "/spec/ports/0/targetPort", R"("HTTP")",
       "spec.ports[0].targetPort: must be a port number or an IANA service name"},
      {"Service", "/spec/ports/0/targetPort", "70000",
       "spec.ports[0].targetPort: must be <= 65535 (got 70000)"},
      {"Service", "/spec/ports/0/targetPort", "true",
       "spec.ports[0].targetPort: must be an integer or a string (got true)"},
      {"Service", "/spec/ports/0/targetPort", R"("http")", ""},
      {"Service", "/spec/ports/0/protocol", R"("tcp")",
       "spec.ports[0].protocol: must be one of \"TCP\", \"UDP\", \"SCTP\" (got \"tcp\")"},
      {"Service", "/spec/type", R"("Internal")", "spec.type: must be one of \"ClusterIP\""},
      {"Service", "/metadata/name", R"("1svc")", "metadata.name: must be a Service name"},
      {"Service", "/spec/selector/app", "1", "spec.selector.app: must be a string (got 1)"},
      {"Service", "/spec/clusterIP", R"("None")", ""},
      // EndpointSlice
      {"EndpointSlice", "/addressType", R"("IP")",
       "EndpointSlice default/svc-1: addressType: must be one of \"IPv4\", \"IPv6\", \"FQDN\" "
       "(got \"IP\")"},
      {"EndpointSlice", "/addressType", kDelete,
       "EndpointSlice default/svc-1: missing required field \"addressType\""},
      {"EndpointSlice", "/endpoints/0/addresses", "[]",
       "endpoints[0].addresses: must have at least 1 item (got 0)"},
      {"EndpointSlice", "/endpoints/0/conditions/ready", R"("true")",
       "endpoints[0].conditions.ready: must be a boolean or null (got \"true\")"},
      {"EndpointSlice", "/endpoints/0/conditions/healthy", "true",
       "endpoints[0].conditions: unknown field \"healthy\""},
      {"EndpointSlice", "/ports/0/port", "0", "ports[0].port: must be >= 1 (got 0)"},
      {"EndpointSlice", "/metadata/labels/kubernetes.io~1service-name", R"("bad name!")",
       "metadata.labels[\"kubernetes.io/service-name\"]: must be a label value"},
      {"EndpointSlice", "/endpoints", "null", ""},
      // Namespace
      {"Namespace", "/metadata/name", R"("team.a")",
       "Namespace team.a: metadata.name: must be a namespace name"},
      {"Namespace", "/metadata/name", R"(")" + std::string(64, 'a') + R"(")",
       "metadata.name: must be at most 63 characters long (got 64)"},
      {"Namespace", "/metadata/labels/team", "1", "metadata.labels.team: must be a string (got 1)"},
      {"Namespace", "/metadata/labels/team", R"("-a")",
       "metadata.labels.team: must be a label value"},
      {"Namespace", "/spec/finalizers", R"("kubernetes")",
       "spec.finalizers: must be an array (got \"kubernetes\")"},
      {"Namespace", "/kind", R"("Namespaces")", "kind: must be \"Namespace\" (got \"Namespaces\")"},
      {"Namespace", "/metadata", kDelete,
       "Namespace (unnamed): missing required field \"metadata\""},
      // TLSPolicy
      {"TLSPolicy", "/spec/minVersion", R"("TLSv1.1")",
       "TLSPolicy default/tls: spec.minVersion: must be one of \"TLSv1.2\", \"TLSv1.3\" (got "
       "\"TLSv1.1\")"},
      {"TLSPolicy", "/spec/targetRefs", "[]", "spec.targetRefs: must have at least 1 item (got 0)"},
      {"TLSPolicy", "/spec/targetRefs", kDelete, "spec: missing required field \"targetRefs\""},
      {"TLSPolicy", "/spec/targetRefs/0/name", kDelete,
       "spec.targetRefs[0]: missing required field \"name\""},
      {"TLSPolicy", "/spec/clientCertificate/mode", R"("Required")",
       "spec.clientCertificate.mode: must be one of \"None\", \"Optional\", \"Require\" (got "
       "\"Required\")"},
      {"TLSPolicy", "/spec/clientCertificate", R"({"mode": "Require"})",
       "spec.clientCertificate: must satisfy at least one of: mode is \"None\"; caCertificateRefs "
       "names at least one CA Secret"},
      {"TLSPolicy", "/spec/clientCertificate", R"({"caCertificateRefs": []})",
       "spec.clientCertificate: must satisfy at least one of"},
      {"TLSPolicy", "/spec/clientCertificate", R"({"mode": "None"})", ""},
      {"TLSPolicy", "/spec/clientCertificate/verifyDepth", "0",
       "spec.clientCertificate.verifyDepth: must be >= 1 (got 0)"},
      {"TLSPolicy", "/spec/ciphers/0", R"("AES 128")",
       "spec.ciphers[0]: must be a cipher suite name"},
      {"TLSPolicy", "/spec/certificateRef/namespace", R"("Default")",
       "spec.certificateRef.namespace: must be a namespace name"},
      {"TLSPolicy", "/spec/certificateRefs", "[]",
       "spec: unknown field \"certificateRefs\" (did you mean \"certificateRef\"?)"},
      {"TLSPolicy", "/spec/hostnames/0", R"("*")", "spec.hostnames[0]: must be a hostname"},
      // BackendTLSPolicy
      {"BackendTLSPolicy", "/spec/targetRefs", "[]",
       "spec.targetRefs: must have at least 1 item (got 0)"},
      {"BackendTLSPolicy", "/spec/validation/hostname", kDelete,
       "spec.validation: missing required field \"hostname\""},
      {"BackendTLSPolicy", "/spec/validation/hostname", R"("*.example.com")",
       "spec.validation.hostname: must be a hostname without wildcard"},
      {"BackendTLSPolicy", "/spec/validation/wellKnownCACertificates", R"("Mozilla")",
       "spec.validation.wellKnownCACertificates: must be one of"},
      {"BackendTLSPolicy", "/spec/validation/subjectAltNames/0/type", R"("IPAddress")",
       "spec.validation.subjectAltNames[0].type: must be one of"},
      {"BackendTLSPolicy", "/spec/targetRefs/0/kind", kDelete,
       "spec.targetRefs[0]: missing required field \"kind\""},
      // Webhook
      {"Webhook", "/spec/url", R"("https://auth.example.com/check")",
       "Webhook default/auth: spec: exactly one of \"service\", \"url\" must be set (got "
       "\"service\" and \"url\")"},
      {"Webhook", "/spec/service", kDelete,
       "spec: exactly one of \"service\", \"url\" must be set (got none)"},
      {"Webhook", "/spec/timeout", R"("5")", "spec.timeout: must be a Gateway API duration"},
      {"Webhook", "/spec/timeout", R"("1.5s")", "spec.timeout: must be a Gateway API duration"},
      {"Webhook", "/spec/failurePolicy", R"("Retry")",
       "spec.failurePolicy: must be one of \"Fail\", \"Ignore\" (got \"Retry\")"},
      {"Webhook", "/spec/service/port", "0", "spec.service.port: must be >= 1 (got 0)"},
      {"Webhook", "/spec/service/port", kDelete, "spec.service: missing required field \"port\""},
      {"Webhook", "/spec/path", R"("check")", "spec.path: must be an absolute path"},
      {"Webhook", "/spec/forwardHeaders/0", R"("Bad Header")",
       "spec.forwardHeaders[0]: must be an HTTP header name"},
      {"Webhook", "/spec/tls/insecureSkipVerify", R"("no")",
       "spec.tls.insecureSkipVerify: must be a boolean (got \"no\")"},
      {"Webhook", "/spec/method", R"("FETCH")", "spec.method: must be one of \"GET\""},
  };
}

class InvalidObjectTest : public ::testing::TestWithParam<Case> {};

TEST_P(InvalidObjectTest, IsRejectedNamingTheField) {
  const Case& c = GetParam();
  const SchemaValidator* v = Schemas::Get().Find(GroupOfKind(c.kind), c.kind);
  ASSERT_NE(v, nullptr) << c.kind;
  rapidjson::Document doc = MustParse(ValidObjects().at(c.kind));
  rapidjson::Pointer pointer(c.pointer.c_str());
  ASSERT_TRUE(pointer.IsValid()) << c.pointer;
  if (c.value.has_value()) {
    rapidjson::Document value = MustParse(*c.value);
    // The const overload deep-copies into doc's allocator (the other one would move `value`).
    pointer.Set(doc, static_cast<const rapidjson::Value&>(value), doc.GetAllocator());
  } else {
    ASSERT_TRUE(pointer.Erase(doc)) << c.pointer << " is not in the valid " << c.kind;
  }
  std::string name = ObjectName(doc);
  Status s = v->Validate(doc, name);
  if (c.expect.empty()) {
    EXPECT_EQ(s, OkStatus());
    v->ApplyDefaults(doc);
    EXPECT_EQ(v->Validate(doc, name), OkStatus()) << "after defaults";
    return;
  }
  ASSERT_FALSE(s.ok()) << "accepted: " << json::Serialize(doc);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), StartsWith(name + ": "));
  EXPECT_THAT(s.message(), HasSubstr(c.expect));
}

INSTANTIATE_TEST_SUITE_P(AllKinds, InvalidObjectTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.kind + "_" + std::to_string(info.index);
                         });

TEST(InvalidObjectCoverageTest, EveryKindHasAValidObjectAndAtLeastThreeRejections) {
  std::map<std::string, int> rejections;
  for (const Case& c : Cases()) {
    if (!c.expect.empty()) ++rejections[c.kind];
  }
  for (const KindSchema& k : kKinds) {
    EXPECT_GE(rejections[k.kind], 3) << k.kind;
    ASSERT_EQ(ValidObjects().count(k.kind), 1u) << k.kind;
    const SchemaValidator* v = Schemas::Get().Find(k.group, k.kind);
    ASSERT_NE(v, nullptr);
    rapidjson::Document doc = MustParse(ValidObjects().at(k.kind));
    EXPECT_EQ(v->Validate(doc, k.kind), OkStatus());
    v->ApplyDefaults(doc);
    EXPECT_EQ(v->Validate(doc, k.kind), OkStatus()) << "after defaults";
  }
}

}  // namespace
}  // namespace portico::core
