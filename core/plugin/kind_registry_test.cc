#include "core/plugin/kind_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/plugin/registration_stage.h"
#include "portico/sdk/types.h"

namespace portico::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kGatewayApi[] = "gateway.networking.k8s.io";

KindInfo Kind(std::string group, std::string kind, std::string plural,
              std::vector<std::string> short_names, std::string plugin,
              std::vector<std::string> reads = {}) {
  KindInfo info;
  info.id = KindId{std::move(group), std::move(kind)};
  info.versions = {"v1"};
  info.plural = std::move(plural);
  info.short_names = std::move(short_names);
  for (const auto& r : reads) info.reads.push_back(KindId::Parse(r));
  info.plugin_name = plugin;
  info.plugin_path = "/plugins/libportico-" + plugin + ".so";
  return info;
}

KindRegistry GatewayApiRegistry() {
  KindRegistry r;
  EXPECT_TRUE(r.AddKind(Kind(kGatewayApi, "Gateway", "gateways", {"gtw"}, "gateway",
                             {"GatewayClass.gateway.networking.k8s.io", "Secret"}))
                  .ok());
  EXPECT_TRUE(
      r.AddKind(Kind(kGatewayApi, "GatewayClass", "gatewayclasses", {"gc"}, "gateway")).ok());
  EXPECT_TRUE(r.AddKind(Kind(kGatewayApi, "HTTPRoute", "httproutes", {}, "httproute",
                             {"Gateway.gateway.networking.k8s.io", "Service"}))
                  .ok());
  EXPECT_TRUE(r.AddKind(Kind("", "Secret", "secrets", {}, "secret")).ok());
  EXPECT_TRUE(r.AddKind(Kind("", "Service", "services", {"svc"}, "service")).ok());
  return r;
}

std::string ResolvedId(const KindRegistry& r, std::string_view name) {
  auto kind = r.Resolve(name);
  return kind.ok() ? (*kind)->id.ToString() : kind.status().ToString();
}

TEST(KindRegistryTest, ResolvesLikeKubectl) {
  KindRegistry r = GatewayApiRegistry();
  EXPECT_EQ(ResolvedId(r, "gateway"), "Gateway.gateway.networking.k8s.io");
  EXPECT_EQ(ResolvedId(r, "gateways"), "Gateway.gateway.networking.k8s.io");
  EXPECT_EQ(ResolvedId(r, "gtw"), "Gateway.gateway.networking.k8s.io");
  EXPECT_EQ(ResolvedId(r, "Gateway"), "Gateway.gateway.networking.k8s.io");
  EXPECT_EQ(ResolvedId(r, "GTW"), "Gateway.gateway.networking.k8s.io");
  EXPECT_EQ(ResolvedId(r, "Gateway.gateway.networking.k8s.io"),
            "Gateway.gateway.networking.k8s.io");
  EXPECT_EQ(ResolvedId(r, "httproutes.gateway.networking.k8s.io"),
            "HTTPRoute.gateway.networking.k8s.io");
  EXPECT_EQ(ResolvedId(r, "httproute"), "HTTPRoute.gateway.networking.k8s.io");
  EXPECT_EQ(ResolvedId(r, "gateways.v1.gateway.networking.k8s.io"),
            "Gateway.gateway.networking.k8s.io");
  EXPECT_EQ(ResolvedId(r, "svc"), "Service");
  EXPECT_EQ(ResolvedId(r, "Secrets"), "Secret");
  auto missing = r.Resolve("ingresses");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("\"ingresses\""));

  const KindInfo* gw = r.Find(kGatewayApi, "Gateway");
  ASSERT_NE(gw, nullptr);
  EXPECT_EQ(gw->plugin_name, "gateway");
  EXPECT_EQ(r.Find(kGatewayApi, "gateway"), nullptr);  // Find is exact
  EXPECT_EQ(r.size(), 5u);
}

