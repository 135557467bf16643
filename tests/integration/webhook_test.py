#!/usr/bin/env python3
"""Webhook integration tests (issue 12, "Show"): a real portico-controller and portico-gateway,
an echo backend and a real webhook server process (webhook_server.py) on loopback. HTTPRoute
rules bind Webhooks through ExtensionRef filters; the gateway's Webhook filter (a plugin filter,
run through the one filter chain) calls the webhook server for each request:

  - allow: a 2xx answer lets the request through, with the listed client headers forwarded to
    the webhook, the listed answer headers copied onto the upstream request and the response;
  - deny: any other answer goes back to the client as it is (status, listed headers, body) and
    the backend is never reached;
  - a webhook slower than its timeout: 500 with failurePolicy Fail, the backend with Ignore;
  - a Service target (endpoints from the backend table) works like a URL;
  - a client that disconnects while its call is pending: the call is cancelled and the gateway's
    in-flight counter returns to zero;
  - a rule naming a Webhook that does not exist answers 500 and the route says ResolvedRefs
    False; an https Webhook is refused on its status (not served in the clear);
  - a plugin filter fault (a webhook server that is gone) answers for its own rule only: the
    other routes keep serving.

Run: webhook_test.py --build BUILD_DIR. Waits have deadlines; nothing sleeps to synchronise.
"""

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "conformance"))
from portico_procs import (binaries_from_args, Controller, Gateway, free_port,  # noqa: E402
                           report_failure, stop_all, wait_until)
from bench_manifests import gateway_yaml  # noqa: E402
from echo_backend import EchoPod, EchoServers  # noqa: E402

BINARIES = None

def service(name, port, target):
    """A Service `name`:`port` whose endpoint is 127.0.0.1:`target`."""
    return ("apiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: default}\n"
            "spec: {ports: [{name: http, port: %d, targetPort: %d}]}\n---\n"
            "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\n"
            "metadata: {name: %s, namespace: default, labels: {kubernetes.io/service-name: %s}}\n"
            "addressType: IPv4\nports: [{name: http, port: %d}]\n"
            "endpoints: [{addresses: [127.0.0.1], conditions: {ready: true}}]\n---\n"
            % (name, port, target, name, name, target))


def webhook(name, target, path, failure="Fail", timeout="1s", extra=""):
    return ("apiVersion: portico.io/v1alpha1\nkind: Webhook\n"
            "metadata: {name: %s, namespace: default}\nspec:\n  %s\n  path: %s\n"
            "  timeout: %s\n  failurePolicy: %s\n%s---\n"
            % (name, target, path, timeout, failure, extra))


def route(name, prefix, webhook_name):
    return ("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n"
            "metadata: {name: %s, namespace: default}\nspec:\n  parentRefs: [{name: web}]\n"
            "  rules:\n  - matches: [{path: {type: PathPrefix, value: '%s'}}]\n"
            "    filters:\n    - type: ExtensionRef\n"
            "      extensionRef: {group: portico.io, kind: Webhook, name: %s}\n"
            "    backendRefs: [{name: echo, port: 80}]\n---\n" % (name, prefix, webhook_name))


def request(url, headers=None, timeout=5):
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


class WebhookServer:
    def __init__(self, rules):
        argv = [sys.executable, os.path.join(HERE, "webhook_server.py")]
        for r in rules:
            argv += ["--rule", r]
        self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        self.port = int(line.split()[1])

    def calls(self):
        with urllib.request.urlopen("http://127.0.0.1:%d/__calls" % self.port, timeout=5) as r:
            return json.loads(r.read())

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


