#!/usr/bin/env python3
"""Hand-over integration test (issue 15, item 1 "Restarts without loss"): two real gateways on
one fixed port (SO_REUSEPORT), SIGTERM to the first while clients run, the way a rolling restart
on one host works: start the next process, wait for its readiness endpoint, SIGTERM the old one.

  - HandoverTest: a client that records every request (keep-alive connections, one connection
    per request, slow requests through the echo backend's ?delay) runs through the hand-over:
    zero requests lost, zero connections reset or closed without "Connection: close", every
    response the old gateway sends during the drain says "Connection: close", the old gateway
    exits (0, "drained") within 1 s of its last connection closing, and the new one goes on
    serving. Run twice: with net.ipv4.tcp_migrate_req on (the kernel moves the old sockets'
    queues to the new process) and off (the old sockets drop SYNs during a short accept grace).
  - HandoverWrkTest: the same hand-over under wrk: 0 socket errors, 0 non-2xx. Skipped (exit 77)
    when wrk is not installed.

To know which process answered, the two gateways serve two Gateways (web-a, web-b) with a
listener on the same port, routed to two echo backends (pods echo-a, echo-b) whose JSON answer
names the pod.

The test re-executes itself in a private network namespace (`unshare -rn`), where it may set
tcp_migrate_req; without one, it runs in place and skips the cases whose sysctl value it cannot
set. Waits have deadlines; nothing sleeps to synchronise.

Run: handover_test.py --build BUILD_DIR [unittest arguments, e.g. HandoverWrkTest].
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import portico_procs  # noqa: E402
from portico_procs import (Controller, EchoProcess, Gateway, WrkRun, free_port,  # noqa: E402
                           wait_until)

BINARIES = None
SKIP_EXIT = 77
MIGRATE_SYSCTL = "/proc/sys/net/ipv4/tcp_migrate_req"
SLOW = "300ms"  # the slow requests' backend delay
EXIT_AFTER_LAST_CONNECTION_S = 1.0
# From SIGTERM to the drain begun in every worker, plus a response formed just before it reaching
# the client: generous, for a CI machine running two test processes per core (the drain itself
# lasts about 0.8 s, so most of it is still checked).
DRAIN_START_S = 0.25


write = portico_procs.write_config_file


def config_yaml(port, echo_ports):
    """Gateways web-a and web-b, both listening on `port`, each routed to its own echo pod."""
    docs = ["apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\n"
            "metadata: {name: portico}\nspec: {controllerName: portico.io/gateway-controller}\n"]
    for side, echo_port in echo_ports.items():
        docs.append(
            "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n"
            "metadata: {name: web-%s, namespace: default}\nspec:\n  gatewayClassName: portico\n"
            "  listeners:\n  - {name: http, protocol: HTTP, port: %d}\n" % (side, port))
        docs.append(
            "apiVersion: v1\nkind: Service\nmetadata: {name: echo-%s, namespace: default}\n"
            "spec:\n  ports: [{name: http, port: 80, targetPort: %d}]\n" % (side, echo_port))
        docs.append(
            "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\n"
            "metadata: {name: echo-%s, namespace: default, labels: "
            "{kubernetes.io/service-name: echo-%s}}\naddressType: IPv4\n"
            "ports: [{name: http, port: %d}]\n"
            "endpoints: [{addresses: [127.0.0.1], conditions: {ready: true}}]\n"
            % (side, side, echo_port))
        docs.append(
            "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n"
            "metadata: {name: route-%s, namespace: default}\nspec:\n"
            "  parentRefs: [{name: web-%s}]\n  rules:\n"
            "  - matches: [{path: {type: PathPrefix, value: /}}]\n"
            "    backendRefs: [{name: echo-%s, port: 80}]\n" % (side, side, side))
    return "---\n".join(docs)


def migration_setting(value):
    """Sets tcp_migrate_req to `value`; None when done, else why it cannot be."""
    try:
        with open(MIGRATE_SYSCTL) as f:
            if int(f.read()) == value:
                return None
        with open(MIGRATE_SYSCTL, "w") as f:
            f.write(str(value))
        return None
    except FileNotFoundError:
        return "%s is missing (Linux before 5.14)" % MIGRATE_SYSCTL
    except OSError as e:
        return "cannot set %s to %d here: %s" % (MIGRATE_SYSCTL, value, e)


def migration_value():
    with open(MIGRATE_SYSCTL) as f:
        return f.read().strip()


# ---------------------------------------------------------------------------------------------
# The recording client.

class Failure(Exception):
    pass


def read_response(sock):
    """(status, lowercased head text, body) of one Content-Length response; Failure when the
    connection ends or resets first."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise Failure("EOF %s" % ("before any response byte" if not data
                                      else "in the response head"))
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    text = head.decode("latin-1").lower()
    match = re.search(r"\r\ncontent-length: *(\d+)", text)
    if not match:
        raise Failure("a response without Content-Length: %r" % text)
    length = int(match.group(1))
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise Failure("EOF in the response body")
        body += chunk
    return int(text.split(" ", 2)[1]), text, body


