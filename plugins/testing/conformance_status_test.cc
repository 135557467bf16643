// conformance_status_test: the Gateway API conformance suite's status assertions (the
// statusChecks of ../shared/conformance/gateway-api/*.json, read at test time and never copied
// into the repository) evaluated against the statuses the in-tree plugins produce in the SDK's
// fake host, without a controller or gateway.
//
// Per file: a fresh FakeWorld gets a GatewayClass "portico" with Portico's controllerName, the
// base manifests, the two Secrets the suite generates (self-signed, generated here with
// OpenSSL), for extended files extended/_base.json's Services, CA ConfigMaps and Secrets (the
// frontend client-certificate validation files only: kExtendedFiles), the file's manifests
// ({GATEWAY_CLASS_NAME} -> "portico") and its runtimeSetup; Settle() processes everything to a
// fixed point (fake_world.h); then every statusChecks entry is evaluated with the semantics of the
// data's README, and again after each followUp's actions. Gateway statuses include the routes'
// attachedRoutes contributions.
//
// Skipped parts, which need a gateway (ConfigSync): Programmed=True conditions and
// gatewayReady's status.addresses. A check with such parts passes when all its other parts do,
// and is counted as partial. Prints "N passed, M failed" and fails on any failure; skips when
// the data directory is absent. PORTICO_CONFORMANCE_DIR in the environment overrides the
// directory configured at build time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "portico/sdk/names.h"
#include "portico/sdk/secret_data.h"
#include "portico/sdk/testing/fake_host.h"
#include "portico/sdk/testing/fake_world.h"
#include "portico/sdk/testing/test_certs.h"

namespace portico::plugins::testing {

using sdk::testing::CertificateOptions;
using sdk::testing::MakeTestCertificate;
using sdk::testing::TestCertificate;

namespace {

namespace fs = std::filesystem;
using sdk::ObjectRef;
using sdk::testing::FakeHost;
using sdk::testing::FakeWorld;

constexpr char kGroup[] = "gateway.networking.k8s.io";
constexpr char kControllerName[] = "portico.io/gateway-controller";
constexpr int64_t kNowMs = 1700000000000;  // the fake host's clock
constexpr int64_t kDayMs = 24 * 3600 * 1000;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string Manifest(const rapidjson::Value& m) {
  std::string text = json::Serialize(m);
  const std::string placeholder = "{GATEWAY_CLASS_NAME}";
  for (size_t at = text.find(placeholder); at != std::string::npos; at = text.find(placeholder)) {
    text.replace(at, placeholder.size(), "portico");
  }
  return text;
}

ObjectRef RefOf(const rapidjson::Value& v) {
  std::string api = json::GetString(v, "apiVersion");
  size_t slash = api.rfind('/');
  std::string group =
      json::GetString(v, "group", slash == std::string::npos ? "" : api.substr(0, slash));
  return ObjectRef{group, json::GetString(v, "kind"), json::GetString(v, "namespace"),
                   json::GetString(v, "name")};
}

// Evaluation is the outcome of one statusChecks entry.
struct Evaluation {
  bool passed = true;
  bool partial = false;  // some parts needed a gateway and were skipped
  std::string why;
  void Fail(const std::string& reason) {
    if (passed) why = reason;
    passed = false;
  }
};

Evaluation Failed(const std::string& why) {
  Evaluation e;
  e.Fail(why);
  return e;
}

// ConditionMatches compares one condition against an expectation {type, status, reason|null}.
bool ConditionMatches(const rapidjson::Value& have, const rapidjson::Value& want) {
  if (json::GetString(have, "type") != json::GetString(want, "type")) return false;
  if (json::GetString(have, "status") != json::GetString(want, "status")) return false;
  const rapidjson::Value* reason = json::Find(want, "reason");
  return reason == nullptr || reason->IsNull() ||
         json::GetString(have, "reason") == json::GetString(want, "reason");
}

// HasCondition checks a conditions array; observedGeneration must be the object's (1).
bool HasCondition(const rapidjson::Value* conditions, const rapidjson::Value& want) {
  if (conditions == nullptr || !conditions->IsArray()) return false;
  for (const auto& c : conditions->GetArray()) {
    if (ConditionMatches(c, want)) return json::GetInt(c, "observedGeneration") == 1;
  }
  return false;
}

// NeedsGateway: a Programmed=True expectation, which only a gateway's acknowledgement makes.
bool NeedsGateway(const rapidjson::Value& want) {
  return json::GetString(want, "type") == "Programmed" && json::GetString(want, "status") == "True";
}

const rapidjson::Value* FindListener(const rapidjson::Value& status, const std::string& name) {
  const rapidjson::Value* listeners = json::Find(status, "listeners");
  if (listeners == nullptr || !listeners->IsArray()) return nullptr;
  for (const auto& l : listeners->GetArray()) {
    if (json::GetString(l, "name") == name) return &l;
  }
  return nullptr;
}

class Runner {
 public:
  explicit Runner(const fs::path& dir) : dir_(dir) {}