class WebhookTest(unittest.TestCase):
    gateway = controller = None

    @classmethod
    def setUpClass(cls):
        cls.workdir = tempfile.mkdtemp(prefix="portico-webhook-")
        cls.conf = os.path.join(cls.workdir, "conf")
        os.makedirs(cls.conf)
        cls.echo = EchoServers([EchoPod("127.0.0.1", 0, "default", "echo-1")])
        cls.echo.start()
        cls.hook = WebhookServer([
            "/allow=200,header=X-User:alice,header=X-Trace:t-allow,header=X-Secret:no",
            "/deny=401,header=WWW-Authenticate:Bearer realm=x,header=X-Trace:t-deny,"
            "body=denied by policy",
            "/slow=200,delay=3",
            "/tmpl/=200",
        ])
        # The flaky target has a server of its own: no kept-alive connection of the other
        # Webhooks' calls is reused (and replayed once when reset) for its first call.
        cls.flaky = WebhookServer(["/flaky=200,fail_first=3"])
        cls.port = free_port()
        url = "url: http://127.0.0.1:%d" % cls.hook.port
        lists = ("  forwardHeaders: [authorization]\n  upstreamHeaders: [x-user]\n"
                 "  responseHeaders: [x-trace, www-authenticate]\n")
        docs = gateway_yaml(cls.port) + "---\n"
        docs += service("echo", 80, cls.echo.pods[0].port) + service("authz", 8181, cls.hook.port)
        docs += webhook("allow", url, "/allow", extra=lists)
        docs += webhook("deny", url, "/deny", extra=lists)
        docs += webhook("slow-closed", url, "/slow", "Fail", "200ms")
        docs += webhook("slow-open", url, "/slow", "Ignore", "200ms")
        docs += webhook("slow-long", url, "/slow", "Fail", "10s")
        docs += webhook("by-service", "service: {name: authz, port: 8181}", "/allow")
        docs += webhook("tls", "url: https://127.0.0.1:%d" % cls.hook.port, "/allow")
        docs += webhook("flaky", "url: http://127.0.0.1:%d" % cls.flaky.port, "/flaky", "Fail", "1s",
                        "  health: {consecutiveFailures: 2, unhealthyFor: 400ms}\n")
        docs += webhook("templated", url, "/tmpl/{header.x-tenant}", "Fail", "1s",
                        "  request:\n    headers:\n"
                        "    - {name: x-original, value: '{method} {path}'}\n"
                        "    - name: authorization\n"
                        "      valueFrom: {secretKeyRef: {name: hook-secret, key: token}}\n"
                        "    body: '{{\"route\": \"{route}\", \"user\": \"{query.user}\"}}'\n"
                        "    missingValue: Fail\n    missingStatus: 403\n")
        # Policy attachment: a denying Webhook attached by targetRefs to one route, and to one
        # named rule of another.
        docs += webhook("attached", url, "/deny", "Fail", "1s",
                        "  targetRefs:\n"
                        "  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r-att}\n"
                        "  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r-rules,"
                        " sectionName: guarded}\n")
        docs += ("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n"
                 "metadata: {name: r-att, namespace: default}\nspec:\n  parentRefs: [{name: web}]\n"
                 "  rules:\n  - matches: [{path: {type: PathPrefix, value: /att}}]\n"
                 "    backendRefs: [{name: echo, port: 80}]\n---\n"
                 "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n"
                 "metadata: {name: r-rules, namespace: default}\nspec:\n  parentRefs: [{name: web}]\n"
                 "  rules:\n  - name: guarded\n    matches: [{path: {type: PathPrefix, value: /ga}}]\n"
                 "    backendRefs: [{name: echo, port: 80}]\n"
                 "  - name: open\n    matches: [{path: {type: PathPrefix, value: /go}}]\n"
                 "    backendRefs: [{name: echo, port: 80}]\n---\n")
        docs += ("apiVersion: v1\nkind: Secret\nmetadata: {name: hook-secret, namespace: default}\n"
                 "data: {token: %s}\n---\n" % base64.b64encode(b"Bearer s3cret").decode())
        for name, prefix, hook in [("r-allow", "/a", "allow"), ("r-deny", "/d", "deny"),
                                   ("r-sc", "/sc", "slow-closed"), ("r-so", "/so", "slow-open"),
                                   ("r-long", "/long", "slow-long"),
                                   ("r-svc", "/svc", "by-service"), ("r-tls", "/tls", "tls"),
                                   ("r-missing", "/missing", "nothing-here"),
                                   ("r-flaky", "/f", "flaky"), ("r-tmpl", "/t", "templated")]:
            docs += route(name, prefix, hook)
        with open(os.path.join(cls.conf, "all.yaml"), "w") as f:
            f.write(docs)
        cls.addClassCleanup(cls.cleanup)  # also when the rest of setUpClass fails
        cls.controller = Controller(BINARIES, cls.conf, cls.workdir)
        cls.controller.wait_ready()
        cls.gateway = Gateway(BINARIES, cls.workdir, cls.controller.sync_address(),
                              serve=["default/web"], snapshot=False,
                              extra=["--workers", "2", "--access-log", "off"])
        cls.url = "http://127.0.0.1:%d" % cls.port
        try:
            wait_until(lambda: request(cls.url + "/a")[0] == 200, 20, "the allow route to serve")
        except AssertionError:
            report_failure(cls.controller, cls.gateway)
            raise

    @classmethod
    def cleanup(cls):
        stop_all(cls, "gateway", "controller")
        cls.hook.stop()
        cls.flaky.stop()
        cls.echo.stop()
        shutil.rmtree(cls.workdir, ignore_errors=True)

    def dataplane(self):
        return self.gateway.api("/api/v1/dataplane")

    def test_allowed_request_reaches_the_backend_with_the_webhooks_headers(self):
        status, headers, body = request(self.url + "/a/x?q=1",
                                        {"Authorization": "Bearer tok", "Cookie": "c=1"})
        self.assertEqual(status, 200, body)
        echoed = json.loads(body)
        self.assertEqual(echoed["headers"].get("X-User"), ["alice"], echoed["headers"])
        self.assertNotIn("X-Secret", echoed["headers"])  # not in upstreamHeaders
        self.assertEqual(headers.get("X-Trace"), "t-allow")  # responseHeaders, on the response
        call = [c for c in self.hook.calls() if c["path"] == "/allow"][-1]
        self.assertEqual(call["method"], "POST")
        self.assertEqual(call["headers"].get("authorization"), "Bearer tok")
        self.assertNotIn("cookie", call["headers"])  # only forwardHeaders

    def test_denied_request_gets_the_webhooks_answer(self):
        status, headers, body = request(self.url + "/d")
        self.assertEqual(status, 401)
        self.assertEqual(body, b"denied by policy")
        self.assertEqual(headers.get("WWW-Authenticate"), "Bearer realm=x")
        self.assertEqual(headers.get("X-Trace"), "t-deny")
        self.assertEqual(self.echo.pods[0].recorded("/d"), 0)  # the backend never saw it
        # The allowed route's requests do reach it (the count above can move).
        self.assertEqual(request(self.url + "/a/counted")[0], 200)
        self.assertEqual(self.echo.pods[0].recorded("/a/counted"), 1)

    def test_a_slow_webhook_fails_closed_or_open(self):
        self.assertEqual(request(self.url + "/sc")[0], 500)
        status, _, body = request(self.url + "/so")
        self.assertEqual(status, 200, body)
        self.assertIn(b'"path": "/so"', body)

    def test_a_service_target_is_balanced_like_a_backend(self):
        status, _, body = request(self.url + "/svc")
        self.assertEqual(status, 200, body)

    def test_a_disconnected_client_cancels_its_call(self):
        before = self.dataplane()
        s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        s.sendall(b"GET /long HTTP/1.1\r\nHost: a\r\n\r\n")
        wait_until(lambda: self.dataplane()["filterCallsInFlight"] == 1, 10,
                   "the webhook call to be in flight")
        s.close()
        wait_until(lambda: self.dataplane()["filterCallsInFlight"] == 0, 10,
                   "the cancelled call to leave the in-flight count")
        after = self.dataplane()
        self.assertGreater(after["filterCallsCancelled"], before["filterCallsCancelled"])

    def test_templates_fill_the_call_and_a_secret_header_is_sent(self):
        status, _, body = request(self.url + "/t/x?user=al", {"X-Tenant": "acme"})
        self.assertEqual(status, 200, body)
        call = [c for c in self.hook.calls() if c["path"].startswith("/tmpl/")][-1]
        self.assertEqual(call["path"], "/tmpl/acme")
        self.assertEqual(call["headers"].get("x-original"), "GET /t/x")
        self.assertEqual(call["headers"].get("authorization"), "Bearer s3cret")
        self.assertEqual(json.loads(call["body"]), {"route": "default/r-tmpl", "user": "al"})
        # missingValue Fail: without the header the request is answered 403, nothing is called.
        before = len(self.hook.calls())
        self.assertEqual(request(self.url + "/t/x")[0], 403)
        self.assertEqual(len(self.hook.calls()), before)

    def test_failing_targets_are_marked_unhealthy_until_one_call_succeeds(self):
        def flaky_calls():
            return sum(1 for c in self.flaky.calls() if c["path"] == "/flaky")
        self.assertEqual(request(self.url + "/f")[0], 500)  # reset: failurePolicy Fail
        self.assertEqual(request(self.url + "/f")[0], 500)  # second failure: unhealthy now
        self.assertEqual(flaky_calls(), 2)
        self.assertEqual(request(self.url + "/f")[0], 500)  # not even called
        self.assertEqual(flaky_calls(), 2)
        # After unhealthyFor the target is called again: one more reset, then it answers and
        # the count is reset.
        wait_until(lambda: request(self.url + "/f")[0] == 200, 10, "the webhook to recover")
        self.assertEqual(flaky_calls(), 4)
        self.assertEqual(request(self.url + "/f")[0], 200)

    def test_webhooks_attached_by_target_refs_run_for_their_targets(self):
        status, headers, body = request(self.url + "/att")
        self.assertEqual(status, 401)  # the attached Webhook denies: no ExtensionRef needed
        self.assertEqual(body, b"denied by policy")
        self.assertEqual(request(self.url + "/ga")[0], 401)  # the rule it names
        self.assertEqual(request(self.url + "/go")[0], 200)  # the route's other rule
        self.assertEqual(request(self.url + "/a")[0], 200)   # routes it does not target

    def test_a_bad_template_is_refused_when_applied_naming_the_field(self):
        self.controller.apply(webhook("broken", "url: http://127.0.0.1:%d" % self.hook.port,
                                      "/check/{nope}"), wait=True)

        def error():
            obj = self.controller.admin.get("/api/v1/objects/webhooks/default/broken")
            return obj.get("portico", {}).get("error", "")
        wait_until(error, 10, "the processing error of Webhook default/broken")
        self.assertIn("spec.path: unknown template variable {nope}", error())
        self.assertEqual(request(self.url + "/a")[0], 200)  # everything else keeps serving

    def test_missing_and_unsupported_webhooks_answer_500_and_say_why(self):
        self.assertEqual(request(self.url + "/missing")[0], 500)
        self.assertEqual(request(self.url + "/tls")[0], 500)
        tls = self.controller.admin.get("/api/v1/objects/webhooks/default/tls")
        conditions = {c["type"]: c for c in tls["status"]["conditions"]}
        self.assertEqual(conditions["Accepted"]["status"], "False")
        self.assertIn("https", conditions["Accepted"]["message"])
        missing = self.controller.admin.get("/api/v1/objects/httproutes/default/r-missing")
        parent = missing["status"]["parents"][0]
        resolved = {c["type"]: c for c in parent["conditions"]}["ResolvedRefs"]
        self.assertEqual(resolved["status"], "False")
        self.assertIn("nothing-here", resolved["message"])
        # The other rules keep serving.
        self.assertEqual(request(self.url + "/a")[0], 200)


def main():
    global BINARIES
    BINARIES, argv = binaries_from_args()
    unittest.main(argv=argv, verbosity=2)


if __name__ == "__main__":
    main()