class Recorder:
    """Client threads that record every request: (sent, answered, which pod, closed?) or the
    failure. kind "keepalive" reuses its connection until a response says close; "fresh" opens
    one connection per request; slow requests ask the echo backend to wait SLOW."""

    def __init__(self, port):
        self.port = port
        self.records = []   # list.append is atomic under the GIL
        self.failures = []
        self.idle_closed = []
        self.stopping = threading.Event()
        self.threads = []
        self.sequence = iter(range(10 ** 9))

    def start(self, kind, slow=False, count=1):
        for _ in range(count):
            thread = threading.Thread(target=self._run, args=(kind, slow), daemon=True)
            thread.start()
            self.threads.append(thread)

    def stop(self):
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=15)
            assert not thread.is_alive(), "a client thread is stuck"

    def idle(self, count):
        """`count` connections that send one request, then stay idle until the server closes
        them (a clean EOF, recorded in self.idle_closed; a reset or an extra byte fails)."""
        ready = []
        for _ in range(count):
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
            sock.sendall(b"GET /idle HTTP/1.1\r\nHost: handover.test\r\n\r\n")
            status, head, body = read_response(sock)
            assert status == 200 and "connection: close" not in head, head
            ready.append((sock, json.loads(body)["pod"]))
        for sock, pod in ready:
            thread = threading.Thread(target=self._idle, args=(sock, pod), daemon=True)
            thread.start()
            self.threads.append(thread)

    def _idle(self, sock, pod):
        with sock:
            try:
                data = sock.recv(1)
                if data:
                    raise Failure("an idle connection received %r" % data)
                self.idle_closed.append({"pod": pod, "closed": time.monotonic()})
            except (OSError, Failure) as e:
                self.failures.append({"path": "/idle", "kind": "idle", "failed": time.monotonic(),
                                      "error": "%s: %s" % (type(e).__name__, e)})

    def served(self, pod, since=0.0):
        return sum(1 for r in self.records if r["pod"] == pod and r["answered"] >= since)

    def _run(self, kind, slow):
        sock = None
        connection = None
        reused = False
        while not self.stopping.is_set():
            n = next(self.sequence)
            path = "/%s/%d%s" % (kind, n, "?delay=" + SLOW if slow else "")
            sent = time.monotonic()
            try:
                if sock is None:
                    sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
                    connection = n
                    reused = False
                sock.sendall(("GET %s HTTP/1.1\r\nHost: handover.test\r\n\r\n" % path).encode())
                status, head, body = read_response(sock)
            except (OSError, Failure) as e:
                self.failures.append({"path": path, "kind": kind, "sent": sent,
                                      "failed": time.monotonic(), "reused": reused,
                                      "error": "%s: %s" % (type(e).__name__, e)})
                if sock is not None:
                    sock.close()
                sock = None
                continue
            answered = time.monotonic()
            try:
                pod = json.loads(body)["pod"]
            except (ValueError, KeyError):
                pod = None
            closed = "\r\nconnection: close" in head
            self.records.append({"path": path, "kind": kind, "slow": slow, "status": status,
                                 "pod": pod, "sent": sent, "answered": answered,
                                 "close": closed, "connection": connection})
            if closed or kind == "fresh":
                sock.close()
                sock = None
            else:
                reused = True
        if sock is not None:
            sock.close()


# ---------------------------------------------------------------------------------------------

