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
import json
import re
import signal
import sys
import threading
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


class EchoPod:
    """One echo "pod": where it listens and what it reports."""

    def __init__(self, host, port, namespace, pod):
        self.host, self.port, self.namespace, self.pod = host, port, namespace, pod
        self.requests = 0  # answered so far (read by tests; written on the loop thread)

    def __repr__(self):
        return "EchoPod(%s:%d %s/%s)" % (self.host, self.port, self.namespace, self.pod)


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

    async def _handle(self, pod, reader, writer):
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
                keep_alive = self._keep_alive(proto, headers)
                status, reason, extra, body = await self._answer(pod, method, target, proto,
                                                                 headers)
                out = [("Content-Type", "application/json"), ("X-Content-Type-Options", "nosniff")]
                out += extra
                if not keep_alive:
                    out.append(("Connection", "close"))
                # Counted before the answer is written, so a client that has read the answer
                # always sees it counted.
                pod.requests += 1
                writer.write(_response(status, reason, out, body, method == "HEAD"))
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

    async def _answer(self, pod, method, target, proto, headers):
        query = urllib.parse.urlsplit(target).query
        delay = urllib.parse.parse_qs(query).get("delay")
        if delay:
            try:
                seconds = parse_go_duration(delay[0])
            except ValueError as e:
                return 400, "Bad Request", [], json.dumps({"error": str(e)}).encode()
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
        return 200, "OK", _echo_set_headers(headers), json.dumps(body).encode()

    async def _start_servers(self):
        for pod in self.pods:
            server = await asyncio.start_server(
                lambda r, w, pod=pod: self._handle(pod, r, w), host=pod.host, port=pod.port,
                reuse_address=True, limit=MAX_HEAD_BYTES, backlog=512)
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
