// backendtlspolicy_test: the BackendTLSPolicy kind in the SDK's fake host, with the Gateway,
// HTTPRoute, Service, ConfigMap and Secret plugins beside it: validation (the CRD's CEL rules),
// ancestors found through the routes reaching the targeted Services, CA references through the
// ConfigMap plugin's exports, conflicts, links and the backend.v1 "tls" entries it stages.
// Objects follow the Gateway API conformance manifests (kubernetes-sigs/gateway-api,
// Apache-2.0); certificates are generated at test time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "portico/sdk/testing/fake_host.h"
#include "portico/sdk/testing/test_certs.h"

namespace portico::plugins::backendtlspolicy {
namespace {

using sdk::ObjectRef;
using sdk::testing::FakeChange;
using sdk::testing::FakeHost;
using sdk::testing::ProcessOutcome;
using sdk::testing::StageOutcome;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kGroup[] = "gateway.networking.k8s.io";
constexpr char kNs[] = "gateway-conformance-infra";
constexpr int64_t kNowMs = 1700000000000;  // the fake host's clock
constexpr int64_t kDayMs = 24 * 3600 * 1000;

constexpr char kGatewayClass[] =
    R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"GatewayClass",
  "metadata":{"name":"portico"},"spec":{"controllerName":"portico.io/gateway-controller"}})";

std::string GatewayNamed(std::string_view name) {
  return R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway","metadata":{"name":")" +
         std::string(name) +
         R"(","namespace":"gateway-conformance-infra"},"spec":{)"
         R"("gatewayClassName":"portico","listeners":[{"name":"http","port":80,)"
         R"("protocol":"HTTP","allowedRoutes":{"namespaces":{"from":"Same"}}}]}})";
}

// The Service "web": https (443) and https-2 (8443), as the conformance Services select
// app: tls-backend.
constexpr char kService[] = R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"web",
  "namespace":"gateway-conformance-infra"},"spec":{"selector":{"app":"tls-backend"},"ports":[
  {"name":"https","protocol":"TCP","port":443,"targetPort":8443},
  {"name":"https-2","protocol":"TCP","port":8443,"targetPort":8443}]}})";

// RouteTo: HTTPRoute `name` attached to Gateway `gateway`, sending to web:`port`.
std::string RouteTo(std::string_view name, std::string_view gateway, int port) {
  return R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":")" +
         std::string(name) +
         R"(","namespace":"gateway-conformance-infra"},"spec":{)"
         R"("parentRefs":[{"name":")" +
         std::string(gateway) + R"("}],"rules":[{"backendRefs":[{"name":"web","port":)" +
         std::to_string(port) + "}]}]}}";
}

std::string CaConfigMap(std::string_view name, std::string_view ca_pem) {
  std::string escaped;
  for (char c : ca_pem) escaped += c == '\n' ? std::string("\\n") : std::string(1, c);
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + std::string(name) +
         R"(","namespace":"gateway-conformance-infra"},"data":{"ca.crt":")" + escaped + R"("}})";
}

// Policy: BackendTLSPolicy `name` (created at `created`, "" for none) with `spec`.
std::string Policy(std::string_view name, std::string_view spec, std::string_view created = "",
                   int generation = 1) {
  std::string metadata = R"({"name":")" + std::string(name) +
                         R"(","namespace":"gateway-conformance-infra","generation":)" +
                         std::to_string(generation);
  if (!created.empty()) metadata += R"(,"creationTimestamp":")" + std::string(created) + "\"";
  return R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"BackendTLSPolicy","metadata":)" +
         metadata + R"(},"spec":)" + std::string(spec) + "}";
}

// SpecFor: targets web (with `section`, if any), CA ConfigMap `ca`, hostname abc.example.com.
std::string SpecFor(std::string_view section = "", std::string_view ca = "ca",
                    std::string_view more = "") {
  std::string target = R"({"group":"","kind":"Service","name":"web")";
  if (!section.empty()) target += R"(,"sectionName":")" + std::string(section) + "\"";
  return R"({"targetRefs":[)" + target +
         R"(}],"validation":{"caCertificateRefs":[)"
         R"({"group":"","kind":"ConfigMap","name":")" +
         std::string(ca) + R"("}],"hostname":"abc.example.com")" + std::string(more) + "}}";
}

