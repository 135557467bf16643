// ratelimit_test: the RateLimitPolicy plugin on the SDK's fake host, through its C ABI as a
// gateway and a controller call it: schema and cross-field refusals, targets resolved, status per
// ancestor, the oldest of two policies on one target wins, the handler's filter_binding.v1
// entry, and the filter: N requests within the interval pass, the N+1th gets 429 with
// Retry-After and the RateLimit-Policy / RateLimit fields, another key is still served, and the
// fake clock refills the bucket (one instance kept across requests, as on a gateway).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "policy.h"
#include "portico/sdk/json.h"
#include "portico/sdk/testing/fake_host.h"

namespace example::ratelimit {
namespace {

using portico::sdk::ObjectRef;
using portico::sdk::testing::FakeHost;
using portico::sdk::testing::FakeHttpExchange;
using ::testing::HasSubstr;
namespace json = portico::json;

std::string Policy(const std::string& name, const std::string& spec,
                   const std::string& created = "2026-01-01T00:00:00Z") {
  return R"({"apiVersion":"example.portico.io/v1alpha1","kind":"RateLimitPolicy",)"
         R"("metadata":{"name":")" +
         name + R"(","namespace":"default","creationTimestamp":")" + created + R"("},"spec":)" +
         spec + "}";
}

std::string RouteSpec(const std::string& route, int requests, const std::string& interval,
                      const std::string& key = R"({"type":"ClientAddress"})") {
  return R"({"targetRefs":[{"group":"gateway.networking.k8s.io","kind":"HTTPRoute","name":")" +
         route + R"("}],"limit":{"requests":)" + std::to_string(requests) + R"(,"interval":")" +
         interval + R"("},"key":)" + key + "}";
}

// Condition returns (status, reason, message) of condition `type` of ancestor `i`.
std::tuple<std::string, std::string, std::string> Condition(const std::string& status_json,
                                                            size_t i, const std::string& type) {
  auto doc = json::Parse(status_json, "status");
  if (!doc.ok()) return {"parse error", "", ""};
  const rapidjson::Value* ancestors = json::Find(*doc, "ancestors");
  if (ancestors == nullptr || !ancestors->IsArray() || i >= ancestors->Size()) return {};
  const rapidjson::Value* conditions = json::Find((*ancestors)[i], "conditions");
  for (const auto& c : conditions->GetArray()) {
    if (json::GetString(c, "type") == type) {
      return {json::GetString(c, "status"), json::GetString(c, "reason"),
              json::GetString(c, "message")};
    }
  }
  return {"absent", "", ""};
}

class RateLimitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(host_.Load(RATELIMIT_PLUGIN_PATH).ok());
    host_.SetExport({kGatewayGroup, "HTTPRoute", "default", "web"}, "{}");
    host_.SetExport({kGatewayGroup, "Gateway", "default", "gw"}, "{}");
  }
  std::string Synced(const std::string& object) {
    auto out = host_.Apply(object);
    EXPECT_TRUE(out.ok()) << out.status;
    EXPECT_TRUE(out.synced.has_value());
    return out.synced.value_or("");
  }
  FakeHost host_;
};

TEST_F(RateLimitTest, RegistersTheKindAndARateLimitPhaseFilter) {
  const auto* kind = host_.FindKind(kGroup, kKind);
  ASSERT_NE(kind, nullptr);
  EXPECT_EQ(kind->sync_policy, PORTICO_SYNC_ATTACHED);
  EXPECT_NE(kind->stage, nullptr);
  const auto* filter = host_.FindFilterType(kFilterType);
  ASSERT_NE(filter, nullptr);
  EXPECT_EQ(filter->phase, PORTICO_PHASE_RATELIMIT);
}

TEST_F(RateLimitTest, TheSchemaAndTheCrossFieldRulesRefuseBadSpecsNamingTheField) {
  auto service = host_.Process(
      kGroup, kKind,
      Policy("p", R"({"targetRefs":[{"group":"gateway.networking.k8s.io","kind":"Service",)"
                  R"("name":"x"}],"limit":{"requests":1,"interval":"1s"}})"));
  EXPECT_FALSE(service.ok());
  EXPECT_THAT(service.status.message(), HasSubstr("spec.targetRefs[0].kind"));
  auto no_header =
      host_.Process(kGroup, kKind, Policy("p", RouteSpec("web", 1, "1s", R"({"type":"Header"})")));
  EXPECT_FALSE(no_header.ok());
  EXPECT_THAT(no_header.status.message(),
              HasSubstr("spec.key.header: is required when spec.key.type is Header"));
  auto long_interval = host_.Process(kGroup, kKind, Policy("p", RouteSpec("web", 1, "25h")));
  EXPECT_FALSE(long_interval.ok());
  EXPECT_THAT(long_interval.status.message(), HasSubstr("spec.limit.interval"));
  auto twice = host_.Process(
      kGroup, kKind,
      Policy("p", R"({"targetRefs":[{"group":"gateway.networking.k8s.io","kind":"Gateway",)"
                  R"("name":"gw"},{"group":"gateway.networking.k8s.io","kind":"Gateway",)"
                  R"("name":"gw"}],"limit":{"requests":1,"interval":"1s"}})"));
  EXPECT_FALSE(twice.ok());
  EXPECT_THAT(twice.status.message(), HasSubstr("spec.targetRefs[1]: targets Gateway gw again"));
}

