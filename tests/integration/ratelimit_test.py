#!/usr/bin/env python3
"""RateLimitPolicy integration test (issue 14, item 2): the SDK's example kind
(sdk/examples/ratelimit), loaded beside the in-tree plugins into a real portico-controller and
portico-gateway on loopback, with an echo backend:

  - per client address: N requests within the interval pass (with RateLimit-Policy / RateLimit
    fields), the N+1th gets 429 with Retry-After, while another client address (127.0.0.2, a
    loopback source) is still served;
  - per header value: a second X-Api-Key still passes when the first one is spent;
  - a route without a policy is never limited;
  - status on the controller: Accepted and ResolvedRefs per target, a policy on a missing route
    TargetNotFound, and of two policies on one route the younger is Conflicted.

Run: ratelimit_test.py --build BUILD_DIR [--plugin PATH/libportico-ratelimit.so] (default: the
example built in the tree, BUILD_DIR/sdk/examples/ratelimit/plugins; tests/sdk_install/run.sh
passes the one it built out of tree against the installed SDK). Waits have deadlines; nothing
sleeps to synchronise; the interval is an hour, so no token comes back during the test.
"""

import argparse
import glob
import http.client
import json
import os
import shutil
import sys
import tempfile
import unittest
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "conformance"))
from portico_procs import (binaries_from_args, Binaries, Controller, Gateway,  # noqa: E402
                           free_port, report_failure, stop_all, wait_until)
from bench_manifests import gateway_yaml, service_yaml  # noqa: E402
from echo_backend import EchoPod, EchoServers  # noqa: E402

BINARIES = None
PLUGIN = None
POLICY_KIND = "RateLimitPolicy.example.portico.io"


def route(name, prefix):
    return ("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n"
            "metadata: {name: %s, namespace: default}\nspec:\n  parentRefs: [{name: web}]\n"
            "  rules:\n  - matches: [{path: {type: PathPrefix, value: '%s'}}]\n"
            "    backendRefs: [{name: echo, port: 80}]\n---\n" % (name, prefix))


def policy(name, target, requests, key, created):
    return ("apiVersion: example.portico.io/v1alpha1\nkind: RateLimitPolicy\n"
            "metadata: {name: %s, namespace: default, creationTimestamp: '%s'}\nspec:\n"
            "  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: %s}]\n"
            "  limit: {requests: %d, interval: 1h}\n  key: %s\n---\n"
            % (name, created, target, requests, key))


