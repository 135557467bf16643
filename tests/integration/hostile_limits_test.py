#!/usr/bin/env python3
"""Limits and slow clients against the real gateway (issue 15, item 5).

A real portico-controller and portico-gateway (one worker, admin on port 0) with small limits
and short deadlines given as flags, and the canary upstreams of canary_upstream.py:

  - 414 for a long request line, 431 for a long field line, a large head and too many fields,
    each before the line (or head) has ended; 413 for a Content-Length over max_body_bytes
    before a body byte was sent (and without "100 Continue"), and for a chunked body once it
    passes the limit;
  - slowloris: connections dribbling header bytes get 408 at the absolute header deadline
    (the dribble goes on past it), silent ones are closed; slow body: a body that stops gets
    408 after body_read_timeout_ms, one that trickles under it completes;
  - a slow reader: a 64 MiB response to a client that reads nothing stops the upstream within
    bounded buffers, then arrives whole;
  - an idle flood against max_connections: the longest-idle connections are closed for new
    ones; with every slot busy a new connection is refused;
  - max_requests_per_connection with a deep pipeline: exactly that many answers in order, the
    last with close, and the canary never sees the next request; 1-byte chunks;
  - descriptor exhaustion (RLIMIT_NOFILE lowered for the gateway): the derived connection cap
    sheds idle connections so requests keep being served, and without a cap connections queued
    while accept(2) had no descriptor are served as soon as one comes free.

While each runs (except the all-slots-busy case, whose point is refusal), ordinary requests on
fresh connections keep being answered 200. Deadlines are short flags; the slow clients pace
their bytes (that is the test), nothing sleeps to synchronise.

Run: hostile_limits_test.py --build BUILD_DIR [unittest args].
"""

import os
import resource
import socket
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from portico_procs import binaries_from_args, wait_until  # noqa: E402
from canary_upstream import Canary, RawClient  # noqa: E402
import hostile_http_test  # noqa: E402
from hostile_http_test import (rq, start_world, start_gateway, stop_world,  # noqa: E402
                               log_tail_on_failure, rejected)


HEADER_DEADLINE_MS = 500
BODY_DEADLINE_MS = 500
MAX_CONNECTIONS = 64
MAX_REQUESTS = 500
LIMIT_FLAGS = ["--workers", "1", "--access-log", "off",
               "--header-read-timeout-ms", str(HEADER_DEADLINE_MS),
               "--body-read-timeout-ms", str(BODY_DEADLINE_MS),
               "--max-request-line", "1024", "--max-header-line", "512",
               "--max-header-bytes", "4096", "--max-headers", "20",
               "--max-body-bytes", "1000"]


class Traffic:
    """Ordinary requests, each on a fresh connection, paced, from a thread until stop()."""

    def __init__(self, port):
        self.port = port
        self.ok = 0
        self.failures = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            try:
                with RawClient(self.port, timeout=3) as c:
                    c.send(rq("GET /ordinary HTTP/1.1", (("Host", "a.test"),
                                                         ("Connection", "close"))))
                    r = c.read_response()
                    if r.status == 200 and r.json()["canary"] == "public":
                        self.ok += 1
                    else:
                        self.failures.append(repr(r))
            except (AssertionError, OSError) as e:
                self.failures.append(repr(e))
            self._stop.wait(0.01)  # pacing: a steady trickle of ordinary requests

    def check(self, tc, minimum=3):
        """Stops the traffic once `minimum` requests were answered (deadline 10 s); every
        request was answered 200."""
        wait_until(lambda: self.ok >= minimum or self.failures, 10, "ordinary requests")
        self._stop.set()
        self._thread.join()
        tc.assertEqual(self.failures, [])
        tc.assertGreaterEqual(self.ok, minimum)
        return self.ok


def start_limits_world(test, extra):
    start_world(test, {"public": Canary("public")}, [("public", "PathPrefix", "/", "public")],
                extra)


def dataplane(gateway):
    return gateway.api("/api/v1/dataplane")


class LimitsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        start_limits_world(cls, LIMIT_FLAGS + ["--max-connections", str(MAX_CONNECTIONS),
                                        "--max-requests-per-connection", str(MAX_REQUESTS)])

    @classmethod
    def tearDownClass(cls):
        stop_world(cls)

    def tearDown(self):
        log_tail_on_failure(self)

    def rejects(self, raw, status, reason, whole=True):
        """Sends `raw`; expects `status` and close, the canary untouched (but for the ordinary
        traffic meanwhile), the counter bumped."""
        traffic = Traffic(self.port)
        wait_until(lambda: traffic.ok >= 1 or traffic.failures, 10, "ordinary traffic")
        before = rejected(self.gateway)
        canary = self.canaries["public"]
        bytes_before, requests_before = canary.byte_count(), len(canary.requests())
        ordinary_before = traffic.ok
        with RawClient(self.port) as c:
            c.send(raw)
            r = c.read_response()
            self.assertEqual(r.status, status, r)
            self.assertIn("close", r.header("connection"))
            self.assertEqual(c.read_to_eof(), b"")
        traffic.check(self, minimum=ordinary_before + 1)
        # Only the ordinary requests reached the canary, not a byte more.
        added = canary.requests()[requests_before:]
        self.assertEqual({r.target for r in added} - {"/ordinary"}, set())
        self.assertEqual(canary.byte_count() - bytes_before, sum(len(r.head) for r in added))
        self.assertEqual(rejected(self.gateway).get((status, reason), 0) -
                         before.get((status, reason), 0), 1, reason)
        return r

    # --- Head limits: 414 and 431, answered before the line ends -----------------------------
    def test_request_line_too_long_is_414_before_the_line_ends(self):
        self.rejects(b"GET /" + b"a" * 1100, 414, "request_line_too_long")

    def test_long_field_line_is_431_before_the_line_ends(self):
        self.rejects(rq("GET / HTTP/1.1").rstrip(b"\r\n") + b"\r\nX-Long: " + b"v" * 600,
                     431, "header_line_too_long")

    def test_field_line_at_the_limit_passes(self):
        with RawClient(self.port) as c:
            c.send(rq(headers=(("Host", "a.test"), ("X-Long", "v" * (512 - 8)))))
            self.assertEqual(c.read_response().status, 200)

    def test_large_head_is_431(self):
        fields = tuple(("X-F%d" % i, "v" * 400) for i in range(11))
        self.rejects(rq(headers=(("Host", "a.test"),) + fields), 431, "header_section_too_large")

    def test_too_many_fields_is_431(self):
        fields = tuple(("X-F%d" % i, "v") for i in range(21))
        self.rejects(rq(headers=(("Host", "a.test"),) + fields), 431, "too_many_headers")

    # --- Body size: 413 before the body -----------------------------------------------------
    def test_content_length_over_the_limit_is_413_before_any_body_byte(self):
        # No body byte is ever sent: the answer cannot have waited for one.
        self.rejects(rq("POST / HTTP/1.1", (("Host", "a.test"), ("Content-Length", "5000"))),
                     413, "body_too_large")

    def test_expect_continue_over_the_limit_gets_413_and_no_100(self):
        r = self.rejects(rq("POST / HTTP/1.1", (("Host", "a.test"), ("Content-Length", "5000"),
                                                ("Expect", "100-continue"))),
                         413, "body_too_large")
        self.assertNotIn(b"100 Continue", r.raw)

    def test_chunked_body_over_the_limit_is_413(self):
        before = rejected(self.gateway)
        body = b"".join(b"100\r\n" + b"c" * 256 + b"\r\n" for _ in range(5)) + b"0\r\n\r\n"
        with RawClient(self.port) as c:
            c.send(rq("POST /chunked-big HTTP/1.1", (("Host", "a.test"),
                                                     ("Transfer-Encoding", "chunked")), body))
            r = c.read_response()
            self.assertEqual(r.status, 413)
            self.assertEqual(c.read_to_eof(), b"")
        self.assertEqual(rejected(self.gateway).get((413, "body_too_large"), 0) -
                         before.get((413, "body_too_large"), 0), 1)
        self.assertNotIn("/chunked-big", [r.target for r in self.canaries["public"].requests()])

    # --- Slow clients -------------------------------------------------------------------------
    def test_slowloris_gets_408_at_the_absolute_header_deadline(self):
        traffic = Traffic(self.port)
        before = rejected(self.gateway).get((408, "header_read_timeout"), 0)
        head = rq(headers=(("Host", "a.test"), ("X-Slow", "s" * 200)))  # 40 x 50 ms: 2 s
        clients = [RawClient(self.port, timeout=5) for _ in range(20)]
        silent = [RawClient(self.port, timeout=5) for _ in range(5)]
        start = time.monotonic()
        answered = {}
        sent = 0
        while len(answered) < len(clients):
            for i, c in enumerate(clients):
                if i in answered:
                    continue
                try:
                    c.send(head[sent:sent + 5])
                except OSError:
                    pass  # closed under us: its 408 is read below
                c.sock.setblocking(False)
                try:
                    data = c.sock.recv(65536)
                    c.buffer += data
                    c.eof = not data
                except BlockingIOError:
                    pass
                c.sock.setblocking(True)
                if c.buffer or c.eof:
                    answered[i] = time.monotonic() - start
            sent += 5
            self.assertLess(sent, len(head), "the whole head went out before any 408")
            self.assertLess(time.monotonic() - start, 5, "no 408 after 5 s")
            time.sleep(0.05)  # the dribble's pace (the test), not synchronisation
        for c in clients:
            c.sock.settimeout(5)
            r = c.read_response()
            self.assertEqual(r.status, 408)
            self.assertEqual(c.read_to_eof(), b"")
            c.close()
        # Absolute: not before the deadline, and not pushed back by the bytes that kept coming.
        sys.stderr.write("slowloris: %d connections answered 408 after %.3f-%.3f s (deadline "
                         "%.3f s), %d bytes of %d sent\n" % (
                             len(clients), min(answered.values()), max(answered.values()),
                             HEADER_DEADLINE_MS / 1000, sent, len(head)))
        self.assertGreaterEqual(min(answered.values()), HEADER_DEADLINE_MS / 1000 - 0.05)
        self.assertLess(max(answered.values()), HEADER_DEADLINE_MS / 1000 + 1.0)
        for c in silent:  # nothing to answer: closed without a response
            self.assertEqual(c.read_to_eof(), b"")
            c.close()
        self.assertEqual(rejected(self.gateway).get((408, "header_read_timeout"), 0) - before,
                         len(clients))
        traffic.check(self)

    def test_stalled_body_gets_408_after_the_body_deadline(self):
        traffic = Traffic(self.port)
        before = rejected(self.gateway).get((408, "body_read_timeout"), 0)
        with RawClient(self.port) as c:
            start = time.monotonic()
            c.send(rq("POST /stalled HTTP/1.1", (("Host", "a.test"), ("Content-Length", "100")),
                      b"x" * 40))
            r = c.read_response()
            elapsed = time.monotonic() - start
            self.assertEqual(r.status, 408)
            self.assertEqual(c.read_to_eof(), b"")
        self.assertGreaterEqual(elapsed, BODY_DEADLINE_MS / 1000 - 0.05)
        self.assertLess(elapsed, BODY_DEADLINE_MS / 1000 + 1.0)
        self.assertEqual(rejected(self.gateway).get((408, "body_read_timeout"), 0) - before, 1)
        # The upstream saw the head and part of the body, never a complete request.
        self.assertNotIn("/stalled", [q.target for q in self.canaries["public"].requests()])
        traffic.check(self)

    def test_body_trickling_under_the_deadline_completes(self):
        body = b"0123456789" * 2
        with RawClient(self.port) as c:
            c.send(rq("POST /trickle HTTP/1.1", (("Host", "a.test"),
                                                 ("Content-Length", str(len(body))))))
            for i in range(0, len(body), 2):
                time.sleep(BODY_DEADLINE_MS / 1000 / 5)  # the trickle's pace (the test)
                c.send(body[i:i + 2])
            r = c.read_response()
            self.assertEqual((r.status, r.json()["body"]), (200, len(body)))

    def held_back(self, path, size):
        """Asks for `path` on a socket that reads nothing; waits until the canary's sends stop
        moving; returns (socket, bytes the canary got out)."""
        canary = self.canaries["public"]
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        sock.connect(("127.0.0.1", self.port))
        sock.sendall(rq("GET %s HTTP/1.1" % path))
        sent_before = canary.big_sent()
        last = [-1, 0]

        def stalled():  # the canary's sends stopped moving for 5 polls in a row
            now = canary.big_sent() - sent_before
            last[1] = last[1] + 1 if now == last[0] else 0
            last[0] = now
            return last[1] >= 5
        wait_until(stalled, 20, "the upstream to be held back", interval=0.05)
        held = last[0]
        self.assertLess(held, 32 << 20, "a client reading nothing let %d bytes through" % held)
        sys.stderr.write("%s: the upstream stopped after %.1f MiB of %d MiB\n" % (
            path, held / 1048576, size >> 20))
        return sock

    def read_all(self, sock, length):
        """Reads until `length` bytes came (or the peer closed); returns what came."""
        data = bytearray()
        sock.settimeout(10)
        while len(data) < length:
            piece = sock.recv(1 << 20)
            if not piece:
                break
            data += piece
        return data

    def test_slow_reader_is_held_by_bounded_buffers(self):
        traffic = Traffic(self.port)
        size = 64 << 20
        sock = self.held_back("/big/%d" % size, size)
        head = b""
        sock.settimeout(10)
        while b"\r\n\r\n" not in head:
            head += sock.recv(4096)
        self.assertTrue(head.startswith(b"HTTP/1.1 200"), head[:100])
        received = len(head) - head.index(b"\r\n\r\n") - 4
        while received < size:
            data = sock.recv(1 << 20)
            self.assertTrue(data, "closed after %d of %d bytes" % (received, size))
            received += len(data)
        self.assertEqual(received, size)
        sock.close()
        traffic.check(self)

    def test_slow_reader_of_interim_responses_is_held_too(self):
        """An upstream sending 100 Continue heads without end to a client reading nothing:
        interim answers obey the same bounded buffers as bodies."""
        traffic = Traffic(self.port)
        size = 64 << 20
        sock = self.held_back("/interim/%d" % size, size)
        interim = b"HTTP/1.1 100 Continue\r\n\r\n"
        size -= size % (len(interim) * 2730)
        final = b"HTTP/1.1 200 OK\r\n"
        data = self.read_all(sock, size + len(final))
        self.assertGreaterEqual(len(data), size + len(final))
        self.assertEqual(bytes(data[:len(interim)]), interim)
        self.assertEqual(bytes(data[:size]).count(interim), size // len(interim))
        self.assertTrue(bytes(data[size:]).startswith(final), bytes(data[size:size + 100]))
        sock.close()
        traffic.check(self)

    # --- Connection cap ----------------------------------------------------------------------
    def test_idle_flood_is_shed_at_the_connection_cap(self):
        traffic = Traffic(self.port)
        before = dataplane(self.gateway)
        flood = []
        for i in range(3 * MAX_CONNECTIONS):
            # A keep-alive connection idle after one request. (A connection that never sends
            # a byte stays in the kernel: the listeners accept with TCP_DEFER_ACCEPT.)
            c = RawClient(self.port, timeout=5)
            c.send(rq("GET /kept HTTP/1.1"))
            self.assertEqual(c.read_response().status, 200)
            flood.append(c)
        wait_until(lambda: dataplane(self.gateway)["connectionsOpen"] <= MAX_CONNECTIONS, 10,
                   "open connections back under the cap")
        after = dataplane(self.gateway)
        self.assertGreaterEqual(after["connectionsShed"] - before["connectionsShed"],
                                2 * MAX_CONNECTIONS - 5)
        # The oldest were closed (EOF), the newest are open and served.
        self.assertEqual(flood[0].read_to_eof(), b"")
        flood[-1].send(rq("GET /newest HTTP/1.1"))
        self.assertEqual(flood[-1].read_response().status, 200)
        for c in flood:
            c.close()
        traffic.check(self)

    def test_new_connection_refused_when_every_slot_is_busy(self):
        canary = self.canaries["public"]
        canary.hold()
        before = dataplane(self.gateway)
        busy = []
        try:
            for i in range(MAX_CONNECTIONS):
                c = RawClient(self.port, timeout=10)
                c.send(rq("GET /hang/%d HTTP/1.1" % i))
                busy.append(c)
            wait_until(lambda: sum(1 for r in canary.requests() if r.target.startswith("/hang"))
                       >= MAX_CONNECTIONS, 10, "every slot busy with a request")
            refused = RawClient(self.port, timeout=5)
            refused.send(rq("GET /refused HTTP/1.1"))
            self.assertEqual(refused.read_to_eof(), b"", "refused without an answer")
            refused.close()
            after = dataplane(self.gateway)
            self.assertEqual(after["connectionsRefused"] - before["connectionsRefused"], 1,
                             (before, after))
        finally:
            canary.release()
        for c in busy:
            self.assertEqual(c.read_response().status, 200)
            c.close()
        self.assertNotIn("/refused", [r.target for r in canary.requests()])
        with RawClient(self.port) as c:
            c.send(rq("GET /after HTTP/1.1"))
            self.assertEqual(c.read_response().status, 200)

    # --- Keep-alive request cap, pipeline depth, 1-byte chunks -------------------------------
    def test_deep_pipeline_stops_at_the_keepalive_request_cap(self):
        traffic = Traffic(self.port)
        canary = self.canaries["public"]
        first = len(canary.requests())
        with RawClient(self.port, timeout=10) as c:
            c.send(b"".join(rq("GET /p%d HTTP/1.1" % i) for i in range(MAX_REQUESTS + 2)))
            for i in range(MAX_REQUESTS):
                r = c.read_response()
                self.assertEqual((r.status, r.json()["target"]), (200, "/p%d" % i))
                self.assertEqual(r.header("connection"),
                                 ["close"] if i == MAX_REQUESTS - 1 else [], i)
            self.assertEqual(c.read_to_eof(), b"")
        targets = [r.target for r in canary.requests()[first:] if r.target.startswith("/p")]
        self.assertEqual(targets, ["/p%d" % i for i in range(MAX_REQUESTS)])
        traffic.check(self)

    def test_one_byte_chunks(self):
        traffic = Traffic(self.port)
        body = bytes(range(256)) * 3  # 768 bytes, under max_body_bytes
        framed = b"".join(b"1\r\n" + body[i:i + 1] + b"\r\n" for i in range(len(body)))
        with RawClient(self.port) as c:
            c.send(rq("POST /bytes HTTP/1.1", (("Host", "a.test"),
                                               ("Transfer-Encoding", "chunked")),
                      framed + b"0\r\n\r\n"))
            r = c.read_response()
            self.assertEqual((r.status, r.json()["body"]), (200, len(body)))
        got = [q for q in self.canaries["public"].requests() if q.target == "/bytes"]
        self.assertEqual([q.body for q in got], [body])
        traffic.check(self)


def open_files(gateway):
    return len(os.listdir("/proc/%d/fd" % gateway.process.pid))


class DescriptorExhaustionTest(unittest.TestCase):
    """The gateway under a low RLIMIT_NOFILE (set for it by the test, inherited at exec)."""

    def setUp(self):
        start_limits_world(self, ["--workers", "1", "--access-log", "off"])
        self.baseline = open_files(self.gateway)
        self.gateway.stop()

    def tearDown(self):
        stop_world(self)

    def start_limited(self, files, extra):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (files, hard))
        try:
            self.gateway = start_gateway(self, ["--workers", "1", "--access-log", "off"] + extra,
                                         "limited")
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    def test_derived_cap_sheds_idle_connections_before_descriptors_run_out(self):
        files = self.baseline + 100
        self.start_limited(files, [])  # max_connections 0: (files - 64) / 2
        cap = (files - 64) // 2
        traffic = Traffic(self.port)
        flood = []
        for _ in range(files):  # more connections than descriptors, each idle after a request
            c = RawClient(self.port, timeout=5)
            c.send(rq("GET /kept HTTP/1.1"))
            self.assertEqual(c.read_response().status, 200)
            flood.append(c)
        wait_until(lambda: dataplane(self.gateway)["connectionsShed"] >= files - cap, 10,
                   "idle connections shed at the derived cap")
        sys.stderr.write("descriptors: RLIMIT_NOFILE %d, derived cap %d, %d connections, %d "
                         "shed\n" % (files, cap, files,
                                      dataplane(self.gateway)["connectionsShed"]))
        self.assertEqual(dataplane(self.gateway)["acceptFailures"], 0)
        for c in flood:
            c.close()
        traffic.check(self)

    def test_connections_queued_without_descriptors_are_served_when_one_frees(self):
        files = self.baseline + 30
        self.start_limited(files, ["--max-connections", "100000"])  # no cap: exhaustion
        flood = [RawClient(self.port, timeout=5) for _ in range(60)]
        # (The admin API shares the descriptor limit: the log says it.)
        self.gateway.wait_log("retrying when a connection closes", 10)
        waiting = RawClient(self.port, timeout=5)  # queued in the kernel's backlog
        waiting.send(rq("GET /queued HTTP/1.1"))
        for c in flood:
            c.close()
        start = time.monotonic()
        r = waiting.read_response()
        self.assertEqual(r.status, 200)
        elapsed = time.monotonic() - start
        sys.stderr.write("descriptors: a connection queued while accept(2) had none was served "
                         "%.3f s after they came free\n" % elapsed)
        self.assertLess(elapsed, 1.0, "served once descriptors came free")
        waiting.close()
        self.gateway.check_alive()


if __name__ == "__main__":
    hostile_http_test.BINARIES, argv = binaries_from_args()
    unittest.main(argv=argv, verbosity=1)
