// webhook_test: the Webhook kind and its filter type in the SDK's fake host, with the Service,
// Secret and ReferenceGrant plugins beside it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "portico/sdk/testing/fake_host.h"

namespace portico::plugins::webhook {
namespace {

using sdk::testing::FakeHost;
using sdk::testing::FakeHttpExchange;
using sdk::testing::FakeHttpResponse;
using sdk::testing::ProcessOutcome;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kAuthService[] = R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"authz",
  "namespace":"default"},"spec":{"selector":{"app":"authz"},"ports":[{"name":"http","port":9000,)"
                                R"("targetPort":9000}]}})";

std::string WebhookWith(std::string_view spec, std::string_view ns = "default") {
  return R"({"apiVersion":"portico.io/v1alpha1","kind":"Webhook","metadata":{"name":"auth",)"
         R"("namespace":")" +
         std::string(ns) + R"("},"spec":)" + std::string(spec) + "}";
}

class plugin_webhook : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(host_.Load(PLUGIN_PATH).ok());
    ASSERT_TRUE(host_.Load(SERVICE_PLUGIN_PATH).ok());
    ASSERT_TRUE(host_.Load(SECRET_PLUGIN_PATH).ok());
    ASSERT_TRUE(host_.Load(REFERENCEGRANT_PLUGIN_PATH).ok());
  }
  ProcessOutcome Webhook(const std::string& json) {
    return host_.Process("portico.io", "Webhook", json);
  }
  FakeHost host_;
};

TEST_F(plugin_webhook, RegistersTheKindAndItsFilterType) {
  const auto* kind = host_.FindKind("portico.io", "Webhook");
  ASSERT_NE(kind, nullptr);
  EXPECT_EQ(kind->versions, std::vector<std::string>{"v1alpha1"});
  EXPECT_EQ(kind->reads, (std::vector<std::string>{"Service", "Secret"}));
  EXPECT_EQ(kind->sync_policy, PORTICO_SYNC_ATTACHED);  // with its targets, or its routes
  EXPECT_TRUE(kind->capabilities & PORTICO_CAP_ROUTE_FILTER);
  const auto* filter = host_.FindFilterType("portico.io/Webhook");
  ASSERT_NE(filter, nullptr);
  EXPECT_EQ(filter->phase, PORTICO_PHASE_AUTHZ);
}

TEST_F(plugin_webhook, ServiceWebhookSyncsItsFilterConfig) {
  ASSERT_TRUE(host_.Apply(kAuthService).ok());
  ProcessOutcome out =
      Webhook(WebhookWith(R"({"service":{"name":"authz","port":9000},"path":"/check",
      "timeout":"500ms","forwardHeaders":["Authorization","Cookie"],"upstreamHeaders":["X-User"],
      "responseHeaders":["WWW-Authenticate"]})"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(
      out.synced,
      R"({"metadata":{"name":"auth","namespace":"default","generation":1},)"
      R"("target":{"service":{"namespace":"default","name":"authz","port":9000}},"path":"/check",)"
      R"("method":"POST","timeoutMs":500,"failurePolicy":"Fail","forwardHeaders":[)"
      R"("authorization","cookie"],)"
      R"("upstreamHeaders":["x-user"],"responseHeaders":["www-authenticate"],)"
      R"("request":{"headers":[],"missingValue":"Omit","missingStatus":400}})");
  EXPECT_EQ(out.export_json, R"({"filterType":"portico.io/Webhook","failurePolicy":"Fail"})");
  EXPECT_THAT(*out.status_json, HasSubstr(R"("type":"ResolvedRefs","status":"True")"));
  EXPECT_THAT(out.reads, ElementsAre("get Service default/authz hit"));
}

