"""canary_upstream: an HTTP/1.1 upstream for hostile-client tests that records every byte it
receives, and a raw-socket client with a strict response reader.

Canary(name) listens on 127.0.0.1:0. Each connection's bytes are recorded as they arrive
(`received()`); complete requests (head, then a Content-Length or chunked body, trailers
included) are parsed and recorded (`requests()`), and each is answered 200 with a JSON body
naming the canary, the method, the target and the body length, on a keep-alive connection.
A `script` maps a path prefix to raw bytes sent instead of the answer (then the connection is
closed): a canary that answers malformed responses; a callable instead of bytes is called
with (socket, Request) to answer as it likes, and the connection stays open. `close` makes
every answer the last of its connection. Some paths are special: "/big/N" answers N body
bytes, "/interim/N" N bytes of "100 Continue" heads before the answer (`big_sent()` counts
what went out of either, so a test sees backpressure), and "/hang" answers only after
`release()`.

Only the Python 3 standard library; a thread per connection. Nothing sleeps to synchronise:
readers wait on sockets with deadlines.
"""

import json
import socket
import threading
import time


class Request:
    """One complete request as the canary parsed it."""

    def __init__(self, head, method, target, version, headers, body, trailers):
        self.head, self.method, self.target, self.version = head, method, target, version
        self.headers, self.body, self.trailers = headers, body, trailers

    def header(self, name):
        """Every value of field `name` (case-insensitive), in order."""
        return [v for k, v in self.headers if k.lower() == name.lower()]

    def __repr__(self):
        return "Request(%s %s, %d body bytes)" % (self.method, self.target, len(self.body))


class _Incomplete(Exception):
    pass


def _parse_request(data):
    """(Request, bytes used) for the first complete request in `data`; raises _Incomplete."""
    end = data.find(b"\r\n\r\n")
    if end < 0:
        raise _Incomplete()
    head = data[:end + 4]
    lines = head[:-4].split(b"\r\n")
    method, target, version = lines[0].decode("latin-1").split(" ", 2)
    headers = []
    for line in lines[1:]:
        name, _, value = line.decode("latin-1").partition(":")
        headers.append((name, value.strip(" \t")))
    lower = {k.lower(): v for k, v in headers}
    pos = end + 4
    body, trailers = b"", []
    if "chunked" in lower.get("transfer-encoding", "").lower():
        while True:
            line_end = data.find(b"\r\n", pos)
            if line_end < 0:
                raise _Incomplete()
            size = int(data[pos:line_end].split(b";")[0], 16)
            pos = line_end + 2
            if size == 0:
                break
            if len(data) < pos + size + 2:
                raise _Incomplete()
            body += data[pos:pos + size]
            pos += size + 2
        while True:
            line_end = data.find(b"\r\n", pos)
            if line_end < 0:
                raise _Incomplete()
            line = data[pos:line_end]
            pos = line_end + 2
            if not line:
                break
            name, _, value = line.decode("latin-1").partition(":")
            trailers.append((name, value.strip()))
    elif "content-length" in lower:
        length = int(lower["content-length"])
        if len(data) < pos + length:
            raise _Incomplete()
        body = data[pos:pos + length]
        pos += length
    return Request(head, method, target, version, headers, body, trailers), pos


