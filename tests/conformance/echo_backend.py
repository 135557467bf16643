#!/usr/bin/env python3
"""echo_backend: a local stand-in for the Gateway API conformance echo server (echo-basic).

Implements "The echo backend contract" of ../shared/conformance/gateway-api/README.md: any
method and path answers 200 with `Content-Type: application/json` (exactly) and the JSON body

    {"path": <request URI incl. query>, "host": <Host>, "method": ..., "proto": "HTTP/1.1",
     "headers": {<Canonical-Name>: [values]}, "namespace": ..., "ingress": "", "service": "",
     "pod": ..., "httpPort": "<port>"}

Header names are canonicalised as Go's net/http does (x-foo -> X-Foo); Host and
Transfer-Encoding are not among the headers, as in Go. Each `Name:value` pair of the request
header X-Echo-Set-Header (comma-separated) is copied into the response headers;
`?delay=<Go duration>` (e.g. 1s, 500ms, 1m30s) waits that long before answering. HTTP/1.1
keep-alive, Content-Length and chunked request bodies (read and discarded), Expect: 100-continue.

And the "HTTP echo extras" of extended/README.md (echo-basic v0.1.0):
  - the request record: every request the echo handler answers (mirrored copies included, failing
    /retry/ attempts not) is noted per pod with its request URI and a time.monotonic() stamp,
    before any ?delay (EchoPod.recorded, EchoServers.recorded; the mirror cases read it);
  - /retry/...?uuid=U&succeedAfter=N[&responseCode=C][&delayRetry=D]: under one lock held for
    the whole request (attempts are serialised, delays included), the first N requests of each
    uuid wait D, then fail: with status C and an empty body, or without C by resetting the
    connection (SO_LINGER 0) before any response; later ones are echoed. 400 without uuid, or
    with a non-integer succeedAfter/responseCode or an invalid delayRetry;
  - /ws: an RFC 6455 WebSocket echo (golang.org/x/net/websocket upstream): the handshake needs
    an Origin header that parses as a URL (else 403), then every data frame comes back as it was
    received (pings answered, a close echoed) until the client closes.
  - HTTPS (the 8443 listener of the extended contract): EchoPod(..., ssl=tls_server_context(...))
    serves the same handler over TLS (HTTP/1.1; ALPN http/1.1), and the JSON then has "tls":
    {version, serverName (the SNI received, "" if none), negotiatedProtocol (omitted if none),
    cipherSuite, peerCertificates (PEM of the client certificate presented; omitted if none)};
    with a client CA the server requests a client certificate, verifies it when one is sent and
    accepts connections without one (Go's tls.VerifyClientCertIfGiven).
Not implemented: the h2c (3001) listener.

The WebSocket frame codec (websocket_accept, websocket_frame, websocket_frame_parser and the
drivers read_websocket_frame / parse_websocket_frame) serves the runner's client side too.

Library use (the conformance runner): EchoServers([EchoPod(host, port, namespace, pod), ...])
.start() serves every pod from one asyncio event loop on a background thread; stop() closes
them. Command line (e.g. to try it with curl):

    echo_backend.py --backend 127.0.0.1:3000=gateway-conformance-infra/infra-backend-v1-ab-1 \
                    --backend [::1]:0=default/echo-x-y

prints one "listening on HOST:PORT namespace/pod" line per backend (port 0: a free port) and
serves until SIGINT/SIGTERM. Only the Python 3 standard library.
"""

import argparse
import asyncio
import base64
import collections
import hashlib
import http
import json
import os
import re
import signal
import socket
import ssl
import struct
import sys
import threading
import time
import urllib.parse

MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 16 * 1024 * 1024

_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)")
_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6, "ms": 1e-3, "s": 1.0,
                   "m": 60.0, "h": 3600.0}