TEST_F(plugin_webhook, ServiceReferencesAreResolved) {
  ProcessOutcome out = Webhook(WebhookWith(R"({"service":{"name":"authz","port":9000}})"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.status_json,
              HasSubstr(R"("reason":"BackendNotFound",)"
                        R"("message":"spec.service: Service default/authz does not exist")"));
  ASSERT_TRUE(host_.Apply(kAuthService).ok());
  out = Webhook(WebhookWith(R"({"service":{"name":"authz","port":9001}})"));
  EXPECT_THAT(*out.status_json, HasSubstr(R"(Service default/authz has no port 9001")"));

  out = Webhook(
      WebhookWith(R"({"service":{"name":"authz","namespace":"default","port":9000}})", "apps"));
  EXPECT_THAT(*out.status_json, HasSubstr(R"("reason":"RefNotPermitted")"));
  ASSERT_TRUE(
      host_
          .Apply(R"({"apiVersion":"gateway.networking.k8s.io/v1beta1","kind":"ReferenceGrant",
      "metadata":{"name":"webhooks","namespace":"default"},
      "spec":{"from":[{"group":"portico.io","kind":"Webhook","namespace":"apps"}],"to":[{)"
                 R"("group":"","kind":"Service"}]}})")
          .ok());
  out = Webhook(
      WebhookWith(R"({"service":{"name":"authz","namespace":"default","port":9000}})", "apps"));
  EXPECT_THAT(*out.status_json, HasSubstr(R"("type":"ResolvedRefs","status":"True")"));
}

TEST_F(plugin_webhook, HttpsAndDnsTargetsAreRefusedUntilServed) {
  // The gateway's client speaks no TLS and resolves no webhook DNS names yet: such Webhooks are
  // refused visibly (Accepted=False, nothing synced or exported), never called in the clear.
  const char* https =
      R"({"url":"https://Auth.Example.com:8443/v1/check?tenant=a","failurePolicy":"Ignore",
      "method":"GET","timeout":"2s","tls":{"caCertificateRef":{"name":"auth-ca"}}})";
  ProcessOutcome out = Webhook(WebhookWith(https));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_FALSE(out.synced.has_value());
  EXPECT_FALSE(out.export_json.has_value());
  EXPECT_THAT(*out.status_json,
              HasSubstr(R"("type":"Accepted","status":"False","reason":"UnsupportedValue")"));
  EXPECT_THAT(*out.status_json, HasSubstr("https and tls webhook targets are not served yet"));
  // The CA reference is still checked and reported.
  EXPECT_THAT(
      *out.status_json,
      HasSubstr(R"("reason":"InvalidCACertificateRef","message":"spec.tls.caCertificateRef: )"
                R"(Secret default/auth-ca does not exist")"));

  out = Webhook(WebhookWith(R"({"url":"http://auth.example.com/check"})"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_FALSE(out.synced.has_value());
  EXPECT_THAT(*out.status_json, HasSubstr("host auth.example.com is a DNS name"));

  out = Webhook(WebhookWith(R"({"url":"http://[fd00::1]:8080","timeout":"1m"})"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.synced,
              HasSubstr(R"("target":{"scheme":"http","host":"fd00::1","port":8080},"path":"/")"));
  EXPECT_THAT(*out.synced, Not(HasSubstr("\"tls\"")));
  EXPECT_THAT(*out.status_json, HasSubstr(R"("type":"Accepted","status":"True")"));
}

TEST_F(plugin_webhook, CrossFieldRules) {
  host_.set_validate_schema(false);
  struct Case {
    const char* spec;
    const char* message;
  } cases[] = {
      {R"({"service":{"name":"a","port":80},"url":"http://a"})",
       "Webhook default/auth: spec: exactly one of service and url must be set"},
      {R"({"path":"/x"})", "spec: exactly one of service and url must be set"},
      {R"({"url":"http://a.example.com/check","path":"/other"})",
       "spec.path: must not be set when spec.url has a path or query"},
      {R"({"url":"ftp://a.example.com"})",
       "spec.url: \"ftp://a.example.com\" must start with http:// or https://"},
      {R"({"url":"http://a.example.com/#frag"})",
       "spec.url: \"http://a.example.com/#frag\" must not have a fragment"},
      {R"({"url":"http://a.example.com:99999"})",
       "spec.url: \"http://a.example.com:99999\" has an invalid port"},
      {R"({"url":"http://a.example.com:"})", "has an invalid port"},
      {R"({"url":"http://user@a.example.com"})", "must not carry user information"},
      {R"({"url":"http://a_b.example.com"})", "spec.url: \"a_b.example.com\" is not a valid host"},
      {R"({"url":"http://a.example.com","timeout":"0s"})",
       "spec.timeout: \"0s\" must be between 1ms and 60s"},
      {R"({"url":"http://a.example.com","timeout":"61s"})",
       "spec.timeout: \"61s\" must be between 1ms and 60s"},
      {R"({"url":"http://a.example.com","timeout":"1.5s"})",
       "spec.timeout: \"1.5s\" is not a duration"},
      {R"({"url":"http://a.example.com","forwardHeaders":["Cookie","cookie"]})",
       "spec.forwardHeaders[1]: duplicate header \"cookie\" (names are case-insensitive)"},
      {R"({"url":"http://a.example.com","upstreamHeaders":["Transfer-Encoding"]})",
       "spec.upstreamHeaders[0]: \"Transfer-Encoding\" is a hop-by-hop or framing header"},
      {R"({"url":"http://a.example.com","responseHeaders":["bad header"]})",
       "spec.responseHeaders[0]: \"bad header\" is not a valid header name"},
      {R"({"url":"http://a.example.com","tls":{"insecureSkipVerify":true}})",
       "spec.tls: requires an https:// url (or a service)"},
      {R"({"url":"https://a.example.com","tls":{"insecureSkipVerify":true,"caCertificateRef":{)"
       R"("name":"ca"}}})",
       "spec.tls.caCertificateRef: must not be set together with insecureSkipVerify"},
      {R"({"service":{"name":"a","port":80},"path":"check"})",
       "spec.path: \"check\" must start with \"/\""},
      {R"({"service":{"name":"a","port":0}})", "spec.service.port: must be 1-65535"},
      {R"({"url":"http://a.example.com","failurePolicy":"Retry"})",
       "spec.failurePolicy: \"Retry\" is not Fail or Ignore"},
      // Templates are parsed when the Webhook is applied; the error names the field.
      {R"({"service":{"name":"a","port":80},"path":"/check/{nope}"})",
       "spec.path: unknown template variable {nope}"},
      {R"({"service":{"name":"a","port":80},"request":{"headers":[{"name":"x-a",)"
       R"("value":"{header.x"}]}})",
       "spec.request.headers[0].value: the '{' at offset 0 is not closed"},
      {R"({"service":{"name":"a","port":80},"request":{"body":"}"}})",
       "spec.request.body: a '}' without its '{'"},
      {R"({"service":{"name":"a","port":80},"request":{"headers":[{"name":"x-a"}]}})",
       "spec.request.headers[0]: exactly one of value and valueFrom must be set"},
      {R"({"service":{"name":"a","port":80},"request":{"headers":[{"name":"Connection",)"
       R"("value":"x"}]}})",
       "spec.request.headers[0].name: \"connection\" is a hop-by-hop"},
  };
  for (const Case& c : cases) {
    ProcessOutcome out = Webhook(WebhookWith(c.spec));
    EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument) << c.spec;
    EXPECT_THAT(out.status.message(), HasSubstr(c.message)) << c.spec;
  }
}

// AuthConfig is the synced view of a URL Webhook with every header list.
std::string AuthConfig(const std::string& failure_policy) {
  return R"({"target":{"scheme":"http","host":"10.0.0.1","port":9000},"path":"/check",)"
         R"("method":"POST","timeoutMs":250,"failurePolicy":")" +
         failure_policy +
         R"(","forwardHeaders":["authorization"],"upstreamHeaders":["x-user"],)"
         R"("responseHeaders":["x-trace"]})";
}

TEST_F(plugin_webhook, AllowedRequestsGetTheWebhooksHeaders) {
  std::string call_headers;
  host_.SetHttpResponder([&](const portico_http_call& call) {
    call_headers = std::string(call.headers.ptr, call.headers.len);
    EXPECT_EQ(call.timeout_ms, 250);
    return FakeHttpResponse{200, "X-User: alice\r\nX-Other: no\r\nX-Trace: t1\r\n", ""};
  });
  FakeHttpExchange request;
  request.headers = {{"Authorization", "Bearer x"}, {"Cookie", "secret"}};
  FakeHttpExchange response;
  response.status = 200;
  auto run = host_.RunFilter("portico.io/Webhook", AuthConfig("Fail"), request, response);
  ASSERT_TRUE(run.status.ok()) << run.status;
  EXPECT_EQ(run.result, PORTICO_FILTER_CONTINUE);
  EXPECT_THAT(run.calls, ElementsAre("POST http://10.0.0.1:9000/check"));
  EXPECT_EQ(call_headers, "authorization: Bearer x\r\n");  // only the listed ones
  ASSERT_NE(run.exchange.Header("x-user"), nullptr);       // copied upstream
  EXPECT_EQ(*run.exchange.Header("x-user"), "alice");
  EXPECT_EQ(run.exchange.Header("x-other"), nullptr);
  EXPECT_FALSE(run.exchange.responded);
  ASSERT_NE(run.response.Header("x-trace"), nullptr);  // and onto the client's response
  EXPECT_EQ(*run.response.Header("x-trace"), "t1");
}

TEST_F(plugin_webhook, DeniedRequestsGetTheWebhooksAnswer) {
  host_.SetHttpResponder([](const portico_http_call&) {
    return FakeHttpResponse{401, "X-Trace: t2\r\nContent-Type: application/json\r\n",
                            R"({"error":"no"})"};
  });
  auto run = host_.RunFilter("portico.io/Webhook", AuthConfig("Fail"), FakeHttpExchange{});
  ASSERT_TRUE(run.status.ok()) << run.status;
  EXPECT_EQ(run.result, PORTICO_FILTER_RESPOND);
  EXPECT_TRUE(run.exchange.responded);
  EXPECT_EQ(run.exchange.respond_status, 401);
  EXPECT_EQ(run.exchange.respond_body, R"({"error":"no"})");
  EXPECT_THAT(
      run.exchange.reply_headers,
      ElementsAre(std::make_pair(std::string("x-trace"), std::string("t2")),
                  std::make_pair(std::string("Content-Type"), std::string("application/json"))));
}

TEST_F(plugin_webhook, FailedCallsFollowTheFailurePolicy) {
  host_.SetHttpResponder([](const portico_http_call&) {
    return FakeHttpResponse{0, "", "timeout"};
  });
  auto closed = host_.RunFilter("portico.io/Webhook", AuthConfig("Fail"), FakeHttpExchange{});
  EXPECT_EQ(closed.result, PORTICO_FILTER_RESPOND);
  EXPECT_EQ(closed.exchange.respond_status, 500);
  auto open = host_.RunFilter("portico.io/Webhook", AuthConfig("Ignore"), FakeHttpExchange{});
  EXPECT_EQ(open.result, PORTICO_FILTER_CONTINUE);
  EXPECT_FALSE(open.exchange.responded);
  EXPECT_EQ(host_.RunFilter("portico.io/Webhook", "{}", FakeHttpExchange{}).status.code(),
            StatusCode::kInvalidArgument);
}

TEST_F(plugin_webhook, ServiceTargetsAreCalledThroughTheBackend) {
  std::string backend, url;
  host_.SetHttpResponder([&](const portico_http_call& call) {
    backend = std::string(call.backend.ptr, call.backend.len);
    url = std::string(call.url.ptr, call.url.len);
    return FakeHttpResponse{204, "", ""};
  });
  auto run = host_.RunFilter(
      "portico.io/Webhook",
      R"({"target":{"service":{"namespace":"auth","name":"authz","port":8181}},"path":"/v1",)"
      R"("method":"GET","timeoutMs":1000,"failurePolicy":"Fail"})",
      FakeHttpExchange{});
  EXPECT_EQ(run.result, PORTICO_FILTER_CONTINUE);
  EXPECT_EQ(backend, "auth/authz:8181");
  EXPECT_EQ(url, "/v1");
}

}  // namespace
TEST_F(plugin_webhook, SecretHeadersAreResolvedOnTheControllerAsLiterals) {
  const char* spec =
      R"({"service":{"name":"authz","port":9000},"request":{"headers":[{"name":"Authorization",)"
      R"("valueFrom":{"secretKeyRef":{"name":"hook-token","key":"token"}}}]}})";
  ASSERT_TRUE(host_.Apply(kAuthService).ok());
  ProcessOutcome out = Webhook(WebhookWith(spec));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_FALSE(out.synced.has_value());  // never called without its Secret value
  EXPECT_THAT(*out.status_json,
              HasSubstr(R"("reason":"InvalidSecretRef","message":"spec.request.headers[0].)"
                        R"(valueFrom.secretKeyRef: Secret default/hook-token does not exist")"));
  ASSERT_TRUE(host_
                  .Apply(R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"hook-token",)"
                         R"("namespace":"default"},"data":{"token":"QmVhcmVyIHt4fQ=="}})")
                  .ok());
  out = Webhook(WebhookWith(spec));
  ASSERT_TRUE(out.synced.has_value()) << *out.status_json;
  // "Bearer {x}": a literal, never read as a template.
  EXPECT_THAT(*out.synced,
              HasSubstr(R"("headers":[{"name":"authorization","literal":"Bearer {x}"}])"));
}

// TemplatedConfig is a URL Webhook whose path, headers and body are templates.
std::string TemplatedConfig(const std::string& missing) {
  return R"({"target":{"scheme":"http","host":"10.0.0.1","port":9000},)"
         R"("path":"/check/{header.x-tenant}{path}","method":"POST","timeoutMs":250,)"
         R"("failurePolicy":"Fail","forwardHeaders":[],"upstreamHeaders":[],"responseHeaders":[],)"
         R"("request":{"headers":[{"name":"x-original","value":"{method} {path}?{query}"},)"
         R"({"name":"x-user","value":"u={query.user}"},{"name":"x-static","literal":"{raw}"}],)"
         R"("body":"{{\"client\":\"{client_ip}\",\"route\":\"{route}\"}}",)"
         R"("missingValue":")" +
         missing + R"(","missingStatus":403}})";
}