TEST_F(RateLimitTest, AMissingTargetIsNotAcceptedAndNothingIsSynced) {
  auto out = host_.Process(kGroup, kKind, Policy("p", RouteSpec("nope", 5, "1m")));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_FALSE(out.synced.has_value());
  auto [status, reason, message] = Condition(*out.status_json, 0, "Accepted");
  EXPECT_EQ(status, "False");
  EXPECT_EQ(reason, "TargetNotFound");
  EXPECT_EQ(message, "HTTPRoute default/nope does not exist");
  EXPECT_EQ(std::get<1>(Condition(*out.status_json, 0, "ResolvedRefs")), "TargetNotFound");
  EXPECT_THAT(out.reads, ::testing::Contains("get HTTPRoute default/nope miss"));
}

TEST_F(RateLimitTest, AResolvedTargetIsAcceptedLinkedAndAttached) {
  auto out = host_.Process(kGroup, kKind, Policy("p", RouteSpec("web", 5, "1m")));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(std::get<0>(Condition(*out.status_json, 0, "Accepted")), "True");
  EXPECT_EQ(std::get<0>(Condition(*out.status_json, 0, "ResolvedRefs")), "True");
  ASSERT_EQ(out.links.size(), 1u);
  EXPECT_EQ(out.links[0].first, (ObjectRef{kGatewayGroup, "HTTPRoute", "default", "web"}));
  EXPECT_EQ(out.links[0].second, PORTICO_LINK_PARENT);
  ASSERT_TRUE(out.synced.has_value());
  EXPECT_THAT(*out.synced, HasSubstr(R"("limit":{"requests":5,"intervalMs":60000})"));
  EXPECT_THAT(*out.synced,
              HasSubstr(R"("targets":[{"route":{"namespace":"default","name":"web"}}])"));
}

TEST_F(RateLimitTest, OfTwoPoliciesOnOneTargetTheOldestWins) {
  auto old_out = host_.Apply(Policy("old", RouteSpec("web", 5, "1m"), "2026-01-01T00:00:00Z"));
  ASSERT_TRUE(old_out.ok()) << old_out.status;
  auto young = host_.Apply(Policy("young", RouteSpec("web", 9, "1m"), "2026-02-01T00:00:00Z"));
  ASSERT_TRUE(young.ok()) << young.status;
  auto [status, reason, message] = Condition(*young.status_json, 0, "Accepted");
  EXPECT_EQ(status, "False");
  EXPECT_EQ(reason, "Conflicted");
  EXPECT_THAT(message, HasSubstr("RateLimitPolicy default/old is older"));
  EXPECT_EQ(std::get<0>(Condition(*young.status_json, 0, "Conflicted")), "True");
  EXPECT_FALSE(young.synced.has_value());
  // Reprocessed after the young one exists (as the host requeues it), the old one still applies.
  auto again = host_.Apply(Policy("old", RouteSpec("web", 5, "1m"), "2026-01-01T00:00:00Z"));
  EXPECT_EQ(std::get<0>(Condition(*again.status_json, 0, "Accepted")), "True");
  EXPECT_TRUE(again.synced.has_value());
  EXPECT_THAT(again.reads, ::testing::Contains("list RateLimitPolicy default"));
}

TEST_F(RateLimitTest, TheHandlerStagesOneAttachedFilterBinding) {
  const std::string view = Synced(Policy("p", RouteSpec("web", 5, "1m")));
  const ObjectRef ref{kGroup, kKind, "default", "p"};
  auto staged = host_.Stage(kGroup, kKind, {portico::sdk::testing::FakeChange::Upsert(ref, view)});
  ASSERT_TRUE(staged.ok()) << staged.status;
  const std::string key = ref.Key();
  auto it = staged.puts.find({PORTICO_FORMAT_FILTER_BINDING, key});
  ASSERT_NE(it, staged.puts.end());
  EXPECT_THAT(it->second.json, HasSubstr(R"("filterType":"example.portico.io/RateLimitPolicy")"));
  EXPECT_THAT(it->second.json, HasSubstr(R"("attach":{"targets":[{"route")"));
  auto removed = host_.Stage(kGroup, kKind, {portico::sdk::testing::FakeChange::Delete(ref)});
  EXPECT_TRUE(removed.puts.empty());
}

