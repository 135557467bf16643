#!/usr/bin/env python3
"""Tests of the conformance runner's own pieces, without any portico process.

The echo backend (echo_backend.py) on real loopback sockets (port 0), the HTTP client and the
expectation logic of run_conformance.py (compare, CaseRunner, distribution), the config
rewriting (Gateway addresses, selector EndpointSlices, runtimeSetup), the HTTPS classification
and the skip paths of the runner's command line.

Run: run_conformance_test.py [--conformance-dir DIR] [unittest args]. The data-dependent tests
skip when DIR is absent. Only the Python 3 standard library.
"""

import argparse
import copy
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import types
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import conformance_data  # noqa: E402
import echo_backend  # noqa: E402
import run_conformance as rc  # noqa: E402

CONFORMANCE_DIR = None
NS = "gateway-conformance-infra"


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def has_ipv6_loopback():
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


def case(path="/", expect=None, **request):
    r = {"method": "GET", "host": None, "path": path}
    r.update(request)
    return {"name": "c " + path, "target": {"gateway": NS + "/gw", "port": 80, "scheme": "http"},
            "request": r, "expect": expect or {"status": 200}}


def echo_response(pod="infra-backend-v1-abc-1", namespace=NS, path="/", host="h", method="GET",
                  headers=None, status=200, response_headers=()):
    body = json.dumps({"path": path, "host": host, "method": method, "headers": headers or {},
                       "namespace": namespace, "pod": pod}).encode()
    return rc.Response(status, [("Content-Type", "application/json")] + list(response_headers),
                       body, "http://h" + path)


# ---------------------------------------------------------------------------------------------


class EchoBackendTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        pods = [echo_backend.EchoPod("127.0.0.1", 0, "ns-a", "svc-a-x-1")]
        if has_ipv6_loopback():
            pods.append(echo_backend.EchoPod("::1", 0, "ns-b", "svc-b-y-2"))
        cls.servers = echo_backend.EchoServers(pods).start()
        cls.pod = pods[0]

    @classmethod
    def tearDownClass(cls):
        cls.servers.stop()

    def request(self, method, path, headers=(), body=None, conn=None, pod=None):
        pod = pod or self.pod
        own = conn is None
        conn = conn or http.client.HTTPConnection(pod.host, pod.port, timeout=10)
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for n, v in headers:
            conn.putheader(n, v)
        conn.endheaders(body)
        response = conn.getresponse()
        data = response.read()
        if own:
            conn.close()
        return response, data

    def test_echoes_the_request_as_json(self):
        response, data = self.request("GET", "/p/q?x=1&y=2", [
            ("Host", "example.com:8080"), ("x-header-set", "a"), ("X-HEADER-SET", "b"),
            ("X-Echo-Set-Header", "X-Foo:1, X-Bar: two,X-Foo:3")])
        self.assertEqual(response.status, 200)
        self.assertEqual(response.getheader("Content-Type"), "application/json")
        self.assertEqual(response.getheader("X-Foo"), "1,3")
        self.assertEqual(response.getheader("X-Bar"), "two")
        echo = json.loads(data)
        self.assertEqual(echo["path"], "/p/q?x=1&y=2")
        self.assertEqual(echo["host"], "example.com:8080")
        self.assertEqual(echo["method"], "GET")
        self.assertEqual(echo["proto"], "HTTP/1.1")
        self.assertEqual(echo["namespace"], "ns-a")
        self.assertEqual(echo["pod"], "svc-a-x-1")
        self.assertEqual(echo["httpPort"], str(self.pod.port))
        self.assertEqual(echo["headers"]["X-Header-Set"], ["a", "b"])
        self.assertNotIn("Host", echo["headers"])

    def test_empty_echo_set_header_sets_nothing(self):
        response, _ = self.request("GET", "/", [("Host", "h"), ("X-Echo-Set-Header", "")])
        self.assertEqual(response.status, 200)
        names = {n.lower() for n, _ in response.getheaders()}
        self.assertEqual(names, {"content-type", "x-content-type-options", "content-length"})

    def test_keep_alive_head_and_chunked_bodies(self):
        conn = http.client.HTTPConnection(self.pod.host, self.pod.port, timeout=10)
        try:
            r1, d1 = self.request("HEAD", "/h", [("Host", "h")], conn=conn)
            self.assertEqual((r1.status, d1), (200, b""))
            self.assertGreater(int(r1.getheader("Content-Length")), 0)
            r2, d2 = self.request("POST", "/c", [("Host", "h"), ("Transfer-Encoding", "chunked")],
                                  body=b"5\r\nhello\r\n0\r\n\r\n", conn=conn)
            self.assertEqual(json.loads(d2)["method"], "POST")
            self.assertNotIn("Transfer-Encoding", json.loads(d2)["headers"])
            r3, d3 = self.request("PUT", "/l", [("Host", "h"), ("Content-Length", "3")],
                                  body=b"abc", conn=conn)
            self.assertEqual(json.loads(d3)["path"], "/l")
        finally:
            conn.close()
        self.assertGreaterEqual(self.pod.requests, 3)

    def test_delay(self):
        start = time.monotonic()
        response, _ = self.request("GET", "/?delay=300ms", [("Host", "h")])
        self.assertEqual(response.status, 200)
        self.assertGreaterEqual(time.monotonic() - start, 0.29)
        response, _ = self.request("GET", "/?delay=soon", [("Host", "h")])
        self.assertEqual(response.status, 400)

    @unittest.skipUnless(has_ipv6_loopback(), "no IPv6 loopback")
    def test_ipv6_pod(self):
        pod = self.servers.pods[1]
        _, data = self.request("GET", "/", [("Host", "h")], pod=pod)
        self.assertEqual(json.loads(data)["pod"], "svc-b-y-2")

    def test_bind_failure_names_the_pod(self):
        clash = echo_backend.EchoServers([echo_backend.EchoPod("127.0.0.1", self.pod.port, "n",
                                                               "clash-a-b")])
        with self.assertRaisesRegex(OSError, "clash-a-b"):
            clash.start()

    def test_go_durations_and_header_keys(self):
        d = echo_backend.parse_go_duration
        self.assertEqual(d("1s"), 1.0)
        self.assertAlmostEqual(d("1m30.5s"), 90.5)
        self.assertAlmostEqual(d("250ms"), 0.25)
        self.assertEqual(d("0"), 0.0)
        for bad in ("", "1", "s", "1x", "1s2"):
            with self.assertRaises(ValueError, msg=bad):
                d(bad)
        k = echo_backend.canonical_header_key
        self.assertEqual(k("x-header-SET"), "X-Header-Set")
        self.assertEqual(k("content-length"), "Content-Length")
        self.assertEqual(k("bad header"), "bad header")


# ---------------------------------------------------------------------------------------------