// Ancestors: "gateway: Type=Status/Reason ..." per status ancestor.
std::vector<std::string> Ancestors(const ProcessOutcome& out) {
  std::vector<std::string> list;
  auto doc = json::Parse(out.status_json.value_or("{}"));
  const rapidjson::Value* ancestors = doc.ok() ? json::Find(*doc, "ancestors") : nullptr;
  for (rapidjson::SizeType i = 0; ancestors != nullptr && i < ancestors->Size(); ++i) {
    const rapidjson::Value& a = (*ancestors)[i];
    std::string line = json::GetString(a, "ancestorRef.name") + ":";
    for (const auto& c : a["conditions"].GetArray()) {
      line += " " + json::GetString(c, "type") + "=" + json::GetString(c, "status") + "/" +
              json::GetString(c, "reason");
    }
    list.push_back(line);
  }
  return list;
}

std::string Message(const ProcessOutcome& out, std::string_view type) {
  auto doc = json::Parse(out.status_json.value_or("{}"));
  if (!doc.ok() || (*doc)["ancestors"].Empty()) return "";
  for (const auto& c : (*doc)["ancestors"][0]["conditions"].GetArray()) {
    if (json::GetString(c, "type") == type) return json::GetString(c, "message");
  }
  return "";
}

class plugin_backendtlspolicy : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* path : {PLUGIN_PATH, GATEWAY_PLUGIN_PATH, HTTPROUTE_PLUGIN_PATH,
                             SERVICE_PLUGIN_PATH, CONFIGMAP_PLUGIN_PATH, SECRET_PLUGIN_PATH}) {
      ASSERT_TRUE(host_.Load(path).ok()) << path;
    }
  }
  // ApplyWorld: the class, Gateway same-namespace, Service web, a route to web:443 and the CA
  // ConfigMap "ca".
  void ApplyWorld() {
    for (const std::string& object :
         {std::string(kGatewayClass), GatewayNamed("same-namespace"), std::string(kService),
          RouteTo("to-web", "same-namespace", 443), CaConfigMap("ca", ca_.cert_pem)}) {
      ProcessOutcome out = host_.Apply(object);
      ASSERT_TRUE(out.ok()) << out.status << " for " << object;
    }
    auto exported = json::Parse(*host_.GetExport({"", "ConfigMap", kNs, "ca"}));
    ca_sha256_ = json::GetString(*exported, "ca.sha256");
    ASSERT_EQ(ca_sha256_.size(), 64u);
  }
  ProcessOutcome Process(const std::string& json) {
    return host_.Process(kGroup, "BackendTLSPolicy", json);
  }
  FakeHost host_;
  sdk::testing::TestCertificate ca_ = sdk::testing::MakeTestCertificate(
      {{"ca.example.com"}, kNowMs - kDayMs, kNowMs + 365 * kDayMs});
  std::string ca_sha256_;
};

TEST_F(plugin_backendtlspolicy, RegistersTheKindWithAHandler) {
  const auto* kind = host_.FindKind(kGroup, "BackendTLSPolicy");
  ASSERT_NE(kind, nullptr);
  EXPECT_EQ(kind->plural, "backendtlspolicies");
  EXPECT_EQ(kind->versions, (std::vector<std::string>{"v1", "v1alpha3"}));
  EXPECT_EQ(kind->reads,
            (std::vector<std::string>{"HTTPRoute.gateway.networking.k8s.io", "Service", "ConfigMap",
                                      "Secret", "BackendTLSPolicy.gateway.networking.k8s.io"}));
  EXPECT_EQ(kind->sync_policy, PORTICO_SYNC_ATTACHED);
  EXPECT_NE(kind->stage, nullptr);
}

