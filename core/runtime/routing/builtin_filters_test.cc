// builtin_filters_test: the CORS filter (Gateway API HTTPCORSFilter) on a FakeFilterContext:
// preflights answered locally (allowed: 200 and the Access-Control-Allow-* headers; denied: 403
// without them), actual requests' response headers, the wildcards with and without credentials,
// origin patterns, Vary, and the per-request state's lifetime.
#include "core/runtime/routing/builtin_filters.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/runtime/filter/testing/fake_filter_context.h"

namespace portico::core::routing {
namespace {

using filter::FilterResult;
using filter::FilterSlot;
using filter::HttpFilter;
using filter::Side;
using filter::testing::FakeFilterContext;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

using Fields = FakeFilterContext::Fields;

// Join joins `items` as the route_rules.v1 parser does ("a, b").
std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// CorsConfig is an HTTPCORSFilter in test form.
struct CorsConfig {
  std::vector<std::string> origins;
  bool credentials = false;
  std::vector<std::string> methods, headers, expose;
  std::string max_age = "5";
};

std::shared_ptr<const HttpFilter> Cors(const CorsConfig& c) {
  auto policy = std::make_shared<CorsPolicy>();
  for (const std::string& o : c.origins) {
    if (o == "*") {
      policy->any_origin = true;
      continue;
    }
    std::optional<CorsOrigin> origin = ParseCorsOrigin(o);
    EXPECT_TRUE(origin.has_value()) << o;
    if (origin) policy->origins.push_back(*origin);
  }
  policy->allow_credentials = c.credentials;
  auto has_star = [](const std::vector<std::string>& v) {
    return std::find(v.begin(), v.end(), "*") != v.end();
  };
  policy->any_method = has_star(c.methods);
  policy->allow_methods = Join(c.methods);
  policy->any_header = has_star(c.headers);
  policy->allow_headers = Join(c.headers);
  policy->expose_any = has_star(c.expose);
  policy->expose_headers = Join(c.expose);
  std::vector<std::string> named;
  for (const std::string& e : c.expose) {
    if (e != "*") named.push_back(e);
  }
  policy->expose_named = Join(named);
  policy->max_age = c.max_age;
  FilterSpec spec;
  spec.kind = FilterKind::kCors;
  spec.cors = std::move(policy);
  return MakeBuiltinFilter(std::move(spec));
}

// The conformance suite's "cors-multiple-origins-methods-headers" route.
CorsConfig Listed() {
  return {.origins = {"https://www.foo.com", "https://*.bar.com"},
          .credentials = true,
          .methods = {"GET", "OPTIONS"},
          .headers = {"x-header-1", "x-header-2"},
          .expose = {"x-header-3", "x-header-4"},
          .max_age = "3600"};
}

FakeFilterContext Preflight(std::string origin, std::string method = "GET",
                            std::optional<std::string> headers = std::nullopt) {
  FakeFilterContext ctx;
  ctx.method_ = "OPTIONS";
  ctx.request = {{"Origin", std::move(origin)},
                 {"Access-Control-Request-Method", std::move(method)}};
  if (headers) ctx.request.emplace_back("Access-Control-Request-Headers", *headers);
  return ctx;
}

// Exchange runs an actual request through `filter`: its head, a response head with `response`
// (the backend's headers), and its end. Returns the response headers the client gets.
Fields Exchange(const HttpFilter& filter, FakeFilterContext& ctx, Fields response = {}) {
  FilterSlot slot;
  EXPECT_EQ(filter.OnRequestHead(ctx, slot), FilterResult::kContinue);
  EXPECT_FALSE(ctx.responded);
  ctx.response = std::move(response);
  ctx.status_ = 200;
  filter.OnResponseHead(ctx, slot);
  filter.OnRequestEnd(ctx, slot);
  EXPECT_EQ(slot.state, nullptr);  // freed
  return ctx.response;
}

FakeFilterContext Actual(std::string method, std::optional<std::string> origin) {
  FakeFilterContext ctx;
  ctx.method_ = std::move(method);
  if (origin) ctx.request.emplace_back("Origin", *origin);
  return ctx;
}

TEST(CorsFilterTest, AllowedPreflightIsAnsweredWithTheConfiguredHeaders) {
  auto cors = Cors(Listed());
  for (const char* origin :
       {"https://www.foo.com", "https://www.bar.com", "https://xpto.www.bar.com",
        "https://www.foo.com:443", "HTTPS://WWW.Bar.com"}) {
    FakeFilterContext ctx = Preflight(origin, "GET", "x-header-1, x-header-2");
    FilterSlot slot;
    ASSERT_EQ(cors->OnRequestHead(ctx, slot), FilterResult::kRespond) << origin;
    EXPECT_EQ(ctx.reply_status, 200);
    EXPECT_THAT(ctx.reply_body, IsEmpty());
    EXPECT_THAT(
        ctx.reply_headers,
        UnorderedElementsAre(Pair("Access-Control-Allow-Origin", origin),
                             Pair("Access-Control-Allow-Credentials", "true"),
                             Pair("Access-Control-Allow-Methods", "GET, OPTIONS"),
                             Pair("Access-Control-Allow-Headers", "x-header-1, x-header-2"),
                             Pair("Access-Control-Expose-Headers", "x-header-3, x-header-4"),
                             Pair("Access-Control-Max-Age", "3600"), Pair("Vary", "Origin")))
        << origin;
    cors->OnRequestEnd(ctx, slot);
  }
}

TEST(CorsFilterTest, PreflightFromAnotherOriginIsDeniedWithoutCorsHeaders) {
  auto cors = Cors(Listed());
  // Not listed; "*." needs a label before ".bar.com"; another scheme; another port; opaque or
  // malformed origins.
  for (const char* origin :
       {"https://foobar.com", "https://bar.com", "https://.bar.com", "http://www.foo.com",
        "https://www.foo.com:8443", "https://www.bar.com.evil.com", "null", "https://www.foo.com/",
        "https://user@www.foo.com", "https://www.foo.com:0", "https://www.foo.com:99999",
        "www.foo.com"}) {
    FakeFilterContext ctx = Preflight(origin);
    FilterSlot slot;
    ASSERT_EQ(cors->OnRequestHead(ctx, slot), FilterResult::kRespond) << origin;
    EXPECT_EQ(ctx.reply_status, 403) << origin;
    EXPECT_THAT(ctx.reply_headers, UnorderedElementsAre(Pair("Vary", "Origin"))) << origin;
    cors->OnRequestEnd(ctx, slot);
  }
}

TEST(CorsFilterTest, OptionsWithoutRequestMethodIsAnActualRequest) {
  auto cors = Cors(Listed());
  FakeFilterContext ctx = Actual("OPTIONS", "https://www.foo.com");
  Fields response = Exchange(*cors, ctx);
  EXPECT_THAT(response, UnorderedElementsAre(
                            Pair("Vary", "Origin"),
                            Pair("Access-Control-Allow-Origin", "https://www.foo.com"),
                            Pair("Access-Control-Allow-Credentials", "true"),
                            Pair("Access-Control-Expose-Headers", "x-header-3, x-header-4")));
}

TEST(CorsFilterTest, ActualRequestsGetOriginCredentialsAndExposedHeaders) {
  auto cors = Cors(Listed());
  FakeFilterContext ctx = Actual("GET", "https://a.b.bar.com");
  // The backend's own CORS answer is replaced; its Vary is kept and extended.
  Fields response = Exchange(*cors, ctx,
                             {{"Content-Type", "application/json"},
                              {"Vary", "Accept-Encoding"},
                              {"Access-Control-Allow-Origin", "https://backend.example"}});
  EXPECT_THAT(response, UnorderedElementsAre(
                            Pair("Content-Type", "application/json"),
                            Pair("Vary", "Accept-Encoding"), Pair("Vary", "Origin"),
                            Pair("Access-Control-Allow-Origin", "https://a.b.bar.com"),
                            Pair("Access-Control-Allow-Credentials", "true"),
                            Pair("Access-Control-Expose-Headers", "x-header-3, x-header-4")));
  // The request itself is untouched (its Origin and Access-Control-Request-* reach the backend).
  EXPECT_THAT(ctx.request, UnorderedElementsAre(Pair("Origin", "https://a.b.bar.com")));
}

TEST(CorsFilterTest, ActualRequestsFromOtherOriginsOrWithoutOneGetNoCorsHeaders) {
  auto cors = Cors(Listed());
  for (std::optional<std::string> origin :
       {std::optional<std::string>("https://foobar.com"), std::optional<std::string>()}) {
    FakeFilterContext ctx = Actual("GET", origin);
    // Vary: the answer depends on the Origin; a Vary naming it already is not repeated.
    EXPECT_THAT(Exchange(*cors, ctx, {{"vary", "accept, origin"}}),
                UnorderedElementsAre(Pair("vary", "accept, origin")));
    ctx = Actual("GET", origin);
    EXPECT_THAT(Exchange(*cors, ctx), UnorderedElementsAre(Pair("Vary", "Origin")));
  }
}

TEST(CorsFilterTest, WildcardsWithoutCredentialsAnswerStar) {
  auto cors = Cors({.origins = {"*"}, .methods = {"*"}, .headers = {"*"}, .expose = {"*"}});
  for (const char* origin : {"https://foobar.com", "https://foobar.com:12345", "null"}) {
    FakeFilterContext ctx = Preflight(origin, "PUT", "x-header-1");
    FilterSlot slot;
    ASSERT_EQ(cors->OnRequestHead(ctx, slot), FilterResult::kRespond) << origin;
    EXPECT_EQ(ctx.reply_status, 200);
    // No Vary: the answer is the same for every origin.
    EXPECT_THAT(ctx.reply_headers, UnorderedElementsAre(Pair("Access-Control-Allow-Origin", "*"),
                                                        Pair("Access-Control-Allow-Methods", "*"),
                                                        Pair("Access-Control-Allow-Headers", "*"),
                                                        Pair("Access-Control-Expose-Headers", "*"),
                                                        Pair("Access-Control-Max-Age", "5")));
    cors->OnRequestEnd(ctx, slot);

    ctx = Actual("PUT", origin);
    EXPECT_THAT(Exchange(*cors, ctx),
                UnorderedElementsAre(Pair("Access-Control-Allow-Origin", "*"),
                                     Pair("Access-Control-Expose-Headers", "*")));
  }
}

TEST(CorsFilterTest, WildcardsWithCredentialsEchoTheRequest) {
  auto cors = Cors({.origins = {"*"},
                    .credentials = true,
                    .methods = {"*"},
                    .headers = {"*"},
                    .expose = {"*", "x-listed"}});
  FakeFilterContext ctx = Preflight("https://other.foo.com", "PUT", "x-header-1");
  ctx.request.emplace_back("access-control-request-headers", "x-header-2");
  FilterSlot slot;
  ASSERT_EQ(cors->OnRequestHead(ctx, slot), FilterResult::kRespond);
  EXPECT_EQ(ctx.reply_status, 200);
  EXPECT_THAT(
      ctx.reply_headers,
      UnorderedElementsAre(
          Pair("Access-Control-Allow-Origin", "https://other.foo.com"),
          Pair("Access-Control-Allow-Credentials", "true"),
          Pair("Access-Control-Allow-Methods", "PUT"),
          Pair("Access-Control-Allow-Headers", "x-header-1, x-header-2"),
          Pair("Access-Control-Expose-Headers", "x-listed"), Pair("Access-Control-Max-Age", "5"),
          Pair("Vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers")));
  cors->OnRequestEnd(ctx, slot);

  // "*" exposes every header of the response, named.
  ctx = Actual("GET", "https://other.foo.com");
  EXPECT_THAT(
      Exchange(
          *cors, ctx,
          {{"Content-Type", "text/plain"}, {"X-Trace", "1"}, {"x-trace", "2"}, {"X-Listed", "3"}}),
      UnorderedElementsAre(
          Pair("Content-Type", "text/plain"), Pair("X-Trace", "1"), Pair("x-trace", "2"),
          Pair("X-Listed", "3"), Pair("Vary", "Origin"),
          Pair("Access-Control-Allow-Origin", "https://other.foo.com"),
          Pair("Access-Control-Allow-Credentials", "true"),
          Pair("Access-Control-Expose-Headers", "x-listed, Content-Type, X-Trace")));
}

TEST(CorsFilterTest, UnconfiguredListsAreLeftOut) {
  auto cors = Cors({.origins = {"http://localhost:3000"}});
  FakeFilterContext ctx = Preflight("http://localhost:3000", "DELETE", "x-a");
  FilterSlot slot;
  ASSERT_EQ(cors->OnRequestHead(ctx, slot), FilterResult::kRespond);
  EXPECT_EQ(ctx.reply_status, 200);
  EXPECT_THAT(ctx.reply_headers,
              UnorderedElementsAre(Pair("Access-Control-Allow-Origin", "http://localhost:3000"),
                                   Pair("Access-Control-Max-Age", "5"), Pair("Vary", "Origin")));
  cors->OnRequestEnd(ctx, slot);
  // Another port of the same host is another origin; so is the default port.
  for (const char* origin : {"http://localhost:3001", "http://localhost"}) {
    ctx = Preflight(origin);
    ASSERT_EQ(cors->OnRequestHead(ctx, slot), FilterResult::kRespond);
    EXPECT_EQ(ctx.reply_status, 403) << origin;
    cors->OnRequestEnd(ctx, slot);
  }
}

TEST(CorsFilterTest, OriginPatterns) {
  CorsPolicy policy;
  for (const char* o : {"https://*.example.com", "http://[::1]:8080", "app://x.y"}) {
    std::optional<CorsOrigin> origin = ParseCorsOrigin(o);
    ASSERT_TRUE(origin.has_value()) << o;
    policy.origins.push_back(*origin);
  }
  EXPECT_EQ(policy.origins[0].port, 443u);
  EXPECT_EQ(policy.origins[1].host, "[::1]");
  EXPECT_EQ(policy.origins[2].port, 0u);
  for (const char* ok : {"https://a.example.com", "https://a.b.example.com", "http://[::1]:8080",
                         "app://x.y", "https://A.EXAMPLE.COM:443"}) {
    EXPECT_TRUE(CorsOriginAllowed(policy, ok)) << ok;
  }
  for (const char* bad :
       {"https://example.com", "http://a.example.com", "http://[::1]", "https://a.example.com:8443",
        "https://", "https://*.example.com", "app://x.y:1", "", "null", "https:// a.example.com"}) {
    EXPECT_FALSE(CorsOriginAllowed(policy, bad)) << bad;
  }
  // A pattern the CRD accepts but no browser sends parses (the route stays) and matches nothing.
  CorsPolicy odd;
  odd.origins.push_back(*ParseCorsOrigin("https://user@a b.com"));
  EXPECT_FALSE(CorsOriginAllowed(odd, "https://user@a b.com"));
  // A lone `*` host is every host of that scheme and port.
  CorsPolicy any_https;
  any_https.origins.push_back(*ParseCorsOrigin("https://*"));
  EXPECT_TRUE(CorsOriginAllowed(any_https, "https://anything.at.all"));
  EXPECT_FALSE(CorsOriginAllowed(any_https, "http://anything.at.all"));
  EXPECT_FALSE(CorsOriginAllowed(any_https, "https://anything.at.all:8443"));
  for (const char* invalid : {"*", "https//a.com", "://a.com", "https://a.com/p", "https://a.com:",
                              "https://a.com:65536", "https://[::1", "https://[::1]x"}) {
    EXPECT_FALSE(ParseCorsOrigin(invalid).has_value()) << invalid;
  }
}

}  // namespace
}  // namespace portico::core::routing