TEST_F(plugin_webhook, CallsAreFilledFromTemplates) {
  std::string url, headers, body;
  host_.SetHttpResponder([&](const portico_http_call& call) {
    url.assign(call.url.ptr, call.url.len);
    headers.assign(call.headers.ptr, call.headers.len);
    body.assign(call.body.ptr, call.body.len);
    return FakeHttpResponse{200, "", ""};
  });
  FakeHttpExchange request;
  request.method = "PUT";
  request.path = "/a b/c?user=al%20ice&x=1";
  request.query = "user=al%20ice&x=1";
  request.headers = {{"X-Tenant", "t 1"}};
  auto run = host_.RunFilter("portico.io/Webhook", TemplatedConfig("Omit"), request);
  EXPECT_EQ(run.result, PORTICO_FILTER_CONTINUE);
  // Substituted values are percent-encoded in the path.
  EXPECT_EQ(url, "http://10.0.0.1:9000/check/t%201/a%20b/c");
  EXPECT_EQ(headers,
            "x-original: PUT /a b/c?user=al%20ice&x=1\r\n"
            "x-user: u=al%20ice\r\n"  // the fake host does not decode
            "x-static: {raw}\r\n");
  EXPECT_EQ(body, R"({"client":"192.0.2.1","route":"default/route"})");

  // An absent value: Omit leaves the header out (and nothing in its place in the path).
  FakeHttpExchange bare;
  bare.path = "/p";
  run = host_.RunFilter("portico.io/Webhook", TemplatedConfig("Omit"), bare);
  EXPECT_EQ(run.result, PORTICO_FILTER_CONTINUE);
  EXPECT_EQ(url, "http://10.0.0.1:9000/check//p");  // the path as written, tenant left out
  EXPECT_EQ(headers.find("x-user"), std::string::npos);
  // Empty sends it empty.
  run = host_.RunFilter("portico.io/Webhook", TemplatedConfig("Empty"), bare);
  EXPECT_NE(headers.find("x-user: u=\r\n"), std::string::npos);
  // Fail answers missingStatus without calling.
  url.clear();
  run = host_.RunFilter("portico.io/Webhook", TemplatedConfig("Fail"), bare);
  EXPECT_EQ(run.result, PORTICO_FILTER_RESPOND);
  EXPECT_EQ(run.exchange.respond_status, 403);
  EXPECT_TRUE(run.calls.empty());
  EXPECT_TRUE(url.empty());
}