TEST_F(plugin_backendtlspolicy, ValidPolicyHasOneAncestorPerGatewayAndSyncsItsSettings) {
  ApplyWorld();
  ASSERT_TRUE(host_.Apply(GatewayNamed("second")).ok());
  ASSERT_TRUE(host_.Apply(RouteTo("second-to-web", "second", 443)).ok());
  ProcessOutcome out = Process(
      Policy("web-tls",
             SpecFor("https", "ca",
                     R"(,"subjectAltNames":[{"type":"Hostname","hostname":"a.example.com"},)"
                     R"({"type":"URI","uri":"spiffe://td/ns/x"}])"),
             "", 4));
  ASSERT_TRUE(out.ok()) << out.status;
  const std::string conditions =
      R"("conditions":[{"type":"Accepted","status":"True","reason":"Accepted","message":"",)"
      R"("observedGeneration":4},{"type":"ResolvedRefs","status":"True",)"
      R"("reason":"ResolvedRefs","message":"","observedGeneration":4}])";
  auto ancestor = [&](const char* gateway) {
    return R"({"ancestorRef":{"group":"gateway.networking.k8s.io","kind":"Gateway",)"
           R"("namespace":"gateway-conformance-infra","name":")" +
           std::string(gateway) + R"("},"controllerName":"portico.io/gateway-controller",)" +
           conditions + "}";
  };
  EXPECT_EQ(out.status_json,
            R"({"ancestors":[)" + ancestor("same-namespace") + "," + ancestor("second") + "]}");
  EXPECT_EQ(out.synced,
            R"({"metadata":{"name":"web-tls","namespace":"gateway-conformance-infra",)"
            R"("generation":4},"targets":[{"service":"web","sectionName":"https"}],)"
            R"("hostname":"abc.example.com","caCertificates":[{"ref":{"kind":"ConfigMap",)"
            R"("namespace":"gateway-conformance-infra","name":"ca"},"sha256":")" +
                ca_sha256_ +
                R"("}],"subjectAltNames":[{"type":"Hostname","hostname":"a.example.com"},)"
                R"({"type":"URI","uri":"spiffe://td/ns/x"}]})");
  EXPECT_EQ(out.export_json,
            R"({"createdUnixMs":99999999999999,"targets":[{"group":"","kind":"Service",)"
            R"("name":"web","sectionName":"https"}]})");
  using Link = std::pair<ObjectRef, portico_link_type>;
  EXPECT_THAT(out.links,
              ElementsAre(Link{{kGroup, "Gateway", kNs, "same-namespace"}, PORTICO_LINK_PARENT},
                          Link{{kGroup, "Gateway", kNs, "second"}, PORTICO_LINK_PARENT},
                          Link{{"", "ConfigMap", kNs, "ca"}, PORTICO_LINK_REFERENCE}));
  EXPECT_THAT(out.reads,
              ElementsAre("get Service gateway-conformance-infra/web hit", "list HTTPRoute *",
                          "get ConfigMap gateway-conformance-infra/ca hit",
                          "list BackendTLSPolicy gateway-conformance-infra"));
  EXPECT_EQ(out.synced->find("BEGIN"), std::string::npos);  // never material
}

TEST_F(plugin_backendtlspolicy, SectionNameCountsOnlyRoutesToItsPort) {
  ApplyWorld();
  // The only route sends to 443 ("https"): a policy on "https-2" (8443) reaches no Gateway.
  ProcessOutcome other_port = Process(Policy("p", SpecFor("https-2")));
  ASSERT_TRUE(other_port.ok()) << other_port.status;
  EXPECT_EQ(other_port.status_json, R"({"ancestors":[]})");
  EXPECT_TRUE(other_port.links.empty() || other_port.links[0].second != PORTICO_LINK_PARENT);
  // A sectionName the Service does not have is reported on the Gateways reaching the Service.
  ProcessOutcome missing = Process(Policy("p", SpecFor("nope")));
  ASSERT_TRUE(missing.ok()) << missing.status;
  EXPECT_THAT(Ancestors(missing), ElementsAre("same-namespace: Accepted=False/TargetNotFound "
                                              "ResolvedRefs=True/ResolvedRefs"));
  EXPECT_EQ(Message(missing, "Accepted"),
            "spec.targetRefs: Service gateway-conformance-infra/web has no port named \"nope\"");
  EXPECT_FALSE(missing.synced.has_value());
}

