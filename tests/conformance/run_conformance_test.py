#!/usr/bin/env python3
"""Tests of the conformance runner's own pieces, without any portico process.

The echo backend (echo_backend.py) on real loopback sockets (port 0: request record, /retry/,
/ws), the HTTP and WebSocket client and the expectation logic of run_conformance.py (compare,
CaseRunner, distribution, uniqueQueryParam, mirroredTo, mirrorDistribution), the config
rewriting (Gateway addresses, selector EndpointSlices, runtimeSetup), base layering, the
status checks and actions of extended/README.md against a fake admin API (conformance_data),
the https client (TLS echo pods with generated material: trust, Go's name rules, client
certificates, clientCertificateRequested, failure "connection"), failure "httpStatus", H2 cases
over HTTP/1.1, the unsupported-file classification and the skip/not-run paths of the command
line.

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
import ssl
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


def https_case(path="/", expect=None, sni="example.org", **request):
    c = case(path, expect, sni=sni, host=request.pop("host", "example.org"), **request)
    c["target"].update(port=443, scheme="https")
    return c


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

    def test_request_record(self):
        before = time.monotonic()
        self.request("GET", "/rec?id=1", [("Host", "h")])
        self.request("GET", "/rec?id=1", [("Host", "h")])
        self.assertEqual(self.pod.recorded("/rec?id=1"), 2)
        self.assertEqual(self.pod.recorded("/rec?id=1", since=time.monotonic()), 0)
        self.assertEqual(self.pod.recorded("/rec"), 0)  # the exact URI only
        self.assertEqual(self.servers.recorded("/rec?id=1", "svc-a", "ns-a", since=before), 2)
        self.assertEqual(self.servers.recorded("/rec?id=1", "svc-a", "ns-b"), 0)

    def test_retry_endpoint(self):
        response, data = self.request("GET", "/retry/x?succeedAfter=1", [("Host", "h")])
        self.assertEqual((response.status, data), (400, b"uuid is required\n"))
        response, _ = self.request("GET", "/retry/x?uuid=u0&succeedAfter=two", [("Host", "h")])
        self.assertEqual(response.status, 400)
        uri = "/retry/x?uuid=u1&succeedAfter=2&responseCode=503"
        for _ in range(2):
            response, data = self.request("GET", uri, [("Host", "h")])
            self.assertEqual((response.status, data), (503, b""))
            self.assertIsNone(response.getheader("Content-Type"))  # no JSON: not the echo's
        self.assertEqual(self.pod.recorded(uri), 0)  # failing attempts are not recorded
        response, data = self.request("GET", uri, [("Host", "h")])
        self.assertEqual((response.status, json.loads(data)["path"]), (200, uri))
        self.assertEqual(self.pod.recorded(uri), 1)
        start = time.monotonic()
        response, _ = self.request("GET", "/retry/x?uuid=u2&succeedAfter=1&delayRetry=200ms"
                                   "&responseCode=500", [("Host", "h")])
        self.assertEqual(response.status, 500)
        self.assertGreaterEqual(time.monotonic() - start, 0.19)

    def test_retry_without_response_code_resets(self):
        uri = "/retry/x?uuid=reset&succeedAfter=1"
        with self.assertRaises((ConnectionResetError, http.client.RemoteDisconnected)):
            self.request("GET", uri, [("Host", "h")])
        response, _ = self.request("GET", uri, [("Host", "h")])
        self.assertEqual(response.status, 200)

    def test_websocket_handshake_rules(self):
        upgrade = [("Host", "h"), ("Upgrade", "websocket"), ("Connection", "Upgrade"),
                   ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
                   ("Sec-WebSocket-Version", "13")]
        self.assertEqual(self.request("GET", "/ws", [("Host", "h")])[0].status, 400)
        self.assertEqual(self.request("GET", "/ws", upgrade)[0].status, 403)  # no Origin
        self.assertEqual(self.request("GET", "/ws", upgrade + [("Origin", "bad\x01")])[0].status,
                         403)
        self.assertTrue(echo_backend.origin_parses("ws://gateway/<Go test name>"))
        self.assertTrue(echo_backend.origin_parses("/local"))
        self.assertFalse(echo_backend.origin_parses("gateway"))
        self.assertEqual(echo_backend.websocket_accept("dGhlIHNhbXBsZSBub25jZQ=="),
                         "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")  # RFC 6455 section 1.3

    def test_websocket_frames(self):
        for payload, mask in ((b"", True), (b"x" * 125, False), (b"y" * 70000, True)):
            frame = echo_backend.websocket_frame(echo_backend.WS_BINARY, payload, mask)
            stream = iter([frame])
            buffer = bytearray()

            def read_exactly(n):
                while len(buffer) < n:
                    buffer.extend(next(stream))
                out = bytes(buffer[:n])
                del buffer[:n]
                return out
            self.assertEqual(echo_backend.parse_websocket_frame(read_exactly),
                             (True, echo_backend.WS_BINARY, payload))

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

    def test_answers_that_are_not_the_echo_backends(self):
        # A CORS preflight the gateway answers itself (extended/README.md section 3).
        c = case("/cors", {"statusAnyOf": [200, 204], "backend": None, "namespace": "",
                           "backendRequest": {"method": "OPTIONS", "path": "", "host": None},
                           "responseHeadersAnyOf": {"access-control-allow-methods":
                                                    ["GET, OPTIONS", "OPTIONS, GET"]},
                           "ignoreWhitespace": True}, method="OPTIONS")
        own = rc.Response(204, [("Access-Control-Allow-Methods", "OPTIONS,GET")], b"", "u")
        self.assertIsNone(rc.compare(c, own))
        forwarded = echo_response(method="OPTIONS", response_headers=[
            ("Access-Control-Allow-Methods", "GET, OPTIONS")])
        self.assertIn("want an answer that is not the echo's", rc.compare(c, forwarded))
        wrong = rc.Response(200, [("Access-Control-Allow-Methods", "PUT")], b"", "u")
        self.assertIn("want one of ['GET, OPTIONS', 'OPTIONS, GET']", rc.compare(c, wrong))
        self.assertIn("lacks header", rc.compare(c, rc.Response(204, [], b"", "u")))
        # A case that wants the echo backend names what answered instead.
        echo = case("/", {"status": 200, "backend": "infra-backend-v1"})
        why = rc.compare(echo, rc.Response(200, [("Content-Type", "text/html")], b"<p>", "u"))
        self.assertIn("answered by pod ''", why)
        self.assertIn("not the echo backend's answer (Content-Type 'text/html'", why)

    def test_response_headers_any_of(self):
        c = case(expect={"status": 200, "responseHeadersAnyOf": {"X-O": ["a", "*"]}})
        self.assertIsNone(rc.compare(c, echo_response(response_headers=[("x-o", "*")])))
        self.assertIn("want one of", rc.compare(c, echo_response(response_headers=[("X-O", "b")])))
        spaced = case(expect={"status": 200, "responseHeaders": {"X-L": "a, b"}})
        self.assertIn("is 'a,b'", rc.compare(spaced, echo_response(response_headers=[
            ("X-L", "a,b")])))
        spaced["expect"]["ignoreWhitespace"] = True
        self.assertIsNone(rc.compare(spaced, echo_response(response_headers=[("X-L", "a,b")])))

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
                  "request_timeout": 5.0, "mirror_window": 0.3}
        values.update(overrides)
        return types.SimpleNamespace(**values)

    def runner(self, echo=None, **overrides):
        gateway = types.SimpleNamespace(check_alive=lambda: None)
        return rc.CaseRunner(self.args(**overrides), {NS + "/gw": "127.0.0.1"}, gateway,
                             echo or self.servers)

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

    def test_unknown_gateway_and_unsupported_cases(self):
        c = case("/")
        c["target"]["gateway"] = "x/y"
        self.assertIn("not among", self.runner().run(c)[1])
        for scheme, why in (("grpc", "no gRPC client"), ("udp", "UDPRoute"),
                            ("tls", "TLSRoute")):
            c = case("/")
            c["target"]["scheme"] = scheme
            outcome, reason = self.runner().run(c)
            self.assertEqual(outcome, rc.FAIL)  # never skipped
            self.assertIn(why, reason)
        h2c = case("/", protocol="H2C_PRIOR_KNOWLEDGE")
        self.assertIn("H2C_PRIOR_KNOWLEDGE", self.runner().run(h2c)[1])
        h2 = https_case(protocol="H2")
        self.assertEqual(self.runner().run(h2), (rc.FAIL, rc.H2_REASON))
        self.assertIn("HTTP/2 is another issue", rc.H2_REASON)
        for scheme, failure in (("http", "connection"), ("https", "httpStatus"),
                                ("tls", "connectionRejected"), ("http", "grpcStatus")):
            c = case("/", {"failure": failure})
            c["target"]["scheme"] = scheme
            self.assertIn("not implemented" if scheme != "tls" else "TLSRoute",
                          rc.case_unsupported(c), (scheme, failure))
        self.assertIsNone(rc.case_unsupported(https_case(expect={"failure": "connection"})))
        self.assertIsNone(rc.case_unsupported(case("/", {"failure": "httpStatus"})))
        self.assertIn("trust kind Vault", rc.case_unsupported(https_case(trust={"kind": "Vault"})))

    def test_http_status_failures(self):
        # extended/README.md section 3: another status passes, 408/504 and transport errors are
        # "not yet", a 200 fails the case at once.
        retry = "/retry/x?responseCode=%d&succeedAfter=99"
        fails = self.at(case(retry % 503, {"failure": "httpStatus"}, uniqueQueryParam={
            "name": "uuid", "regenerate": "perAttempt"}), self.pod.port)
        self.assertEqual(self.runner().run(fails), (rc.PASS, ""))
        start = time.monotonic()
        outcome, reason = self.runner(consistency_timeout=5).run(
            self.at(case("/", {"failure": "httpStatus"}), self.pod.port))
        self.assertEqual(outcome, rc.FAIL)
        self.assertIn("status 200", reason)
        self.assertLess(time.monotonic() - start, 2)  # at once, not after the window
        for not_yet, port in ((retry % 504, self.pod.port), ("/", closed_port())):
            c = self.at(case(not_yet, {"failure": "httpStatus"}, uniqueQueryParam={
                "name": "uuid", "regenerate": "perAttempt"}), port)
            outcome, reason = self.runner().run(c)
            self.assertEqual(outcome, rc.FAIL)
            self.assertIn("not yet", reason)

    def test_h2_cases_over_http1(self):
        h2 = https_case(protocol="H2")
        plain = https_case()
        self.assertEqual(rc.phase_cases([h2, plain]), [h2, plain])
        cases = rc.phase_cases([h2, plain], h2_over_http1=True)
        self.assertEqual(len(cases), 3)
        self.assertIs(cases[0], h2)
        self.assertEqual(cases[1]["name"], h2["name"] + " [over HTTP/1.1]")
        self.assertNotIn("protocol", cases[1]["request"])
        self.assertEqual(h2["request"]["protocol"], "H2")  # a copy
        self.assertIs(cases[2], plain)
        test = {"cases": [h2]}
        self.assertEqual(rc.unsupported_reason(test), rc.H2_REASON)
        self.assertIsNone(rc.unsupported_reason(test, h2_over_http1=True))

    def test_unique_query_param(self):
        self.assertEqual(rc.set_query_param("/p", "uuid", "u-1"), "/p?uuid=u-1")
        self.assertEqual(rc.set_query_param("/r?responseCode=500&succeedAfter=2", "uuid", "u"),
                         "/r?responseCode=500&succeedAfter=2&uuid=u")
        self.assertEqual(rc.set_query_param("/r?z=1&a=b%20c&uuid=old", "uuid", "new"),
                         "/r?a=b+c&uuid=new&z=1")  # keys sorted, as Go's url.Values.Encode
        c = case("/p?a=1", {"status": 200, "backendRequest": {"path": "/p?a=1"}})
        with_id = rc.with_query_param(c, "id", "x")
        self.assertEqual(with_id["request"]["path"], "/p?a=1&id=x")
        self.assertEqual(with_id["expect"]["backendRequest"]["path"], "/p?a=1&id=x")
        self.assertEqual(c["request"]["path"], "/p?a=1")  # a copy
        self.assertEqual(len(rc.new_request_id()), 36)

    def test_retry_cases_get_a_request_id_per_attempt(self):
        # Each attempt starts a new uuid at the /retry/ endpoint: always its first failure.
        fails = case("/retry/x?responseCode=500&succeedAfter=1", {"status": 500},
                     uniqueQueryParam={"name": "uuid", "regenerate": "perAttempt"})
        fails = self.at(fails, self.pod.port)
        self.assertEqual(self.runner().run(fails), (rc.PASS, ""))
        succeeds = self.at(case("/retry/x?succeedAfter=0", {
            "status": 200, "backend": "infra-backend-v1", "backendRequest": {
                "path": "/retry/x?succeedAfter=0"}},
            uniqueQueryParam={"name": "uuid", "regenerate": "perAttempt"}), self.pod.port)
        self.assertEqual(self.runner().run(succeeds), (rc.PASS, ""))
        # One uuid for the whole case: the second attempt succeeds, so 500 x3 never happens.
        per_case = copy.deepcopy(fails)
        per_case["request"]["uniqueQueryParam"]["regenerate"] = "perCase"
        outcome, reason = self.runner().run(per_case)
        self.assertEqual(outcome, rc.FAIL)
        self.assertIn("status 200, want 500", reason)

    def test_mirrored_to(self):
        # The echo pod records the request itself, so it stands for a mirror here.
        c = self.at(case("/mirror", {"status": 200, "backend": "infra-backend-v1",
                                     "backendRequest": {"path": "/mirror"},
                                     "mirroredTo": [{"backend": "infra-backend-v1",
                                                     "namespace": NS}]},
                         uniqueQueryParam={"name": "request-id", "regenerate": "perCase"}),
                    self.pod.port)
        self.assertEqual(self.runner().run(c), (rc.PASS, ""))
        c["expect"]["mirroredTo"].append({"backend": "infra-backend-v2", "namespace": NS})
        outcome, reason = self.runner().run(c)
        self.assertEqual(outcome, rc.FAIL)
        self.assertRegex(reason, r"no mirrored copy of /mirror\?request-id=[-0-9a-f]{36} reached "
                         "%s/infra-backend-v2 within 0s" % NS)

    def test_mirror_distribution(self):
        spec = {"rounds": 2, "requestsPerRound": 20, "concurrency": 4,
                "uniqueQueryParam": {"name": "request-id", "regenerate": "perRound"},
                "mirrors": [{"backend": "infra-backend-v2", "namespace": NS, "percent": 50}],
                "toleranceStdDevs": 3.0, "pauseAfterFailedRound": "2s"}
        c = self.at(case("/pm", {"status": 200, "backendRequest": {"path": "/pm"}}),
                    self.pod.port)
        target = rc.Target(c, {NS + "/gw": "127.0.0.1"})
        queries = []

        class Record:  # a stand-in for the mirror pods' request record
            def __init__(self, copies):
                self.copies = copies

            def recorded(self, uri, deployment, namespace, since=None):
                queries.append((uri, deployment, namespace, since))
                return self.copies
        for copies, ok in ((10, True), (4, True), (3, False), (16, True), (17, False)):
            why = self.runner(Record(copies)).mirror_distribution(c, target, spec)
            self.assertEqual(why is None, ok, (copies, why))  # 10 +- 3 * sqrt(5) = 6.7
        self.assertIn("no round of 2 within the band; last round 2: infra-backend-v2 got 3 "
                      "copies of 20 requests, want 10 +- 6.7",
                      self.runner(Record(3)).mirror_distribution(c, target, spec))
        uri, deployment, namespace, since = queries[0]
        self.assertRegex(uri, r"^/pm\?request-id=[-0-9a-f]{36}$")
        self.assertEqual(self.pod.recorded(uri), 20)  # every request of the round went out
        self.assertEqual((deployment, namespace), ("infra-backend-v2", NS))
        self.assertIsNotNone(since)

    def websocket_case(self, origin="ws://gateway/test"):
        return self.at({"name": "ws", "target": {"gateway": NS + "/gw", "port": 80,
                                                 "scheme": "ws"},
                        "request": {"method": "GET", "host": None, "path": "/ws",
                                    "websocket": {"origin": origin, "subprotocol": ""}},
                        "expect": {"websocketEcho": [
                            {"type": "text", "text": "Websocket Support!"},
                            {"type": "binary", "bytes": [1, 2, 3, 4, 5, 6, 7]},
                            {"type": "binary", "bytes": list(range(256)) * 300}]}},
                       self.pod.port)

    def test_websocket_case(self):
        self.assertEqual(self.runner().run(self.websocket_case()), (rc.PASS, ""))
        outcome, reason = self.runner().run(self.websocket_case(origin=""))
        self.assertEqual(outcome, rc.FAIL)
        self.assertIn("handshake answered 403, want 101", reason)
        c = self.websocket_case()
        c["request"]["path"] = "/not-ws"
        self.assertIn("handshake answered 200", self.runner().run(c)[1])
        c = self.at(self.websocket_case(), closed_port())
        self.assertIn("connection refused", self.runner(consistency_timeout=0.2).run(c)[1])

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


class TlsClientTest(unittest.TestCase):
    """The https client against TLS echo pods on loopback, with material generated as the
    runner generates it (conformance_data): the default trust anchor (self-signed, SANs *,
    *.org, *.wildcard.org), a CA, a client leaf and a server leaf it signs, and an untrusted
    self-signed certificate."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="conformance-runner-test-")
        try:
            cls.setup_material()
        except BaseException:
            shutil.rmtree(cls.dir)
            raise

    @classmethod
    def setup_material(cls):
        def sub(name):
            d = os.path.join(cls.dir, name)
            os.makedirs(d)
            return d
        default = conformance_data.generate_secret_pems(sub("default"),
                                                        ["*", "*.org", "*.wildcard.org"])
        other = conformance_data.generate_secret_pems(sub("other"), ["*.org"])
        ca_dir = sub("ca")
        ca = conformance_data.generate_ca(ca_dir)
        client = conformance_data.generate_signed_pems(sub("client"), ca_dir, {
            "extKeyUsage": ["clientAuth"]})
        leaf = conformance_data.generate_signed_pems(sub("leaf"), ca_dir, {
            "extKeyUsage": ["serverAuth"], "effectiveSANs": {"dns": ["leaf.example"]}})
        other_client = conformance_data.generate_secret_pems(sub("other-client"), ["*"])
        secret = conformance_data.tls_secret
        cls.material = rc.TlsMaterial([
            secret({"namespace": NS, "name": "tls-validity-checks-certificate"}, *default),
            secret({"namespace": NS, "name": "client"}, *client),
            secret({"namespace": NS, "name": "other-client"}, *other_client),
            secret({"namespace": NS, "name": "leaf"}, *leaf),
            {"kind": "ConfigMap", "metadata": {"namespace": NS, "name": "ca"},
             "data": {"ca.crt": ca.decode()}}], sub("files"))

        def server(pems, client_ca=None, mode=None):
            d = tempfile.mkdtemp(dir=cls.dir)
            paths = []
            for name, data in zip(("crt", "key"), pems):
                paths.append(os.path.join(d, name))
                with open(paths[-1], "wb") as f:
                    f.write(data)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*paths)
            if client_ca:
                context.load_verify_locations(cadata=client_ca.decode())
                context.verify_mode = mode
            return context
        cls.pods = {
            "plain": echo_backend.EchoPod("127.0.0.1", 0, NS, "infra-backend-v1-abc-1",
                                          ssl=server(default)),
            "asks": echo_backend.EchoPod("127.0.0.1", 0, NS, "infra-backend-v1-abc-2",
                                         ssl=server(default, ca, ssl.CERT_OPTIONAL)),
            "requires": echo_backend.EchoPod("127.0.0.1", 0, NS, "infra-backend-v1-abc-3",
                                             ssl=server(default, ca, ssl.CERT_REQUIRED)),
            "untrusted": echo_backend.EchoPod("127.0.0.1", 0, NS, "infra-backend-v1-abc-4",
                                              ssl=server(other)),
            "leaf": echo_backend.EchoPod("127.0.0.1", 0, NS, "infra-backend-v1-abc-5",
                                         ssl=server(leaf)),
        }
        cls.servers = echo_backend.EchoServers(list(cls.pods.values())).start()

    @classmethod
    def tearDownClass(cls):
        cls.servers.stop()
        shutil.rmtree(cls.dir)

    def run_case(self, pod, c):
        c = copy.deepcopy(c)
        c["target"]["port"] = self.pods[pod].port
        gateway = types.SimpleNamespace(check_alive=lambda: None)
        args = types.SimpleNamespace(consistency_timeout=0.5, min_window=0.3,
                                     consistency_passes=3, request_timeout=5.0,
                                     mirror_window=0.3)
        return rc.CaseRunner(args, {NS + "/gw": "127.0.0.1"}, gateway, tls=self.material).run(c)

    def test_https_request_as_upstream_sends_it(self):
        expect = {"status": 200, "backend": "infra-backend-v1", "namespace": NS,
                  "backendRequest": {"method": "GET", "path": "/p", "host": "second-example.org"}}
        c = https_case("/p", expect, sni="second-example.org", host="second-example.org")
        before = self.pods["plain"].requests
        self.assertEqual(self.run_case("plain", c), (rc.PASS, ""))
        self.assertEqual(self.pods["plain"].requests - before, 3)
        # Without request.sni the host names the server (Go's ServerName from the URL).
        no_sni = https_case("/p", expect, sni=None, host="second-example.org")
        del no_sni["request"]["sni"]
        self.assertEqual(self.run_case("plain", no_sni), (rc.PASS, ""))
        # A wildcard SAN covers one label only; the SNI name is the one checked.
        outcome, reason = self.run_case("plain", https_case(sni="a.b.example.org"))
        self.assertEqual(outcome, rc.FAIL)
        self.assertIn("certificate is not valid for a.b.example.org", reason)
        # The client trusts exactly the generated Secret, not another self-signed pair.
        outcome, reason = self.run_case("untrusted", https_case())
        self.assertEqual(outcome, rc.FAIL)
        self.assertIn("CERTIFICATE_VERIFY_FAILED", reason)

    def test_no_alpn_and_tls_1_2_at_least(self):
        tls = rc.TlsClient(https_case()["request"], self.material)
        self.assertEqual(tls.context.minimum_version, ssl.TLSVersion.TLSv1_2)
        with socket.create_connection(("127.0.0.1", self.pods["plain"].port), timeout=5) as raw:
            with tls.wrap(raw, "example.org") as conn:
                self.assertIsNone(conn.selected_alpn_protocol())
                self.assertEqual(conn.server_hostname, "example.org")
        # An address is checked against IP SANs (the certificate has none) and sent no SNI.
        with socket.create_connection(("127.0.0.1", self.pods["plain"].port), timeout=5) as raw:
            with self.assertRaisesRegex(rc.RequestError, "not valid for 127.0.0.1"):
                tls.wrap(raw, "127.0.0.1", sni="127.0.0.1")

    def test_trust_kinds(self):
        leaf = {"kind": "Secret", "namespace": NS, "name": "leaf", "key": "tls.crt"}
        c = https_case(sni="leaf.example", host="leaf.example", trust=leaf)
        self.assertEqual(self.run_case("leaf", c), (rc.PASS, ""))  # the leaf itself, no CA
        ca = {"kind": "ConfigMap", "namespace": NS, "name": "ca", "key": "ca.crt"}
        self.assertEqual(self.run_case("leaf", dict(c, request=dict(c["request"], trust=ca))),
                         (rc.PASS, ""))
        outcome, reason = self.run_case("plain", dict(c, request=dict(c["request"], trust=ca)))
        self.assertEqual(outcome, rc.FAIL)
        self.assertIn("CERTIFICATE_VERIFY_FAILED", reason)
        system = dict(c, request=dict(c["request"], trust={"kind": "SystemRoots"}))
        self.assertEqual(self.run_case("leaf", system)[0], rc.FAIL)
        missing = dict(c, request=dict(c["request"], trust=dict(leaf, name="nope")))
        outcome, reason = self.run_case("leaf", missing)
        self.assertEqual(outcome, rc.FAIL)
        self.assertIn("TLS client: trust anchor Secret %s/nope" % NS, reason)

    def test_connection_failures(self):
        failing = https_case(expect={"failure": "connection"})
        # No certificate for a server that requires one (TLS 1.3: seen when reading).
        self.assertEqual(self.run_case("requires", failing), (rc.PASS, ""))
        other = https_case(expect={"failure": "connection", "clientCertificateRequested": True},
                           clientCertificate=NS + "/other-client")
        self.assertEqual(self.run_case("requires", other), (rc.PASS, ""))
        self.assertEqual(self.run_case("untrusted", failing), (rc.PASS, ""))
        outcome, reason = self.run_case("plain", failing)
        self.assertEqual(outcome, rc.FAIL)
        self.assertIn("got an HTTP response (status 200, answered by %s/infra-backend-v1-abc-1), "
                      "want the connection to fail" % NS, reason)

    def test_client_certificates(self):
        good = https_case(expect={"status": 200, "clientCertificateRequested": True},
                          clientCertificate=NS + "/client")
        self.assertEqual(self.run_case("asks", good), (rc.PASS, ""))
        self.assertEqual(self.run_case("requires", good), (rc.PASS, ""))
        outcome, reason = self.run_case("plain", good)
        self.assertEqual(outcome, rc.FAIL)
        self.assertIn("the server never asked for a client certificate", reason)
        # Without a certificate of its own the client still notices the request.
        asked = https_case(expect={"status": 200, "clientCertificateRequested": True})
        self.assertEqual(self.run_case("asks", asked), (rc.PASS, ""))
        outcome, reason = self.run_case("requires", https_case(clientCertificate=NS + "/nope"))
        self.assertEqual(outcome, rc.FAIL)
        self.assertIn("TLS client: client certificate Secret %s/nope" % NS, reason)
        crt, key = self.material.client_files(NS + "/client")
        self.assertEqual(os.stat(key).st_mode & 0o777, 0o600)
        self.assertEqual(self.material.client_files(NS + "/client"), (crt, key))


    def test_https_echo_pods_echo_sni_and_client_certificates(self):
        """The extended contract's HTTPS echo (tls_server_context): the SNI received, the
        client certificate presented (verified against the client CA, optional)."""
        context = echo_backend.tls_server_context(
            *self.material.client_files(NS + "/leaf"),
            client_ca_pem=self.material.config_map_value(NS + "/ca", "ca.crt"))
        pod = echo_backend.EchoPod("127.0.0.1", 0, NS, "tls-backend-abc-1", ssl=context)
        with echo_backend.EchoServers([pod]):
            def get(sni, client=None):
                ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                ctx.load_verify_locations(cadata=self.material.config_map_value(NS + "/ca",
                                                                                "ca.crt"))
                ctx.check_hostname = False
                ctx.set_alpn_protocols(["http/1.1"])
                if client:
                    ctx.load_cert_chain(*self.material.client_files(client))
                with socket.create_connection(("127.0.0.1", pod.port), timeout=5) as raw:
                    with ctx.wrap_socket(raw, server_hostname=sni) as conn:
                        conn.sendall(b"GET /t HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
                        data = b""
                        while True:
                            chunk = conn.recv(65536)
                            if not chunk:
                                break
                            data += chunk
                if not data:  # TLS 1.3: a refused client certificate shows when reading
                    raise ConnectionError("closed without a response")
                return json.loads(data.split(b"\r\n\r\n", 1)[1])
            echoed = get("leaf.example", NS + "/client")["tls"]
            self.assertEqual(echoed["serverName"], "leaf.example")
            self.assertEqual(echoed["negotiatedProtocol"], "http/1.1")
            self.assertIn(echoed["version"], ("TLSv1.2", "TLSv1.3"))
            self.assertEqual([ssl.PEM_cert_to_DER_cert(c) for c in echoed["peerCertificates"]],
                             [self.material.certificate_der(NS + "/client")])
            # No certificate: still served (VerifyClientCertIfGiven), none echoed.
            self.assertNotIn("peerCertificates", get("abc.example.com")["tls"])
            # A certificate the client CA did not sign is refused.
            with self.assertRaises((ssl.SSLError, ConnectionError, ValueError)):
                get("leaf.example", NS + "/other-client")
        # Plain HTTP pods have no "tls".
        self.assertIsNone(echo_backend.tls_info(None))

    def test_backend_request_sni_and_client_certificate(self):
        client_pem = ssl.DER_cert_to_PEM_cert(self.material.certificate_der(NS + "/client"))
        expect = {"status": 200, "backendRequest": {"sni": "abc.example.com",
                                                   "clientCertificate": NS + "/client"}}
        c = case(expect=expect)

        def answer(tls):
            body = {"path": "/", "host": "h", "method": "GET", "headers": {}, "namespace": NS,
                    "pod": "tls-backend-abc-1"}
            if tls is not None:
                body["tls"] = tls
            return rc.Response(200, [("Content-Type", "application/json")],
                               json.dumps(body).encode(), "http://h/")
        good = {"serverName": "abc.example.com", "peerCertificates": [client_pem]}
        self.assertIsNone(rc.compare(c, answer(good), self.material))
        self.assertEqual(rc.compare(c, answer(None), self.material),
                         "the backend saw plain HTTP, want TLS with SNI 'abc.example.com'")
        self.assertEqual(rc.compare(c, answer(dict(good, serverName="")), self.material),
                         "the backend saw SNI '', want 'abc.example.com'")
        other = ssl.DER_cert_to_PEM_cert(self.material.certificate_der(NS + "/other-client"))
        self.assertEqual(
            rc.compare(c, answer(dict(good, peerCertificates=[other])), self.material),
            "the backend saw 1 client certificates, none of them %s/client's tls.crt" % NS)
        self.assertIn("none of them", rc.compare(c, answer(dict(good, peerCertificates=None)),
                                                 self.material))


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

    def test_https_and_test_local_pods(self):
        tls_backend = {"namespace": NS, "name": "tls-backend", "replicas": 1,
                       "podLabels": {"app": "tls-backend"}, "httpContainerPort": 3000,
                       "httpsContainerPort": 8443, "tlsServingSecret": NS + "/serving",
                       "tlsClientCAConfigMap": NS + "/ca"}
        pod = rc.Pod(tls_backend, 0, 0)
        self.assertEqual((pod.https_port, pod.tls_secret, pod.client_ca),
                         (8443, NS + "/serving", NS + "/ca"))
        self.assertIsNone(rc.Pod(dict(tls_backend, tlsServingSecret=None), 0, 0).https_port)
        # Without the serving Secret among the material only the HTTP echo runs.
        self.assertEqual([(p.host, p.port, p.ssl) for p in rc.echo_pods([pod], None)],
                         [("127.0.2.1", 3000, None)])
        # Test-local pods: their own address range per run slot.
        test = {"echoBackends": [tls_backend, dict(tls_backend, name="b", replicas=2)]}
        slot0, slot1 = rc.plan_local_pods(test, 0), rc.plan_local_pods(test, 1)
        self.assertEqual([p.v4 for p in slot0], ["127.0.102.1", "127.0.103.1", "127.0.103.2"])
        self.assertEqual([p.v4 for p in slot1], ["127.0.110.1", "127.0.111.1", "127.0.111.2"])
        self.assertEqual(rc.plan_local_pods({}, 3), [])
        with self.assertRaisesRegex(RuntimeError, "more than 8 test-local echo backends"):
            rc.plan_local_pods({"echoBackends": [tls_backend] * 9}, 0)
        # An HTTP echo backend of the file's own is started, so the file runs.
        self.assertIsNone(rc.unsupported_reason({"features": ["Gateway"], "manifests": [],
                                                 "echoBackends": [tls_backend]}))

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

    def test_go_name_matching(self):
        for pattern, name, want in (
                ("example.org", "example.org", True), ("EXAMPLE.org", "example.ORG.", True),
                ("*.org", "example.org", True), ("*.org", "a.example.org", False),
                ("*.org", "org", False), ("*.wildcard.org", "x.wildcard.org", True),
                ("a*.org", "ab.org", False), ("*", "localhost", True), ("*", "a.b", False),
                ("x.*.org", "x.y.org", False), ("", "a", False)):
            self.assertEqual(rc.go_name_matches(pattern, name), want, (pattern, name))
        cert = {"subjectAltName": (("DNS", "*.org"), ("URI", "*"), ("IP Address", "127.0.0.1"))}
        self.assertIsNone(rc.peer_name_problem(cert, "second-example.org"))
        self.assertIsNone(rc.peer_name_problem(cert, "127.0.0.1"))
        self.assertIn("not valid for 127.0.0.2 (SANs: DNS:*.org, URI:*, IP Address:127.0.0.1)",
                      rc.peer_name_problem(cert, "127.0.0.2"))
        self.assertIn("not valid for x.wildcard.org", rc.peer_name_problem(cert, "x.wildcard.org"))
        self.assertIn("SANs: none", rc.peer_name_problem({"subject": ()}, "example.org"))

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

    def test_load_base_applies_what_it_extends_first(self):
        top = tempfile.mkdtemp(prefix="conformance-runner-test-")
        try:
            os.makedirs(os.path.join(top, "ext"))
            write_json(os.path.join(top, "_base.json"), {
                "manifests": [{"kind": "A"}], "echoBackends": [{"name": "one"}],
                "generatedSecrets": [{"name": "s1"}], "what": "parent"})
            write_json(os.path.join(top, "ext", "_base.json"), {
                "extends": "../_base.json", "manifests": [{"kind": "B"}],
                "generatedConfigMaps": [{"name": "ca"}], "what": "child"})
            base = conformance_data.load_base(os.path.join(top, "ext"))
            self.assertEqual(base["manifests"], [{"kind": "A"}, {"kind": "B"}])
            self.assertEqual(base["echoBackends"], [{"name": "one"}])
            self.assertEqual(base["generatedSecrets"], [{"name": "s1"}])
            self.assertEqual(base["generatedConfigMaps"], [{"name": "ca"}])
            self.assertEqual(base["what"], "child")
            self.assertEqual(base["layers"], [os.path.join(top, "_base.json"),
                                              os.path.join(top, "ext", "_base.json")])
            self.assertEqual(len(conformance_data.load_base(top)["layers"]), 1)
            write_json(os.path.join(top, "_base.json"), {"extends": "ext/_base.json"})
            with self.assertRaisesRegex(ValueError, "extends itself"):
                conformance_data.load_base(top)
        finally:
            shutil.rmtree(top)

    def test_unsupported_reason(self):
        plain = {"features": ["Gateway", "HTTPRoute", "HTTPRouteRetry"], "manifests": [
            {"kind": "HTTPRoute"}], "cases": [case()], "statusChecks": [
            {"check": "namespacesReady", "namespaces": [NS]}]}
        self.assertIsNone(rc.unsupported_reason(plain))
        self.assertIsNone(rc.unsupported_reason(dict(plain, cases=[https_case(
            clientCertificate=NS + "/c", expect={"failure": "connection",
                                                 "clientCertificateRequested": True})])))
        for change, why in (
                ({"features": ["Gateway", "GRPCRoute"]}, "GRPCRoute kind not implemented"),
                ({"manifests": [{"kind": "ListenerSet"}]}, "ListenerSet kind not implemented"),
                ({"cases": [https_case(protocol="H2")]}, "HTTP/2 is another issue"),
                ({"cases": [dict(case(), target={"gateway": "g", "port": 443,
                                                 "scheme": "tls"})]}, "TLSRoute"),
                ({"statusChecks": [{"check": "podLogs"}]}, "status check podLogs"),
                ({"followUps": [{"actions": [{"op": "restart"}]}]}, "action restart"),
                ({"echoBackends": [{"namespace": "n", "name": "tcp-a", "server": "tcp"}]},
                 "test-local echo backends (n/tcp-a (tcp))")):
            self.assertIn(why, rc.unsupported_reason(dict(plain, **change)))

    def test_real_extended_folder(self):
        directory = os.path.join(CONFORMANCE_DIR or "/nonexistent", "extended")
        if not os.path.isdir(directory):
            self.skipTest("extended conformance data absent")
        base = conformance_data.load_base(directory)
        self.assertEqual(len(base["layers"]), 2)
        pods = rc.plan_pods(base)
        self.assertEqual(len({p.v4 for p in pods}), len(pods))
        self.assertEqual(sorted({p.server for p in pods if not p.served}), ["dns", "grpc", "tcp"])
        served = rc.standins(pods)
        self.assertIn(("tls-backend", 3000), [(n.rsplit("-", 2)[0], port)
                                              for n, _, port in served[NS]])
        runnable = [f for f in conformance_data.list_test_files(directory)
                    if rc.unsupported_reason(conformance_data.load_json(
                        os.path.join(directory, f))) is None]
        self.assertEqual(runnable, [
            "backendtlspolicy-conflict-resolution.json",
            "backendtlspolicy-invalid-ca-certificate-ref.json",
            "backendtlspolicy-invalid-kind.json",
            "backendtlspolicy-observed-generation-bump.json", "backendtlspolicy-san.json",
            "backendtlspolicy.json",
            "gateway-invalid-default-frontend-client-certificate-validation.json",
            "gateway-invalid-listeners-unsupported-protocol.json",
            "gateway-invalid-tls-backend-configuration.json", "gateway-modify-listeners.json",
            "gateway-observed-generation-bump.json",
            "gateway-tls-backend-client-certificate.json",
            "gateway-with-clientcertificate-validation-insecure-fallback.json",
            "gateway-with-clientcertificate-validation.json",
            "gateway-with-invalid-clientcertificate-validation.json",
            "gatewayclass-observed-generation-bump.json",
            "httproute-backend-protocol-websocket.json", "httproute-cors.json",
            "httproute-observed-generation-bump.json", "httproute-request-mirror.json",
            "httproute-request-multiple-mirrors.json", "httproute-request-percentage-mirror.json",
            "httproute-retry-connection-error.json", "httproute-retry-with-timeouts.json",
            "httproute-retry.json"])
        for f in conformance_data.list_test_files(directory):  # every check type is known
            test = conformance_data.load_json(os.path.join(directory, f))
            for _, checks, _, _ in conformance_data.test_phases(test):
                for check in checks:
                    self.assertIn(check["check"], conformance_data.EVALUATORS, f)
                    conformance_data.describe_check(check)

    def test_expected_failures_file_comments(self):
        path = os.path.join(tempfile.mkdtemp(prefix="conformance-runner-test-"), "x.txt")
        try:
            with open(path, "w") as f:
                f.write("# header\n\na.json  # not implemented\n"
                        "b.json: case: name #2\nc.json: status: x # why # more\n  # indented\n")
            self.assertEqual(conformance_data.load_expected(path),
                             {"a.json", "b.json: case: name #2", "c.json: status: x"})
        finally:
            shutil.rmtree(os.path.dirname(path))


def write_json(path, content):
    with open(path, "w") as f:
        json.dump(content, f)


# ---------------------------------------------------------------------------------------------


class FakeAdmin:
    """The controller's admin API over a dict of objects (GET, DELETE, POST /api/v1/apply)."""

    def __init__(self, *objects):
        self.objects = {}
        self.applied = []
        for obj in objects:
            self.put(obj)

    def put(self, obj):
        self.objects[conformance_data.object_path(conformance_data.object_ref(obj))] = obj

    def call(self, method, path, body=None, timeout=10, content_type=None):
        if method == "POST" and path.startswith("/api/v1/apply"):
            obj = json.loads(body)
            self.applied.append(obj)
            self.put(obj)
            return 200, {"items": []}
        path = path.split("?")[0]
        if path not in self.objects:
            return 404, {"error": "not found"}
        if method == "DELETE":
            del self.objects[path]
            return 200, {}
        return 200, copy.deepcopy(self.objects[path])


def gateway_object(name, generation=1, observed=1, conditions=("Accepted", "Programmed"),
                   annotations=None):
    meta = {"namespace": NS, "name": name, "generation": generation}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": meta,
            "spec": {"listeners": []},
            "status": {"conditions": [{"type": t, "status": "True",
                                       "observedGeneration": observed} for t in conditions]}}