FakeHttpExchange From(const std::string& client) {
  FakeHttpExchange e;
  e.client_address = client;
  return e;
}

TEST_F(RateLimitTest, TheNPlusFirstRequestGets429WhileAnotherClientIsServed) {
  auto filter = host_.CreateFilter(kFilterType, Synced(Policy("p", RouteSpec("web", 3, "1m"))));
  ASSERT_TRUE(filter.ok()) << filter.status();
  for (int i = 0; i < 3; ++i) {
    FakeHttpExchange response;
    response.status = 200;
    auto out = (*filter)->Run(From("10.0.0.1"), response);
    EXPECT_EQ(out.result, PORTICO_FILTER_CONTINUE) << i;
    ASSERT_NE(out.response.Header("RateLimit"), nullptr);
    EXPECT_EQ(*out.response.Header("RateLimit"),
              "\"p\";r=" + std::to_string(2 - i) + ";t=" + std::to_string(20 * (i + 1)));
    EXPECT_EQ(*out.response.Header("RateLimit-Policy"), "\"p\";q=3;w=60");
  }
  auto refused = (*filter)->Run(From("10.0.0.1"));
  EXPECT_EQ(refused.result, PORTICO_FILTER_RESPOND);
  EXPECT_EQ(refused.exchange.respond_status, 429);
  using Headers = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(refused.exchange.reply_headers, (Headers{{"Retry-After", "20"},
                                                     {"RateLimit-Policy", "\"p\";q=3;w=60"},
                                                     {"RateLimit", "\"p\";r=0;t=60"}}));
  EXPECT_EQ((*filter)->Run(From("10.0.0.2")).result, PORTICO_FILTER_CONTINUE);
  // The fake clock, not a sleep: one token is back after 20 s, and only one.
  host_.AdvanceMs(19999);
  EXPECT_EQ((*filter)->Run(From("10.0.0.1")).result, PORTICO_FILTER_RESPOND);
  host_.AdvanceMs(1);
  EXPECT_EQ((*filter)->Run(From("10.0.0.1")).result, PORTICO_FILTER_CONTINUE);
  EXPECT_EQ((*filter)->Run(From("10.0.0.1")).result, PORTICO_FILTER_RESPOND);
}

TEST_F(RateLimitTest, HeaderKeysLimitPerValueAndRequestsWithoutItShareOneBucket) {
  auto filter = host_.CreateFilter(
      kFilterType,
      Synced(Policy("p", RouteSpec("web", 1, "1s", R"({"type":"Header","header":"X-Api-Key"})"))));
  ASSERT_TRUE(filter.ok()) << filter.status();
  auto with_key = [](const std::string& key) {
    FakeHttpExchange e;
    if (!key.empty()) e.headers.emplace_back("x-api-key", key);
    return e;
  };
  EXPECT_EQ((*filter)->Run(with_key("a")).result, PORTICO_FILTER_CONTINUE);
  EXPECT_EQ((*filter)->Run(with_key("a")).result, PORTICO_FILTER_RESPOND);
  EXPECT_EQ((*filter)->Run(with_key("b")).result, PORTICO_FILTER_CONTINUE);
  EXPECT_EQ((*filter)->Run(with_key("")).result, PORTICO_FILTER_CONTINUE);
  EXPECT_EQ((*filter)->Run(with_key("")).result, PORTICO_FILTER_RESPOND);
}

TEST_F(RateLimitTest, RouteKeysLimitEachRouteOfAGatewayPolicyOnItsOwn) {
  const std::string spec =
      R"({"targetRefs":[{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"gw"}],)"
      R"("limit":{"requests":1,"interval":"1s"}})";
  const std::string view = Synced(Policy("p", spec));
  EXPECT_THAT(view, HasSubstr(R"("targets":[{"gateway":{"namespace":"default","name":"gw"}}])"));
  auto filter = host_.CreateFilter(kFilterType, view);
  ASSERT_TRUE(filter.ok()) << filter.status();
  auto on = [](const std::string& route) {
    FakeHttpExchange e;
    e.route = route;
    return e;
  };
  EXPECT_EQ((*filter)->Run(on("default/a")).result, PORTICO_FILTER_CONTINUE);
  EXPECT_EQ((*filter)->Run(on("default/a")).result, PORTICO_FILTER_RESPOND);
  EXPECT_EQ((*filter)->Run(on("default/b")).result, PORTICO_FILTER_CONTINUE);
}

TEST_F(RateLimitTest, AConfigThatIsNotASyncedViewIsRefusedNamingTheField) {
  auto filter = host_.CreateFilter(kFilterType, R"({"metadata":{"name":"p"},"limit":{}})");
  ASSERT_FALSE(filter.ok());
  EXPECT_THAT(filter.status().message(), HasSubstr("limit.requests"));
}

}  // namespace
}  // namespace example::ratelimit