def parse_go_duration(text):
    """Seconds of a Go duration string ("1s", "1.5h", "2m30s", "0"); ValueError when invalid."""
    s = text.strip()
    sign = 1.0
    if s and s[0] in "+-":
        sign = -1.0 if s[0] == "-" else 1.0
        s = s[1:]
    if s == "0":
        return 0.0
    if not s:
        raise ValueError("invalid duration %r" % text)
    total, pos = 0.0, 0
    while pos < len(s):
        m = _DURATION_PART.match(s, pos)
        if m is None:
            raise ValueError("invalid duration %r" % text)
        total += float(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    return sign * total


def canonical_header_key(name):
    """Go's textproto.CanonicalMIMEHeaderKey: x-header-set -> X-Header-Set (token names only)."""
    if not name or any(not (c.isalnum() or c in "!#$%&'*+-.^_`|~") or ord(c) > 127
                       for c in name):
        return name
    return "-".join(p[:1].upper() + p[1:].lower() for p in name.split("-"))


def tls_server_context(certfile, keyfile, client_ca_pem=None):
    """The server side of an HTTPS echo pod: the certificate chain and key in those files, TLS
    1.2+, ALPN http/1.1; with `client_ca_pem` (PEM text) a client certificate is requested and
    verified when one is sent (connections without one are accepted). The SNI each connection
    received is kept on its SSLObject for tls_info."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(certfile, keyfile)
    context.set_alpn_protocols(["http/1.1"])
    if client_ca_pem:
        context.load_verify_locations(cadata=client_ca_pem)
        context.verify_mode = ssl.CERT_OPTIONAL

    def remember_sni(ssl_object, server_name, _context):
        ssl_object.portico_server_name = server_name or ""
    context.sni_callback = remember_sni
    return context


def tls_info(ssl_object):
    """The echo JSON's "tls" object for a connection (None on plain HTTP)."""
    if ssl_object is None:
        return None
    info = {"version": ssl_object.version() or "",
            "serverName": getattr(ssl_object, "portico_server_name", ""),
            "cipherSuite": (ssl_object.cipher() or ("",))[0]}
    if ssl_object.selected_alpn_protocol():
        info["negotiatedProtocol"] = ssl_object.selected_alpn_protocol()
    peer = ssl_object.getpeercert(binary_form=True)
    if peer:
        info["peerCertificates"] = [ssl.DER_cert_to_PEM_cert(peer)]
    return info


class EchoPod:
    """One echo "pod": where it listens and what it reports; with `ssl` (an ssl.SSLContext
    for the server side) it serves over TLS (the runner's own tests of its https client)."""

    def __init__(self, host, port, namespace, pod, ssl=None):
        self.host, self.port, self.namespace, self.pod = host, port, namespace, pod
        self.ssl = ssl
        self.requests = 0  # answered so far (read by tests; written on the loop thread)
        # The request record: request URI -> time.monotonic() of each request the echo handler
        # answered (appended on the loop thread, read from any thread).
        self._record = collections.defaultdict(list)

    def __repr__(self):
        return "EchoPod(%s:%d %s/%s)" % (self.host, self.port, self.namespace, self.pod)

    def deployment(self):
        """The pod name without its last two '-' parts (as upstream names pods)."""
        return self.pod.rsplit("-", 2)[0]

    def note(self, uri):
        self._record[uri].append(time.monotonic())

    def recorded(self, uri, since=None):
        """How many requests for exactly `uri` the echo handler answered (since `since`)."""
        stamps = list(self._record.get(uri, ()))
        return len(stamps) if since is None else sum(1 for t in stamps if t >= since)


# ---------------------------------------------------------------------------------------------
# WebSocket (RFC 6455) frames, for both sides

WEBSOCKET_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
WS_CONTINUATION, WS_TEXT, WS_BINARY, WS_CLOSE, WS_PING, WS_PONG = 0, 1, 2, 8, 9, 10


def websocket_accept(key):
    """The Sec-WebSocket-Accept value for a Sec-WebSocket-Key."""
    return base64.b64encode(hashlib.sha1(key.encode() + WEBSOCKET_GUID).digest()).decode()


def _masked(payload, key):
    n = len(payload)
    stream = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(stream, "big")).to_bytes(n, "big")


def websocket_frame(opcode, payload, mask, fin=True):
    """One frame; clients mask (RFC 6455 5.3), servers do not."""
    head = bytes([(0x80 if fin else 0) | opcode])
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
    return head + key + _masked(payload, key)


def websocket_frame_parser(limit=MAX_BODY_BYTES):
    """A sans-I/O parser of one frame: a generator that yields how many bytes it needs next, is
    sent exactly those bytes and returns (fin, opcode, unmasked payload). ValueError beyond
    `limit` payload bytes."""
    b0, b1 = yield 2
    length = b1 & 0x7F
    if length == 126:
        length = int.from_bytes((yield 2), "big")
    elif length == 127:
        length = int.from_bytes((yield 8), "big")
    if length > limit:
        raise ValueError("WebSocket frame of %d bytes" % length)
    key = (yield 4) if b1 & 0x80 else None
    payload = (yield length) if length else b""
    return bool(b0 & 0x80), b0 & 0x0F, _masked(payload, key) if key else payload