def ref(kind, name, namespace=NS):
    return {"group": "gateway.networking.k8s.io", "kind": kind, "namespace": namespace,
            "name": name}


class StatusCheckTest(unittest.TestCase):
    """The checks and actions of extended/README.md sections 5 and 6 (conformance_data)."""

    def evaluate(self, check, admin, context=None):
        return conformance_data.evaluate(check, admin, context)

    def test_namespaces_ready(self):
        listener = socket.create_server(("127.0.0.1", 0))
        port = listener.getsockname()[1]
        try:
            manifests = [gateway_object("ready"), gateway_object(
                "ignored", annotations={"gateway-api/skip-this-for-readiness": "true"})]
            context = conformance_data.CheckContext(manifests, {NS: [("pod-a", "127.0.0.1",
                                                                      port)]})
            check = {"check": "namespacesReady", "namespaces": [NS]}
            admin = FakeAdmin(gateway_object("ready"))
            self.assertEqual(self.evaluate(check, admin, context), (rc.PASS, ""))
            admin.put(gateway_object("ready", generation=2))
            self.assertIn("observedGeneration 1, metadata.generation is 2",
                          self.evaluate(check, admin, context)[1])
            admin.put(gateway_object("ready", conditions=("Accepted",)))
            self.assertIn("lacks Programmed=True", self.evaluate(check, admin, context)[1])
            context.standins[NS].append(("pod-b", "127.0.0.1", closed_port()))
            admin.put(gateway_object("ready"))
            self.assertIn("stand-in pod-b", self.evaluate(check, admin, context)[1])
            self.assertEqual(conformance_data.describe_check(check), "namespacesReady " + NS)
        finally:
            listener.close()

    def test_generations(self):
        route = {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
                 "metadata": {"namespace": NS, "name": "r", "generation": 2},
                 "status": {"parents": [{"conditions": [{"type": "Accepted", "status": "True",
                                                         "observedGeneration": 1}]}]}}
        admin = FakeAdmin(route)
        latest = {"check": "latestObservedGeneration", "object": ref("HTTPRoute", "r")}
        self.assertIn("observedGeneration 1", self.evaluate(latest, admin)[1])
        route["status"]["parents"][0]["conditions"][0]["observedGeneration"] = 2
        admin.put(route)
        self.assertEqual(self.evaluate(latest, admin), (rc.PASS, ""))
        changed = {"check": "generationChanged", "object": ref("HTTPRoute", "r")}
        context = conformance_data.CheckContext()
        context.remember_generations([changed, latest], admin)
        self.assertIn("still 2", self.evaluate(changed, admin, context)[1])
        route["metadata"]["generation"] = 3
        admin.put(route)
        self.assertEqual(self.evaluate(changed, admin, context), (rc.PASS, ""))

    def test_gateway_class_condition_with_any_status(self):
        gwc = {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
               "metadata": {"name": "c", "generation": 1},
               "status": {"conditions": [{"type": "Accepted", "status": "False",
                                          "observedGeneration": 1}]}}
        admin = FakeAdmin(gwc)
        check = {"check": "gatewayClassCondition", "gatewayClass": {
            "group": "gateway.networking.k8s.io", "kind": "GatewayClass", "name": "c"},
            "condition": {"type": "Accepted", "status": None, "reason": None}}
        self.assertEqual(self.evaluate(check, admin), (rc.PASS, ""))
        self.assertEqual(conformance_data.describe_check(check),
                         "gatewayClassCondition GatewayClass c Accepted=any(any)")
        check["condition"]["status"] = "True"
        self.assertIn("lack Accepted=True", self.evaluate(check, admin)[1])

    def test_patch_and_create_actions(self):
        admin = FakeAdmin(dict(gateway_object("g", generation=4), portico={"generation": 4}))
        patch = {"op": "patch", "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
                 "namespace": NS, "name": "g", "mergePatch": {"spec": {"listeners": [
                     {"name": "http", "port": 80}], "gatewayClassName": "{GATEWAY_CLASS_NAME}"},
                     "metadata": {"labels": {"x": "y"}}}}
        self.assertIsNone(conformance_data.perform(patch, admin))
        applied = admin.applied[-1]
        self.assertNotIn("status", applied)
        self.assertNotIn("portico", applied)
        self.assertEqual(applied["metadata"], {"namespace": NS, "name": "g",
                                               "labels": {"x": "y"}})  # no generation
        self.assertEqual(applied["spec"], {"listeners": [{"name": "http", "port": 80}],
                                           "gatewayClassName": "portico"})
        missing = dict(patch, name="absent")
        self.assertIn("not found", conformance_data.perform(missing, admin))
        generated = [{"kind": "ConfigMap", "metadata": {"namespace": NS, "name": "ca"},
                      "data": {"ca.crt": "PEM"}}]
        context = conformance_data.CheckContext(generated=generated)
        create = {"op": "create", "object": {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": NS, "name": "n"},
            "data": {"ca.crt": {"$valueFrom": {"configMap": NS + "/ca", "key": "ca.crt"}}}}}
        self.assertIsNone(conformance_data.perform(create, admin, context))
        self.assertEqual(admin.applied[-1]["data"], {"ca.crt": "PEM"})
        create["object"]["data"]["ca.crt"]["$valueFrom"]["configMap"] = NS + "/none"
        self.assertIn("no generated ConfigMap", conformance_data.perform(create, admin, context))
        self.assertIn("unsupported action", conformance_data.perform({"op": "x"}, admin))

    def test_merge_patch(self):
        merge = conformance_data.merge_patch
        self.assertEqual(merge({"a": 1, "b": {"c": 2, "d": 3}, "l": [1]},
                               {"b": {"c": None, "e": 4}, "l": [2, 3], "f": None}),
                         {"a": 1, "b": {"d": 3, "e": 4}, "l": [2, 3]})
        self.assertEqual(merge({"a": 1}, [1]), [1])


