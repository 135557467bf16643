// fake_host_test: the fake host against two fixture plugins (testdata/): loading, process()
// with every context service and its read log, stage() with the fake transaction, filters.
#include "portico/sdk/testing/fake_host.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "portico/sdk/version.h"

namespace portico::sdk::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kGroup[] = "test.portico.io";

std::string Probe(std::string_view name, std::string_view spec, std::string_view extra_meta = "") {
  return R"({"apiVersion":"test.portico.io/v1","kind":"Probe","metadata":{"name":")" +
         std::string(name) + R"(","namespace":"ns1")" + std::string(extra_meta) + R"(},"spec":)" +
         std::string(spec) + "}";
}

class FakeHostTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(host_.Load(PROBE_PLUGIN_PATH).ok()); }
  FakeHost host_;
};

TEST_F(FakeHostTest, LoadRecordsTheManifestAndRegistrations) {
  ASSERT_EQ(host_.plugins().size(), 1u);
  const LoadedPlugin& plugin = *host_.plugins()[0];
  EXPECT_EQ(plugin.name, "fakehost-probe");
  EXPECT_EQ(plugin.version, "0.0.1");
  EXPECT_EQ(plugin.sdk_version, PORTICO_SDK_VERSION);
  EXPECT_EQ(plugin.abi_major, 1u);

  const RegisteredKind* probe = host_.FindKind(kGroup, "Probe");
  ASSERT_NE(probe, nullptr);
  EXPECT_EQ(probe->versions, (std::vector<std::string>{"v1", "v1beta1"}));
  EXPECT_EQ(probe->plural, "probes");
  EXPECT_EQ(probe->short_names, std::vector<std::string>{"pr"});
  EXPECT_EQ(probe->scope, PORTICO_SCOPE_NAMESPACED);
  EXPECT_THAT(probe->schema, HasSubstr("replicas"));
  EXPECT_EQ(probe->reads,
            (std::vector<std::string>{"Probe.test.portico.io", "ProbeFilter.test.portico.io"}));
  EXPECT_EQ(probe->capabilities, PORTICO_CAP_PROCESSOR | PORTICO_CAP_SYNC | PORTICO_CAP_HANDLER);
  EXPECT_EQ(probe->sync_policy, PORTICO_SYNC_ALWAYS);
  EXPECT_NE(probe->stage, nullptr);

  const RegisteredKind* cluster = host_.FindKind(kGroup, "ClusterProbe");
  ASSERT_NE(cluster, nullptr);
  EXPECT_EQ(cluster->scope, PORTICO_SCOPE_CLUSTER);
  EXPECT_EQ(cluster->stage, nullptr);
  EXPECT_TRUE(cluster->schema.empty());
  EXPECT_EQ(host_.FindKind(kGroup, "ProbeFilter")->capabilities & PORTICO_CAP_ROUTE_FILTER,
            PORTICO_CAP_ROUTE_FILTER);

  const RegisteredFilterType* header = host_.FindFilterType("test.portico.io/Header");
  ASSERT_NE(header, nullptr);
  EXPECT_EQ(header->phase, PORTICO_PHASE_TRANSFORM);
  EXPECT_EQ(header->order, 10);
  EXPECT_FALSE(host_.has_reference_policy());
}

TEST_F(FakeHostTest, LoadKeepsTheManifestAsTheHostsParseIt) {
  const PluginManifest& manifest = host_.plugins()[0]->manifest;
  EXPECT_EQ(manifest.name, "fakehost-probe");
  EXPECT_EQ(manifest.abi_minor, static_cast<uint32_t>(PORTICO_ABI_MINOR));
  ASSERT_FALSE(manifest.kinds.empty());
  EXPECT_EQ(manifest.kinds[0].id.group, kGroup);
}