async def read_websocket_frame(reader):
    """One frame from an asyncio StreamReader."""
    parser = websocket_frame_parser()
    try:
        need = next(parser)
        while True:
            need = parser.send(await reader.readexactly(need))
    except StopIteration as done:
        return done.value


def parse_websocket_frame(read_exactly):
    """One frame through a blocking read_exactly(n) function."""
    parser = websocket_frame_parser()
    try:
        need = next(parser)
        while True:
            need = parser.send(read_exactly(need))
    except StopIteration as done:
        return done.value


def origin_parses(origin):
    """Whether an Origin header is a URL as Go's url.ParseRequestURI takes it (x/net/websocket
    answers 403 otherwise): an absolute URL or an absolute path, no control characters."""
    if not origin or any(ord(c) < 0x20 or ord(c) == 0x7F for c in origin):
        return False
    if origin.startswith("/"):
        return True
    parts = urllib.parse.urlsplit(origin)
    return bool(parts.scheme) and bool(parts.netloc or parts.path)


class _BadRequest(Exception):
    pass


async def _read_body(reader, writer, headers):
    """Reads (and discards) the request body as its framing says."""
    te = ",".join(v for n, v in headers if n.lower() == "transfer-encoding").lower()
    lengths = [v.strip() for n, v in headers if n.lower() == "content-length"]
    expect = ",".join(v for n, v in headers if n.lower() == "expect").lower()
    if "100-continue" in expect:
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    if te:
        if not te.replace(" ", "").endswith("chunked"):
            raise _BadRequest("unsupported Transfer-Encoding %r" % te)
        total = 0
        while True:
            line = await reader.readuntil(b"\r\n")
            size = int(line.split(b";", 1)[0].strip(), 16)
            if size == 0:
                while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers
                    pass
                return total
            total += size
            if total > MAX_BODY_BYTES:
                raise _BadRequest("body too large")
            await reader.readexactly(size)
            if await reader.readexactly(2) != b"\r\n":
                raise _BadRequest("bad chunk")
    if lengths:
        if len(set(lengths)) != 1 or not lengths[0].isdigit():
            raise _BadRequest("bad Content-Length")
        n = int(lengths[0])
        if n > MAX_BODY_BYTES:
            raise _BadRequest("body too large")
        if n:
            await reader.readexactly(n)
        return n
    return 0


def _parse_head(head):
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise _BadRequest("bad request line %r" % lines[0])
    headers = []
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            raise _BadRequest("bad header line %r" % line)
        headers.append((name, value.strip(" \t")))
    return parts[0], parts[1], parts[2], headers


def _echo_set_headers(headers):
    """[(name, value)] from X-Echo-Set-Header, values of one name comma-joined (as echo-basic)."""
    out = {}
    order = []
    for n, v in headers:
        if n.lower() != "x-echo-set-header":
            continue
        for item in v.split(","):
            name, _, value = item.strip().partition(":")
            name = name.strip()
            if not name:
                continue
            if name in out:
                out[name] += "," + value.strip()
            else:
                out[name] = value.strip()
                order.append(name)
    return [(n, out[n]) for n in order]


JSON_HEADERS = [("Content-Type", "application/json"), ("X-Content-Type-Options", "nosniff")]


def _header(headers, name):
    """The values of header `name` joined with ',' ("" when absent)."""
    return ",".join(v for n, v in headers if n.lower() == name)


def _reason(status):
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Status %d" % status


def _plain_error(status, text):
    """An answer as Go's http.Error writes it."""
    return status, [("Content-Type", "text/plain; charset=utf-8"),
                    ("X-Content-Type-Options", "nosniff")], (text + "\n").encode()


def _first(params, name):
    values = params.get(name)
    return values[0] if values else None