class CompareTest(unittest.TestCase):

    def test_status(self):
        c = case(expect={"status": 404})
        self.assertIsNone(rc.compare(c, rc.Response(404, [], b"", "http://h/")))
        self.assertIn("status 200, want 404", rc.compare(c, echo_response()))
        timeout = case(expect={"status": 504})
        self.assertIsNone(rc.compare(timeout, rc.Response(408, [], b"", "http://h/")))
        any_of = case(expect={"status": 500, "statusAnyOf": [500, 503]})
        self.assertIsNone(rc.compare(any_of, rc.Response(503, [], b"", "http://h/")))

    def test_backend_and_request(self):
        c = case(expect={"status": 200, "backend": "infra-backend-v1", "namespace": NS,
                         "backendRequest": {"method": "GET", "path": "/a?b=c", "host": None,
                                            "headers": {"x-add": "one,two"},
                                            "absentHeaders": ["X-Gone"]}})
        good = echo_response(path="/a?b=c", headers={"X-Add": ["one", "two"]})
        self.assertIsNone(rc.compare(c, good))
        self.assertIn("want infra-backend-v1",
                      rc.compare(c, echo_response(pod="infra-backend-v2-a-b", path="/a?b=c",
                                                  headers={"X-Add": ["one,two"]})))
        self.assertIn("namespace", rc.compare(c, echo_response(namespace="other", path="/a?b=c")))
        self.assertIn("path", rc.compare(c, echo_response(path="/a", headers={"X-Add": ["x"]})))
        self.assertIn("'one', want 'one,two'",
                      rc.compare(c, echo_response(path="/a?b=c", headers={"X-Add": ["one"]})))
        self.assertIn("X-Gone", rc.compare(c, echo_response(
            path="/a?b=c", headers={"X-Add": ["one,two"], "x-gone": ["1"]})))
        not_echo = rc.Response(200, [("Content-Type", "text/plain")], b"hi", "http://h/")
        self.assertIn("not the echo backend", rc.compare(c, not_echo))
        host = case(expect={"status": 200, "backendRequest": {"host": "foo.com"}})
        self.assertIn("host", rc.compare(host, echo_response(host="bar.com")))

    def test_response_headers(self):
        c = case(expect={"status": 200, "responseHeaders": {"X-Set": "v"},
                         "absentResponseHeaders": ["X-Remove"]})
        self.assertIsNone(rc.compare(c, echo_response(response_headers=[("x-set", "v")])))
        self.assertIn("lacks header X-Set", rc.compare(c, echo_response()))
        self.assertIn("X-Remove", rc.compare(c, echo_response(
            response_headers=[("X-Set", "v"), ("X-Remove", "1")])))

    def test_redirect(self):
        def location(loc, status=302, url="http://127.1.0.1/orig"):
            return rc.Response(status, [("Location", loc)], b"", url)
        c = case(expect={"status": 302, "redirect": {"scheme": "http", "host": None,
                                                     "port": None, "path": "/new"}})
        self.assertIsNone(rc.compare(c, location("/new")))
        self.assertIsNone(rc.compare(c, location("http://example.org:80/new?q=1")))
        self.assertIn("port 8080", rc.compare(c, location("http://example.org:8080/new")))
        self.assertIn("path", rc.compare(c, location("/old")))
        self.assertIn("scheme", rc.compare(c, location("https://example.org/new")))
        self.assertIn("without a Location", rc.compare(c, rc.Response(302, [], b"", "http://h/")))
        port = case(expect={"status": 302, "redirect": {"scheme": "https", "host": "example.org",
                                                        "port": 8443, "path": "/p"}})
        self.assertIsNone(rc.compare(port, location("https://example.org:8443/p")))
        self.assertIn("port None", rc.compare(port, location("https://example.org/p")))
        self.assertIn("host", rc.compare(port, location("https://other.org:8443/p")))


# ---------------------------------------------------------------------------------------------


class ClientTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.pod = echo_backend.EchoPod("127.0.0.1", 0, NS, "infra-backend-v1-abc-1")
        cls.servers = echo_backend.EchoServers([cls.pod]).start()

    @classmethod
    def tearDownClass(cls):
        cls.servers.stop()

    def args(self, **overrides):
        values = {"consistency_timeout": 0.5, "min_window": 0.3, "consistency_passes": 3,
                  "request_timeout": 5.0}
        values.update(overrides)
        return types.SimpleNamespace(**values)

    def runner(self, **overrides):
        gateway = types.SimpleNamespace(check_alive=lambda: None)
        return rc.CaseRunner(self.args(**overrides), {NS + "/gw": "127.0.0.1"}, gateway)

    def at(self, c, port):
        c = copy.deepcopy(c)
        c["target"]["port"] = port
        return c

    def test_request_as_upstream_sends_it(self):
        c = self.at(case("/x?y=1", headers={"x-my-header": "v"},
                         echoSetResponseHeaders={"X-Back": "b"}), self.pod.port)
        target = rc.Target(c, {NS + "/gw": "127.0.0.1"})
        response = rc.send_case(c, target, 5)
        echo, why = response.echo()
        self.assertIsNone(why)
        self.assertEqual(echo["host"], "127.0.0.1:%d" % self.pod.port)  # port off the default
        self.assertEqual(echo["headers"]["X-My-Header"], ["v"])
        self.assertEqual(echo["headers"]["X-Echo-Set-Header"], ["X-Back:b"])
        self.assertEqual(response.header("x-back"), "b")
        self.assertEqual(response.url, "http://127.0.0.1:%d/x?y=1" % self.pod.port)
        at80 = rc.Target(case(), {NS + "/gw": "127.0.0.1"})
        self.assertEqual(at80.default_host(), "127.0.0.1")
        named = self.at(case("/", host="foo.com:8080"), self.pod.port)
        self.assertEqual(rc.send_case(named, target, 5).echo()[0]["host"], "foo.com:8080")
        post = self.at(case("/p", method="POST"), self.pod.port)
        self.assertEqual(rc.send_case(post, target, 5).echo()[0]["headers"]["Content-Length"],
                         ["0"])

    def test_passing_case(self):
        c = self.at(case("/ok", {"status": 200, "backend": "infra-backend-v1", "namespace": NS,
                                 "backendRequest": {"method": "GET", "path": "/ok",
                                                    "host": None}}), self.pod.port)
        before = self.pod.requests
        self.assertEqual(self.runner().run(c), (rc.PASS, ""))
        self.assertEqual(self.pod.requests - before, 3)  # three passes in a row

    def test_failing_case_reports_why(self):
        c = self.at(case("/", {"status": 404}), self.pod.port)
        outcome, reason = self.runner().run(c)
        self.assertEqual(outcome, rc.FAIL)
        self.assertIn("status 200, want 404 (answered by %s/infra-backend-v1-abc-1)" % NS, reason)

    def test_connection_refused(self):
        c = self.at(case("/"), closed_port())
        runner = self.runner(consistency_timeout=0.4)
        start = time.monotonic()
        outcome, reason = runner.run(c)
        self.assertEqual(outcome, rc.FAIL)
        self.assertIn("connection refused", reason)
        self.assertIn("data plane", reason)
        self.assertGreaterEqual(time.monotonic() - start, 0.3)
        start = time.monotonic()
        outcome, reason = runner.run(c)  # the same target: one more try only
        self.assertEqual(outcome, rc.FAIL)
        self.assertLess(time.monotonic() - start, 0.3)

    def test_unknown_gateway_and_https(self):
        c = case("/")
        c["target"]["gateway"] = "x/y"
        self.assertIn("not among", self.runner().run(c)[1])
        c = case("/")
        c["target"]["scheme"] = "https"
        self.assertEqual(self.runner().run(c)[0], rc.SKIP)

    def test_distribution(self):
        spec = {"totalRequests": 100, "concurrency": 4, "tolerance": 0.05, "maxAttempts": 2,
                "expectedWeights": {"infra-backend-v1": 0.7, "infra-backend-v2": 0.3,
                                    "infra-backend-v3": 0.0}}
        c = case("/", {"status": 200, "namespace": NS})
        target = rc.Target(c, {NS + "/gw": "127.0.0.1"})
        original = rc.send_case
        try:
            for shares, ok in (({"v1": 70, "v2": 30}, True), ({"v1": 100}, False),
                               ({"v1": 60, "v2": 30, "v3": 10}, False)):
                pods = [p for p, n in shares.items() for _ in range(n)]
                counter = iter(range(10 ** 6))

                def fake(_case, _target, _timeout, _extra=(), pods=pods, counter=counter):
                    pod = pods[next(counter) % len(pods)]
                    return echo_response(pod="infra-backend-%s-a-b" % pod)
                rc.send_case = fake
                why = self.runner().distribution(c, target, spec)
                self.assertEqual(why is None, ok, why)
        finally:
            rc.send_case = original

    def test_repeat_needs_the_backend_header(self):
        c = self.at(case("/", {"status": 200}, headers={"Backend": "infra-backend-v1"}),
                    self.pod.port)
        target = rc.Target(c, {NS + "/gw": "127.0.0.1"})
        spec = {"count": 3, "assertion": "backendHeaderMatchesPod", "header": "Backend"}
        self.assertIsNone(self.runner().repeat(c, target, spec))
        c["request"]["headers"] = {"Backend": "infra-backend-v2"}
        self.assertIn("answered by pod", self.runner().repeat(c, target, spec))
        c["request"]["headers"] = {}
        self.assertIn("received 0", self.runner().repeat(c, target, spec))