def get(port, path, source="127.0.0.1", headers=None):
    """(status, headers dict with lower-case names, body) of GET path from `source`."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5, source_address=(source, 0))
    try:
        conn.request("GET", path, headers=headers or {})
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def conditions(controller, name):
    """{target name: {type: (status, reason, message)}} of policy `name` on the controller."""
    obj = controller.admin.get("/api/v1/objects/%s/default/%s" % (
        urllib.parse.quote(POLICY_KIND, safe=""), name))
    out = {}
    for a in (obj.get("status") or {}).get("ancestors") or []:
        out[a["ancestorRef"]["name"]] = {
            c["type"]: (c["status"], c["reason"], c.get("message", ""))
            for c in a.get("conditions") or []}
    return out


class RateLimitTest(unittest.TestCase):
    controller = gateway = None

    @classmethod
    def setUpClass(cls):
        cls.workdir = tempfile.mkdtemp(prefix="portico-ratelimit-")
        cls.addClassCleanup(cls.cleanup)
        plugins = os.path.join(cls.workdir, "plugins")
        os.makedirs(plugins)
        for so in glob.glob(os.path.join(BINARIES.plugin_dir, "*.so")) + [PLUGIN]:
            shutil.copy(so, plugins)
        binaries = Binaries(BINARIES.controller, BINARIES.gateway, BINARIES.ctl, plugins)
        conf = os.path.join(cls.workdir, "conf")
        os.makedirs(conf)
        cls.echo = EchoServers([EchoPod("127.0.0.1", 0, "default", "echo-1")])
        cls.echo.start()
        cls.port = free_port()
        docs = gateway_yaml(cls.port) + "---\n" + service_yaml("echo", cls.echo.pods[0].port, True)
        docs += "---\n" + route("by-client", "/client") + route("by-key", "/key")
        docs += route("open", "/open")
        docs += policy("per-client", "by-client", 3, "{type: ClientAddress}", "2026-01-01T00:00:00Z")
        docs += policy("per-key", "by-key", 2, "{type: Header, header: X-Api-Key}",
                       "2026-01-01T00:00:00Z")
        # Younger, on the same route as per-client: Conflicted, and never applied.
        docs += policy("late", "by-client", 1, "{type: Route}", "2026-03-01T00:00:00Z")
        docs += policy("dangling", "no-such-route", 1, "{type: Route}", "2026-01-01T00:00:00Z")
        with open(os.path.join(conf, "all.yaml"), "w") as f:
            f.write(docs)
        cls.controller = Controller(binaries, conf, cls.workdir)
        cls.controller.wait_ready()
        cls.gateway = Gateway(binaries, cls.workdir, cls.controller.sync_address(),
                              serve=["default/web"], snapshot=False,
                              extra=["--workers", "2", "--access-log", "off"])
        # Limiting is on once a response carries the policy's fields. The probes spend tokens of
        # their own keys only (127.0.0.9; fresh X-Api-Key values), never the ones tested.
        probes = iter(range(1000000))
        try:
            wait_until(lambda: "ratelimit" in get(cls.port, "/client", "127.0.0.9")[1], 30,
                       "the per-client policy to act on /client")
            wait_until(lambda: "ratelimit" in get(cls.port, "/key", headers={
                "X-Api-Key": "probe-%d" % next(probes)})[1], 30,
                "the per-key policy to act on /key")

            # The younger policy on /client may have applied for a moment (processed before the
            # older one's export existed): the tests start once it is Conflicted and gone from
            # the gateway, and per-client is there.
            def settled():
                late = conditions(cls.controller, "late").get("by-client", {})
                held = cls.gateway.synced()["kinds"].get(POLICY_KIND, {})
                return (late.get("Accepted", ("", ""))[1] == "Conflicted"
                        and "default/late" not in held and "default/per-client" in held)
            wait_until(settled, 30, "policy late Conflicted and off the gateway")
        except AssertionError:
            report_failure(cls.controller, cls.gateway)
            raise

    @classmethod
    def cleanup(cls):
        stop_all(cls, "gateway", "controller")
        if getattr(cls, "echo", None) is not None:
            cls.echo.stop()
        shutil.rmtree(cls.workdir, ignore_errors=True)

    def conditions(self, name):
        return conditions(self.controller, name)

    def test_the_request_past_the_quota_gets_429_while_another_client_is_served(self):
        for i in range(3):
            status, headers, body = get(self.port, "/client/x", "127.0.0.1")
            self.assertEqual(status, 200, body)
            self.assertEqual(json.loads(body)["pod"], "echo-1")
            self.assertEqual(headers.get("ratelimit-policy"), '"per-client";q=3;w=3600')
            self.assertTrue(headers.get("ratelimit", "").startswith('"per-client";r=%d;t=' % (2 - i)),
                            headers)
        status, headers, body = get(self.port, "/client/x", "127.0.0.1")
        self.assertEqual(status, 429, body)
        # One token per 1200 s: the next one is at most that far away, and never "now".
        self.assertGreater(int(headers["retry-after"]), 0, headers)
        self.assertLessEqual(int(headers["retry-after"]), 1200, headers)
        self.assertTrue(headers["ratelimit"].startswith('"per-client";r=0;t='), headers)
        self.assertEqual(headers.get("ratelimit-policy"), '"per-client";q=3;w=3600')
        # Another client key (source address) still has its whole quota.
        status, headers, body = get(self.port, "/client/x", "127.0.0.2")
        self.assertEqual(status, 200, body)
        self.assertTrue(headers["ratelimit"].startswith('"per-client";r=2;'), headers)
        # Still refused: the bucket does not refill within the test.
        self.assertEqual(get(self.port, "/client/x", "127.0.0.1")[0], 429)

    def test_header_values_have_their_own_quota(self):
        for _ in range(2):
            self.assertEqual(get(self.port, "/key", headers={"X-Api-Key": "alice"})[0], 200)
        status, headers, _ = get(self.port, "/key", headers={"X-Api-Key": "alice"})
        self.assertEqual(status, 429)
        self.assertIn("retry-after", headers)
        self.assertEqual(get(self.port, "/key", headers={"X-Api-Key": "bob"})[0], 200)

    def test_a_route_without_a_policy_is_not_limited(self):
        for _ in range(10):
            status, headers, _ = get(self.port, "/open", "127.0.0.1")
            self.assertEqual(status, 200)
            self.assertNotIn("ratelimit", headers)

    def test_status_on_the_policies(self):
        self.assertEqual(self.conditions("per-client")["by-client"]["Accepted"][0], "True")
        self.assertEqual(self.conditions("per-client")["by-client"]["ResolvedRefs"][0], "True")
        late = wait_until(lambda: self.conditions("late").get("by-client"), 10, "late's status")
        self.assertEqual(late["Accepted"][:2], ("False", "Conflicted"))
        self.assertIn("RateLimitPolicy default/per-client is older", late["Accepted"][2])
        dangling = self.conditions("dangling")["no-such-route"]
        self.assertEqual(dangling["Accepted"][:2], ("False", "TargetNotFound"))
        self.assertEqual(dangling["ResolvedRefs"][:2], ("False", "TargetNotFound"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--plugin")
    args, rest = parser.parse_known_args()
    BINARIES, argv = binaries_from_args(rest)
    build = os.path.dirname(BINARIES.plugin_dir)
    PLUGIN = args.plugin or os.path.join(build, "sdk", "examples", "ratelimit", "plugins",
                                         "libportico-ratelimit.so")
    if not os.path.exists(PLUGIN):
        sys.exit("ratelimit_test: no plugin at %s (build target portico-ratelimit)" % PLUGIN)
    unittest.main(argv=argv, verbosity=2)