def _reset(writer):
    """Aborts the connection with a TCP reset (SO_LINGER 0), no response."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


def _response(status, reason, headers, body, head_only):
    lines = ["HTTP/1.1 %d %s" % (status, reason)]
    lines += ["%s: %s" % (n, v) for n, v in headers]
    lines.append("Content-Length: %d" % len(body))
    data = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return data if head_only else data + body


class EchoServers:
    """Echo pods served by one asyncio loop on a daemon thread. start()/stop() from any thread."""

    def __init__(self, pods):
        self.pods = list(pods)
        self._loop = None
        self._thread = None
        self._servers = []
        self._retry_lock = None  # made on the loop
        self._retry_failures = {}  # uuid -> failed /retry/ attempts so far (never reset)

    def recorded(self, uri, deployment, namespace, since=None):
        """Requests for exactly `uri` answered by the pods of `deployment` in `namespace`."""
        return sum(p.recorded(uri, since) for p in self.pods
                   if p.namespace == namespace and p.deployment() == deployment)

    async def _handle(self, pod, reader, writer):
        tls = tls_info(writer.get_extra_info("ssl_object"))
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except asyncio.IncompleteReadError:
                    return  # the client closed between requests
                except asyncio.LimitOverrunError:
                    writer.write(_response(431, "Request Header Fields Too Large",
                                           [("Connection", "close")], b"", False))
                    return
                try:
                    method, target, proto, headers = _parse_head(head)
                    await _read_body(reader, writer, headers)
                except (_BadRequest, ValueError) as e:
                    writer.write(_response(400, "Bad Request", [("Connection", "close"),
                                                                ("Content-Type", "text/plain")],
                                           str(e).encode(), False))
                    return
                if urllib.parse.urlsplit(target).path == "/ws":
                    await self._websocket(reader, writer, headers)
                    return
                keep_alive = self._keep_alive(proto, headers)
                answer = await self._answer(pod, method, target, proto, headers, tls)
                # Counted before the answer is written, so a client that has read the answer
                # always sees it counted.
                pod.requests += 1
                if answer is None:
                    _reset(writer)
                    return
                status, out, body = answer
                if not keep_alive:
                    out = out + [("Connection", "close")]
                writer.write(_response(status, _reason(status), out, body, method == "HEAD"))
                await writer.drain()
                if not keep_alive:
                    return
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            return
        finally:
            try:
                writer.close()
            except (ConnectionError, RuntimeError):
                pass

    @staticmethod
    def _keep_alive(proto, headers):
        tokens = {t.strip().lower() for n, v in headers if n.lower() == "connection"
                  for t in v.split(",")}
        if proto == "HTTP/1.0":
            return "keep-alive" in tokens
        return "close" not in tokens

    async def _answer(self, pod, method, target, proto, headers, tls=None):
        """(status, headers, body) of a request, or None to reset the connection."""
        parts = urllib.parse.urlsplit(target)
        params = urllib.parse.parse_qs(parts.query)
        if parts.path.startswith("/retry/"):
            async with self._retry_lock:
                return await self._retry(pod, method, target, proto, headers, params, tls)
        return await self._echo(pod, method, target, proto, headers, params, tls)

    async def _retry(self, pod, method, target, proto, headers, params, tls=None):
        """The /retry/ endpoint (the caller holds the retry lock)."""
        uuid = _first(params, "uuid")
        if not uuid:
            return _plain_error(400, "uuid is required")
        try:
            succeed_after = int(_first(params, "succeedAfter"))
            code = _first(params, "responseCode")
            code = None if code is None else int(code)
            delay = _first(params, "delayRetry")
            delay = 0.0 if delay is None else parse_go_duration(delay)
        except (TypeError, ValueError) as e:
            return _plain_error(400, "invalid /retry/ parameters: %s" % e)
        failed = self._retry_failures.get(uuid, 0)
        if failed >= succeed_after:
            return await self._echo(pod, method, target, proto, headers, params, tls)
        self._retry_failures[uuid] = failed + 1
        if delay > 0:
            await asyncio.sleep(delay)
        return None if code is None else (code, [], b"")

    async def _echo(self, pod, method, target, proto, headers, params, tls=None):
        pod.note(target)
        delay = params.get("delay")
        if delay:
            try:
                seconds = parse_go_duration(delay[0])
            except ValueError as e:
                return 400, JSON_HEADERS, json.dumps({"error": str(e)}).encode()
            if seconds > 0:
                await asyncio.sleep(seconds)
        echoed = {}
        host = ""
        for n, v in headers:
            if n.lower() == "host":
                host = v
                continue
            if n.lower() == "transfer-encoding":
                continue  # Go's server moves it out of r.Header
            echoed.setdefault(canonical_header_key(n), []).append(v)
        body = {"path": target, "host": host, "method": method, "proto": proto,
                "headers": echoed, "namespace": pod.namespace, "ingress": "", "service": "",
                "pod": pod.pod, "httpPort": str(pod.port)}
        if tls is not None:
            body["tls"] = tls
        return 200, JSON_HEADERS + _echo_set_headers(headers), json.dumps(body).encode()

    async def _websocket(self, reader, writer, headers):
        """The /ws WebSocket echo; owns the connection until it ends."""
        key = _header(headers, "sec-websocket-key").strip()
        upgrade = _header(headers, "upgrade").lower()
        refusal = None
        if "websocket" not in upgrade or not key:
            refusal = _plain_error(400, "not a WebSocket handshake")
        elif not origin_parses(_header(headers, "origin")):
            refusal = _plain_error(403, "the Origin header does not parse as a URL")
        if refusal is not None:
            status, out, body = refusal
            writer.write(_response(status, _reason(status), out + [("Connection", "close")],
                                   body, False))
            await writer.drain()
            return
        writer.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                      "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n" %
                      websocket_accept(key)).encode("latin-1"))
        while True:
            try:
                fin, opcode, payload = await read_websocket_frame(reader)
            except ValueError:
                return  # a frame over the limit
            if opcode == WS_PONG:
                continue
            reply = WS_PONG if opcode == WS_PING else opcode
            writer.write(websocket_frame(reply, payload, mask=False, fin=fin))
            await writer.drain()
            if opcode == WS_CLOSE:
                return

    async def _start_servers(self):
        self._retry_lock = asyncio.Lock()
        for pod in self.pods:
            server = await asyncio.start_server(
                lambda r, w, pod=pod: self._handle(pod, r, w), host=pod.host, port=pod.port,
                reuse_address=True, limit=MAX_HEAD_BYTES, backlog=512, ssl=pod.ssl)
            self._servers.append(server)
            if pod.port == 0:
                pod.port = server.sockets[0].getsockname()[1]

    def start(self, timeout=10):
        """Binds every pod (raises OSError naming the pod on a bind failure) and serves."""
        started = threading.Event()
        failure = []

        def run():
            self._loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self._loop)
            try:
                self._loop.run_until_complete(self._start_servers())
            except OSError as e:
                failure.append(e)
            started.set()
            if failure:
                self._close_servers()
                self._loop.close()
                return
            self._loop.run_forever()
            self._close_servers()
            # Connections still open (keep-alive clients): cancel their handlers, then close.
            tasks = asyncio.all_tasks(self._loop)
            for task in tasks:
                task.cancel()
            self._loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            self._loop.close()

        self._thread = threading.Thread(target=run, name="echo-backends", daemon=True)
        self._thread.start()
        if not started.wait(timeout):
            raise OSError("echo backends did not start within %.0fs" % timeout)
        if failure:
            self._thread.join()
            bound = len(self._servers)
            raise OSError("echo backend %r: %s" % (self.pods[bound], failure[0]))
        return self

    def _close_servers(self):
        for server in self._servers:
            server.close()
        self._servers = []

    def stop(self):
        if self._loop is not None and self._thread is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
        self._thread = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def parse_backend(spec):
    """'HOST:PORT=NAMESPACE/POD' ('[v6]:PORT=...') -> EchoPod."""
    where, sep, who = spec.partition("=")
    namespace, slash, pod = who.partition("/")
    host, colon, port = where.rpartition(":")
    if not sep or not slash or not colon or not port.isdigit() or not pod:
        raise argparse.ArgumentTypeError("want HOST:PORT=NAMESPACE/POD, got %r" % spec)
    return EchoPod(host.strip("[]"), int(port), namespace, pod)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", type=parse_backend, action="append", required=True,
                        metavar="HOST:PORT=NAMESPACE/POD", help="an echo pod (repeatable)")
    args = parser.parse_args()
    servers = EchoServers(args.backend)
    try:
        servers.start()
    except OSError as e:
        print("echo_backend: %s" % e, file=sys.stderr)
        return 1
    for pod in servers.pods:
        host = "[%s]" % pod.host if ":" in pod.host else pod.host
        print("listening on %s:%d %s/%s" % (host, pod.port, pod.namespace, pod.pod), flush=True)
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    done.wait()
    servers.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
