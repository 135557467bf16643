#!/usr/bin/env python3
"""Data-plane integration tests (issue 5, "Show"): real portico-controller, portico-gateway and
echo backends on loopback, real traffic from wrk while the configuration changes.

  - route changes under load: wrk runs against a stable route while other routes are added,
    edited and removed and the stable route itself is edited; zero errors, zero non-2xx;
  - listeners added and removed while traffic runs: a second listener appears (serves), then
    disappears (refuses connections) while the first one's traffic keeps flowing without errors;
  - SIGTERM drains: a request in flight finishes (with "Connection: close"), an idle keep-alive
    connection is closed, new connections are refused, and the gateway exits 0;
  - WebSocket: a real RFC 6455 handshake through an HTTPRoute to a WebSocket echo backend, then
    frames both ways (one longer than 64 KiB) and the closing handshake.

Run: dataplane_test.py --build BUILD_DIR. Waits have deadlines; nothing sleeps to synchronise
(the edits are paced while wrk runs, which is the point of the test, not synchronisation).
"""

import base64
import hashlib
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
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "conformance"))
import portico_procs  # noqa: E402
from portico_procs import binaries_from_args, Controller, Gateway, WrkRun, free_port, wait_until  # noqa: E402,E501
from echo_backend import EchoPod, EchoServers  # noqa: E402

BINARIES = None


write = portico_procs.write_config_file


def gateway_yaml(ports):
    listeners = "".join("  - {name: l%d, protocol: HTTP, port: %d}\n" % (p, p) for p in ports)
    return ("apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\n"
            "metadata: {name: portico}\nspec: {controllerName: portico.io/gateway-controller}\n"
            "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n"
            "metadata: {name: web, namespace: default}\nspec:\n  gatewayClassName: portico\n"
            "  listeners:\n" + listeners)


def backend_yaml(echo_port, name="echo"):
    return ("apiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: default}\n"
            "spec:\n  ports: [{name: http, port: 80, targetPort: %d}]\n---\n"
            "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\n"
            "metadata: {name: %s, namespace: default, labels: {kubernetes.io/service-name: %s}}\n"
            "addressType: IPv4\nports: [{name: http, port: %d}]\n"
            "endpoints: [{addresses: [127.0.0.1], conditions: {ready: true}}]\n"
            % (name, echo_port, name, name, echo_port))


def route_yaml(name, path, header_value="1", backend="echo"):
    return ("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n"
            "metadata: {name: %s, namespace: default}\nspec:\n  parentRefs: [{name: web}]\n"
            "  rules:\n  - matches: [{path: {type: PathPrefix, value: '%s'}}]\n"
            "    filters:\n    - type: RequestHeaderModifier\n"
            "      requestHeaderModifier: {set: [{name: x-edit, value: '%s'}]}\n"
            "    backendRefs: [{name: %s, port: 80}]\n" % (name, path, header_value, backend))


# ---------------------------------------------------------------------------------------------
# A minimal WebSocket (RFC 6455) echo server and client side, enough for the handshake, data
# frames of any length and the closing handshake.

WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def ws_accept(key):
    return base64.b64encode(hashlib.sha1(key.encode() + WS_GUID).digest()).decode()