TEST_F(plugin_backendtlspolicy, UnusableCaReferencesRefuseTheBackend) {
  ApplyWorld();
  ASSERT_TRUE(host_
                  .Apply(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"empty",)"
                         R"("namespace":"gateway-conformance-infra"},"data":{}})")
                  .ok());
  struct Case {
    std::string ca_refs, accepted, resolved, message;
  };
  const std::vector<Case> cases = {
      {R"({"group":"","kind":"ConfigMap","name":"nonexistent"})", "False/NoValidCACertificate",
       "False/InvalidCACertificateRef",
       "spec.validation.caCertificateRefs[0]: ConfigMap gateway-conformance-infra/nonexistent "
       "does not exist"},
      {R"({"group":"","kind":"ConfigMap","name":"empty"})", "False/NoValidCACertificate",
       "False/InvalidCACertificateRef",
       "spec.validation.caCertificateRefs[0]: ConfigMap gateway-conformance-infra/empty has no "
       "ca.crt"},
      {R"({"group":"invalid.io","kind":"InvalidKind","name":"invalid-kind"})",
       "False/NoValidCACertificate", "False/InvalidKind",
       "spec.validation.caCertificateRefs[0]: InvalidKind.invalid.io "
       "gateway-conformance-infra/invalid-kind is not supported; only core ConfigMaps and "
       "Secrets are"},
      // One usable, one not: Accepted, but ResolvedRefs fails and connections must fail too.
      {R"({"group":"","kind":"ConfigMap","name":"ca"},{"group":"","kind":"ConfigMap",)"
       R"("name":"nonexistent"})",
       "True/Accepted", "False/InvalidCACertificateRef",
       "spec.validation.caCertificateRefs[1]: ConfigMap gateway-conformance-infra/nonexistent "
       "does not exist"},
  };
  for (const Case& c : cases) {
    ProcessOutcome out =
        Process(Policy("p", R"({"targetRefs":[{"group":"","kind":"Service","name":"web"}],)"
                            R"("validation":{"caCertificateRefs":[)" +
                                c.ca_refs + R"(],"hostname":"abc.example.com"}})"));
    ASSERT_TRUE(out.ok()) << c.ca_refs << ": " << out.status;
    EXPECT_THAT(Ancestors(out), ElementsAre("same-namespace: Accepted=" + c.accepted +
                                            " ResolvedRefs=" + c.resolved))
        << c.ca_refs;
    EXPECT_EQ(Message(out, "ResolvedRefs"), c.message);
    ASSERT_TRUE(out.synced.has_value()) << c.ca_refs;
    auto view = json::Parse(*out.synced);
    EXPECT_THAT(json::GetString(*view, "invalid"), HasSubstr(c.message)) << c.ca_refs;
    EXPECT_EQ(json::Find(*view, "caCertificates"), nullptr) << c.ca_refs;
    for (const auto& [ref, type] : out.links) EXPECT_EQ(type, PORTICO_LINK_PARENT) << c.ca_refs;
  }
}

TEST_F(plugin_backendtlspolicy, ALateConfigMapResolvesThePolicy) {
  ApplyWorld();
  const std::string policy = Policy("p", SpecFor("", "later"));
  ProcessOutcome before = Process(policy);
  EXPECT_THAT(Ancestors(before), ElementsAre("same-namespace: Accepted=False/NoValidCACertificate "
                                             "ResolvedRefs=False/InvalidCACertificateRef"));
  EXPECT_THAT(before.reads, Contains("get ConfigMap gateway-conformance-infra/later miss"));
  ASSERT_TRUE(host_.Apply(CaConfigMap("later", ca_.cert_pem)).ok());
  ProcessOutcome after = Process(policy);
  EXPECT_THAT(Ancestors(after), ElementsAre("same-namespace: Accepted=True/Accepted "
                                            "ResolvedRefs=True/ResolvedRefs"));
  EXPECT_THAT(*after.synced, HasSubstr(R"("caCertificates":[{"ref":{"kind":"ConfigMap")"));
}