class Canary:
    """See the module comment. `script`: {path prefix: raw response bytes}."""

    def __init__(self, name, script=None, close=False):
        self.name = name
        self.close = close  # every answer says "Connection: close" and closes
        self.script = dict(script or {})
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._received = []   # bytes per connection, in accept order
        self._requests = []   # complete requests, in arrival order
        self._conns = []
        self._big_sent = 0
        self._peer_closed = 0  # connections the gateway closed
        self._released = threading.Event()  # "/hang" waits for it
        threading.Thread(target=self._accept, daemon=True).start()

    def peer_closed(self):
        """How many connections the gateway (the peer) closed so far."""
        with self._lock:
            return self._peer_closed

    def big_sent(self):
        with self._lock:
            return self._big_sent

    def hold(self):
        """From now on "/hang" requests wait for release()."""
        self._released.clear()

    def release(self):
        """Lets every "/hang" request (held and future) be answered."""
        self._released.set()

    # What it saw. -------------------------------------------------------------------------------
    def received(self):
        """Every byte received so far, all connections concatenated (accept order)."""
        with self._lock:
            return b"".join(bytes(b) for b in self._received)

    def byte_count(self):
        with self._lock:
            return sum(len(b) for b in self._received)

    def requests(self):
        with self._lock:
            return list(self._requests)

    def wait_requests(self, count, timeout=5):
        """Waits until `count` complete requests arrived in all; returns them."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while len(self._requests) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError("%s: %d requests after %.1fs, wanted %d: %r" % (
                        self.name, len(self._requests), timeout, count, self._requests))
                self._changed.wait(left)
            return list(self._requests)

    # Serving. -----------------------------------------------------------------------------------
    def _accept(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with self._lock:
                buffer = bytearray()
                self._received.append(buffer)
                self._conns.append(conn)
            threading.Thread(target=self._serve, args=(conn, buffer), daemon=True).start()

    def _serve(self, conn, record):
        pending = b""
        try:
            while True:
                data = conn.recv(65536)
                if not data:
                    with self._lock:
                        self._peer_closed += 1
                    return
                with self._lock:
                    record.extend(data)
                    self._changed.notify_all()
                pending += data
                while True:
                    try:
                        request, used = _parse_request(pending)
                    except _Incomplete:
                        break
                    pending = pending[used:]
                    with self._lock:
                        self._requests.append(request)
                        self._changed.notify_all()
                    scripted = [raw for prefix, raw in self.script.items()
                                if request.target.startswith(prefix)]
                    if scripted and callable(scripted[0]):
                        scripted[0](conn, request)  # it answers; the connection stays open
                        continue
                    if scripted:
                        conn.sendall(scripted[0])
                        conn.shutdown(socket.SHUT_WR)
                        return
                    if request.target.startswith("/big/"):
                        self._send_big(conn, int(request.target[len("/big/"):]))
                        continue
                    if request.target.startswith("/interim/"):
                        self._send_big(conn, int(request.target[len("/interim/"):]), interim=True)
                        continue
                    if request.target.startswith("/hang"):
                        self._released.wait()
                    self.answer(conn, request)
                    if self.close:
                        conn.shutdown(socket.SHUT_WR)
                        return
        except (OSError, ValueError):
            return
        finally:
            conn.close()

    def answer(self, conn, request):
        """The usual answer: 200 with a JSON body naming the canary and the request."""
        body = json.dumps({"canary": self.name, "method": request.method,
                           "target": request.target, "body": len(request.body)}).encode()
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n%s\r\n%s" % (
                         len(body), b"Connection: close\r\n" if self.close else b"", body))

    def _send_big(self, conn, size, interim=False):
        """`size` bytes of body, or (interim) of "100 Continue" heads before an empty 200."""
        if interim:
            piece = b"HTTP/1.1 100 Continue\r\n\r\n" * 2730  # 65520 bytes
            size -= size % len(piece)
        else:
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % size)
            piece = b"x" * 65536
        left = size
        while left > 0:
            n = conn.send(piece[:min(left, len(piece))])
            left -= n
            with self._lock:
                self._big_sent += n
        if interim:
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")

    def stop(self):
        self._released.set()
        self.listener.close()
        with self._lock:
            for conn in self._conns:
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


# ---------------------------------------------------------------------------------------------
# The client side.

class Response:
    def __init__(self, status, reason, headers, body, raw):
        self.status, self.reason, self.headers, self.body, self.raw = (
            status, reason, headers, body, raw)

    def header(self, name):
        return [v for k, v in self.headers if k.lower() == name.lower()]

    def json(self):
        return json.loads(self.body)

    def __repr__(self):
        return "Response(%d %s, %r)" % (self.status, self.reason, self.body[:200])


def parse_response(data, head_request=False):
    """(Response, bytes used) for the first response in `data`, strictly (one Content-Length or
    chunked, as the gateway must send); None when incomplete; raises ValueError when malformed."""
    end = data.find(b"\r\n\r\n")
    if end < 0:
        return None
    lines = data[:end].split(b"\r\n")
    version, status, reason = (lines[0].decode("latin-1").split(" ", 2) + [""])[:3]
    if version not in ("HTTP/1.1", "HTTP/1.0") or len(status) != 3 or not status.isdigit():
        raise ValueError("bad status line %r" % lines[0])
    headers = []
    for line in lines[1:]:
        name, colon, value = line.decode("latin-1").partition(":")
        if not colon or name != name.strip():
            raise ValueError("bad field line %r" % line)
        headers.append((name, value.strip()))
    response = Response(int(status), reason, headers, b"", None)
    pos = end + 4
    lengths = response.header("content-length")
    chunked = response.header("transfer-encoding")
    if len(lengths) > 1 or (lengths and chunked):
        raise ValueError("ambiguous framing: %r" % headers)
    if head_request or response.status in (204, 304) or response.status < 200:
        pass
    elif chunked:
        body = b""
        while True:
            line_end = data.find(b"\r\n", pos)
            if line_end < 0:
                return None
            size = int(data[pos:line_end].split(b";")[0], 16)
            pos = line_end + 2
            if size == 0:
                trailer_end = data.find(b"\r\n\r\n", pos - 2)
                if trailer_end < 0:
                    return None
                pos = trailer_end + 4
                break
            if len(data) < pos + size + 2:
                return None
            body += data[pos:pos + size]
            pos += size + 2
        response.body = body
    elif lengths:
        length = int(lengths[0])
        if len(data) < pos + length:
            return None
        response.body = data[pos:pos + length]
        pos += length
    else:
        raise ValueError("response without framing (until close) is not expected here")
    response.raw = data[:pos]
    return response, pos


class RawClient:
    """One TCP connection to the gateway for raw bytes."""

    def __init__(self, port, timeout=5):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""
        self.eof = False
        self.timeout = timeout

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError("no complete response after %.1fs; got %r" % (
                self.timeout, self.buffer[:500]))
        self.sock.settimeout(left)
        try:
            data = self.sock.recv(65536)
        except ConnectionResetError:
            data = b""
        except socket.timeout:
            raise AssertionError("nothing more after %.1fs (eof: %s); got %r" % (
                self.timeout, self.eof, self.buffer[:500]))
        if not data:
            self.eof = True
        self.buffer += data

    def read_response(self, head_request=False):
        """The next response (waits up to the timeout); AssertionError at EOF before one."""
        deadline = time.monotonic() + self.timeout
        while True:
            parsed = parse_response(self.buffer, head_request)
            if parsed is not None:
                response, used = parsed
                self.buffer = self.buffer[used:]
                return response
            if self.eof:
                raise AssertionError("connection closed before a complete response: %r" %
                                     self.buffer[:500])
            self._fill(deadline)

    def read_to_eof(self):
        """Everything until the peer closes (waits up to the timeout): the connection must
        close. Returns the bytes after the responses already read."""
        deadline = time.monotonic() + self.timeout
        while not self.eof:
            self._fill(deadline)
        rest, self.buffer = self.buffer, b""
        return rest

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