def recv_exactly(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError("connection closed after %d of %d bytes" % (len(data), n))
        data += chunk
    return data


def ws_frame(opcode, payload, mask):
    head = bytes([0x80 | opcode])
    bit = 0x80 if mask else 0
    if len(payload) < 126:
        head += bytes([bit | len(payload)])
    elif len(payload) < 65536:
        head += bytes([bit | 126]) + len(payload).to_bytes(2, "big")
    else:
        head += bytes([bit | 127]) + len(payload).to_bytes(8, "big")
    if not mask:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def ws_read_frame(sock):
    """(opcode, payload) of one frame, unmasked."""
    b0, b1 = recv_exactly(sock, 2)
    length = b1 & 0x7F
    if length == 126:
        length = int.from_bytes(recv_exactly(sock, 2), "big")
    elif length == 127:
        length = int.from_bytes(recv_exactly(sock, 8), "big")
    key = recv_exactly(sock, 4) if b1 & 0x80 else None
    payload = recv_exactly(sock, length)
    if key:
        payload = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
    return b0 & 0x0F, payload


class WebSocketEcho:
    """Accepts WebSocket handshakes on 127.0.0.1:0 and echoes every data frame."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.handshakes = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        with conn:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                head += chunk
            text = head.decode("latin-1")
            self.handshakes.append(text)
            key = re.search(r"(?im)^sec-websocket-key: *(\S+)", text).group(1)
            conn.sendall(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                          "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n"
                          % ws_accept(key)).encode())
            while True:
                try:
                    opcode, payload = ws_read_frame(conn)
                except (EOFError, OSError):
                    return  # the client left without the closing handshake
                conn.sendall(ws_frame(opcode, payload, mask=False))
                if opcode == 8:  # close: echoed, then the server closes first (RFC 6455 §7.1.1)
                    return

    def stop(self):
        self.listener.close()


def get(url, timeout=2):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read()


class DataPlaneTest(unittest.TestCase):
    def setUp(self):
        if shutil.which("wrk") is None:
            self.skipTest("wrk is not installed (scripts/setup.sh installs it)")
        self.workdir = tempfile.mkdtemp(prefix="portico-dataplane-")
        self.conf = os.path.join(self.workdir, "conf")
        os.makedirs(self.conf)
        self.echo = EchoServers([EchoPod("127.0.0.1", 0, "default", "echo-1")])
        self.echo.start()
        self.echo_port = self.echo.pods[0].port
        self.port = free_port()
        write(self.conf, "00-gateway.yaml", gateway_yaml([self.port]))
        write(self.conf, "10-backend.yaml", backend_yaml(self.echo_port))
        write(self.conf, "20-stable.yaml", route_yaml("stable", "/stable"))
        self.controller = Controller(BINARIES, self.conf, self.workdir)
        self.controller.wait_ready()
        self.gateway = Gateway(BINARIES, self.workdir, self.controller.sync_address(),
                               serve=["default/web"], snapshot=False,
                               extra=["--workers", "2", "--access-log", "off"])
        self.url = "http://127.0.0.1:%d" % self.port
        wait_until(lambda: get(self.url + "/stable")[0] == 200, 20, "the stable route to serve")

    def tearDown(self):
        failed = bool(getattr(self, "_outcome", None) and any(
            e for _, e in getattr(self._outcome, "errors", []) if e))
        for p in (self.gateway, self.controller):
            p.stop()
            if failed:
                sys.stderr.write("---- %s log (tail)\n%s\n" % (p.name, p.tail(30)))
        self.echo.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def test_route_changes_under_load_cause_no_errors(self):
        run = WrkRun(self.url + "/stable", seconds=4, threads=1, timeout=None)
        deadline = time.monotonic() + 3.0
        edits = 0
        while time.monotonic() < deadline:
            i = edits % 20
            previous = os.path.join(self.conf, "30-r%d.yaml" % ((edits - 1) % 20))
            if edits % 3 == 2 and os.path.exists(previous):
                os.unlink(previous)  # a route removed
            else:
                write(self.conf, "30-r%d.yaml" % i, route_yaml("r%d" % i, "/r%d" % i, str(edits)))
            # The stable route itself changes (its filter), staying a match for /stable.
            write(self.conf, "20-stable.yaml", route_yaml("stable", "/stable", str(edits)))
            edits += 1
            time.sleep(0.05)  # pacing of the edits while wrk runs, not synchronisation
        result = run.result()
        self.assertGreater(edits, 20)
        self.assertGreater(result["requests"], 100, result["output"])
        self.assertEqual(result["non2xx"], 0, result["output"])
        self.assertEqual(result["socket_errors"], 0, result["output"])
        # The last edit is live.
        wait_until(lambda: b'"X-Edit": ["%d"]' % (edits - 1) in get(self.url + "/stable")[1], 10,
                   "the last edit of the stable route")

    def test_listeners_come_and_go_while_traffic_runs(self):
        second = free_port()
        run = WrkRun(self.url + "/stable", seconds=4, threads=1, timeout=None)
        write(self.conf, "00-gateway.yaml", gateway_yaml([self.port, second]))
        wait_until(lambda: get("http://127.0.0.1:%d/stable" % second)[0] == 200, 10,
                   "the new listener to serve")
        write(self.conf, "00-gateway.yaml", gateway_yaml([self.port]))

        def refused():
            try:
                get("http://127.0.0.1:%d/stable" % second, timeout=1)
                return False
            except OSError:
                return True
        wait_until(refused, 10, "the removed listener to refuse connections")
        result = run.result()
        self.assertGreater(result["requests"], 100, result["output"])
        self.assertEqual(result["non2xx"], 0, result["output"])
        self.assertEqual(result["socket_errors"], 0, result["output"])

    def test_sigterm_lets_requests_in_flight_finish(self):
        host = ("127.0.0.1", self.port)
        idle = socket.create_connection(host, timeout=10)
        idle.sendall(b"GET /stable HTTP/1.1\r\nHost: a\r\n\r\n")
        self.assertIn(b" 200 ", read_response(idle))
        before = self.gateway.api("/api/v1/dataplane")["requests"]
        busy = socket.create_connection(host, timeout=10)
        busy.sendall(b"GET /stable?delay=1s HTTP/1.1\r\nHost: a\r\n\r\n")
        wait_until(lambda: self.gateway.api("/api/v1/dataplane")["requests"] > before, 10,
                   "the slow request to reach the gateway")
        self.gateway.send_signal(signal.SIGTERM)

        def refused():
            try:
                socket.create_connection(host, timeout=1).close()
                return False
            except OSError:
                return True
        wait_until(refused, 10, "new connections to be refused")
        self.assertEqual(idle.recv(1), b"", "the idle connection was not closed")
        answer = read_response(busy)
        self.assertIn(b" 200 ", answer.split(b"\r\n")[0])
        self.assertIn(b"\r\nconnection: close\r\n", answer.lower())
        self.assertEqual(busy.recv(1), b"", "the drained connection stayed open")
        self.assertEqual(self.gateway.process.wait(timeout=20), 0, self.gateway.tail(20))
        idle.close()
        busy.close()


class WebSocketTest(unittest.TestCase):
    def setUp(self):
        self.workdir = tempfile.mkdtemp(prefix="portico-websocket-")
        self.conf = os.path.join(self.workdir, "conf")
        os.makedirs(self.conf)
        self.ws = WebSocketEcho()
        self.port = free_port()
        write(self.conf, "00-gateway.yaml", gateway_yaml([self.port]))
        write(self.conf, "10-backend.yaml", backend_yaml(self.ws.port, name="ws"))
        write(self.conf, "20-ws.yaml", route_yaml("ws", "/ws", backend="ws"))
        self.controller = Controller(BINARIES, self.conf, self.workdir)
        self.controller.wait_ready()
        self.gateway = Gateway(BINARIES, self.workdir, self.controller.sync_address(),
                               serve=["default/web"], snapshot=False)

        def routed():  # the handshake reaches the WebSocket server (else 404 or refused)
            try:
                head, sock = self.handshake(key="cm91dGVk")
                sock.close()
                return b" 101 " in head
            except OSError:
                return False
        wait_until(routed, 20, "the /ws route to serve")

    def tearDown(self):
        for p in (self.gateway, self.controller):
            p.stop()
        self.ws.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def handshake(self, key):
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        sock.sendall(("GET /ws/chat HTTP/1.1\r\nHost: chat.example\r\nUpgrade: websocket\r\n"
                      "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                      "Sec-WebSocket-Version: 13\r\n\r\n" % key).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = sock.recv(1)  # byte by byte: nothing of the frames after the head is taken
            if not chunk:
                raise OSError("closed before a response head: %r" % head)
            head += chunk
        return head, sock

    def test_frames_flow_both_ways_through_the_gateway(self):
        key = base64.b64encode(os.urandom(16)).decode()
        head, sock = self.handshake(key)
        with sock:
            lines = head.decode("latin-1").lower()
            self.assertTrue(lines.startswith("http/1.1 101 "), lines)
            self.assertIn("\r\nupgrade: websocket\r\n", lines)
            self.assertIn("\r\nconnection: upgrade\r\n", lines)
            self.assertIn("\r\nsec-websocket-accept: %s\r\n" % ws_accept(key).lower(), lines)
            seen = self.ws.handshakes[-1].lower()
            self.assertIn("sec-websocket-key: %s" % key.lower(), seen)
            self.assertIn("x-edit: 1", seen)  # the route's filter applied to the handshake
            for opcode, payload in ((1, b"hello"), (2, os.urandom(70000)), (1, b"again")):
                sock.sendall(ws_frame(opcode, payload, mask=True))
                self.assertEqual(ws_read_frame(sock), (opcode, payload))
            sock.sendall(ws_frame(8, b"\x03\xe8", mask=True))  # close, 1000
            self.assertEqual(ws_read_frame(sock), (8, b"\x03\xe8"))
            self.assertEqual(sock.recv(1), b"", "the tunnel stayed open after the close")


def read_response(sock):
    """One HTTP/1.1 response with a Content-Length body (head and body bytes)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise AssertionError("connection closed before a response head: %r" % data)
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"(?i)\r\ncontent-length: *(\d+)", head).group(1))
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise AssertionError("connection closed in the body")
        body += chunk
    return head + b"\r\n\r\n" + body


def main():
    global BINARIES
    BINARIES, argv = binaries_from_args()
    unittest.main(argv=argv, verbosity=2)


if __name__ == "__main__":
    main()