TEST_F(plugin_backendtlspolicy, TheOldestPolicyOfATargetWinsThenTheFirstByName) {
  ApplyWorld();
  ASSERT_TRUE(host_.Apply(Policy("b-old", SpecFor(), "2023-01-01T00:00:00Z")).ok());
  ASSERT_TRUE(host_.Apply(Policy("a-new", SpecFor(), "2024-01-01T00:00:00Z")).ok());
  ASSERT_TRUE(host_.Apply(Policy("z-section", SpecFor("https"), "2025-01-01T00:00:00Z")).ok());
  ProcessOutcome old_one = Process(Policy("b-old", SpecFor(), "2023-01-01T00:00:00Z"));
  ProcessOutcome new_one = Process(Policy("a-new", SpecFor(), "2024-01-01T00:00:00Z"));
  EXPECT_THAT(Ancestors(old_one), ElementsAre("same-namespace: Accepted=True/Accepted "
                                              "ResolvedRefs=True/ResolvedRefs"));
  EXPECT_TRUE(old_one.synced.has_value());
  EXPECT_THAT(Ancestors(new_one), ElementsAre("same-namespace: Accepted=False/Conflicted "
                                              "ResolvedRefs=True/ResolvedRefs"));
  EXPECT_EQ(Message(new_one, "Accepted"),
            "BackendTLSPolicy gateway-conformance-infra/b-old also targets Service "
            "gateway-conformance-infra/web and takes precedence (the oldest by "
            "creationTimestamp, then the first by name)");
  EXPECT_FALSE(new_one.synced.has_value());  // the loser stages nothing
  // A policy for one port does not conflict with those for the whole Service.
  ProcessOutcome section = Process(Policy("z-section", SpecFor("https"), "2025-01-01T00:00:00Z"));
  EXPECT_THAT(Ancestors(section), ElementsAre("same-namespace: Accepted=True/Accepted "
                                              "ResolvedRefs=True/ResolvedRefs"));
  // Same age: the first by name wins.
  ASSERT_TRUE(host_.Apply(Policy("c-same", SpecFor("https"), "2025-01-01T00:00:00Z")).ok());
  EXPECT_THAT(Ancestors(Process(Policy("z-section", SpecFor("https"), "2025-01-01T00:00:00Z"))),
              ElementsAre("same-namespace: Accepted=False/Conflicted "
                          "ResolvedRefs=True/ResolvedRefs"));
}