  // RunFile runs one file; `extended_base` (extended/_base.json) adds its Services, CA
  // ConfigMaps and Secrets after the main base's.
  void RunFile(const fs::path& file, const rapidjson::Value& base,
               const rapidjson::Value* extended_base = nullptr) {
    auto doc = json::Parse(ReadFile(file), file.filename().string());
    ASSERT_TRUE(doc.ok()) << doc.status();
    FakeHost host;
    for (const char* path : {SECRET_PLUGIN_PATH, CONFIGMAP_PLUGIN_PATH, NAMESPACE_PLUGIN_PATH,
                             REFERENCEGRANT_PLUGIN_PATH, SERVICE_PLUGIN_PATH, GATEWAY_PLUGIN_PATH,
                             HTTPROUTE_PLUGIN_PATH, WEBHOOK_PLUGIN_PATH}) {
      ASSERT_TRUE(host.Load(path).ok()) << path;
    }
    FakeWorld world(host);
    Put(world, R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"GatewayClass",)"
               R"("metadata":{"name":"portico"},"spec":{"controllerName":")" +
                   std::string(kControllerName) + R"("}})");
    for (const auto& m : base["manifests"].GetArray()) Put(world, Manifest(m));
    for (const auto& s : base["generatedSecrets"].GetArray()) Put(world, GeneratedSecret(s));
    if (extended_base != nullptr) {
      for (const auto& m : (*extended_base)["manifests"].GetArray()) Put(world, Manifest(m));
      for (const auto& c : (*extended_base)["generatedConfigMaps"].GetArray()) {
        Put(world, GeneratedConfigMap(c));
      }
      // CA-signed upstream; self-signed here (status checks only need usable material).
      for (const auto& s : (*extended_base)["generatedSecrets"].GetArray()) {
        Put(world, GeneratedSecret(s));
      }
    }
    for (const auto& m : (*doc)["manifests"].GetArray()) Put(world, Manifest(m));
    if (const rapidjson::Value* setup = json::Find(*doc, "runtimeSetup")) {
      RuntimeSetup(world, *setup, *doc);
    }
    Status settled = world.Settle();
    ASSERT_TRUE(settled.ok()) << file << ": " << settled;
    std::string name = file.filename().string();
    Evaluate(world, name, json::Find(*doc, "statusChecks"));
    if (const rapidjson::Value* follow = json::Find(*doc, "followUps")) {
      for (const auto& step : follow->GetArray()) {
        for (const auto& action : step["actions"].GetArray()) {
          if (json::GetString(action, "op") == "delete") world.Remove(RefOf(action));
        }
        settled = world.Settle();
        ASSERT_TRUE(settled.ok()) << file << ": " << settled;
        Evaluate(world, name + " / " + json::GetString(step, "name"),
                 json::Find(step, "statusChecks"));
      }
    }
  }

  int passed() const { return passed_; }
  int failed() const { return failed_; }
  int partial() const { return partial_; }
  const std::vector<std::string>& failures() const { return failures_; }

 private:
  void Put(FakeWorld& world, const std::string& object) {
    Status s = world.Put(object);
    EXPECT_TRUE(s.ok()) << s << ": " << object;
  }

  // GeneratedSecret: the suite's self-signed kubernetes.io/tls Secrets; hosts that are DNS
  // names become DNS SANs (as upstream; "*" becomes a URI SAN there and is left out here).
  std::string GeneratedSecret(const rapidjson::Value& s) {
    std::string key = json::GetString(s, "namespace") + "/" + json::GetString(s, "name");
    auto cached = secrets_.find(key);
    if (cached == secrets_.end()) {
      CertificateOptions options;
      for (const auto& h : s["hosts"].GetArray()) {
        std::string host = h.GetString();
        if (sdk::names::IsHostname(host, /*allow_wildcard=*/true))
          options.dns_names.push_back(host);
      }
      options.not_before_unix_ms = kNowMs - kDayMs;
      options.not_after_unix_ms = kNowMs + 365 * kDayMs;
      options.rsa = true;
      cached = secrets_.emplace(key, MakeTestCertificate(options)).first;
    }
    const TestCertificate& cert = cached->second;
    return R"({"apiVersion":"v1","kind":"Secret","type":"kubernetes.io/tls","metadata":{)"
           R"("name":")" +
           json::GetString(s, "name") + R"(","namespace":")" + json::GetString(s, "namespace") +
           R"("},"data":{"tls.crt":")" + sdk::Base64Encode(cert.cert_pem) + R"(","tls.key":")" +
           sdk::Base64Encode(cert.key_pem) + R"("}})";
  }

  // GeneratedConfigMap: a CA ConfigMap of extended/_base.json, its key holding a self-signed
  // CA certificate generated here.
  std::string GeneratedConfigMap(const rapidjson::Value& c) {
    CertificateOptions options;
    options.not_before_unix_ms = kNowMs - kDayMs;
    options.not_after_unix_ms = kNowMs + 365 * kDayMs;
    options.common_name = json::GetString(c, "ca", "CA");
    TestCertificate ca = MakeTestCertificate(options);
    return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" +
           json::GetString(c, "name") + R"(","namespace":")" + json::GetString(c, "namespace") +
           R"("},"data":{")" + json::GetString(c, "key", "ca.crt") +
           "\":" + sdk::testing::detail::Quote(ca.cert_pem) + "}}";
  }

  // RuntimeSetup: populateEndpointSlices fills the named slices with one ready endpoint.
  void RuntimeSetup(FakeWorld& world, const rapidjson::Value& setup, const rapidjson::Value& doc) {
    for (const auto& step : setup.GetArray()) {
      if (json::GetString(step, "op") != "populateEndpointSlices") continue;
      for (const auto& wanted : step["endpointSlices"].GetArray()) {
        for (const auto& m : doc["manifests"].GetArray()) {
          std::string key =
              json::GetString(m, "metadata.namespace") + "/" + json::GetString(m, "metadata.name");
          if (json::GetString(m, "kind") != "EndpointSlice" || key != wanted.GetString()) continue;
          auto slice = json::Parse(Manifest(m));
          ASSERT_TRUE(slice.ok());
          bool v6 = json::GetString(*slice, "addressType") == "IPv6";
          auto endpoints =
              json::Parse(std::string(R"([{"addresses":[")") + (v6 ? "fd00::2:1" : "10.0.2.1") +
                          R"("],"conditions":{"ready":true}}])");
          slice->RemoveMember("endpoints");
          slice->AddMember("endpoints", rapidjson::Value(*endpoints, slice->GetAllocator()),
                           slice->GetAllocator());
          Put(world, json::Serialize(*slice));
        }
      }
    }
  }

  std::optional<rapidjson::Document> StatusOf(const FakeWorld& world, const rapidjson::Value& ref,
                                              const char* kind) {
    ObjectRef r{json::GetString(ref, "group", kGroup), json::GetString(ref, "kind", kind),
                json::GetString(ref, "namespace"), json::GetString(ref, "name")};
    std::optional<std::string> status = world.AggregatedStatus(r);
    if (!status) return std::nullopt;
    auto doc = json::Parse(*status);
    if (!doc.ok()) return std::nullopt;
    return std::move(doc).value();
  }

  void Evaluate(const FakeWorld& world, const std::string& where, const rapidjson::Value* checks) {
    if (checks == nullptr || !checks->IsArray()) return;
    for (const auto& check : checks->GetArray()) {
      Evaluation e = EvaluateOne(world, check);
      if (e.passed) {
        ++passed_;
        if (e.partial) ++partial_;
      } else {
        ++failed_;
        failures_.push_back(where + ": " + e.why + "\n    check: " + json::Serialize(check));
      }
    }
  }

  Evaluation EvaluateOne(const FakeWorld& world, const rapidjson::Value& check) {
    Evaluation e;
    std::string type = json::GetString(check, "check");
    if (type == "gatewayReady") {
      auto status = StatusOf(world, check["gateway"], "Gateway");
      if (!status) return Failed("Gateway has no status");
      if (const rapidjson::Value* r = json::Find(check, "requireAddress"); r && r->GetBool()) {
        e.partial = true;  // status.addresses come from the gateways serving it
      }
      const rapidjson::Value* listeners = json::Find(*status, "listeners");
      if (listeners == nullptr || !listeners->IsArray() || listeners->Empty()) {
        return Failed("Gateway has no listener status");
      }
      for (const auto& l : listeners->GetArray()) {
        for (const auto& want : check["allListenersConditions"].GetArray()) {
          if (NeedsGateway(want)) {
            e.partial = true;
            continue;
          }
          if (!HasCondition(json::Find(l, "conditions"), want)) {
            e.Fail("listener " + json::GetString(l, "name") + " lacks " + json::Serialize(want) +
                   "; status: " + json::Serialize(*status));
          }
        }
      }
    } else if (type == "routeParentCondition") {
      auto status = StatusOf(world, check["route"], "HTTPRoute");
      if (!status) return Failed("route has no status");
      const rapidjson::Value& want_parent = check["parentRef"];
      bool strict = json::Find(check, "strictParentRef") && check["strictParentRef"].GetBool();
      bool ns_required =
          json::Find(check, "namespaceRequired") && check["namespaceRequired"].GetBool();
      const rapidjson::Value* found = nullptr;
      for (const auto& p : (*status)["parents"].GetArray()) {
        const rapidjson::Value& ref = p["parentRef"];
        if (json::GetString(ref, "name") != json::GetString(want_parent, "name")) continue;
        const rapidjson::Value* ns = json::Find(ref, "namespace");
        if (ns != nullptr && ns->GetString() != json::GetString(want_parent, "namespace")) continue;
        if (strict) {
          if (json::GetString(ref, "group", "-") != kGroup ||
              json::GetString(ref, "kind", "-") != "Gateway" ||
              json::GetString(p, "controllerName") != kControllerName ||
              (ns_required && ns == nullptr)) {
            continue;
          }
        }
        found = &p;
        break;
      }
      if (found == nullptr) {
        return Failed("no matching parent entry; status: " + json::Serialize(*status));
      }
      if (!HasCondition(json::Find(*found, "conditions"), check["condition"])) {
        e.Fail("parent entry lacks the condition; status: " + json::Serialize(*status));
      }
    } else if (type == "routeNoAcceptedParents") {
      auto status = StatusOf(world, check["route"], "HTTPRoute");
      if (!status) return Failed("route has no status");
      const rapidjson::Value& parents = (*status)["parents"];
      if (parents.Size() > 1) e.Fail("more than one parent entry: " + json::Serialize(*status));
      if (parents.Size() == 1) {
        rapidjson::Document want;
        want.Parse(R"({"type":"Accepted","status":"False","reason":null})");
        if (!HasCondition(json::Find(parents[0], "conditions"), want)) {
          e.Fail("the parent entry is not Accepted=False: " + json::Serialize(*status));
        }
      }
    } else if (type == "gatewayListenersStatus") {
      auto status = StatusOf(world, check["gateway"], "Gateway");
      if (!status) return Failed("Gateway has no status");
      const rapidjson::Value* listeners = json::Find(*status, "listeners");
      const rapidjson::Value& wanted = check["listeners"];
      if (listeners == nullptr || listeners->Size() != wanted.Size()) {
        return Failed("listener count differs; status: " + json::Serialize(*status));
      }
      for (const auto& want : wanted.GetArray()) {
        const rapidjson::Value* l = FindListener(*status, json::GetString(want, "name"));
        if (l == nullptr) {
          e.Fail("no listener " + json::GetString(want, "name"));
          continue;
        }
        if (json::GetInt(*l, "attachedRoutes") != json::GetInt(want, "attachedRoutes")) {
          e.Fail("listener " + json::GetString(want, "name") + " attachedRoutes " +
                 std::to_string(json::GetInt(*l, "attachedRoutes").value_or(-1)) +
                 "; status: " + json::Serialize(*status));
        }
        for (const auto& c : want["conditions"].GetArray()) {
          if (NeedsGateway(c)) {
            e.partial = true;
            continue;
          }
          if (!HasCondition(json::Find(*l, "conditions"), c)) {
            e.Fail("listener " + json::GetString(want, "name") + " lacks " + json::Serialize(c) +
                   "; status: " + json::Serialize(*status));
          }
        }
        const rapidjson::Value& kinds = want["supportedKinds"];
        const rapidjson::Value* have = json::Find(*l, "supportedKinds");
        if (kinds.Empty() && have != nullptr && have->IsArray() && !have->Empty()) {
          e.Fail("supportedKinds should be empty: " + json::Serialize(*status));
        }
        for (const auto& k : kinds.GetArray()) {
          bool present = false;
          for (const auto& h : have->GetArray()) {
            present = present || (json::GetString(h, "group") == json::GetString(k, "group") &&
                                  json::GetString(h, "kind") == json::GetString(k, "kind"));
          }
          if (!present) e.Fail("supportedKinds lacks " + json::Serialize(k));
        }
      }
    } else if (type == "gatewayListenerConditions") {
      auto status = StatusOf(world, check["gateway"], "Gateway");
      if (!status) return Failed("Gateway has no status");
      for (const auto& name : check["listeners"].GetArray()) {
        const rapidjson::Value* l = FindListener(*status, name.GetString());
        if (l == nullptr) {
          e.Fail(std::string("no listener ") + name.GetString());
          continue;
        }
        for (const auto& want : check["conditions"].GetArray()) {
          if (NeedsGateway(want)) {
            e.partial = true;
            continue;
          }
          if (!HasCondition(json::Find(*l, "conditions"), want)) {
            e.Fail(std::string("listener ") + name.GetString() + " lacks " + json::Serialize(want) +
                   "; status: " + json::Serialize(*status));
          }
        }
      }
    } else if (type == "gatewayCondition") {
      auto status = StatusOf(world, check["gateway"], "Gateway");
      if (!status) return Failed("Gateway has no status");
      if (NeedsGateway(check["condition"])) {
        e.partial = true;
      } else if (!HasCondition(json::Find(*status, "conditions"), check["condition"])) {
        e.Fail("Gateway lacks " + json::Serialize(check["condition"]) +
               "; status: " + json::Serialize(*status));
      }
    } else if (type == "gatewayAddress") {
      if (!StatusOf(world, check["gateway"], "Gateway")) return Failed("Gateway has no status");
      e.partial = true;  // status.addresses come from the gateways serving it
    } else if (type == "gatewayZeroAttachedRoutes") {
      auto status = StatusOf(world, check["gateway"], "Gateway");
      if (!status) return Failed("Gateway has no status");
      const rapidjson::Value* listeners = json::Find(*status, "listeners");
      if (listeners != nullptr && listeners->Size() > 0 &&
          (listeners->Size() != 1 || json::GetInt((*listeners)[0], "attachedRoutes") != 0)) {
        e.Fail("attached routes present: " + json::Serialize(*status));
      }
    } else {
      e.Fail("unknown check type " + type);
    }
    return e;
  }

  fs::path dir_;
  std::map<std::string, TestCertificate> secrets_;
  int passed_ = 0;
  int failed_ = 0;
  int partial_ = 0;
  std::vector<std::string> failures_;
};