# ---------------------------------------------------------------------------------------------


BASE = {
    "manifests": [
        {"kind": "Gateway", "metadata": {"namespace": NS, "name": "a"},
         "spec": {"gatewayClassName": "{GATEWAY_CLASS_NAME}", "listeners": []}},
        {"kind": "Service", "metadata": {"namespace": NS, "name": "svc"},
         "spec": {"selector": {"app": "one"},
                  "ports": [{"name": "first", "port": 8080, "targetPort": 3000},
                            {"port": 9090, "targetPort": "named"}]}},
        {"kind": "Service", "metadata": {"namespace": NS, "name": "bare"},
         "spec": {"ports": [{"port": 8080, "targetPort": 3000}]}},
    ],
    "echoBackends": [
        {"namespace": NS, "name": "one", "replicas": 2, "podLabels": {"app": "one"}},
        {"namespace": "other", "name": "two", "replicas": 1, "podLabels": {"app": "one"}},
    ],
}


class PlanTest(unittest.TestCase):

    def test_pods_and_gateway_addresses(self):
        pods = rc.plan_pods(BASE)
        self.assertEqual([(p.v4, p.v6) for p in pods], [
            ("127.0.2.1", "fd00:2::1"), ("127.0.2.2", "fd00:2::2"), ("127.0.3.1", "fd00:3::1")])
        self.assertTrue(pods[0].name.startswith("one-"))
        self.assertEqual(pods[0].name.rsplit("-", 2)[0], "one")
        test = {"manifests": [{"kind": "Gateway", "metadata": {"namespace": NS, "name": "b"}},
                              {"kind": "Gateway", "metadata": {"namespace": NS, "name": "a"}}]}
        self.assertEqual(rc.gateway_addresses(BASE, test, 3),
                         {NS + "/a": "127.1.3.1", NS + "/b": "127.1.3.2"})

    def test_selector_endpoint_slices(self):
        slices = rc.selector_endpoint_slices(BASE, {"manifests": []}, rc.plan_pods(BASE))
        self.assertEqual(len(slices), 1)  # "bare" has no selector
        s = slices[0]
        self.assertEqual(s["metadata"]["labels"], {"kubernetes.io/service-name": "svc"})
        self.assertEqual(s["ports"], [{"name": "first", "port": 3000, "protocol": "TCP"}])
        self.assertEqual([e["addresses"] for e in s["endpoints"]],
                         [["127.0.2.1"], ["127.0.2.2"]])  # not the pod in another namespace

    def test_write_config(self):
        conf = tempfile.mkdtemp(prefix="conformance-runner-test-")
        try:
            test = {"manifests": [
                {"kind": "EndpointSlice", "addressType": "IPv6",
                 "metadata": {"namespace": NS, "name": "manual"}}],
                "runtimeSetup": [{"op": "populateEndpointSlices",
                                  "endpointSlices": [NS + "/manual"]}]}
            addresses = rc.gateway_addresses(BASE, test, 0)
            conformance_data.write_config(
                conf, BASE, [], test, endpoints={"IPv4": ["127.0.2.1"], "IPv6": ["fd00:2::1"]},
                rewrite=rc.give_gateways_addresses(addresses),
                extra=rc.selector_endpoint_slices(BASE, test, rc.plan_pods(BASE)))
            objects = {}
            for name in os.listdir(conf):
                with open(os.path.join(conf, name)) as f:
                    objects[name] = json.load(f)
            gw = objects["10-base-000-Gateway-%s-a.json" % NS]
            self.assertEqual(gw["spec"]["gatewayClassName"], "portico")
            self.assertEqual(gw["spec"]["addresses"], [{"type": "IPAddress", "value": "127.1.0.1"}])
            manual = objects["30-test-000-EndpointSlice-%s-manual.json" % NS]
            self.assertEqual(manual["endpoints"][0]["addresses"], ["fd00:2::1"])
            self.assertIn("40-local-000-EndpointSlice-%s-svc-conformance-ipv4.json" % NS, objects)
            self.assertEqual(objects["00-class-000-GatewayClass-portico.json"]["spec"],
                             {"controllerName": "portico.io/gateway-controller"})
        finally:
            shutil.rmtree(conf)

    def test_https_reason(self):
        https_case = case()
        https_case["target"]["scheme"] = "https"
        self.assertIsNone(rc.https_reason({"cases": [case()]}))
        self.assertIn("1 of its 2 cases", rc.https_reason({"cases": [case(), https_case]}))
        self.assertIn("1 of its 1 cases", rc.https_reason(
            {"cases": [], "followUps": [{"cases": [https_case]}]}))
        listener = {"kind": "Gateway", "metadata": {"name": "g"},
                    "spec": {"listeners": [{"name": "l", "protocol": "HTTPS"}]}}
        self.assertIn("HTTPS listener l", rc.https_reason({"manifests": [listener]}))

    def test_real_base(self):
        if not CONFORMANCE_DIR or not os.path.isdir(CONFORMANCE_DIR):
            self.skipTest("conformance data absent")
        base = conformance_data.load_json(os.path.join(CONFORMANCE_DIR, "_base.json"))
        pods = rc.plan_pods(base)
        v1 = [p.v4 for p in pods if p.deployment == "infra-backend-v1"]
        self.assertEqual(v1, conformance_data.DEFAULT_ENDPOINTS["IPv4"])
        slices = {s["metadata"]["name"]: s for s in rc.selector_endpoint_slices(
            base, {"manifests": []}, pods)}
        self.assertEqual(len(slices), 6)
        unnamed = slices["infra-backend-v2-conformance-ipv4"]["ports"]
        self.assertEqual(unnamed, [{"name": "", "port": 3000, "protocol": "TCP"}])
        addresses = rc.gateway_addresses(base, {"manifests": []}, 0)
        self.assertEqual(addresses[NS + "/same-namespace"], "127.1.0.1")
        self.assertEqual(len(set(addresses.values())), len(addresses))