TEST(KindRegistryTest, AmbiguousNamesAskForTheGroup) {
  KindRegistry r;
  ASSERT_TRUE(r.AddKind(Kind("a.example.io", "Policy", "policies", {"pol"}, "a")).ok());
  ASSERT_TRUE(r.AddKind(Kind("b.example.io", "Policy", "policies", {}, "b")).ok());
  auto ambiguous = r.Resolve("policies");
  EXPECT_EQ(ambiguous.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(ambiguous.status().message(),
              HasSubstr("ambiguous (Policy.a.example.io, Policy.b.example.io)"));
  EXPECT_EQ(ResolvedId(r, "policies.b.example.io"), "Policy.b.example.io");
  EXPECT_EQ(ResolvedId(r, "pol"), "Policy.a.example.io");
}

TEST(KindRegistryTest, SecondProviderOfAKindIsRefused) {
  KindRegistry r = GatewayApiRegistry();
  KindInfo twin = Kind(kGatewayApi, "Gateway", "gateways", {}, "other-gateway");
  Status status = r.AddKind(twin);
  EXPECT_EQ(status.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(status.message(),
            "kind Gateway.gateway.networking.k8s.io already provided by plugin gateway "
            "(/plugins/libportico-gateway.so)");
  EXPECT_EQ(r.Find(kGatewayApi, "Gateway")->plugin_name, "gateway");
}

TEST(KindRegistryTest, RemovePluginDropsEverythingItRegistered) {
  KindRegistry r = GatewayApiRegistry();
  ASSERT_TRUE(r.AddFilterType(FilterTypeInfo{.name = "portico.io/Webhook",
                                             .plugin_name = "gateway",
                                             .plugin_path = "/plugins/libportico-gateway.so"})
                  .ok());
  ASSERT_TRUE(
      r.SetReferencePolicy(ReferencePolicyInfo{.plugin_name = "gateway",
                                               .plugin_path = "/plugins/libportico-gateway.so"})
          .ok());
  r.RemovePlugin("/plugins/libportico-gateway.so");
  EXPECT_EQ(r.Find(kGatewayApi, "Gateway"), nullptr);
  EXPECT_EQ(r.Find(kGatewayApi, "GatewayClass"), nullptr);
  EXPECT_EQ(r.FindFilterType("portico.io/Webhook"), nullptr);
  EXPECT_EQ(r.ReferencePolicy(), nullptr);
  EXPECT_FALSE(r.Resolve("gtw").ok());
  EXPECT_EQ(r.size(), 3u);
}

TEST(KindRegistryTest, FilterTypesAndOneReferencePolicy) {
  KindRegistry r;
  ASSERT_TRUE(r.AddFilterType(FilterTypeInfo{.name = "portico.io/Webhook",
                                             .plugin_name = "webhook",
                                             .plugin_path = "/p/libportico-webhook.so"})
                  .ok());
  EXPECT_EQ(
      r.AddFilterType(FilterTypeInfo{.name = "portico.io/Webhook", .plugin_name = "x"}).code(),
      StatusCode::kAlreadyExists);
  ASSERT_NE(r.FindFilterType("portico.io/Webhook"), nullptr);
  EXPECT_EQ(r.FilterTypes().size(), 1u);
  ASSERT_TRUE(r.SetReferencePolicy(ReferencePolicyInfo{.plugin_name = "referencegrant",
                                                       .plugin_path = "/p/libportico-rg.so"})
                  .ok());
  Status second = r.SetReferencePolicy(ReferencePolicyInfo{.plugin_name = "other"});
  EXPECT_EQ(second.code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(second.message(), HasSubstr("already provided by plugin referencegrant"));
}

TEST(KindRegistryTest, ResolveReadsOrdersKinds) {
  KindRegistry r = GatewayApiRegistry();
  EXPECT_THAT(r.ResolveReads(), IsEmpty());
  std::vector<std::string> order;
  for (const KindInfo* kind : r.KindsInOrder()) order.push_back(kind->id.ToString());
  // Free kinds by (group, kind): the core group ("") sorts first.
  EXPECT_THAT(order, ElementsAre("Secret", "Service", "GatewayClass.gateway.networking.k8s.io",
                                 "Gateway.gateway.networking.k8s.io",
                                 "HTTPRoute.gateway.networking.k8s.io"));
}

TEST(KindRegistryTest, UnprovidedReadsRefuseAndCascade) {
  KindRegistry r;
  // httproute reads Service (missing); policy reads HTTPRoute; gateway stands alone.
  ASSERT_TRUE(
      r.AddKind(Kind(kGatewayApi, "HTTPRoute", "httproutes", {}, "httproute", {"Service"})).ok());
  ASSERT_TRUE(r.AddKind(Kind("policy.example.io", "RoutePolicy", "routepolicies", {}, "policy",
                             {"HTTPRoute.gateway.networking.k8s.io"}))
                  .ok());
  ASSERT_TRUE(r.AddKind(Kind(kGatewayApi, "Gateway", "gateways", {}, "gateway")).ok());
  std::vector<PluginRefusal> refusals = r.ResolveReads();
  ASSERT_EQ(refusals.size(), 2u);
  EXPECT_EQ(refusals[0].plugin_path, "/plugins/libportico-httproute.so");
  EXPECT_EQ(refusals[0].reason,
            "kind HTTPRoute reads Service, which no loaded plugin provides; add the plugin that "
            "provides Service (or drop it from reads)");
  EXPECT_EQ(refusals[1].plugin_name, "policy");
  EXPECT_EQ(refusals[1].reason,
            "kind RoutePolicy reads HTTPRoute.gateway.networking.k8s.io, whose plugin httproute "
            "(/plugins/libportico-httproute.so) was refused; fix that plugin first");
  EXPECT_EQ(r.size(), 1u);
  EXPECT_THAT(r.Order(), ElementsAre(KindId{kGatewayApi, "Gateway"}));
}

TEST(KindRegistryTest, ReadsOfAProviderRefusedEarlierNameIt) {
  KindRegistry r;
  r.NoteRefusedProvider("service", "/plugins/libportico-service.so", {KindId{"", "Service"}});
  ASSERT_TRUE(
      r.AddKind(Kind(kGatewayApi, "HTTPRoute", "httproutes", {}, "httproute", {"Service"})).ok());
  auto refusals = r.ResolveReads();
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_THAT(refusals[0].reason,
              HasSubstr("reads Service, whose plugin service (/plugins/libportico-service.so) "
                        "was refused"));
}

TEST(KindRegistryTest, CyclesRefuseEveryPluginOnThemAndWhatReadsThem) {
  KindRegistry r;
  ASSERT_TRUE(r.AddKind(Kind("x.io", "Alpha", "alphas", {}, "alpha", {"Beta.x.io"})).ok());
  ASSERT_TRUE(r.AddKind(Kind("x.io", "Beta", "betas", {}, "beta", {"Gamma.x.io"})).ok());
  ASSERT_TRUE(r.AddKind(Kind("x.io", "Gamma", "gammas", {}, "gamma", {"Alpha.x.io"})).ok());
  ASSERT_TRUE(r.AddKind(Kind("x.io", "Delta", "deltas", {}, "delta", {"Alpha.x.io"})).ok());
  ASSERT_TRUE(r.AddKind(Kind("x.io", "Free", "frees", {}, "free", {"Free.x.io"})).ok());
  auto refusals = r.ResolveReads();
  ASSERT_EQ(refusals.size(), 4u);
  const std::string cycle = "Alpha.x.io -> Beta.x.io -> Gamma.x.io -> Alpha.x.io";
  EXPECT_EQ(refusals[0].plugin_name, "alpha");
  EXPECT_EQ(refusals[0].reason, "kind Alpha is on a reads cycle " + cycle +
                                    "; reads must be acyclic: remove one of these reads");
  EXPECT_EQ(refusals[1].plugin_name, "beta");
  EXPECT_THAT(refusals[1].reason, HasSubstr(cycle));
  EXPECT_EQ(refusals[2].plugin_name, "gamma");
  EXPECT_EQ(refusals[3].plugin_name, "delta");
  EXPECT_THAT(refusals[3].reason, HasSubstr("whose plugin alpha"));
  // A kind reading itself is not a cycle between kinds.
  EXPECT_THAT(r.Order(), ElementsAre(KindId{"x.io", "Free"}));
}

// A plugin's registration through the C registrar is staged, checked, and committed whole.
TEST(RegistrationStageTest, StagesCopiesAndChecksStructSizes) {
  KindRegistry r = GatewayApiRegistry();
  RegistrationStage stage(r, "widgets", "/plugins/libportico-widgets.so");
  const portico_registrar* reg = stage.registrar();
  std::string group = "example.portico.io";
  std::string kind = "Widget";
  portico_kind k{};
  k.struct_size = sizeof(portico_kind);
  k.group = sdk::Str(group);
  k.kind = sdk::Str(kind);
  k.versions = sdk::Str("v1, v1beta1");
  k.plural = sdk::Str("widgets");
  k.short_names = sdk::Str("wd");
  k.reads = sdk::Str("Secret,Gateway.gateway.networking.k8s.io");
  k.capabilities = PORTICO_CAP_PROCESSOR;
  k.sync_policy = PORTICO_SYNC_ALWAYS;
  sdk::StringSink error;
  ASSERT_EQ(reg->add_kind(reg->host, &k, error.sink()), PORTICO_OK) << error.data();
  group[0] = 'X';  // the host copied its strings
  ASSERT_EQ(stage.kinds().size(), 1u);
  const KindInfo& staged = stage.kinds()[0];
  EXPECT_EQ(staged.id, (KindId{"example.portico.io", "Widget"}));
  EXPECT_THAT(staged.versions, ElementsAre("v1", "v1beta1"));
  EXPECT_THAT(staged.reads, ElementsAre(KindId{"", "Secret"}, KindId{kGatewayApi, "Gateway"}));
  EXPECT_EQ(r.Find("example.portico.io", "Widget"), nullptr);  // staged, not committed

  portico_kind small = k;
  small.struct_size = 8;
  sdk::StringSink small_error;
  EXPECT_EQ(reg->add_kind(reg->host, &small, small_error.sink()), PORTICO_INVALID_ARGUMENT);
  EXPECT_THAT(small_error.data(), HasSubstr("portico_kind struct_size 8 smaller than"));
  ASSERT_TRUE(stage.error().has_value());

  ASSERT_TRUE(stage.CommitTo(r).ok());
  EXPECT_NE(r.Find("example.portico.io", "Widget"), nullptr);
}

TEST(RegistrationStageTest, DuplicateOfARegisteredKindIsRefusedAtAddKind) {
  KindRegistry r = GatewayApiRegistry();
  RegistrationStage stage(r, "twin", "/plugins/libportico-twin.so");
  portico_kind k{};
  k.struct_size = sizeof(portico_kind);
  k.group = sdk::Str(kGatewayApi);
  k.kind = sdk::Str("Gateway");
  k.versions = sdk::Str("v1");
  k.plural = sdk::Str("gateways");
  sdk::StringSink error;
  EXPECT_EQ(stage.registrar()->add_kind(stage.registrar()->host, &k, error.sink()),
            PORTICO_ALREADY_EXISTS);
  EXPECT_EQ(error.data(),
            "kind Gateway.gateway.networking.k8s.io already provided by plugin gateway "
            "(/plugins/libportico-gateway.so)");
  EXPECT_THAT(stage.kinds(), IsEmpty());
}

}  // namespace
}  // namespace portico::core