class HandoverBase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.workdir = tempfile.mkdtemp(prefix="portico-handover-")
        cls.conf = os.path.join(cls.workdir, "conf")
        os.makedirs(cls.conf)
        cls.echo = {side: EchoProcess("echo-" + side) for side in ("a", "b")}
        cls.port = free_port()
        write(cls.conf, "00-config.yaml",
              config_yaml(cls.port, {side: e.port for side, e in cls.echo.items()}))
        cls.controller = Controller(BINARIES, cls.conf, cls.workdir)
        cls.controller.wait_ready()
        cls.runs = 0

    @classmethod
    def tearDownClass(cls):
        cls.controller.stop()
        for e in cls.echo.values():
            e.stop()
        shutil.rmtree(cls.workdir, ignore_errors=True)

    def setUp(self):
        self.gateways = []

    def tearDown(self):
        failed = bool(getattr(self, "_outcome", None) and any(
            e for _, e in getattr(self._outcome, "errors", []) if e))
        for g in self.gateways:
            g.stop()
            if failed:
                sys.stderr.write("---- %s log (tail)\n%s\n" % (g.name, g.tail(30)))

    def start_gateway(self, side):
        type(self).runs += 1
        g = Gateway(BINARIES, self.workdir, self.controller.sync_address(),
                    name="gw-%s-%d" % (side, self.runs), serve=["default/web-" + side],
                    snapshot=False, workers=2, extra=["--access-log", "off"])
        self.gateways.append(g)
        wait_until(lambda: g.check_alive() or g.admin_ready(), 20, "%s ready" % g.name)
        return g

    def require_migration(self, value):
        why = migration_setting(value)
        if why:
            self.skipTest(why)

    def sigterm_and_wait(self, gateway):
        """SIGTERM; returns (signal time, exit time, exit code) measured by a waiter thread."""
        exited = {}

        def wait():
            exited["code"] = gateway.process.wait()
            exited["at"] = time.monotonic()
        waiter = threading.Thread(target=wait, daemon=True)
        signalled = time.monotonic()
        gateway.send_signal(signal.SIGTERM)
        waiter.start()
        waiter.join(timeout=15)
        self.assertIn("at", exited, "%s did not exit within 15 s" % gateway.name)
        return signalled, exited["at"], exited["code"]

    def assert_drained(self, gateway):
        log = gateway.log_text()
        self.assertIn("data plane: drained", log, gateway.tail(20))
        self.assertNotIn("drain timed out", log)


def admin_ready(self):
    if self.admin is None:
        self.wait_admin()
    return self.admin.call("GET", "/readyz", timeout=2)[0] == 200


Gateway.admin_ready = admin_ready


class HandoverTest(HandoverBase):
    def handover(self):
        old = self.start_gateway("a")
        rec = Recorder(self.port)
        # Started while only the old gateway listens: every keep-alive connection is the old
        # one's, so requests are in flight on it (slow ones included) when the drain starts.
        rec.start("keepalive", count=6)
        rec.start("keepalive", slow=True, count=3)
        rec.start("fresh", count=2)
        rec.start("fresh", slow=True, count=1)
        rec.idle(4)  # idle keep-alive connections: closed by the drain, not counted open after
        wait_until(lambda: rec.served("echo-a") >= 100, 20, "traffic through the old gateway")
        new = self.start_gateway("b")  # ready: its sockets listen on the shared port
        wait_until(lambda: rec.served("echo-b") >= 20, 20, "the new gateway to take connections")
        signalled, exited, code = self.sigterm_and_wait(old)
        # The new gateway goes on serving every kind of request after the old one is gone.
        wait_until(lambda: rec.served("echo-b", since=exited) >= 100, 20,
                   "traffic through the new gateway after the hand-over")
        rec.stop()

        self.assertEqual(rec.failures, [], "%d request(s) lost, the first: %s" % (
            len(rec.failures), json.dumps(rec.failures[:5], indent=1)))
        self.assertEqual(code, 0, old.tail(20))
        self.assert_drained(old)
        bad = [r for r in rec.records if r["status"] != 200 or r["pod"] not in ("echo-a", "echo-b")]
        self.assertEqual(bad, [], "answers other than 200 from an echo pod")

        by_old = [r for r in rec.records if r["pod"] == "echo-a"]
        during = [r for r in by_old if r["answered"] > signalled]
        in_flight_slow = [r for r in during if r["slow"] and r["sent"] < signalled]
        self.assertTrue(in_flight_slow, "no slow request was in flight on the old gateway at "
                        "SIGTERM: the test did not test the drain")
        # Every response begun during the drain says close: those answered later than the
        # drain can take to start after the signal (a response formed just before may not).
        unmarked = [r for r in during if not r["close"] and r["answered"] > signalled + DRAIN_START_S]
        self.assertEqual(unmarked, [], "responses of the draining gateway without close "
                         "(SIGTERM at %.4f)" % signalled)
        self.assertEqual(len(rec.idle_closed), 4, "idle connections closed by the drain")
        last_closed = max([r["answered"] for r in by_old] + [c["closed"] for c in rec.idle_closed])
        self.assertLessEqual(
            exited - last_closed, EXIT_AFTER_LAST_CONNECTION_S,
            "the old gateway exited %.3f s after its last connection closed" %
            (exited - last_closed))
        print("\nhand-over (tcp_migrate_req=%s): %d requests (%d by the old gateway, %d of them "
              "during its drain, %d slow ones in flight at SIGTERM), 0 lost; the old gateway "
              "exited %.0f ms after SIGTERM, %.0f ms after its last connection closed" % (
                  migration_value(), len(rec.records), len(by_old),
                  len(during), len(in_flight_slow), 1000 * (exited - signalled),
                  1000 * (exited - last_closed)), flush=True)
        new.check_alive()

    def test_idle_connections_close_and_the_exit_follows(self):
        # Only idle keep-alive connections when the drain starts: each closes (a clean EOF)
        # once idle for drain_idle_timeout_ms, and the process exits at once after the last,
        # not on the drain timeout (connections closed by the drain itself used to stay counted
        # until the worker's next event).
        old = self.start_gateway("a")
        rec = Recorder(self.port)
        rec.idle(6)
        signalled, exited, code = self.sigterm_and_wait(old)
        rec.stop()
        self.assertEqual(rec.failures, [])
        self.assertEqual(code, 0, old.tail(20))
        self.assert_drained(old)
        self.assertEqual(len(rec.idle_closed), 6)
        last_closed = max(c["closed"] for c in rec.idle_closed)
        self.assertLessEqual(last_closed - signalled, 1.0 + 0.5, "idle connections closed late")
        self.assertLessEqual(exited - last_closed, EXIT_AFTER_LAST_CONNECTION_S)
        print("\nidle-only drain: 6 idle connections closed %.0f ms after SIGTERM; exit %.0f ms "
              "after the last" % (1000 * (last_closed - signalled), 1000 * (exited - last_closed)),
              flush=True)

    def test_handover_with_request_migration(self):
        self.require_migration(1)
        self.handover()

    def test_handover_without_request_migration(self):
        self.require_migration(0)
        self.handover()