# ---------------------------------------------------------------------------------------------


class SkipPathTest(unittest.TestCase):

    def run_runner(self, directory, *extra):
        argv = [sys.executable, os.path.join(HERE, "run_conformance.py"), "--controller",
                "/nonexistent/portico-controller", "--gateway", "/nonexistent/portico-gateway",
                "--plugin-dir", "/nonexistent", "--conformance-dir", directory] + list(extra)
        return subprocess.run(argv, capture_output=True, text=True, timeout=60)

    def test_absent_directory_skips(self):
        done = self.run_runner("/nonexistent/conformance")
        self.assertEqual(done.returncode, 77, done.stdout + done.stderr)
        self.assertIn("SKIP: conformance data not found", done.stdout)

    def test_https_files_are_skipped_with_a_reason(self):
        directory = tempfile.mkdtemp(prefix="conformance-runner-test-")
        try:
            base = {"manifests": [], "echoBackends": [
                {"namespace": NS, "name": "echo", "replicas": 1, "podLabels": {"app": "e"}}]}
            https_case = case()
            https_case["target"]["scheme"] = "https"
            for name, content in (("_base.json", base), ("index.json", {}),
                                  ("tls-only.json", {"manifests": [], "cases": [https_case]})):
                with open(os.path.join(directory, name), "w") as f:
                    json.dump(content, f)
            done = self.run_runner(directory)
            out = done.stdout + done.stderr
            if done.returncode == 77:  # no network namespace here (and not root)
                self.assertIn("unshare -rn", out)
                return
            self.assertEqual(done.returncode, 0, out)
            self.assertIn("SKIP tls-only.json: HTTPS is out of scope here (TLS issue): 1 of its "
                          "1 cases are HTTPS", out)
            self.assertTrue(out.rstrip().endswith("0 passed, 0 failed, 1 skipped"), out)
        finally:
            shutil.rmtree(directory)


def main():
    global CONFORMANCE_DIR
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--conformance-dir")
    args, rest = parser.parse_known_args()
    CONFORMANCE_DIR = args.conformance_dir
    unittest.main(argv=[sys.argv[0]] + rest)


if __name__ == "__main__":
    main()
