#!/usr/bin/env python3
"""Malformed HTTP against the real gateway (issue 15, item 4).

A real portico-controller and portico-gateway (admin on port 0), three canary upstreams that
record every byte they receive (canary_upstream.py): `public` behind PathPrefix "/", `admin`
behind Exact "/admin" (the protected route), `bad` behind PathPrefix "/bad", which answers
malformed responses. A raw-socket client sends each case and checks:

  - the status, and exactly one response (nothing after it);
  - the connection closed when the case requires it (else a second request on the same
    connection is answered, which proves the framing stayed in step);
  - what each canary saw: nothing at all, no complete request, or exactly the one request the
    case should forward (with its path, framing and fields as the case says);
  - a fresh request on a new connection is answered by the public canary afterwards;
  - the gateway's counter of local answers by status and reason (/api/v1/dataplane
    "rejected", /metrics portico_gateway_rejected_total) went up by one for the case's reason.

Path confusion follows the gateway's normalisation (gateway/http/path_normalize.h: RFC 3986
§6.2.2 as Envoy Gateway applies it by default): "/%61dmin", "//admin", "/public/../admin",
"/./admin", "/%2e%2e/admin" reach the admin route as "/admin"; "/admin/..;/" is not a dot
segment in RFC 3986 (";" is a sub-delim, Envoy does not strip it) and goes to the public route
unchanged; an escaped slash is redirected (307) to the decoded path.

Run: hostile_http_test.py --build BUILD_DIR [unittest args].
"""

import json
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import portico_procs  # noqa: E402
from portico_procs import binaries_from_args, Controller, Gateway, free_port, wait_until  # noqa: E402
from canary_upstream import Canary, RawClient  # noqa: E402
import dataplane_test  # noqa: E402  (its Gateway and Service YAML)

BINARIES = None
write = portico_procs.write_config_file


def gateway_yaml(port):
    return dataplane_test.gateway_yaml([port])


def service_yaml(name, port):
    return dataplane_test.backend_yaml(port, name)


def route_yaml(name, match_type, path, backend):
    return ("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n"
            "metadata: {name: %s, namespace: default}\nspec:\n  parentRefs: [{name: web}]\n"
            "  rules:\n  - matches: [{path: {type: %s, value: '%s'}}]\n"
            "    backendRefs: [{name: %s, port: 80}]\n" % (name, match_type, path, backend))


def rq(line="GET / HTTP/1.1", headers=(("Host", "a.test"),), body=b""):
    """A request's bytes: `line`, `headers` ((name, value) or raw bytes lines), then `body`."""
    out = line.encode() + b"\r\n" if isinstance(line, str) else line + b"\r\n"
    for h in headers:
        out += h if isinstance(h, bytes) else ("%s: %s\r\n" % h).encode()
    return out + b"\r\n" + body


def post(headers, body):
    return rq("POST / HTTP/1.1", (("Host", "a.test"),) + tuple(headers), body)


GET_PROBE = rq("GET /probe HTTP/1.1")

# Malformed upstream responses, by path under /bad/ (the bad canary sends them and closes).
BAD_RESPONSES = {
    "/bad/status-4-digits": b"HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n",
    "/bad/status-099": b"HTTP/1.1 099 Odd\r\nContent-Length: 0\r\n\r\n",
    "/bad/version-2": b"HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n",
    "/bad/icy": b"ICY 200 OK\r\nContent-Length: 0\r\n\r\n",
    "/bad/lowercase-version": b"http/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
    "/bad/duplicate-cl": b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc",
    "/bad/cl-te": (b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
                   b"3\r\nabc\r\n0\r\n\r\n"),
    "/bad/negative-cl": b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
    "/bad/te-gzip": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
                     b"3\r\nabc\r\n0\r\n\r\n"),
    "/bad/obs-fold": b"HTTP/1.1 200 OK\r\nX-A: a\r\n b\r\nContent-Length: 0\r\n\r\n",
    "/bad/bare-lf": b"HTTP/1.1 200 OK\nContent-Length: 0\n\n",
    "/bad/oversized-head": (b"HTTP/1.1 200 OK\r\n" + b"X-Big: " + b"a" * 70000 + b"\r\n"
                            b"Content-Length: 0\r\n\r\n"),
    "/bad/closed-in-head": b"HTTP/1.1 200 OK\r\nContent-Len",
    "/bad/nothing": b"",
    "/bad/bad-chunk": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                       b"3\r\nabc\r\nzz\r\n"),
    "/bad/truncated-body": b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello",
    "/bad/unexpected-101": (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                            b"Connection: upgrade\r\n\r\n"),
    "/bad/nul-in-field": b"HTTP/1.1 200 OK\r\nX-A: a\x00b\r\nContent-Length: 0\r\n\r\n",
    "/bad/te-twice": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
                      b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
    "/bad/space-before-colon": b"HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n",
    "/bad/connection-names-cl": (b"HTTP/1.1 200 OK\r\nConnection: content-length\r\n"
                                 b"Content-Length: 5\r\n\r\nhello"),
}