TEST_F(plugin_backendtlspolicy, SystemRootsAndOptions) {
  ApplyWorld();
  const std::string system_spec =
      R"({"targetRefs":[{"group":"","kind":"Service","name":"web"}],)"
      R"("validation":{"wellKnownCACertificates":"System","hostname":"abc.example.com"})";
  ProcessOutcome system = Process(Policy("p", system_spec + "}"));
  ASSERT_TRUE(system.ok()) << system.status;
  EXPECT_THAT(*system.synced,
              HasSubstr(R"("hostname":"abc.example.com",)"
                        R"("wellKnownCACertificates":"System","subjectAltNames":[])"));
  // An option Portico does not implement is refused visibly, never ignored.
  ProcessOutcome options =
      Process(Policy("p", system_spec + R"(,"options":{"example.com/min-version":"1.3"}})"));
  ASSERT_TRUE(options.ok()) << options.status;
  EXPECT_THAT(Ancestors(options), ElementsAre("same-namespace: Accepted=False/Invalid "
                                              "ResolvedRefs=True/ResolvedRefs"));
  EXPECT_THAT(Message(options, "Accepted"), HasSubstr("\"example.com/min-version\""));
  EXPECT_THAT(*options.synced, HasSubstr(R"("invalid":"Invalid: spec.options)"));
}

TEST_F(plugin_backendtlspolicy, CrossFieldRulesRefuseTheObject) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"targetRefs":[{"group":"","kind":"Service","name":"web"}],"validation":{)"
       R"("caCertificateRefs":[{"group":"","kind":"ConfigMap","name":"ca"}],)"
       R"("wellKnownCACertificates":"System","hostname":"a.example.com"}})",
       "spec.validation: must not contain both caCertificateRefs and wellKnownCACertificates"},
      {R"({"targetRefs":[{"group":"","kind":"Service","name":"web"}],)"
       R"("validation":{"hostname":"a.example.com"}})",
       "spec.validation: must specify either caCertificateRefs or wellKnownCACertificates"},
      {R"({"targetRefs":[{"group":"","kind":"Service","name":"web"},)"
       R"({"group":"","kind":"Service","name":"web","sectionName":"https"}],)"
       R"("validation":{"wellKnownCACertificates":"System","hostname":"a.example.com"}})",
       "spec.targetRefs[1].sectionName: must be specified when targetRefs includes 2 or more"},
      {R"({"targetRefs":[{"group":"","kind":"Service","name":"web","sectionName":"a"},)"
       R"({"group":"","kind":"Service","name":"web","sectionName":"a"}],)"
       R"("validation":{"wellKnownCACertificates":"System","hostname":"a.example.com"}})",
       "spec.targetRefs[1].sectionName: must be unique"},
      {R"({"targetRefs":[{"group":"","kind":"Service","name":"web"}],"validation":{)"
       R"("wellKnownCACertificates":"System","hostname":"a.example.com",)"
       R"("subjectAltNames":[{"type":"URI","hostname":"a.example.com"}]}})",
       "spec.validation.subjectAltNames[0]: must contain uri, as type is URI"},
  };
  for (const auto& [spec, message] : cases) {
    ProcessOutcome out = Process(Policy("p", spec));
    EXPECT_FALSE(out.ok()) << spec;
    EXPECT_THAT(out.status.message(),
                HasSubstr("BackendTLSPolicy gateway-conformance-infra/p: " + message))
        << spec;
  }
  // The schema refuses what the CRD's OpenAPI refuses.
  EXPECT_FALSE(Process(Policy("p", R"({"targetRefs":[],"validation":{"hostname":"a"}})")).ok());
  EXPECT_FALSE(Process(Policy("p", R"({"targetRefs":[{"group":"","kind":"Service","name":"w"}],)"
                                   R"("validation":{"wellKnownCACertificates":"Other",)"
                                   R"("hostname":"a.example.com"}})"))
                   .ok());
}

TEST_F(plugin_backendtlspolicy, StatusIsIndependentOfTheOrderObjectsArrive) {
  const std::string policy = Policy("p", SpecFor());
  ProcessOutcome first = Process(policy);  // before anything else
  ASSERT_TRUE(first.ok()) << first.status;
  EXPECT_EQ(first.status_json, R"({"ancestors":[]})");
  EXPECT_THAT(first.reads, Contains("get Service gateway-conformance-infra/web miss"));
  ApplyWorld();
  EXPECT_THAT(Ancestors(Process(policy)), ElementsAre("same-namespace: Accepted=True/Accepted "
                                                      "ResolvedRefs=True/ResolvedRefs"));
}

// ---------------------------------------------------------------- the handler