# ---------------------------------------------------------------------------------------------


class SkipPathTest(unittest.TestCase):

    def run_runner(self, directory, *extra):
        argv = [sys.executable, os.path.join(HERE, "run_conformance.py"), "--controller",
                "/nonexistent/portico-controller", "--gateway", "/nonexistent/portico-gateway",
                "--plugin-dir", "/nonexistent", "--conformance-dir", directory] + list(extra)
        return subprocess.run(argv, capture_output=True, text=True, timeout=60)

    def run_in_namespace(self, directory, *extra):
        """(run, its output); skips the test where no network namespace can be made."""
        done = self.run_runner(directory, *extra)
        out = done.stdout + done.stderr
        if done.returncode == 77:  # no network namespace here (and not root)
            self.assertIn("unshare -rn", out)
            self.skipTest("no private network namespace here")
        return done, out

    def test_absent_directory_skips(self):
        done = self.run_runner("/nonexistent/conformance")
        self.assertEqual(done.returncode, 77, done.stdout + done.stderr)
        self.assertIn("SKIP: conformance data not found", done.stdout)

    def test_unsupported_files_fail_without_running(self):
        top = tempfile.mkdtemp(prefix="conformance-runner-test-")
        try:
            directory = os.path.join(top, "extended")
            os.makedirs(directory)
            write_json(os.path.join(top, "_base.json"), {"manifests": [], "echoBackends": [
                {"namespace": NS, "name": "echo", "replicas": 1, "podLabels": {"app": "e"}}]})
            write_json(os.path.join(directory, "_base.json"), {
                "extends": "../_base.json", "manifests": [], "echoBackends": [
                    {"namespace": NS, "name": "grpc-echo", "server": "grpc", "replicas": 2}]})
            write_json(os.path.join(directory, "h2-only.json"), {
                "features": ["Gateway"], "manifests": [], "cases": [https_case(protocol="H2")],
                "statusChecks": [{"check": "gatewayReady", "gateway": ref("Gateway", "g")}]})
            done, out = self.run_in_namespace(directory)
            self.assertEqual(done.returncode, 1, out)
            self.assertIn("NOTE: not started (the runner implements only the HTTP echo server): "
                          "%s/grpc-echo (grpc) x2" % NS, out)
            self.assertIn("FAIL h2-only.json: not run (1 cases, 1 status checks): " +
                          rc.H2_REASON, out)
            self.assertIn("cases: 0 passed, 1 failed, 0 skipped; status checks: 0 passed, 1 "
                          "failed (1 cases and 1 status checks of them in files not run)", out)
            self.assertRegex(out, r"wall time: [0-9.]+ s\n0 passed, 1 failed, 0 skipped\n$")
            listed = os.path.join(top, "expected.txt")
            with open(listed, "w") as f:
                f.write("h2-only.json  # HTTP/2 is another issue\n")
            done = self.run_runner(directory, "--expected-failures", listed, "--quiet",
                                   "--write-expected-failures", os.path.join(top, "seed.txt"))
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            self.assertIn("FAIL (expected) h2-only.json: not run", done.stdout)
            with open(os.path.join(top, "seed.txt")) as f:
                self.assertIn("\n# %s\nh2-only.json\n" % rc.H2_REASON, f.read())
        finally:
            shutil.rmtree(top)


def main():
    global CONFORMANCE_DIR
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--conformance-dir")
    args, rest = parser.parse_known_args()
    CONFORMANCE_DIR = args.conformance_dir
    unittest.main(argv=[sys.argv[0]] + rest)


if __name__ == "__main__":
    main()