TEST(plugin_conformance_status, StatusChecksPassThroughTheFakeHost) {
  const char* env = std::getenv("PORTICO_CONFORMANCE_DIR");  // overrides the configured path
  const fs::path dir = env != nullptr && *env != '\0' ? fs::path(env) : fs::path(CONFORMANCE_DIR);
  if (!fs::is_directory(dir)) GTEST_SKIP() << "no conformance data at " << dir;
  auto base = json::Parse(ReadFile(dir / "_base.json"), "_base.json");
  ASSERT_TRUE(base.ok()) << base.status();
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".json" && name != "_base.json" && name != "index.json") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  Runner runner(dir);
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.filename().string());
    runner.RunFile(file, *base);
  }
  for (const std::string& f : runner.failures()) std::cout << "FAILED " << f << "\n";
  std::cout << "conformance statusChecks through the fake host (" << files.size()
            << " files): " << runner.passed() << " passed, " << runner.failed() << " failed ("
            << runner.partial()
            << " of the passed have Programmed=True or address parts skipped: those need a "
               "gateway)\n";
  EXPECT_EQ(runner.failed(), 0);
}

// The extended files whose status checks the in-tree plugins satisfy (each listed file must
// exist and pass; the others need kinds Portico lacks). Run with extended/_base.json.
constexpr const char* kExtendedFiles[] = {
    "gateway-invalid-default-frontend-client-certificate-validation.json",
    "gateway-with-clientcertificate-validation-insecure-fallback.json",
    "gateway-with-clientcertificate-validation.json",
    "gateway-with-invalid-clientcertificate-validation.json",
};