TEST(FakeHostRefusalTest, APluginTheHostsRefuseIsRefusedWithTheirMessage) {
  FakeHost host;
  Status misnamed = host.Load(REFUSED_PLUGIN_PATH);
  EXPECT_EQ(misnamed.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(misnamed.message(),
              HasSubstr(": plugin refused: descriptor names the plugin \"someone-else\" but its "
                        "manifest says \"fakehost-refused\""));
  Status bare = host.Load(NOMANIFEST_PLUGIN_PATH);
  EXPECT_THAT(bare.message(),
              HasSubstr(": plugin refused: no .portico_manifest section (not a Portico plugin); "
                        "remove the file from the plugin directory, or build it with "
                        "portico_add_plugin()"));
  EXPECT_TRUE(host.plugins().empty());
}

TEST_F(FakeHostTest, RegistrationIsSharedAcrossHosts) {
  EXPECT_TRUE(host_.Load(PROBE_PLUGIN_PATH).ok());  // same host: no-op
  EXPECT_EQ(host_.plugins().size(), 1u);
  FakeHost other;  // the SDK registers once per process; the fake host caches it
  ASSERT_TRUE(other.Load(PROBE_PLUGIN_PATH).ok());
  EXPECT_NE(other.FindKind(kGroup, "Probe"), nullptr);
  EXPECT_EQ(other.plugins()[0], host_.plugins()[0]);
}

TEST_F(FakeHostTest, LoadReportsMissingFiles) {
  FakeHost other;
  Status status = other.Load("/nonexistent/libportico-nothing.so");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("/nonexistent/libportico-nothing.so"));
}

TEST_F(FakeHostTest, ProcessBuildsTheObjectFromItsJson) {
  ProcessOutcome out = host_.Process(kGroup, "Probe", Probe("a", "{}", R"(,"generation":7)"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(out.ref, (ObjectRef{kGroup, "Probe", "ns1", "a"}));
  EXPECT_EQ(out.synced,
            R"({"name":"a","namespace":"ns1","version":"v1","generation":7,"results":[]})");
  EXPECT_EQ(out.status_json, R"({"now":1700000000000})");
  EXPECT_FALSE(out.export_json.has_value());

  host_.SetNowUnixMs(5);
  host_.AdvanceMs(10);
  out = host_.Process(kGroup, "Probe",
                      R"({"apiVersion":"test.portico.io/v1beta1","kind":"Probe",)"
                      R"("metadata":{"name":"b"},"status":{"x":1}})");
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(out.ref.ns, "default");
  EXPECT_EQ(
      out.synced,
      R"({"name":"b","namespace":"default","version":"v1beta1","generation":1,"results":[]})");
  EXPECT_EQ(out.status_json, R"({"now":15})");
}

TEST_F(FakeHostTest, ClusterScopedObjectsHaveNoNamespace) {
  ProcessOutcome out = host_.Process(
      kGroup, "ClusterProbe",
      R"({"apiVersion":"test.portico.io/v1","kind":"ClusterProbe","metadata":{"name":"c",)"
      R"("namespace":"x"}})");
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(out.ref.ns, "");
  EXPECT_EQ(out.ref.Display(), "ClusterProbe c");
}

TEST_F(FakeHostTest, ProcessRefusesWhatTheHostWould) {
  EXPECT_EQ(host_.Process(kGroup, "Nope", Probe("a", "{}")).status.code(), StatusCode::kNotFound);
  ProcessOutcome out = host_.Process(
      kGroup, "Probe",
      R"({"apiVersion":"test.portico.io/v2","kind":"Probe","metadata":{"name":"a"}})");
  EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status.message(), HasSubstr("not served (served: v1,v1beta1)"));
  out = host_.Process(kGroup, "Probe",
                      R"({"apiVersion":"other.io/v1","kind":"Probe","metadata":{"name":"a"}})");
  EXPECT_THAT(out.status.message(), HasSubstr("handed to kind Probe.test.portico.io"));
  out = host_.Process(kGroup, "Probe", "{not json");
  EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument);
}

TEST_F(FakeHostTest, SchemaIsValidatedBeforeTheProcessor) {
  ProcessOutcome out = host_.Process(kGroup, "Probe", Probe("a", R"({"replicas":11})"));
  EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status.message(), "Probe ns1/a: schema: spec.replicas: violates \"maximum\"");
  EXPECT_FALSE(out.synced.has_value());
  host_.set_validate_schema(false);
  EXPECT_TRUE(host_.Process(kGroup, "Probe", Probe("a", R"({"replicas":11})")).ok());
}