# An upstream on a keep-alive connection that sends more than the response: "POISON" must
# never reach a client (the connection is not reused with bytes pending).
POISON = b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nPOISON"


def _answer(raw, later=b""):
    def answer(conn, request):
        conn.sendall(raw)
        if later:
            DESYNC_SENT_LATER.clear()
            conn.sendall(later)
            DESYNC_SENT_LATER.set()
    return answer


def _h2c(conn, request):
    """An upstream that takes an h2c upgrade whenever it is offered, then reads what comes."""
    if request.header("upgrade"):
        conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n"
                     b"Upgrade: h2c\r\n\r\n")
    else:
        CANARIES["desync"].answer(conn, request)


CANARIES = {}
DESYNC_SENT_LATER = __import__("threading").Event()
DESYNC_RESPONSES = {
    "/desync/h2c": _h2c,
    "/desync/extra": _answer(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" + POISON),
    "/desync/head": _answer(POISON),  # a body for HEAD
    "/desync/204": _answer(b"HTTP/1.1 204 No Content\r\n\r\n" + POISON),
    "/desync/304": _answer(b"HTTP/1.1 304 Not Modified\r\nContent-Length: 6\r\n\r\n"
                           b"POISON"),
}


class Case:
    """One hostile input. `status`/`reason`: the answer and the counter it must bump
    (reason None: an answer the upstream gave, no counter); `close`: the connection must close
    after it; `forwards`: None (no canary saw a byte), "incomplete" (a canary may have seen the
    head but no complete request), or (canary name, check(request) -> None) for exactly one
    forwarded request; `check(test, response)`: more about the answer."""

    def __init__(self, name, request, status, reason, close=True, forwards=None, responses=1,
                 head_request=False, check=None):
        self.name, self.request, self.status, self.reason = name, request, status, reason
        self.close, self.forwards, self.responses = close, forwards, responses
        self.head_request, self.check = head_request, check


def to(canary, target=None, check=None):
    """A forwarded request to `canary` (its target `target`, then `check(request)`)."""
    def verify(tc, request):
        if target is not None:
            tc.assertEqual(request.target, target)
        if check is not None:
            check(tc, request)
    return (canary, verify)


def body_is(expected):
    def check(tc, request):
        tc.assertEqual(request.body, expected)
    return check


def fields(**want):
    """Checks the forwarded request's fields: name=[values] (underscores for dashes)."""
    def check(tc, request):
        for name, values in want.items():
            tc.assertEqual(request.header(name.replace("_", "-")), values, name)
    return check


CHUNKED = (("Transfer-Encoding", "chunked"),)
HIDDEN = rq("GET /admin HTTP/1.1")  # a request inside a body: never a request of its own

CASES = [
    # --- Framing: Content-Length and Transfer-Encoding ---------------------------------------
    Case("cl_and_te", post((("Content-Length", "5"),) + CHUNKED, b"0\r\n\r\n"),
         400, "content_length_with_transfer_encoding"),
    Case("te_then_cl", post(CHUNKED + (("Content-Length", "5"),), b"0\r\n\r\n"),
         400, "content_length_with_transfer_encoding"),
    Case("duplicate_cl_equal", post((("Content-Length", "5"), ("Content-Length", "5")),
                                    b"hello"), 400, "duplicate_content_length"),
    Case("duplicate_cl_different", post((("Content-Length", "5"), ("Content-Length", "6")),
                                        b"hello!"), 400, "duplicate_content_length"),
    Case("cl_list", post((("Content-Length", "5, 5"),), b"hello"), 400, "invalid_content_length"),
    Case("cl_negative", post((("Content-Length", "-1"),), b""), 400, "invalid_content_length"),
    Case("cl_plus_sign", post((("Content-Length", "+5"),), b"hello"),
         400, "invalid_content_length"),
    Case("cl_hex", post((("Content-Length", "0x5"),), b"hello"), 400, "invalid_content_length"),
    Case("cl_overflow", post((("Content-Length", "99999999999999999999"),), b""),
         400, "invalid_content_length"),
    Case("cl_empty", post((("Content-Length", ""),), b""), 400, "invalid_content_length"),
    Case("te_xchunked", post((("Transfer-Encoding", "xchunked"),), b"0\r\n\r\n"),
         400, "transfer_encoding_not_chunked"),
    Case("te_chunked_identity", post((("Transfer-Encoding", "chunked, identity"),),
                                     b"0\r\n\r\n"), 400, "transfer_encoding_not_chunked"),
    Case("te_chunked_twice", post((("Transfer-Encoding", "chunked"),
                                   ("Transfer-Encoding", "chunked")), b"0\r\n\r\n"),
         400, "chunked_repeated"),
    Case("te_gzip_chunked", post((("Transfer-Encoding", "gzip, chunked"),), b"0\r\n\r\n"),
         501, "unsupported_transfer_coding"),
    Case("te_chunked_param", post((("Transfer-Encoding", "chunked;q=1"),), b"0\r\n\r\n"),
         400, "transfer_encoding_not_chunked"),
    Case("te_vertical_tab", post((b"Transfer-Encoding: \x0bchunked\r\n",), b"0\r\n\r\n"),
         400, "invalid_header_value"),
    Case("te_space_before_colon", post((b"Transfer-Encoding : chunked\r\n",), b"0\r\n\r\n"),
         400, "whitespace_before_colon"),
    Case("te_in_http10", rq("POST / HTTP/1.0", (("Host", "a.test"),) + CHUNKED, b"0\r\n\r\n"),
         400, "transfer_encoding_in_http10"),
    # OWS around a value is not part of it, and codings are case-insensitive (RFC 9110 §5.5,
    # §7.8): these are chunked, decoded and re-framed, never passed on as they came.
    Case("te_trailing_space", post((b"Transfer-Encoding: chunked \r\n",), b"3\r\nabc\r\n0\r\n\r\n"),
         200, None, close=False,
         forwards=to("public", "/", lambda tc, r: (
             tc.assertEqual(r.body, b"abc"),
             tc.assertEqual(r.header("transfer-encoding"), ["chunked"])))),
    Case("te_tab", post((b"Transfer-Encoding:\tchunked\r\n",), b"3\r\nabc\r\n0\r\n\r\n"),
         200, None, close=False, forwards=to("public", "/", body_is(b"abc"))),
    Case("te_uppercase", post((("Transfer-Encoding", "CHUNKED"),), b"3\r\nabc\r\n0\r\n\r\n"),
         200, None, close=False, forwards=to("public", "/", body_is(b"abc"))),

    # --- Field syntax ---------------------------------------------------------------------
    Case("obs_fold", rq(headers=(("Host", "a.test"), b"X-A: a\r\n", b" folded\r\n")),
         400, "obs_fold"),
    Case("obs_fold_te", post((("Transfer-Encoding", "gzip"), b" chunked\r\n"), b"0\r\n\r\n"),
         400, "obs_fold"),
    Case("bare_cr_in_value", rq(headers=(("Host", "a.test"), b"X-A: a\rb\r\n")),
         400, "bare_cr"),
    Case("bare_lf_line_end", rq(headers=(("Host", "a.test"), b"X-A: a\n")), 400, "bare_lf"),
    Case("nul_in_value", rq(headers=(("Host", "a.test"), b"X-A: a\x00b\r\n")),
         400, "invalid_header_value"),
    Case("space_in_name", rq(headers=(("Host", "a.test"), b"X A: b\r\n")),
         400, "whitespace_before_colon"),
    Case("empty_name", rq(headers=(("Host", "a.test"), b": b\r\n")), 400, "invalid_header_name"),
    Case("obs_text_in_name", rq(headers=(("Host", "a.test"), b"X-\xc4: 1\r\n")),
         400, "invalid_header_name"),
    Case("folded_first_field", rq(headers=(b" Host: a.test\r\n",)), 400, "obs_fold"),
    Case("bare_lf_final_line", b"GET / HTTP/1.1\r\nHost: a.test\r\n\n",
         400, "bare_lf"),
    # obs-text in a value is allowed (RFC 9110 §5.5) and passes as it came.
    Case("obs_text_in_value", rq("GET /obs HTTP/1.1", (("Host", "a.test"), b"X-A: \xc4\r\n")),
         200, None, close=False,
         forwards=to("public", "/obs", fields(x_a=["\xc4"]))),
    Case("no_colon", rq(headers=(("Host", "a.test"), b"X-Ab\r\n")), 400, "missing_colon"),

    # --- Request line and version --------------------------------------------------------
    # Empty lines before the request line are skipped (RFC 9112 §2.2).
    Case("leading_empty_lines", b"\r\n\r\n" + rq("GET /lead HTTP/1.1"), 200, None, close=False,
         forwards=to("public", "/lead")),
    Case("absolute_form_uppercase_scheme", rq("GET HTTP://a.test/up HTTP/1.1"), 200, None,
         close=False, forwards=to("public", "/up")),
    Case("absolute_form_other_scheme", rq("GET ftp://a.test/ HTTP/1.1"), 400, "invalid_target"),
    Case("http10_keep_alive", rq("GET /ka HTTP/1.0", (("Connection", "keep-alive"),)), 200, None,
         close=False, forwards=to("public", "/ka"),
         check=lambda tc, r: tc.assertEqual(r.header("connection"), ["keep-alive"])),
    Case("http_1_2", rq("GET / HTTP/1.2"), 505, "http_version_not_supported"),
    Case("http_2_0_on_h1", rq("GET / HTTP/2.0"), 505, "http_version_not_supported"),
    Case("lowercase_version", rq("GET / http/1.1"), 400, "invalid_version"),
    Case("missing_sp_before_version", rq("GET /HTTP/1.1"), 400, "invalid_request_line"),
    Case("double_sp", rq("GET  / HTTP/1.1"), 400, "invalid_target"),
    Case("http_0_9", rq("GET /", headers=()), 400, "invalid_request_line"),
    Case("bare_cr_request_line", rq(b"GET /\r HTTP/1.1"), 400, "bare_cr"),
    Case("raw_utf8_target", rq(b"GET /\xc3\xa9 HTTP/1.1"), 400, "invalid_target"),
    Case("fragment_in_target", rq("GET /a#b HTTP/1.1"), 400, "invalid_target"),
    Case("userinfo_in_absolute_form", rq("GET http://u@a.test/ HTTP/1.1"), 400, "invalid_target"),
    Case("connect", rq("CONNECT a.test:443 HTTP/1.1"), 501, "connect_not_supported"),
    Case("tls_client_hello", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 32,
         400, "invalid_method"),
    Case("asterisk_not_options", rq("GET * HTTP/1.1"), 400, "invalid_target"),
    Case("bad_expect", rq(headers=(("Host", "a.test"), ("Expect", "200-ok"))),
         417, "unsupported_expectation"),
    # Methods are case-sensitive tokens: "get" is another method, forwarded as sent.
    Case("lowercase_method", rq("get /x HTTP/1.1"), 200, None, close=False,
         forwards=to("public", "/x", lambda tc, r: tc.assertEqual(r.method, "get"))),

    # --- Host ---------------------------------------------------------------------------
    Case("missing_host_http11", rq(headers=()), 400, "missing_host"),
    Case("duplicate_host", rq(headers=(("Host", "a.test"), ("Host", "b.test"))),
         400, "multiple_host"),
    Case("host_bad_port", rq(headers=(("Host", "a.test:80x"),)), 400, "invalid_host"),
    Case("host_port_too_big", rq(headers=(("Host", "a.test:65536"),)), 400, "invalid_host"),
    Case("host_unclosed_bracket", rq(headers=(("Host", "[::1"),)), 400, "invalid_host"),
    Case("host_brackets_around_name", rq(headers=(("Host", "[a.test]"),)), 400, "invalid_host"),
    Case("host_bad_percent", rq(headers=(("Host", "a%zz.test"),)), 400, "invalid_host"),
    Case("host_userinfo", rq(headers=(("Host", "u@a.test"),)), 400, "invalid_host"),
    Case("host_space", rq(headers=(("Host", "a.test b"),)), 400, "invalid_host"),
    # HTTP/1.0 may omit Host (answered with close: 1.0 without keep-alive).
    Case("http10_without_host", rq("GET /ten HTTP/1.0", headers=()), 200, None, close=True,
         forwards=to("public", "/ten")),
    # The absolute-form authority wins over Host (RFC 9112 §3.2.2).
    Case("absolute_form_overrides_host",
         rq("GET http://b.test/abs HTTP/1.1", (("Host", "a.test"),)), 200, None, close=False,
         forwards=to("public", "/abs", fields(host=["b.test"]))),

    # --- Chunk framing and trailers -------------------------------------------------------
    Case("chunk_bad_hex", post(CHUNKED, b"zz\r\nabc\r\n0\r\n\r\n"), 400, "invalid_chunk_size",
         forwards="incomplete"),
    Case("chunk_size_overflow", post(CHUNKED, b"fffffffffffffffff\r\nabc\r\n0\r\n\r\n"),
         400, "chunk_size_overflow", forwards="incomplete"),
    Case("chunk_negative", post(CHUNKED, b"-3\r\nabc\r\n0\r\n\r\n"), 400, "invalid_chunk_size",
         forwards="incomplete"),
    Case("chunk_leading_space", post(CHUNKED, b" 3\r\nabc\r\n0\r\n\r\n"), 400,
         "invalid_chunk_size", forwards="incomplete"),
    Case("chunk_missing_crlf", post(CHUNKED, b"3\r\nabcX\r\n0\r\n\r\n"), 400,
         "missing_chunk_crlf", forwards="incomplete"),
    Case("chunk_bare_lf", post(CHUNKED, b"3\nabc\r\n0\r\n\r\n"), 400, "bare_lf",
         forwards="incomplete"),
    Case("chunk_extension_flood", post(CHUNKED, b"3;" + b"a" * 5000 + b"\r\nabc\r\n0\r\n\r\n"),
         400, "chunk_line_too_long", forwards="incomplete"),
    Case("chunk_extension_bad", post(CHUNKED, b"3;\x01\r\nabc\r\n0\r\n\r\n"), 400,
         "invalid_chunk_extension", forwards="incomplete"),
    Case("chunk_size_trailing_space", post(CHUNKED, b"3 \r\nabc\r\n0\r\n\r\n"), 400,
         "invalid_chunk_size", forwards="incomplete"),
    Case("chunk_size_leading_zeros", post(CHUNKED, b"0003\r\nabc\r\n000\r\n\r\n"), 200, None,
         close=False, forwards=to("public", "/", body_is(b"abc"))),
    Case("chunk_extension_ok", post(CHUNKED, b"3;name=value\r\nabc\r\n0\r\n\r\n"), 200, None,
         close=False, forwards=to("public", "/", body_is(b"abc"))),
    Case("trailer_obs_fold", post(CHUNKED, b"3\r\nabc\r\n0\r\nX-T: 1\r\n folded\r\n\r\n"),
         400, "obs_fold", forwards="incomplete"),
    Case("trailer_bare_lf", post(CHUNKED, b"3\r\nabc\r\n0\r\nX-T: 1\n\r\n"), 400, "bare_lf",
         forwards="incomplete"),
    Case("trailer_forwarded", post(CHUNKED, b"3\r\nabc\r\n0\r\nX-Trailer: t\r\n\r\n"), 200, None,
         close=False, forwards=to("public", "/", lambda tc, r: (
             tc.assertEqual(r.body, b"abc"),
             tc.assertEqual(r.trailers, [("X-Trailer", "t")])))),
    Case("one_byte_chunks", post(CHUNKED, b"".join(b"1\r\n%c\r\n" % c for c in b"hello") +
                                 b"0\r\n\r\n"), 200, None, close=False,
         forwards=to("public", "/", body_is(b"hello"))),

    # --- Pipelines ------------------------------------------------------------------------
    Case("pipeline_valid_then_cl_te",
         rq("GET /first HTTP/1.1") + post((("Content-Length", "5"),) + CHUNKED, b"0\r\n\r\n"),
         400, "content_length_with_transfer_encoding", responses=2,
         forwards=to("public", "/first")),
    Case("pipeline_invalid_then_valid",
         rq("GET / HTTP/1.1", headers=(("Host", "a.test"), b"X: a\n")) + rq("GET /second"),
         400, "bare_lf"),
    Case("pipeline_body_hides_request",
         post((("Content-Length", str(len(HIDDEN))),), HIDDEN), 200, None, close=False,
         forwards=to("public", "/", body_is(HIDDEN))),

    # --- Hop-by-hop abuse -----------------------------------------------------------------
    Case("connection_names_content_length",
         post((("Connection", "Content-Length"), ("Content-Length", "5")), b"hello"),
         400, "connection_lists_content_length"),
    Case("connection_names_host",
         rq("GET /hop HTTP/1.1", (("Host", "a.test"), ("Connection", "host"))), 200, None,
         close=False, forwards=to("public", "/hop", fields(host=["a.test"]))),
    Case("connection_names_custom",
         rq("GET /hop HTTP/1.1", (("Host", "a.test"), ("Connection", "x-secret"),
                                  ("X-Secret", "1"), ("Keep-Alive", "timeout=5"),
                                  ("Proxy-Connection", "keep-alive"), ("TE", "trailers"))),
         200, None, close=False,
         forwards=to("public", "/hop", fields(x_secret=[], keep_alive=[], proxy_connection=[],
                                              te=[], connection=[]))),
    Case("connection_names_transfer_encoding",
         post((("Connection", "transfer-encoding"),) + CHUNKED, b"3\r\nabc\r\n0\r\n\r\n"),
         200, None, close=False, forwards=to("public", "/", lambda tc, r: (
             tc.assertEqual(r.body, b"abc"),
             tc.assertEqual(r.header("transfer-encoding"), ["chunked"])))),
    # h2c by Upgrade is never tunnelled (h2c smuggling: the tunnel would carry later requests
    # past routing): the request is served plainly, without its Upgrade and HTTP2-Settings.
    Case("h2c_upgrade_not_tunnelled",
         rq("GET /desync/h2c HTTP/1.1", (("Host", "a.test"),
                                         ("Connection", "Upgrade, HTTP2-Settings"),
                                         ("Upgrade", "h2c"), ("HTTP2-Settings", "AAMAAABkAAQAAP__"))),
         200, None, close=False,
         forwards=to("desync", "/desync/h2c", fields(upgrade=[], http2_settings=[],
                                                     connection=[]))),
    Case("connection_close_wins", rq("GET /c HTTP/1.1", (("Host", "a.test"),
                                                        ("Connection", "keep-alive, close"))),
         200, None, close=True, forwards=to("public", "/c")),

    # --- Path confusion against the protected (Exact /admin) route ------------------------
    Case("path_admin", rq("GET /admin HTTP/1.1"), 200, None, close=False,
         forwards=to("admin", "/admin")),
    Case("path_encoded_letter", rq("GET /%61dmin HTTP/1.1"), 200, None, close=False,
         forwards=to("admin", "/admin")),
    Case("path_double_slash", rq("GET //admin HTTP/1.1"), 200, None, close=False,
         forwards=to("admin", "/admin")),
    Case("path_dot_dot", rq("GET /public/../admin HTTP/1.1"), 200, None, close=False,
         forwards=to("admin", "/admin")),
    Case("path_dot", rq("GET /./admin HTTP/1.1"), 200, None, close=False,
         forwards=to("admin", "/admin")),
    Case("path_encoded_dots", rq("GET /x/%2e%2E/admin HTTP/1.1"), 200, None, close=False,
         forwards=to("admin", "/admin")),
    Case("path_backslash", rq(b"GET /x\\..\\admin HTTP/1.1"), 200, None, close=False,
         forwards=to("admin", "/admin")),
    Case("path_absolute_form", rq("GET http://a.test/x/../admin HTTP/1.1"), 200, None,
         close=False, forwards=to("admin", "/admin")),
    Case("path_semicolon_dot_dot", rq("GET /admin/..;/ HTTP/1.1"), 200, None, close=False,
         forwards=to("public", "/admin/..;/")),
    Case("path_uppercase", rq("GET /ADMIN HTTP/1.1"), 200, None, close=False,
         forwards=to("public", "/ADMIN")),
    Case("path_trailing_dot", rq("GET /admin/. HTTP/1.1"), 200, None, close=False,
         forwards=to("public", "/admin/")),
    Case("path_encoded_slash", rq("GET /x/..%2fadmin HTTP/1.1"), 307, None, close=False,
         check=lambda tc, r: tc.assertEqual(r.header("location"), ["/admin"])),
    Case("path_bad_escape", rq("GET /adm%zzin HTTP/1.1"), 400, "invalid_path", close=False),
    Case("path_truncated_escape", rq("GET /admin%2 HTTP/1.1"), 400, "invalid_path", close=False),
    Case("path_double_encoding_decoded_once", rq("GET /%2561dmin HTTP/1.1"), 200, None,
         close=False, forwards=to("public", "/%2561dmin")),
    Case("path_parameter", rq("GET /admin;x=1 HTTP/1.1"), 200, None, close=False,
         forwards=to("public", "/admin;x=1")),
    Case("path_trailing_slash", rq("GET /admin/ HTTP/1.1"), 200, None, close=False,
         forwards=to("public", "/admin/")),
    Case("path_dot_dot_above_root", rq("GET /../../admin HTTP/1.1"), 200, None, close=False,
         forwards=to("admin", "/admin")),
    Case("path_query_untouched", rq("GET /admin?next=/../x HTTP/1.1"), 200, None, close=False,
         forwards=to("admin", "/admin?next=/../x")),

    # --- Malformed upstream responses: 502 once, the request sent once ---------------------
] + [
    Case("upstream_" + path[len("/bad/"):].replace("-", "_"), rq("GET %s HTTP/1.1" % path),
         502, reason, close=False, forwards=to("bad", path))
    for path, reason in [
        ("/bad/status-4-digits", "invalid_status_line"),
        ("/bad/status-099", "invalid_status_code"),
        ("/bad/version-2", "invalid_status_line"),
        ("/bad/icy", "invalid_status_line"),
        ("/bad/lowercase-version", "invalid_status_line"),
        ("/bad/duplicate-cl", "conflicting_content_length"),
        ("/bad/cl-te", "content_length_with_transfer_encoding"),
        ("/bad/negative-cl", "invalid_content_length"),
        ("/bad/te-gzip", "unsupported_transfer_coding"),
        ("/bad/obs-fold", "obs_fold"),
        ("/bad/bare-lf", "bare_lf"),
        ("/bad/oversized-head", "header_section_too_large"),
        ("/bad/closed-in-head", "upstream_closed_in_head"),
        ("/bad/nothing", "upstream_closed"),
        ("/bad/unexpected-101", "unexpected_upgrade"),
        ("/bad/nul-in-field", "invalid_header_value"),
        ("/bad/te-twice", "chunked_repeated"),
        ("/bad/space-before-colon", "whitespace_before_colon"),
    ]
] + [
    # A Connection option naming Content-Length in a response: the field is dropped, the
    # gateway frames the body itself (exactly one Content-Length).
    Case("upstream_connection_names_content_length", rq("GET /bad/connection-names-cl HTTP/1.1"),
         200, None, close=False, forwards=to("bad", "/bad/connection-names-cl"),
         check=lambda tc, r: (tc.assertEqual(r.body, b"hello"),
                              tc.assertEqual(r.header("content-length"), ["5"]))),
]


def start_world(test, canaries, routes, extra, ready_paths=("/",)):
    """Sets test.workdir, .canaries, .port, .controller and .gateway: a controller on a Gateway
    with one HTTP listener, a Service per canary and `routes` [(name, match type, path,
    canary)], then a gateway with `extra` flags once every path of `ready_paths` is served."""
    test.workdir = tempfile.mkdtemp(prefix="portico-hostile-")
    test.conf = os.path.join(test.workdir, "conf")
    os.makedirs(test.conf)
    test.canaries = canaries
    test.port = free_port()
    write(test.conf, "00-gateway.yaml", gateway_yaml(test.port))
    for name, canary in canaries.items():
        write(test.conf, "10-%s.yaml" % name, service_yaml(name, canary.port))
    for name, match_type, path, backend in routes:
        write(test.conf, "20-%s.yaml" % name, route_yaml(name, match_type, path, backend))
    test.controller = Controller(BINARIES, test.conf, test.workdir)
    test.controller.wait_ready()
    test.gateway = start_gateway(test, extra, "gateway", ready_paths)


def start_gateway(test, extra, name, ready_paths=("/",)):
    gateway = Gateway(BINARIES, test.workdir, test.controller.sync_address(), name=name,
                      serve=["default/web"], snapshot=False, extra=extra)
    gateway.wait_admin()

    def served():
        with RawClient(test.port, timeout=2) as c:
            c.send(b"".join(rq("GET %s HTTP/1.1" % path) for path in ready_paths))
            return all(c.read_response().status == 200 for _ in ready_paths)
    wait_until(served, 20, "%s to serve %s" % (name, ", ".join(ready_paths)))
    return gateway


def stop_world(test):
    for p in (test.gateway, test.controller):
        p.stop()
    for canary in test.canaries.values():
        canary.stop()
    shutil.rmtree(test.workdir, ignore_errors=True)


def log_tail_on_failure(test):
    """In tearDown: the gateway's log tail when the test failed."""
    failed = bool(getattr(test, "_outcome", None) and any(
        e for _, e in getattr(test._outcome, "errors", []) if e))
    if failed:
        sys.stderr.write("---- gateway log (tail)\n%s\n" % test.gateway.tail(20))


def rejected(gateway):
    """The gateway's local error answers: {(status, reason): count}."""
    stats = gateway.api("/api/v1/dataplane")
    return {(r["status"], r["reason"]): r["count"] for r in stats["rejected"]}


class HostileHttpTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        start_world(cls, {"public": Canary("public"), "admin": Canary("admin"),
                          "bad": Canary("bad", BAD_RESPONSES, close=True),
                          "desync": CANARIES.setdefault("desync",
                                                        Canary("desync", DESYNC_RESPONSES))},
                    [("public", "PathPrefix", "/", "public"),
                     ("admin", "Exact", "/admin", "admin"),
                     ("bad", "PathPrefix", "/bad", "bad"),
                     ("desync", "PathPrefix", "/desync", "desync")],
                    ["--workers", "2", "--access-log", "off"],
                    ready_paths=("/", "/admin", "/bad/ready"))

    @classmethod
    def tearDownClass(cls):
        stop_world(cls)

    def tearDown(self):
        log_tail_on_failure(self)

    def rejected(self):
        return rejected(self.gateway)

    def run_case(self, case):
        before = self.rejected()
        seen = {name: (c.byte_count(), len(c.requests())) for name, c in self.canaries.items()}
        with RawClient(self.port) as client:
            client.send(case.request)
            responses = [client.read_response(case.head_request) for _ in range(case.responses)]
            last = responses[-1]
            self.assertEqual(last.status, case.status, "%s: %r" % (case.name, responses))
            if case.check is not None:
                case.check(self, last)
            if case.close:
                self.assertIn("close", [v.lower() for v in last.header("connection")],
                              "%s: a closing answer says so" % case.name)
                self.assertEqual(client.read_to_eof(), b"",
                                 "%s: exactly one response, then close" % case.name)
            else:
                # The connection stays in step: the next request gets the next answer.
                client.send(GET_PROBE)
                probe = client.read_response()
                self.assertEqual((probe.status, probe.json()["target"]), (200, "/probe"),
                                 case.name)
        # A fresh connection is served; once its request reached the public canary, everything
        # the case made the gateway forward has arrived too (the gateway forwards before it
        # answers).
        with RawClient(self.port) as fresh:
            fresh.send(rq("GET /fresh HTTP/1.1"))
            answer = fresh.read_response()
            self.assertEqual((answer.status, answer.json()["target"]), (200, "/fresh"), case.name)
        probes = 1 + (0 if case.close else 1)
        self.check_canaries(case, seen, probes)
        after = self.rejected()
        if case.reason is not None:
            key = (case.status, case.reason)
            self.assertEqual(after.get(key, 0) - before.get(key, 0), 1,
                             "%s: counter %r; changed: %r" % (case.name, key, {
                                 k: v - before.get(k, 0) for k, v in after.items()
                                 if v != before.get(k, 0)}))

    # --- Cases that do not fit the table -------------------------------------------------
    def upstream_fails_after_head(self, path, reason):
        """The upstream breaks its body after a head went out: the client gets that head, then
        the connection closes before the body is complete (no second answer can follow)."""
        before = self.rejected()
        with RawClient(self.port) as client:
            client.send(rq("GET %s HTTP/1.1" % path))
            rest = client.read_to_eof()
            self.assertTrue(rest.startswith(b"HTTP/1.1 200 OK\r\n"), rest[:200])
            self.assertIsNone(__import__("canary_upstream").parse_response(rest), rest)
        self.assertEqual(self.rejected().get((502, reason), 0) - before.get((502, reason), 0), 1)
        self.assertEqual(len([r for r in self.canaries["bad"].requests() if r.target == path]),
                         1 + self.sent_before.get(path, 0))
        self.sent_before[path] = self.sent_before.get(path, 0) + 1
        self.fresh_request_works()

    sent_before = {}

    def fresh_request_works(self):
        with RawClient(self.port) as fresh:
            fresh.send(rq("GET /fresh HTTP/1.1"))
            answer = fresh.read_response()
            self.assertEqual((answer.status, answer.json()["target"]), (200, "/fresh"))

    def test_upstream_bad_chunk_with_the_head_is_502(self):
        """The head and a broken chunk arrive together (one write of the canary): no byte went
        to the client yet, so the answer is one 502, and the connection goes on."""
        before = self.rejected()
        with RawClient(self.port) as client:
            client.send(rq("GET /bad/bad-chunk HTTP/1.1"))
            r = client.read_response()
            self.assertEqual(r.status, 502, r)
            client.send(GET_PROBE)
            self.assertEqual(client.read_response().json()["target"], "/probe")
        key = (502, "bad_upstream_chunk")
        self.assertEqual(self.rejected().get(key, 0) - before.get(key, 0), 1)
        self.fresh_request_works()

    def test_upstream_truncated_body(self):
        self.upstream_fails_after_head("/bad/truncated-body", "upstream_closed_in_body")

    def desync(self, method, path, status, body):
        """The first answer is right, no later answer on any connection is the poison, and
        the connection that carried it is closed by the gateway, not reused."""
        canary = self.canaries["desync"]
        closed = canary.peer_closed()
        with RawClient(self.port) as client:
            client.send(rq("%s %s HTTP/1.1" % (method, path)))
            first = client.read_response(head_request=method == "HEAD")
            self.assertEqual((first.status, first.body), (status, body))
            wait_until(lambda: canary.peer_closed() > closed, 5,
                       "the gateway to close the upstream connection that sent too much")
            for i in range(3):
                client.send(rq("GET /desync/next%d HTTP/1.1" % i))
                r = client.read_response()
                self.assertEqual((r.status, r.json()["target"]), (200, "/desync/next%d" % i))
        self.fresh_request_works()

    def test_upstream_extra_response_after_body(self):
        self.desync("GET", "/desync/extra", 200, b"ok")

    def test_upstream_body_for_head(self):
        self.desync("HEAD", "/desync/head", 200, b"")

    def test_upstream_body_after_204(self):
        self.desync("GET", "/desync/204", 204, b"")

    def test_upstream_body_after_304(self):
        self.desync("GET", "/desync/304", 304, b"")

    def test_client_half_close_after_request_is_answered(self):
        """A client that sends its request and shuts down its write side still gets the answer,
        then the close."""
        with RawClient(self.port) as client:
            client.send(rq("GET /half HTTP/1.1"))
            client.sock.shutdown(__import__("socket").SHUT_WR)
            r = client.read_response()
            self.assertEqual((r.status, r.json()["target"]), (200, "/half"))
            self.assertEqual(client.read_to_eof(), b"")

    def check_canaries(self, case, seen, probes):
        for name, canary in self.canaries.items():
            bytes_before, count_before = seen[name]
            expected = probes if name == "public" else 0
            if case.forwards is not None and case.forwards != "incomplete" and \
                    case.forwards[0] == name:
                expected += 1
            requests = canary.wait_requests(count_before + expected)[count_before:]
            self.assertEqual(len(requests), expected, "%s: %s got %r" % (case.name, name,
                                                                         requests))
            ours = [r for r in requests if r.target not in ("/probe", "/fresh")]
            if case.forwards is None or case.forwards == "incomplete":
                self.assertEqual(ours, [], "%s: %s" % (case.name, name))
                if case.forwards is None:
                    # Not a byte beyond the probes' requests.
                    extra = canary.byte_count() - bytes_before - sum(len(r.head) for r in requests)
                    self.assertEqual(extra, 0, "%s: %s saw %d bytes" % (case.name, name, extra))
            elif case.forwards[0] == name:
                self.assertEqual(len(ours), 1, "%s: %s got %r" % (case.name, name, ours))
                case.forwards[1](self, ours[0])


def _add_cases():
    names = set()
    for case in CASES:
        assert case.name not in names, case.name
        names.add(case.name)
        setattr(HostileHttpTest, "test_" + case.name,
                lambda self, case=case: self.run_case(case))


_add_cases()


def _test_metrics_have_reason_labels(self):
    """The reject counter reaches /metrics with its labels (the cases check the JSON)."""
    self.run_case(CASES[0])
    status, text = self.gateway.admin.call("GET", "/metrics")
    self.assertEqual(status, 200)
    line = [l for l in text.splitlines() if l.startswith(
        'portico_gateway_rejected_total{code="400",'
        'reason="content_length_with_transfer_encoding"}')]
    self.assertEqual(len(line), 1, text[-2000:])
    self.assertGreaterEqual(int(line[0].rsplit(" ", 1)[1]), 1)


HostileHttpTest.test_metrics_have_reason_labels = _test_metrics_have_reason_labels


if __name__ == "__main__":
    BINARIES, argv = binaries_from_args()
    unittest.main(argv=argv, verbosity=1)