TEST(plugin_conformance_status, ExtendedFrontendValidationStatusChecksPass) {
  const char* env = std::getenv("PORTICO_CONFORMANCE_DIR");
  const fs::path dir = env != nullptr && *env != '\0' ? fs::path(env) : fs::path(CONFORMANCE_DIR);
  if (!fs::is_directory(dir / "extended"))
    GTEST_SKIP() << "no extended conformance data in " << dir;
  auto base = json::Parse(ReadFile(dir / "_base.json"), "_base.json");
  ASSERT_TRUE(base.ok()) << base.status();
  auto extended = json::Parse(ReadFile(dir / "extended" / "_base.json"), "extended/_base.json");
  ASSERT_TRUE(extended.ok()) << extended.status();
  Runner runner(dir / "extended");
  int checks = 0;
  for (const char* name : kExtendedFiles) {
    SCOPED_TRACE(name);
    const fs::path file = dir / "extended" / name;
    ASSERT_TRUE(fs::exists(file)) << file;
    int before = runner.passed() + runner.failed();
    runner.RunFile(file, *base, &*extended);
    checks += runner.passed() + runner.failed() - before;
  }
  for (const std::string& f : runner.failures()) std::cout << "FAILED " << f << "\n";
  std::cout << "extended statusChecks through the fake host (" << std::size(kExtendedFiles)
            << " files): " << runner.passed() << " passed, " << runner.failed() << " failed ("
            << runner.partial() << " partial)\n";
  EXPECT_EQ(checks, 18);  // 5 + 6 + 4 + 3, as extended/README.md counts them
  EXPECT_EQ(runner.failed(), 0);
}

}  // namespace
}  // namespace portico::plugins::testing