TEST_F(FakeHostTest, ProcessorErrorsKeepTheirCodeAndDropResults) {
  ProcessOutcome out = host_.Process(kGroup, "Probe", Probe("a", R"({"fail":"no"})"));
  EXPECT_EQ(out.status, InvalidArgumentError("Probe ns1/a: spec.fail: no"));
  EXPECT_FALSE(out.synced.has_value());
  EXPECT_EQ(host_.Process(kGroup, "Probe", Probe("a", R"({"unavailable":true})")).status.code(),
            StatusCode::kUnavailable);
  out = host_.Process(kGroup, "Probe", Probe("a", R"({"throw":"boom"})"));
  EXPECT_EQ(out.status.code(), StatusCode::kInternal);
  EXPECT_THAT(out.status.message(), HasSubstr("boom"));
}

TEST_F(FakeHostTest, GetExportRecordsHitsAndMisses) {
  host_.SetExport({kGroup, "Probe", "ns1", "there"}, R"({"v":1})");
  ProcessOutcome out = host_.Process(
      kGroup, "Probe",
      Probe("a",
            R"({"get":[{"group":"test.portico.io","kind":"Probe","namespace":"ns1","name":"there"},
                            {"group":"test.portico.io","kind":"Probe","namespace":"ns1",)"
            R"("name":"gone"},
                            {"group":"test.portico.io","kind":"ClusterProbe","name":"c"}]})"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.synced, HasSubstr(R"("results":[{"v":1},null,null])"));
  EXPECT_THAT(out.reads, ElementsAre("get Probe ns1/there hit", "get Probe ns1/gone miss",
                                     "get ClusterProbe c miss"));
}