class HandoverWrkTest(HandoverBase):
    def setUp(self):
        super().setUp()
        if shutil.which("wrk") is None:
            self.skipTest("wrk is not installed (Debian package wrk; scripts/setup.sh)")

    def handover_under_wrk(self):
        old = self.start_gateway("a")
        url = "http://127.0.0.1:%d/wrk?delay=20ms" % self.port
        run = WrkRun(url, seconds=4, connections=16)
        wait_until(lambda: old.api("/api/v1/dataplane")["requests"] >= 200, 20,
                   "wrk traffic through the old gateway")
        new = self.start_gateway("b")
        signalled, exited, code = self.sigterm_and_wait(old)
        result = run.result()
        self.assertEqual(code, 0, old.tail(20))
        self.assert_drained(old)
        self.assertEqual(result["socket_errors"], 0, result["output"])
        self.assertEqual(result["non2xx"], 0, result["output"])
        self.assertGreater(result["requests"], 500, result["output"])
        self.assertGreater(new.api("/api/v1/dataplane")["requests"], 100,
                           "the new gateway took over")
        print("\nhand-over under wrk (tcp_migrate_req=%s): %d requests, 0 socket errors, "
              "0 non-2xx; the old gateway exited %.0f ms after SIGTERM" % (
                  migration_value(), result["requests"],
                  1000 * (exited - signalled)), flush=True)

    def test_wrk_handover_with_request_migration(self):
        self.require_migration(1)
        self.handover_under_wrk()

    def test_wrk_handover_without_request_migration(self):
        self.require_migration(0)
        self.handover_under_wrk()


def main():
    global BINARIES
    BINARIES, argv = portico_procs.binaries_from_args()
    if portico_procs.in_private_network():
        portico_procs.die_with_parent()
        portico_procs.bring_up_loopback()
    else:
        why = portico_procs.private_network_unavailable()
        if why is None:
            return portico_procs.reexec_in_private_network()
        print("NOTE: no private network namespace (%s): running in place; cases needing a "
              "tcp_migrate_req value this process cannot set are skipped" % why)
    program = unittest.main(argv=argv, verbosity=2, exit=False)
    result = program.result
    if not result.wasSuccessful():
        return 1
    if result.testsRun > 0 and len(result.skipped) == result.testsRun:
        for test, why in result.skipped:
            print("SKIP: %s: %s" % (test.id(), why))
        return SKIP_EXIT
    return 0


if __name__ == "__main__":
    sys.exit(main())