TEST_F(plugin_backendtlspolicy, StagesOneTlsEntryPerTarget) {
  ApplyWorld();
  std::string other(kService);
  other.replace(other.find(R"("name":"web")"), 12, R"("name":"other")");
  ASSERT_TRUE(host_.Apply(other).ok());
  ProcessOutcome out = Process(Policy(
      "web-tls",
      R"({"targetRefs":[{"group":"","kind":"Service","name":"other"},)"
      R"({"group":"","kind":"Service","name":"web","sectionName":"https"}],)"
      R"("validation":{"caCertificateRefs":[{"group":"","kind":"ConfigMap","name":"ca"}],)"
      R"("hostname":"abc.example.com","subjectAltNames":[{"type":"URI","uri":"spiffe://td/x"}]}})"));
  ASSERT_TRUE(out.ok()) << out.status;
  ObjectRef ref{kGroup, "BackendTLSPolicy", kNs, "web-tls"};
  StageOutcome staged =
      host_.Stage(kGroup, "BackendTLSPolicy", {FakeChange::Upsert(ref, *out.synced)});
  ASSERT_TRUE(staged.ok()) << staged.status;
  EXPECT_THAT(staged.nacks, IsEmpty());
  ASSERT_EQ(staged.puts.size(), 2u);
  const std::string tail =
      R"("policy":{"namespace":"gateway-conformance-infra","name":"web-tls"},)"
      R"("hostname":"abc.example.com","caCertificates":[{"ref":{"kind":"ConfigMap",)"
      R"("namespace":"gateway-conformance-infra","name":"ca"},"sha256":")" +
      ca_sha256_ + R"("}],"subjectAltNames":[{"type":"URI","uri":"spiffe://td/x"}]})";
  const auto& whole = staged.puts.at({"backend.v1", "tls/gateway-conformance-infra/other"});
  EXPECT_EQ(whole.owner,
            "gateway.networking.k8s.io/BackendTLSPolicy/gateway-conformance-infra/"
            "web-tls");
  EXPECT_EQ(whole.json, R"({"entry":"tls","namespace":"gateway-conformance-infra",)"
                        R"("service":"other",)" +
                            tail);
  EXPECT_EQ(staged.puts.at({"backend.v1", "tls/gateway-conformance-infra/web/https"}).json,
            R"({"entry":"tls","namespace":"gateway-conformance-infra","service":"web",)"
            R"("sectionName":"https",)" +
                tail);
  StageOutcome deleted = host_.Stage(kGroup, "BackendTLSPolicy", {FakeChange::Delete(ref)});
  ASSERT_TRUE(deleted.ok()) << deleted.status;
  EXPECT_TRUE(deleted.puts.empty());
}

TEST_F(plugin_backendtlspolicy, UntranslatableViewsAreNackedAndKeepTheLastGoodEntries) {
  ObjectRef ref{kGroup, "BackendTLSPolicy", kNs, "p"};
  const std::string good = R"({"targets":[{"service":"web"}],"hostname":"a.example.com",)"
                           R"("wellKnownCACertificates":"System","subjectAltNames":[]})";
  ASSERT_TRUE(host_.Stage(kGroup, "BackendTLSPolicy", {FakeChange::Upsert(ref, good)}).ok());
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"targets":[{"service":"web"}],"hostname":"a.example.com"})",
       "exactly one of caCertificates, wellKnownCACertificates and invalid"},
      {R"({"targets":[{"service":"web"}],"hostname":"a.example.com","caCertificates":[]})",
       "caCertificates: must be a non-empty array"},
      {R"({"targets":[{"service":"web"}],"hostname":"a.example.com","caCertificates":[)"
       R"({"ref":{"kind":"ConfigMap","namespace":"n","name":"c"}}]})",
       "caCertificates[0].sha256"},
      {R"({"targets":[],"hostname":"a.example.com","invalid":"x"})", "targets"},
      {R"({"targets":[{"service":"web"}],"invalid":"x"})", "hostname"},
  };
  for (const auto& [view, message] : bad) {
    StageOutcome out = host_.Stage(kGroup, "BackendTLSPolicy", {FakeChange::Upsert(ref, view)});
    ASSERT_TRUE(out.ok()) << out.status;
    ASSERT_EQ(out.nacks.size(), 1u) << view;
    EXPECT_THAT(out.nacks[0].second, HasSubstr(message)) << view;
    EXPECT_EQ(out.puts.size(), 1u) << view;  // the last good entry stays
    EXPECT_THAT(out.puts.begin()->second.json, HasSubstr(R"("wellKnownCACertificates":"System")"));
  }
}

}  // namespace
}  // namespace portico::plugins::backendtlspolicy