TEST_F(FakeHostTest, ListExportsFiltersByNamespaceAndSelector) {
  host_.SetExport({kGroup, "Probe", "ns1", "a"}, "1", {{"tier", "web"}});
  host_.SetExport({kGroup, "Probe", "ns1", "b"}, "2", {{"tier", "db"}});
  host_.SetExport({kGroup, "Probe", "ns2", "c"}, "3", {{"tier", "web"}});
  host_.SetExport({kGroup, "ProbeFilter", "ns1", "d"}, "4", {{"tier", "web"}});
  ProcessOutcome out = host_.Process(
      kGroup, "Probe",
      Probe("x", R"({"list":[{"group":"test.portico.io","kind":"Probe","namespace":"ns1"},
                             {"group":"test.portico.io","kind":"Probe","selector":"tier=web"},
                             {"group":"test.portico.io","kind":"Probe",)"
                 R"("selector":"tier in (x"}]})"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(
      *out.synced,
      HasSubstr(R"("results":[[{"namespace":"ns1","name":"a","labels":{"tier":"web"},"export":1},)"
                R"({"namespace":"ns1","name":"b","labels":{"tier":"db"},"export":2}],)"
                R"([{"namespace":"ns1","name":"a","labels":{"tier":"web"},"export":1},)"
                R"({"namespace":"ns2","name":"c","labels":{"tier":"web"},"export":3}],[]])"));
  EXPECT_THAT(out.reads, ElementsAre("list Probe ns1", "list Probe * tier=web",
                                     "list Probe * tier in (x (invalid selector)"));
  ASSERT_EQ(out.logs.size(), 1u);
  EXPECT_THAT(out.logs[0], HasSubstr("ERROR label selector"));
}

TEST_F(FakeHostTest, ApplyStoresExportsAndKeepsThemOnFailure) {
  ProcessOutcome out =
      host_.Apply(Probe("a", R"({"export":{"port":80}})", R"(,"labels":{"app":"web"})"));
  ASSERT_TRUE(out.ok()) << out.status;
  ObjectRef ref{kGroup, "Probe", "ns1", "a"};
  EXPECT_EQ(host_.GetExport(ref), R"({"port":80})");
  EXPECT_FALSE(host_.Apply(Probe("a", R"({"fail":"x","export":{"port":81}})")).ok());
  EXPECT_EQ(host_.GetExport(ref), R"({"port":80})");

  out = host_.Process(
      kGroup, "Probe",
      Probe("b", R"({"list":[{"group":"test.portico.io","kind":"Probe","selector":"app=web"}]})"));
  EXPECT_THAT(*out.synced, HasSubstr(R"("labels":{"app":"web"},"export":{"port":80})"));
  host_.Delete(ref);
  EXPECT_FALSE(host_.GetExport(ref).has_value());
}

TEST_F(FakeHostTest, ReferencesAreDeniedWithoutAPolicy) {
  ProcessOutcome out = host_.Process(
      kGroup, "Probe",
      Probe(
          "a",
          R"({"reference":[{"fromGroup":"test.portico.io","fromKind":"Probe","fromNamespace":"ns1",
                                   "to":{"group":"","kind":"Service","namespace":"ns2",)"
          R"("name":"public-x"}}]})"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.synced, HasSubstr(R"("results":[false])"));
  EXPECT_THAT(out.reads, ElementsAre("reference Probe ns1 -> Service ns2/public-x denied"));
  EXPECT_FALSE(host_.ReferenceAllowed(kGroup, "Probe", "ns1", {"", "Service", "ns2", "public-x"}));
}

TEST_F(FakeHostTest, ReferencesAskTheLoadedPolicyWhichReadsThroughTheContext) {
  ASSERT_TRUE(host_.Load(POLICY_PLUGIN_PATH).ok());
  EXPECT_TRUE(host_.has_reference_policy());
  std::vector<std::string> reads;
  EXPECT_TRUE(
      host_.ReferenceAllowed(kGroup, "Probe", "ns1", {"", "Service", "ns2", "public-x"}, &reads));
  EXPECT_FALSE(
      host_.ReferenceAllowed(kGroup, "Probe", "ns1", {"", "Service", "ns2", "db"}, &reads));
  EXPECT_THAT(reads, ElementsAre("reference Probe ns1 -> Service ns2/public-x allowed",
                                 "list Probe ns2 grant-from=ns1",
                                 "reference Probe ns1 -> Service ns2/db denied"));
  ASSERT_TRUE(
      host_
          .Apply(R"({"apiVersion":"test.portico.io/v1","kind":"Probe","metadata":{"name":"g",)"
                 R"("namespace":"ns2","labels":{"grant-from":"ns1"}},"spec":{"export":{}}})")
          .ok());
  ProcessOutcome out = host_.Process(
      kGroup, "Probe",
      Probe(
          "a",
          R"({"reference":[{"fromGroup":"test.portico.io","fromKind":"Probe","fromNamespace":"ns1",
                                   "to":{"group":"","kind":"Service","namespace":"ns2",)"
          R"("name":"db"}}]})"));
  EXPECT_THAT(*out.synced, HasSubstr(R"("results":[true])"));
  EXPECT_THAT(out.reads, ElementsAre("list Probe ns2 grant-from=ns1",
                                     "reference Probe ns1 -> Service ns2/db allowed"));
}

TEST_F(FakeHostTest, ExtensionRefsResolveOnlyRouteFilterKinds) {
  host_.SetExport({kGroup, "ProbeFilter", "ns1", "f"}, R"({"filter":true})");
  host_.SetExport({kGroup, "Probe", "ns1", "p"}, R"({"filter":false})");
  ProcessOutcome out = host_.Process(
      kGroup, "Probe",
      Probe("a",
            R"({"extension":[{"group":"test.portico.io","kind":"ProbeFilter","namespace":"ns1",)"
            R"("name":"f"},
                                  {"group":"test.portico.io","kind":"Probe","namespace":"ns1",)"
            R"("name":"p"},
                                  {"group":"test.portico.io","kind":"ProbeFilter",)"
            R"("namespace":"ns1","name":"g"}]})"));
  EXPECT_THAT(*out.synced, HasSubstr(R"("results":[{"filter":true},null,null])"));
  EXPECT_THAT(out.reads,
              ElementsAre("extension ProbeFilter ns1/f hit", "extension Probe ns1/p miss",
                          "extension ProbeFilter ns1/g miss"));
}

TEST_F(FakeHostTest, SecretsLogsMetricsAndContributions) {
  host_.SetSecret("ns1", "tls", "kubernetes.io/tls", {{"tls.crt", "Y3J0"}, {"tls.key", "a2V5"}});
  ProcessOutcome out = host_.Process(
      kGroup, "Probe",
      Probe("a", R"({"secret":[{"namespace":"ns1","name":"tls"},{"namespace":"ns1","name":"no"}],
                     "log":"hello","metric":2.5,
                     "contribute":[{"target":{"group":"test.portico.io","kind":"Probe",)"
                 R"("namespace":"ns1","name":"b"},
                                    "topic":"attachedRoutes","value":{"listener":"http"}}]})"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(
      *out.synced,
      HasSubstr(
          R"("results":[{"type":"kubernetes.io/tls","data":{"tls.crt":"Y3J0","tls.key":"a2V5"}},)"
          R"(null])"));
  EXPECT_THAT(out.reads, ElementsAre("secret ns1/tls hit", "secret ns1/no miss"));
  EXPECT_THAT(out.logs, ElementsAre("WARN hello"));
  EXPECT_THAT(host_.logs(), ElementsAre("WARN hello"));
  host_.Process(kGroup, "Probe", Probe("b", R"({"metric":1})"));
  EXPECT_DOUBLE_EQ(host_.Metric("portico_probe_total"), 3.5);
  EXPECT_DOUBLE_EQ(host_.Metric("portico_probe_total", "Probe"), 3.5);
  EXPECT_DOUBLE_EQ(host_.Metric("portico_probe_total", "Gateway"), 0);
  ASSERT_EQ(out.contributions.size(), 1u);
  EXPECT_EQ(out.contributions[0].target, (ObjectRef{kGroup, "Probe", "ns1", "b"}));
  EXPECT_EQ(out.contributions[0].topic, "attachedRoutes");
  EXPECT_EQ(out.contributions[0].json, R"({"listener":"http"})");
}

TEST_F(FakeHostTest, StagePutsThroughTheFakeTransaction) {
  ObjectRef a{kGroup, "Probe", "ns1", "a"}, b{kGroup, "Probe", "ns1", "b"};
  host_.SetSynced(b, R"({"b":1})");
  StageOutcome out = host_.Stage(kGroup, "Probe", {FakeChange::Upsert(a, R"({"peer":"b"})")});
  ASSERT_TRUE(out.ok()) << out.status;
  std::map<StagedKey, StagedEntry> expected = {
      {{"backend.v1", "peer/a"}, {a.Key(), R"({"b":1})"}},
      {{"backend.v1", "probe/a"}, {a.Key(), R"({"peer":"b"})"}}};
  EXPECT_EQ(out.puts, expected);
  EXPECT_EQ(a.Key(), "test.portico.io/Probe/ns1/a");

  // Changes earlier in the batch are visible to get_synced; a delete clears its owner.
  out = host_.Stage(kGroup, "Probe",
                    {FakeChange::Delete(b), FakeChange::Upsert(b, R"({"b":2})"),
                     FakeChange::Upsert(a, R"({"peer":"b","dropPeer":true})")});
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(out.puts.size(), 2u);
  EXPECT_EQ(out.puts.at({"backend.v1", "probe/b"}).json, R"({"b":2})");
  out = host_.Stage(kGroup, "Probe",
                    {FakeChange::Delete(a), FakeChange::Upsert(b, R"({"peer":"a"})")});
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(out.puts.size(), 1u);
  EXPECT_THAT(out.logs, ElementsAre("WARN peer a not synced"));
  EXPECT_EQ(host_.runtime(), out.puts);
}

TEST_F(FakeHostTest, StageNacksRestoreAndErrorsRollBack) {
  ObjectRef a{kGroup, "Probe", "ns1", "a"}, b{kGroup, "Probe", "ns1", "b"};
  ASSERT_TRUE(host_.Stage(kGroup, "Probe", {FakeChange::Upsert(a, R"({"v":1})")}).ok());
  StageOutcome out = host_.Stage(
      kGroup, "Probe",
      {FakeChange::Upsert(a, R"({"v":2,"nack":"bad"})"), FakeChange::Upsert(b, R"({"v":3})")});
  ASSERT_TRUE(out.ok()) << out.status;
  ASSERT_EQ(out.nacks.size(), 1u);
  EXPECT_EQ(out.nacks[0], std::make_pair(a, std::string("bad")));
  EXPECT_EQ(out.puts.at({"backend.v1", "probe/a"}).json, R"({"v":1})");  // last good version
  EXPECT_EQ(out.puts.at({"backend.v1", "probe/b"}).json, R"({"v":3})");

  out = host_.Stage(
      kGroup, "Probe",
      {FakeChange::Upsert(b, R"({"v":4})"), FakeChange::Upsert(a, R"({"badFormat":true})")});
  EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status.message(), HasSubstr("unknown contribution format \"nope.v1\""));
  EXPECT_EQ(out.puts.at({"backend.v1", "probe/b"}).json, R"({"v":3})");  // rolled back

  EXPECT_EQ(host_.Stage(kGroup, "ClusterProbe", {}).status.code(), StatusCode::kFailedPrecondition);
}

TEST_F(FakeHostTest, FiltersRunOnRequestAndResponse) {
  FilterOutcome out = host_.RunFilter("test.portico.io/Header", R"({"header":"x-a","value":"1"})",
                                      FakeHttpExchange{});
  ASSERT_TRUE(out.status.ok()) << out.status;
  EXPECT_EQ(out.result, PORTICO_FILTER_CONTINUE);
  ASSERT_NE(out.exchange.Header("X-A"), nullptr);
  EXPECT_EQ(*out.exchange.Header("x-a"), "1");

  FakeHttpExchange response;
  response.status = 201;
  out = host_.RunFilter("test.portico.io/Header", R"({"header":"x-a"})", response);
  EXPECT_EQ(*out.exchange.Header("x-probe-response"), "201");

  out = host_.RunFilter("test.portico.io/Header", "{}", FakeHttpExchange{});
  EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(host_.RunFilter("nope", "{}", {}).status.code(), StatusCode::kNotFound);
}

TEST_F(FakeHostTest, AFilterInstanceKeepsItsStateAcrossRequestsAndSeesTheFakeClock) {
  auto filter = host_.CreateFilter("test.portico.io/Clock", "{}");
  ASSERT_TRUE(filter.ok()) << filter.status();
  host_.SetNowUnixMs(5000);
  FilterOutcome first = (*filter)->Run(FakeHttpExchange{});
  host_.AdvanceMs(250);
  FilterOutcome second = (*filter)->Run(FakeHttpExchange{});
  EXPECT_EQ(*first.exchange.Header("x-probe-count"), "1");
  EXPECT_EQ(*first.exchange.Header("x-probe-now"), "5000");
  EXPECT_EQ(*second.exchange.Header("x-probe-count"), "2");
  EXPECT_EQ(*second.exchange.Header("x-probe-now"), "5250");
  // RunFilter makes a fresh instance each time.
  EXPECT_EQ(*host_.RunFilter("test.portico.io/Clock", "{}", {}).exchange.Header("x-probe-count"),
            "1");
  EXPECT_EQ(host_.CreateFilter("nope", "{}").status().code(), StatusCode::kNotFound);
}

TEST_F(FakeHostTest, FilterOutboundCallsCompleteThroughTheResponder) {
  FilterOutcome out = host_.RunFilter("test.portico.io/Call", R"({"url":"http://auth/check"})", {});
  EXPECT_EQ(out.result, PORTICO_FILTER_RESPOND);  // no responder: the call fails
  EXPECT_EQ(out.exchange.respond_status, 403);
  EXPECT_THAT(out.calls, ElementsAre("GET http://auth/check"));

  host_.SetHttpResponder([](const portico_http_call& call) {
    return FakeHttpResponse{200, "", "ok:" + std::string(View(call.url))};
  });
  out = host_.RunFilter("test.portico.io/Call", R"({"url":"http://auth/check"})", {});
  EXPECT_EQ(out.result, PORTICO_FILTER_CONTINUE);
  EXPECT_FALSE(out.exchange.responded);
  EXPECT_EQ(*out.exchange.Header("x-call-body"), "ok:http://auth/check");
}

}  // namespace
}  // namespace portico::sdk::testing