TEST_F(plugin_webhook, TargetRefsAttachTheWebhookAsAPolicy) {
  ProcessOutcome out = Webhook(WebhookWith(
      R"({"url":"http://10.0.0.1:9000","targetRefs":[)"
      R"({"group":"gateway.networking.k8s.io","kind":"Gateway","name":"web"},)"
      R"({"group":"gateway.networking.k8s.io","kind":"HTTPRoute","name":"r","sectionName":"a"}]})"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.synced,
              HasSubstr(R"("attach":{"targets":[{"gateway":{"namespace":"default","name":"web"}},)"
                        R"({"route":{"namespace":"default","name":"r"},"rule":"a"}],"created":)"));
  // It goes where its targets go.
  EXPECT_THAT(out.links,
              ::testing::Contains(std::make_pair(
                  sdk::ObjectRef{"gateway.networking.k8s.io", "Gateway", "default", "web"},
                  PORTICO_LINK_PARENT)));
  const sdk::ObjectRef ref{"portico.io", "Webhook", "default", "auth"};
  auto staged =
      host_.Stage("portico.io", "Webhook", {sdk::testing::FakeChange::Upsert(ref, *out.synced)});
  ASSERT_TRUE(staged.ok()) << staged.status;
  EXPECT_THAT(staged.puts.at({PORTICO_FORMAT_FILTER_BINDING, ref.Key()}).json,
              HasSubstr(R"(},"attach":{"targets":[)"));  // lifted for the chain builder

  out = Webhook(WebhookWith(R"({"url":"http://10.0.0.1","targetRefs":[{"group":)"
                            R"("gateway.networking.k8s.io","kind":"Gateway","name":"web",)"
                            R"("sectionName":"http"}]})"));
  EXPECT_THAT(out.status.message(),
              HasSubstr("spec.targetRefs[0].sectionName: is only supported for an HTTPRoute"));
}

TEST_F(plugin_webhook, StagesOneFilterBindingPerWebhook) {
  ProcessOutcome out = Webhook(WebhookWith(R"({"url":"http://10.0.0.1:9000/check"})"));
  ASSERT_TRUE(out.ok()) << out.status;
  const sdk::ObjectRef ref{"portico.io", "Webhook", "default", "auth"};
  auto staged =
      host_.Stage("portico.io", "Webhook", {sdk::testing::FakeChange::Upsert(ref, *out.synced)});
  ASSERT_TRUE(staged.ok()) << staged.status;
  const std::string id = "portico.io/Webhook/default/auth";  // what an ExtensionRef binds to
  auto it = staged.puts.find({PORTICO_FORMAT_FILTER_BINDING, id});
  ASSERT_NE(it, staged.puts.end());
  EXPECT_EQ(it->second.owner, id);
  EXPECT_EQ(it->second.json, R"({"filterType":"portico.io/Webhook","config":)" + *out.synced + "}");
  staged = host_.Stage("portico.io", "Webhook", {sdk::testing::FakeChange::Delete(ref)});
  ASSERT_TRUE(staged.ok()) << staged.status;
  EXPECT_TRUE(staged.puts.empty());
}

}  // namespace portico::plugins::webhook
