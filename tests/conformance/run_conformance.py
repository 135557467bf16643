#!/usr/bin/env python3
"""Gateway API conformance: the HTTP routing cases, through a real controller and gateway.

For each test file of the conformance data (../shared/conformance/gateway-api/, format in its
README; --conformance-dir takes any directory of files in that format): write the file's
objects (conformance_data.write_config) into a temporary config directory, with
  - each Gateway given its own loopback address through spec.addresses (127.1.<slot>.<n>), so
    every Gateway binds the spec's real ports (80, 8080, ...) as it would in Kubernetes;
  - for each Service with a selector, the EndpointSlice Kubernetes would have written: the
    addresses of the echo backends whose pod labels match (one loopback address per pod:
    127.0.<2+i>.<1+r> and fd00:<2+i>::<1+r> for replica r of _base.json echoBackends[i], all on
    the pods' port 3000), and runtimeSetup EndpointSlices filled the same way;
start a real portico-controller and a real portico-gateway serving GatewayClass "portico"
(--advertise-address: the file's Gateway addresses), wait until every statusChecks entry holds
(conformance_data.poll_checks), then send each case's request to its Gateway's address and
listener port and check the response as the README's "Case format" says: each request is
repeated until it passes 3 times in a row, within --consistency-timeout seconds for the first
case of a phase (later cases, and all cases of a phase whose status checks or actions failed:
at least --min-window seconds). followUps: their actions, status checks and cases.

https cases (TlsClient): HTTP/1.1 over TLS 1.2+, no ALPN, SNI request.sni, trusting exactly the
generated Secret gateway-conformance-infra/tls-validity-checks-certificate (or request.trust:
a Secret's leaf, accepted byte-identical through PARTIAL_CHAIN, a ConfigMap's CA, the system
roots), the peer's name checked as Go's crypto/x509 does (a "*" label covers one label, so
"*.org" covers example.org, which OpenSSL's own check refuses); request.clientCertificate is
presented when the server asks, and expect.clientCertificateRequested looks for the server's
CertificateRequest through the ssl module's message callback. expect.failure "connection"
(https) passes on 3 attempts in a row without a complete HTTP response; "httpStatus" (http) on
3 non-200 statuses, 408/504 and transport errors being "not yet", a 200 failing the case at
once. request.protocol H2 cases fail (HTTP/2 is another issue); --h2-over-http1 also sends each
over HTTP/1.1, reported as "<name> [over HTTP/1.1]".

A directory whose _base.json "extends" another (extended/, whose README adds to the format) is
run strictly: its base is applied after the one it extends (conformance_data.load_base:
manifests, echo backends, generated Secrets and CA ConfigMaps), and nothing is skipped. What
this runner implements of extended/README.md: the `ws` scheme (RFC 6455 handshake and echoes),
request.uniqueQueryParam, expect.mirroredTo and mirrorDistribution (read from the echo
backends' request record), responseHeadersAnyOf, ignoreWhitespace, the non-echo rule for 200/204
answers, backendRequest.sni and backendRequest.clientCertificate (from the echoed "tls": the
SNI the backend received, the client certificate the gateway presented, compared as DER),
every check of its section 5 and the patch/create actions; the echo backend's /retry/ and /ws
endpoints, request record and HTTPS listener (httpsContainerPort with tlsServingSecret, client
certificates verified against tlsClientCAConfigMap when set). A file's own echoBackends (HTTP
echo only) are started for that file, on addresses of their own per run slot
(plan_local_pods). A file needing what the runner or the gateway cannot do yet
(unsupported_reason: GRPCRoute, TLSRoute, TCPRoute, UDPRoute, ListenerSet, h2c, HTTP/2,
test-local echo backends of another server kind) fails at once with that reason,
without starting anything (--try-unsupported runs it anyway; its unsupported cases then fail
with their reason). Only HTTP echo backends are started: the grpc, tcp and dns stand-ins of
extended/_base.json are not (said in a NOTE line), so namespacesReady checks the stand-ins
that run, and the files that use the others are among the unsupported ones.

The echo backends (echo_backend.py) run in this process for the whole run. Binding port 80 on
chosen addresses needs a private network namespace: unless already inside one, the runner
re-executes itself under `unshare -rn` (no privileges needed) and sets lo up there; when that is
impossible it runs in place as root, or skips (exit 77) with the reason.

Prints one line per file (failures indented below it), a line of case and status-check counts,
the wall time and a final line "N passed, M failed, K skipped" (files; a file that is not run
counts as failed). Exit status 0 when nothing failed; with
--expected-failures FILE (lines "file.json: case: <name>", "file.json: status: <check>" or a
bare "file.json" for every failure of that file; '#' comments, also at the end of a line) 0 when
every failure is listed; listed failures that pass again are reported. Exit 77 (skipped) when
the conformance directory is absent.

Only the Python 3 standard library and the openssl, unshare and ip commands.
"""

import argparse
import base64
import collections
import concurrent.futures
import contextlib
import copy
import hashlib
import http.client
import ipaddress
import json
import math
import os
import queue
import random
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import echo_backend  # noqa: E402
from conformance_data import (  # noqa: E402
    EVALUATORS, FAIL, GATEWAY_CLASS, PASS, SKIP, SKIP_EXIT, CheckContext, Outcome, all_cases,
    generated_secrets, list_test_files, load_base, load_expected, load_json, portico_procs,
    run_phase, test_phases, write_config)
from echo_backend import (  # noqa: E402
    WS_BINARY, WS_CLOSE, WS_PING, WS_PONG, WS_TEXT, parse_websocket_frame, websocket_accept,
    websocket_frame)

DEFAULT_PORTS = {"http": 80, "https": 443}
USER_AGENT = "Go-http-client/1.1"  # what upstream's client sends


# ---------------------------------------------------------------------------------------------
# The plan: echo pods and Gateway addresses


class Pod:
    """One echo backend replica of an echoBackends entry (`served`: an HTTP echo runs for it;
    the grpc, tcp and dns servers of extended/_base.json are not implemented). With
    `httpsContainerPort` and `tlsServingSecret` it also serves HTTPS there (`https_port`), with
    that Secret's certificate, verifying client certificates against `tlsClientCAConfigMap`'s
    ca.crt when set (extended/README.md, echo backend contract)."""

    def __init__(self, backend, index, replica):
        self.deployment = backend["name"]
        self.namespace = backend["namespace"]
        self.labels = backend.get("podLabels", {})
        self.port = backend.get("httpContainerPort", 3000)
        self.server = backend.get("server", "http")
        self.served = self.server == "http"
        self.tls_secret = backend.get("tlsServingSecret")
        self.https_port = backend.get("httpsContainerPort") if self.tls_secret else None
        self.client_ca = backend.get("tlsClientCAConfigMap")
        digest = hashlib.sha1(self.deployment.encode()).hexdigest()
        self.name = "%s-%s-r%04d" % (self.deployment, digest[:8], replica)
        self.v4 = "127.0.%d.%d" % (2 + index, 1 + replica)
        self.v6 = "fd00:%x::%x" % (2 + index, 1 + replica)


def plan_pods(base):
    return [Pod(b, i, r) for i, b in enumerate(base.get("echoBackends", []))
            for r in range(b.get("replicas", 1))]


# Test-local echo backends (a file's echoBackends) get the addresses 127.0.<2+index>.<1+r> from
# this index on, LOCAL_PODS_PER_SLOT per run slot, so files running in parallel never share one.
LOCAL_POD_INDEX, LOCAL_PODS_PER_SLOT = 100, 8


def plan_local_pods(test, slot):
    """The Pods of a file's own echoBackends (run for that file only)."""
    backends = test.get("echoBackends", [])
    if len(backends) > LOCAL_PODS_PER_SLOT:
        raise RuntimeError("more than %d test-local echo backends" % LOCAL_PODS_PER_SLOT)
    return [Pod(b, LOCAL_POD_INDEX + slot * LOCAL_PODS_PER_SLOT + i, r)
            for i, b in enumerate(backends) for r in range(b.get("replicas", 1))]


def echo_pods(pods, material, ipv6=False):
    """The echo_backend.EchoPods serving `pods`: HTTP on each served pod's port (and its IPv6
    address with `ipv6`), HTTPS on its https_port with its tlsServingSecret when `material` (a
    TlsMaterial) holds that Secret."""
    out = []
    for p in (p for p in pods if p.served):
        out.append(echo_backend.EchoPod(p.v4, p.port, p.namespace, p.name))
        if ipv6:
            out.append(echo_backend.EchoPod(p.v6, p.port, p.namespace, p.name))
        if p.https_port and material is not None and material.has_secret(p.tls_secret):
            client_ca = material.config_map_value(p.client_ca, "ca.crt") if p.client_ca else None
            context = echo_backend.tls_server_context(*material.client_files(p.tls_secret),
                                                      client_ca_pem=client_ca)
            out.append(echo_backend.EchoPod(p.v4, p.https_port, p.namespace, p.name,
                                            ssl=context))
    return out


def gateway_addresses(base, test, slot):
    """{"namespace/name": address} for every Gateway of the base and the file, in order."""
    out = {}
    for m in base.get("manifests", []) + test.get("manifests", []):
        if m.get("kind") == "Gateway":
            meta = m.get("metadata", {})
            key = "%s/%s" % (meta.get("namespace", "default"), meta.get("name"))
            if key not in out:
                if len(out) >= 254:
                    raise RuntimeError("more than 254 Gateways in one file")
                out[key] = "127.1.%d.%d" % (slot, len(out) + 1)
    return out


def give_gateways_addresses(addresses):
    """A write_config rewrite: each Gateway's spec.addresses becomes its own address (any
    addresses it had are replaced: they could not be bound here)."""
    def rewrite(obj):
        if obj.get("kind") != "Gateway":
            return
        meta = obj.get("metadata", {})
        key = "%s/%s" % (meta.get("namespace", "default"), meta.get("name"))
        if key in addresses:
            obj.setdefault("spec", {})["addresses"] = [{"type": "IPAddress",
                                                        "value": addresses[key]}]
    return rewrite


def selector_endpoint_slices(base, test, pods):
    """EndpointSlices Kubernetes' EndpointSlice controller would write for the Services with a
    selector (of the base and the file): the matching echo pods' IPv4 addresses."""
    slices = []
    for m in base.get("manifests", []) + test.get("manifests", []):
        spec = m.get("spec") or {}
        if m.get("kind") != "Service" or not spec.get("selector"):
            continue
        meta = m.get("metadata", {})
        namespace = meta.get("namespace", "default")
        selected = [p for p in pods if p.namespace == namespace and
                    all(p.labels.get(k) == v for k, v in spec["selector"].items())]
        ports = []
        for p in spec.get("ports", []):
            target = p.get("targetPort", p.get("port"))
            if not isinstance(target, int):
                continue  # a named container port: the echo pods declare none
            port = {"name": p.get("name", ""), "port": target, "protocol": p.get("protocol", "TCP")}
            if p.get("appProtocol"):
                port["appProtocol"] = p["appProtocol"]
            ports.append(port)
        slices.append({
            "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": meta["name"] + "-conformance-ipv4", "namespace": namespace,
                         "labels": {"kubernetes.io/service-name": meta["name"]}},
            "addressType": "IPv4", "ports": ports,
            "endpoints": [{"addresses": [p.v4], "conditions": {"ready": True},
                           "targetRef": {"kind": "Pod", "namespace": namespace, "name": p.name}}
                          for p in selected],
        })
    return slices


# What the runner or the gateway cannot do yet (strict mode: such a file fails with the reason).
UNSUPPORTED_FEATURES = {
    "GRPCRoute": "GRPCRoute kind not implemented (and the runner has no gRPC client)",
    "TLSRoute": "TLSRoute kind not implemented (TLS listeners: TLS issue)",
    "TCPRoute": "TCPRoute kind not implemented (no TCP listeners)",
    "UDPRoute": "UDPRoute kind not implemented (no UDP listeners)",
    "ListenerSet": "ListenerSet kind not implemented",
    "HTTPRouteBackendProtocolH2C":
        "h2c (cleartext HTTP/2) not implemented by the runner, the echo backend or the gateway",
}
UNSUPPORTED_KINDS = ("GRPCRoute", "TLSRoute", "TCPRoute", "UDPRoute", "ListenerSet")
UNSUPPORTED_SCHEMES = {
    "grpc": "scheme grpc: the runner has no gRPC client (GRPCRoute not implemented)",
    "tls": "scheme tls: needs TLS listeners (TLSRoute not implemented)",
    "tcp": "scheme tcp: needs TCP listeners (TCPRoute not implemented)",
    "udp": "scheme udp: needs UDP listeners (UDPRoute not implemented)",
}
SUPPORTED_SCHEMES = ("http", "https", "ws")
H2_REASON = "request.protocol H2 (HTTP/2 over TLS, ALPN h2): HTTP/2 is another issue"
# expect.failure values the runner implements, with the schemes they apply to.
SUPPORTED_FAILURES = {"connection": ("https",), "httpStatus": ("http",)}
TRUST_KINDS = ("Secret", "ConfigMap", "SystemRoots")
SUPPORTED_ACTIONS = ("delete", "patch", "create")


def case_unsupported(case):
    """Why the runner cannot run this case (scheme, protocol, failure expectations), or None."""
    scheme = case["target"].get("scheme", "http")
    if scheme not in SUPPORTED_SCHEMES:
        return UNSUPPORTED_SCHEMES.get(scheme, "scheme %s not implemented by the runner" % scheme)
    request, expect = case["request"], case["expect"]
    if request.get("protocol") == "H2":
        return H2_REASON
    if request.get("protocol"):
        return "request.protocol %s not implemented by the runner" % request["protocol"]
    failure = expect.get("failure")
    if failure is not None and scheme not in SUPPORTED_FAILURES.get(failure, ()):
        return "expect.failure %s (scheme %s) not implemented by the runner" % (failure, scheme)
    trust = request.get("trust")
    if trust is not None and trust.get("kind") not in TRUST_KINDS:
        return "request.trust kind %s not implemented by the runner" % trust.get("kind")
    return None


def phase_cases(cases, h2_over_http1=False):
    """The cases a phase runs: its cases, each H2 case followed by its HTTP/1.1 form
    (over_http1) when `h2_over_http1`."""
    if not h2_over_http1:
        return list(cases)
    return [c for case in cases for c in (
        [case, over_http1(case)] if case["request"].get("protocol") == "H2" else [case])]


def over_http1(case):
    """The HTTP/1.1 form of an H2 case (--h2-over-http1): same request and expectation, no
    request.protocol, its name marked."""
    case = copy.deepcopy(case)
    del case["request"]["protocol"]
    case["name"] += " [over HTTP/1.1]"
    return case


def unsupported_reason(test, h2_over_http1=False):
    """Why a file cannot pass with what the runner and the gateway do today, or None: its
    features, its manifests' kinds, its cases, checks, actions and test-local echo backends.
    With `h2_over_http1` an H2 case counts by its HTTP/1.1 form (over_http1; the H2 case
    itself still fails with H2_REASON when run)."""
    for feature in test.get("features", []):
        if feature in UNSUPPORTED_FEATURES:
            return UNSUPPORTED_FEATURES[feature]
    kinds = sorted({m.get("kind") for m in test.get("manifests", [])} & set(UNSUPPORTED_KINDS))
    if kinds:
        return "%s kind not implemented" % kinds[0]
    for case in all_cases(test):
        if h2_over_http1 and case["request"].get("protocol") == "H2":
            case = over_http1(case)
        why = case_unsupported(case)
        if why:
            return why
    phases = test_phases(test)
    for check in (c for _, checks, _, _ in phases for c in checks):
        if check["check"] not in EVALUATORS:
            return "status check %s not implemented by the runner" % check["check"]
    for action in (a for _, _, actions, _ in phases for a in actions):
        if action.get("op") not in SUPPORTED_ACTIONS:
            return "action %s not implemented by the runner" % action.get("op")
    others = [b for b in test.get("echoBackends", []) if b.get("server", "http") != "http"]
    if others:
        return "test-local echo backends (%s): the runner has only the HTTP echo server" % (
            ", ".join("%s/%s (%s)" % (b["namespace"], b["name"], b.get("server", "http"))
                      for b in others))
    return None


# ---------------------------------------------------------------------------------------------
# HTTP client


class Response:
    def __init__(self, status, headers, body, url):
        self.status, self.headers, self.body, self.url = status, headers, body, url

    def header(self, name):
        """All values of `name` joined with ',' (as upstream compares them), or None."""
        values = [v for n, v in self.headers if n.lower() == name.lower()]
        return ",".join(values) if values else None

    def echo(self):
        """The echo backend's JSON, or (None, why not)."""
        ctype = self.header("Content-Type")
        if ctype != "application/json":
            return None, "not the echo backend's answer (Content-Type %r, body %r)" % (
                ctype, self.body[:120])
        try:
            return json.loads(self.body), None
        except ValueError as e:
            return None, "echo body is not JSON (%s): %r" % (e, self.body[:120])


class RequestError(Exception):
    """No HTTP response; `refused` when nothing listened at the address."""

    def __init__(self, message, refused=False):
        super().__init__(message)
        self.refused = refused


def canonical(name):
    return echo_backend.canonical_header_key(name)


def where_of(ip, port):
    return "%s:%d" % ("[%s]" % ip if ":" in ip else ip, port)


@contextlib.contextmanager
def request_errors(where, timeout):
    """Turns what an exchange with `where` raised into a RequestError."""
    try:
        yield
    except ConnectionRefusedError:
        raise RequestError("connection refused by %s: nothing listens there (is the gateway's "
                           "data plane serving this Gateway?)" % where, refused=True)
    except socket.timeout:
        raise RequestError("no response from %s within %.0fs" % (where, timeout))
    except http.client.RemoteDisconnected:
        raise RequestError("%s closed the connection without a response" % where)
    except (http.client.HTTPException, OSError, EOFError, ValueError) as e:
        raise RequestError("%s: %s: %s" % (where, type(e).__name__, e))


# ---------------------------------------------------------------------------------------------
# TLS client (scheme https: HTTP/1.1 over TLS, no ALPN, as upstream's Go client)


DEFAULT_TRUST = {"kind": "Secret", "namespace": "gateway-conformance-infra",
                 "name": "tls-validity-checks-certificate", "key": "tls.crt"}
HANDSHAKE, CERTIFICATE_REQUEST = 22, 13  # TLS content type and handshake message type


def go_name_matches(pattern, name):
    """Whether a DNS SAN matches `name` as Go's crypto/x509 matchHostnames does: labels compared
    case-insensitively, a leftmost "*" label matches any one label (so "*.org" covers
    "example.org", which OpenSSL's own check refuses)."""
    pattern, name = pattern.lower(), name.lower().rstrip(".")
    if not pattern or not name:
        return False
    pattern_labels, name_labels = pattern.split("."), name.split(".")
    if len(pattern_labels) != len(name_labels):
        return False
    return all((i == 0 and p == "*") or p == n
               for i, (p, n) in enumerate(zip(pattern_labels, name_labels)))


def peer_name_problem(cert, name):
    """None when the verified peer certificate (SSLSocket.getpeercert()) is valid for `name`
    (Go's VerifyHostname: IP SANs for an address, DNS SANs otherwise, never the CN)."""
    sans = cert.get("subjectAltName", ()) if cert else ()
    try:
        address = ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        address = None
    if address is not None:
        if any(kind == "IP Address" and ipaddress.ip_address(v.strip()) == address
               for kind, v in sans):
            return None
    elif any(kind == "DNS" and go_name_matches(v, name) for kind, v in sans):
        return None
    return "certificate is not valid for %s (SANs: %s)" % (
        name, ", ".join("%s:%s" % kv for kv in sans) or "none")


class TlsMaterial:
    """The generated Secrets and ConfigMaps (conformance_data.generated_secrets) as TLS client
    material: PEM by "namespace/name"; client certificate and key files are written into
    `directory` on first use (ssl.load_cert_chain reads files)."""

    def __init__(self, generated, directory):
        self.directory = directory
        self.secrets, self.config_maps = {}, {}
        for obj in generated:
            meta = obj.get("metadata") or {}
            key = "%s/%s" % (meta.get("namespace"), meta.get("name"))
            if obj.get("kind") == "Secret":
                self.secrets[key] = {k: base64.b64decode(v)
                                     for k, v in (obj.get("data") or {}).items()}
            elif obj.get("kind") == "ConfigMap":
                self.config_maps[key] = {k: v.encode() for k, v in
                                         (obj.get("data") or {}).items()}
        self.files = {}
        self.lock = threading.Lock()

    def has_secret(self, name):
        return name in self.secrets

    def config_map_value(self, name, key):
        """A generated ConfigMap's data value (text); KeyError when there is none."""
        if name not in self.config_maps or key not in self.config_maps[name]:
            raise KeyError("ConfigMap %s[%s] is not among the generated objects" % (name, key))
        return self.config_maps[name][key].decode()

    def certificate_der(self, name):
        """The DER of the (first) certificate in the generated Secret `name`'s tls.crt."""
        secret = self.secrets.get(name)
        if not secret or "tls.crt" not in secret:
            raise KeyError("Secret %s is not among the generated Secrets" % name)
        return ssl.PEM_cert_to_DER_cert(secret["tls.crt"].decode())

    def trust_pem(self, trust):
        """The PEM trust anchor a request.trust names (None: the system roots)."""
        if trust["kind"] == "SystemRoots":
            return None
        key = "%s/%s" % (trust["namespace"], trust["name"])
        source = self.secrets if trust["kind"] == "Secret" else self.config_maps
        if key not in source or trust.get("key", "tls.crt") not in source[key]:
            raise KeyError("trust anchor %s %s[%s] is not among the generated objects" % (
                trust["kind"], key, trust.get("key")))
        return source[key][trust.get("key", "tls.crt")]

    def client_files(self, name):
        """(certificate file, key file) of the generated kubernetes.io/tls Secret `name`."""
        with self.lock:
            if name not in self.files:
                secret = self.secrets.get(name)
                if not secret or "tls.crt" not in secret or "tls.key" not in secret:
                    raise KeyError("client certificate Secret %s is not among the generated "
                                   "Secrets" % name)
                paths = []
                for part in ("tls.crt", "tls.key"):
                    path = os.path.join(self.directory, "client-%s-%s" % (
                        name.replace("/", "_"), part))
                    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                    with os.fdopen(fd, "wb") as f:
                        f.write(secret[part])
                    paths.append(path)
                self.files[name] = tuple(paths)
            return self.files[name]


class TlsClient:
    """The TLS side of one https case: trust exactly request.trust (default: the generated
    tls-validity-checks-certificate; a byte-identical leaf is accepted, OpenSSL's
    PARTIAL_CHAIN), names checked as Go does against the SNI (else the request's host), TLS 1.2
    at least (Go's client default), no ALPN, and request.clientCertificate presented when the
    server asks. `requested`: a server asked for a client certificate in some handshake (the
    CertificateRequest message, seen through the ssl module's message callback)."""

    def __init__(self, request, material):
        self.requested = False
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        self.context.minimum_version = ssl.TLSVersion.TLSv1_2
        self.context.check_hostname = False  # Go's rules: peer_name_problem
        self.context.verify_mode = ssl.CERT_REQUIRED
        self.context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN
        pem = material.trust_pem(request.get("trust") or DEFAULT_TRUST)
        if pem is None:
            self.context.load_default_certs()
        else:
            self.context.load_verify_locations(cadata=pem.decode())
        if request.get("clientCertificate"):
            self.context.load_cert_chain(*material.client_files(request["clientCertificate"]))
        if hasattr(self.context, "_msg_callback"):
            self.context._msg_callback = self._message
        self.sni = request.get("sni")

    def _message(self, _conn, direction, _version, content_type, message_type, _data):
        if direction == "read" and content_type == HANDSHAKE and message_type == \
                CERTIFICATE_REQUEST:
            self.requested = True

    @staticmethod
    def can_see_requests():
        return hasattr(ssl.SSLContext, "_msg_callback")

    def wrap(self, sock, host, sni=None):
        """The TLS connection over `sock` (SNI `sni`, else self.sni; none for an address);
        raises ssl.SSLError, or RequestError when the certificate is not valid for the name."""
        sni = sni or self.sni
        name = sni or urllib.parse.urlsplit("//" + host).hostname or host
        try:
            ipaddress.ip_address(name)
            server_name = None  # Go sends no SNI for an address
        except ValueError:
            server_name = sni or name
        tls = self.context.wrap_socket(sock, server_hostname=server_name)
        problem = peer_name_problem(tls.getpeercert(), name)
        if problem:
            tls.close()
            raise RequestError("TLS: " + problem)
        return tls


class _Connection(http.client.HTTPConnection):
    """http.client's connection, over TLS when `tls` (a TlsClient) is given."""

    def __init__(self, ip, port, timeout, tls=None, host=None, sni=None):
        super().__init__(ip, port, timeout=timeout)
        self.tls, self.tls_host, self.tls_sni = tls, host, sni

    def connect(self):
        super().connect()
        if self.tls is not None:
            self.sock = self.tls.wrap(self.sock, self.tls_host, self.tls_sni)


def send_once(ip, port, method, path, host, headers, timeout, tls=None, sni=None):
    """One HTTP/1.1 request on a fresh connection to ip:port (over TLS with `tls`, a
    TlsClient); a Response or RequestError."""
    conn = _Connection(ip, port, timeout, tls, host, sni)
    try:
        with request_errors(where_of(ip, port), timeout):
            conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            conn.putheader("Host", host)
            conn.putheader("User-Agent", USER_AGENT)
            for name, value in headers:
                conn.putheader(name, value)
            if method in ("POST", "PUT", "PATCH"):
                conn.putheader("Content-Length", "0")
            conn.endheaders()
            response = conn.getresponse()
            body = response.read()
            return Response(response.status, response.getheaders(), body, None)
    finally:
        conn.close()


class Target:
    """Where a case's request goes: the Gateway's address and the listener port."""

    def __init__(self, case, addresses):
        t = case["target"]
        self.gateway = t["gateway"]
        self.scheme = t.get("scheme", "http")
        self.port = int(t["port"])
        self.ip = addresses.get(self.gateway)
        self.tls = None  # a TlsClient for scheme https (CaseRunner.run)

    def default_host(self):
        """What Go sends as Host when the case sets none: IP, or IP:port off the default."""
        ip = "[%s]" % self.ip if ":" in self.ip else self.ip
        return ip if DEFAULT_PORTS.get(self.scheme) == self.port else "%s:%d" % (ip, self.port)


def request_headers(request):
    headers = [(canonical(n), v) for n, v in (request.get("headers") or {}).items()]
    echo_set = request.get("echoSetResponseHeaders") or {}
    headers.append(("X-Echo-Set-Header", ",".join("%s:%s" % kv for kv in echo_set.items())))
    return headers


def send_case(case, target, timeout, extra_headers=()):
    """Sends the case's request (following redirects unless the case says not to, as Go's
    client does; an https hop uses target.tls, a TlsClient, with the SNI of the case for its
    first hop and the redirect's host after); returns the Response with .url set to the URL the
    request went to."""
    request = case["request"]
    method, path = request["method"], request["path"]
    host = request.get("host") or target.default_host()
    headers = request_headers(request) + list(extra_headers)
    follow = request.get("followRedirects", True) and "redirect" not in case["expect"]
    ip, port, scheme, sni, tls = target.ip, target.port, target.scheme, None, target.tls
    for _ in range(10):
        url = "%s://%s%s" % (scheme, host, path)
        if scheme == "https" and tls is None:
            raise RequestError("an https request needs a TLS client")
        response = send_once(ip, port, method, path, host, headers, timeout,
                             tls if scheme == "https" else None, sni)
        response.url = url
        location = response.header("Location")
        if not follow or response.status not in (301, 302, 303, 307, 308) or not location:
            return response
        nxt = urllib.parse.urlsplit(urllib.parse.urljoin(url, location))
        if nxt.scheme not in ("http", "https"):
            raise RequestError("redirected to %s (%d): only http and https are followed" % (
                location, response.status))
        try:
            ip = str(ipaddress.ip_address(nxt.hostname))
        except ValueError:
            ip = target.ip  # a name: every name resolves to the Gateway under test
        port = nxt.port or DEFAULT_PORTS[nxt.scheme]
        host, scheme, sni = nxt.netloc, nxt.scheme, nxt.hostname
        path = (nxt.path or "/") + ("?" + nxt.query if nxt.query else "")
        if response.status == 303 or (response.status in (301, 302) and method == "POST"):
            method = "GET"
    raise RequestError("stopped after 10 redirects")


# ---------------------------------------------------------------------------------------------
# Comparing a response with a case's expectation (the README's "Case format", `expect`)


def header_map(pairs):
    """{lower-case name: values joined with ','}."""
    out = {}
    for name, value in pairs:
        key = name.lower()
        out[key] = out[key] + "," + value if key in out else value
    return out


def check_headers(what, actual, want, absent, any_of=None, ignore_whitespace=False):
    """None when `actual` ({lower-case name: joined value}) has the `want` values, one of the
    `any_of` values per name and none of the `absent` names; else why not. With
    `ignore_whitespace` spaces do not count in values."""
    def same(have, value):
        return have.replace(" ", "") == value.replace(" ", "") if ignore_whitespace else (
            have == value)
    for name, value in (want or {}).items():
        have = actual.get(name.lower())
        if have is None:
            return "%s lacks header %s (want %r; has %s)" % (what, name, value, sorted(actual))
        if not same(have, value):
            return "%s header %s is %r, want %r" % (what, name, have, value)
    for name, values in (any_of or {}).items():
        have = actual.get(name.lower())
        if have is None:
            return "%s lacks header %s (want one of %r; has %s)" % (what, name, values,
                                                                   sorted(actual))
        if not any(same(have, v) for v in values):
            return "%s header %s is %r, want one of %r" % (what, name, have, values)
    for name in absent or []:
        if name.lower() in actual:
            return "%s has header %s: %r (want it absent)" % (what, name, actual[name.lower()])
    return None


def describe_response(response):
    if 300 <= response.status < 400:
        return "Location %r" % response.header("Location")
    echo, _ = response.echo()
    if echo is not None:
        return "answered by %s/%s" % (echo.get("namespace"), echo.get("pod"))
    return "body %r" % response.body[:80]


def backend_view(case, response):
    """(what the backend saw, None) from the echo JSON; for any other response, as upstream
    captures it (extended/README.md section 3): the request's method, path, host, namespace and
    pod "", no headers, with why it is not the echo's answer."""
    echo, why = response.echo()
    if echo is not None:
        return echo, None
    return {"method": case["request"]["method"], "path": "", "host": "", "headers": {},
            "namespace": "", "pod": ""}, why


def compare_backend_tls(br, echo, material):
    """None when the echoed "tls" meets backendRequest.sni and .clientCertificate (the
    certificate compared as DER, extended/README.md section 3), else why not."""
    tls = echo.get("tls")
    if br.get("sni") is not None:
        if tls is None:
            return "the backend saw plain HTTP, want TLS with SNI %r" % br["sni"]
        if tls.get("serverName") != br["sni"]:
            return "the backend saw SNI %r, want %r" % (tls.get("serverName"), br["sni"])
    if br.get("clientCertificate") is not None:
        if tls is None:
            return "the backend saw plain HTTP, want TLS with client certificate %s" % (
                br["clientCertificate"])
        if material is None:
            return "no TLS material to compare backendRequest.clientCertificate with"
        want = material.certificate_der(br["clientCertificate"])
        seen = []
        for pem in tls.get("peerCertificates") or []:
            try:
                seen.append(ssl.PEM_cert_to_DER_cert(pem))
            except ValueError:
                pass
        if want not in seen:
            return "the backend saw %d client certificates, none of them %s's tls.crt" % (
                len(seen), br["clientCertificate"])
    return None


def compare_backend(expect, echo, material=None):
    """None when what the backend saw meets expect's backend, namespace and backendRequest
    (`material`, a TlsMaterial, for backendRequest.clientCertificate)."""
    pod = echo.get("pod") or ""
    if expect.get("backend") is not None and not pod.startswith(expect["backend"]):
        return "answered by pod %r, want %s" % (pod, expect["backend"])
    namespace = expect.get("namespace")
    if namespace == "" and echo.get("namespace"):
        return "answered by the echo backend (%s/%s), want an answer that is not the echo's" % (
            echo.get("namespace"), pod)
    if namespace is not None and echo.get("namespace") != namespace:
        return "answered from namespace %r, want %s" % (echo.get("namespace"), namespace)
    br = expect.get("backendRequest") or {}
    for field in ("method", "path", "host"):
        if br.get(field) is not None and echo.get(field) != br[field]:
            return "backend saw %s %r, want %r" % (field, echo.get(field), br[field])
    why = compare_backend_tls(br, echo, material)
    if why:
        return why
    seen = header_map((n, v) for n, values in (echo.get("headers") or {}).items()
                      for v in values)
    return check_headers("backend request", seen, br.get("headers"), br.get("absentHeaders"))


def compare(case, response, material=None):
    """None when the response meets the case's expectation, else why not (`material`: the
    TlsMaterial backendRequest.clientCertificate is compared with)."""
    expect = case["expect"]
    allowed = list(expect.get("statusAnyOf") or [expect["status"]])
    if 504 in allowed:
        allowed.append(408)  # upstream treats both as "timeout"
    if response.status not in allowed:
        return "status %d, want %s (%s)" % (response.status, "/".join(map(str, allowed)),
                                           describe_response(response))
    if response.status in (200, 204):
        if any(k in expect for k in ("backend", "namespace", "backendRequest")):
            echo, not_echo = backend_view(case, response)
            why = compare_backend(expect, echo, material)
            if why:
                return "%s (%s)" % (why, not_echo) if not_echo else why
        why = check_headers("response", header_map(response.headers),
                            expect.get("responseHeaders"), expect.get("absentResponseHeaders"),
                            expect.get("responseHeadersAnyOf"), expect.get("ignoreWhitespace"))
        if why:
            return why
    redirect = expect.get("redirect")
    if redirect is not None and 300 <= response.status < 400:
        location = response.header("Location")
        if not location:
            return "status %d without a Location header" % response.status
        got = urllib.parse.urlsplit(urllib.parse.urljoin(response.url, location))
        if got.scheme != redirect["scheme"]:
            return "Location %r: scheme %s, want %s" % (location, got.scheme, redirect["scheme"])
        if redirect.get("host") is not None and (got.hostname or "") != redirect["host"].lower():
            return "Location %r: host %s, want %s" % (location, got.hostname, redirect["host"])
        try:
            port = got.port
        except ValueError:
            return "Location %r: invalid port" % location
        if redirect.get("port") is not None:
            if port != redirect["port"]:
                return "Location %r: port %s, want %d" % (location, port, redirect["port"])
        elif port not in (None, DEFAULT_PORTS.get(got.scheme)):
            return "Location %r: port %d, want none or the scheme's default" % (location, port)
        if got.path != redirect["path"]:
            return "Location %r: path %r, want %r" % (location, got.path, redirect["path"])
    return None


def set_query_param(path, name, value):
    """`path` with query parameter `name` set to `value`, the query re-encoded with its keys
    sorted, as Go's url.Values Encode does (extended/README.md, uniqueQueryParam)."""
    base, _, query = path.partition("?")
    pairs = [(k, v) for k, v in urllib.parse.parse_qsl(query, keep_blank_values=True) if k != name]
    pairs.append((name, value))
    pairs.sort(key=lambda kv: kv[0])
    return base + "?" + urllib.parse.urlencode(pairs)


def with_query_param(case, name, value):
    """A copy of the case with `name`=`value` in request.path and expect.backendRequest.path."""
    case = copy.deepcopy(case)
    case["request"]["path"] = set_query_param(case["request"]["path"], name, value)
    expected = case["expect"].get("backendRequest") or {}
    if expected.get("path"):
        expected["path"] = set_query_param(expected["path"], name, value)
    return case


def new_request_id():
    return str(uuid.uuid4())  # as Go's uuid.NewString()


def websocket_exchange(case, target, timeout):
    """One `ws` attempt (extended/README.md section 1): the RFC 6455 opening handshake (101 and
    the right Sec-WebSocket-Accept), then each expect.websocketEcho message sent and its echo
    read, then a close. None, or why it failed; RequestError when there was no answer."""
    request = case["request"]
    options = request.get("websocket") or {}
    key = base64.b64encode(os.urandom(16)).decode()
    head = ["GET %s HTTP/1.1" % request["path"],
            "Host: " + (request.get("host") or target.default_host()), "Upgrade: websocket",
            "Connection: Upgrade", "Sec-WebSocket-Key: " + key, "Sec-WebSocket-Version: 13"]
    if options.get("origin"):
        head.append("Origin: " + options["origin"])
    if options.get("subprotocol"):
        head.append("Sec-WebSocket-Protocol: " + options["subprotocol"])
    head += ["%s: %s" % (canonical(n), v) for n, v in (request.get("headers") or {}).items()]
    where = where_of(target.ip, target.port)
    with request_errors(where, timeout):
        sock = socket.create_connection((target.ip, target.port), timeout=timeout)
        with sock, sock.makefile("rb") as stream:
            def read_exactly(n):
                data = stream.read(n)
                if len(data) != n:
                    raise EOFError("the connection closed inside a WebSocket frame")
                return data
            sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
            status_line = stream.readline().decode("latin-1").split(None, 2)
            if len(status_line) < 2 or not status_line[1].isdigit():
                raise http.client.RemoteDisconnected()
            headers = http.client.parse_headers(stream)
            if int(status_line[1]) != 101:
                return "handshake answered %s, want 101 Switching Protocols" % status_line[1]
            if (headers.get("Sec-WebSocket-Accept") or "").strip() != websocket_accept(key):
                return "handshake Sec-WebSocket-Accept %r, want %r" % (
                    headers.get("Sec-WebSocket-Accept"), websocket_accept(key))
            for message in case["expect"].get("websocketEcho", []):
                text = message["type"] == "text"
                payload = message["text"].encode() if text else bytes(message["bytes"])
                sock.sendall(websocket_frame(WS_TEXT if text else WS_BINARY, payload, mask=True))
                echoed = read_websocket_message(sock, read_exactly)
                if echoed != payload:
                    return "sent %r, the echo was %r" % (payload[:80], echoed[:80])
            sock.sendall(websocket_frame(WS_CLOSE, (1000).to_bytes(2, "big"), mask=True))
    return None


def read_websocket_message(sock, read_exactly):
    """The payload of the next data message (fragments joined; pings answered)."""
    parts = []
    while True:
        fin, opcode, payload = parse_websocket_frame(read_exactly)
        if opcode == WS_PING:
            sock.sendall(websocket_frame(WS_PONG, payload, mask=True))
            continue
        if opcode == WS_PONG:
            continue
        if opcode == WS_CLOSE:
            raise EOFError("the server closed the WebSocket (%r)" % payload[:2])
        parts.append(payload)
        if fin:
            return b"".join(parts)


# ---------------------------------------------------------------------------------------------
# Running cases


class CaseFailed(Exception):
    """An attempt whose outcome fails the case at once, whatever later attempts would do."""


class CaseRunner:
    """Runs the cases of one phase (a file's cases, or a followUp's) against one gateway; `echo`
    (echo_backend.EchoServers) answers the request-record queries of the mirror cases, `tls`
    (a TlsMaterial) gives https cases their trust anchors and client certificates. When the
    phase's status checks failed (`settling` false), the configuration had --status-deadline to
    converge already: no case gets more than --min-window."""

    def __init__(self, args, addresses, gateway, echo=None, settling=True, tls=None):
        self.args = args
        self.addresses = addresses
        self.gateway = gateway
        self.echo = echo
        self.tls = tls
        self.settle_deadline = time.monotonic() + (args.consistency_timeout if settling else 0)
        self.refused = {}  # (ip, port) -> reason, once a whole window saw only refusals

    def attempt(self, case, target):
        """(None or why the try failed, whether the connection was refused); raises CaseFailed
        when the attempt fails the case at once (expect.failure "httpStatus" answered 200)."""
        unique = case["request"].get("uniqueQueryParam")
        if unique and unique.get("regenerate") == "perAttempt":
            case = with_query_param(case, unique["name"], new_request_id())
        failure = case["expect"].get("failure")
        try:
            if target.scheme == "ws":
                return websocket_exchange(case, target, self.args.request_timeout), False
            response = send_case(case, target, self.args.request_timeout)
        except RequestError as e:
            if failure == "connection":
                return None, False  # what the case expects: no complete HTTP response
            return ("not yet: " if failure else "") + str(e), e.refused
        if failure == "connection":
            return "got an HTTP response (status %d, %s), want the connection to fail" % (
                response.status, describe_response(response)), False
        if failure == "httpStatus":
            # extended/README.md section 3: 408/504 are "not yet", a 200 fails the case.
            if response.status in (408, 504):
                return "not yet: status %d" % response.status, False
            if response.status == 200:
                raise CaseFailed("status 200 (%s), want a failure status" %
                                 describe_response(response))
            return None, False
        return compare(case, response, self.tls), False

    def tls_client(self, case):
        """The case's TlsClient (scheme https), or None; raises KeyError/OSError/ssl.SSLError
        when its trust anchor or client certificate cannot be loaded."""
        if case["target"].get("scheme") != "https":
            return None
        if self.tls is None:
            raise KeyError("no TLS material (generated Secrets) for an https case")
        return TlsClient(case["request"], self.tls)

    def run(self, case):
        """(outcome, reason) of one case."""
        target = Target(case, self.addresses)
        if target.ip is None:
            return FAIL, "target Gateway %s is not among the file's Gateways" % target.gateway
        why = case_unsupported(case)
        if why:
            return FAIL, why
        wants_request = case["expect"].get("clientCertificateRequested")
        if wants_request and not TlsClient.can_see_requests():
            return FAIL, ("expect.clientCertificateRequested: this Python's ssl module has no "
                          "message callback to see the server's CertificateRequest")
        try:
            target.tls = self.tls_client(case)
        except (KeyError, OSError, ValueError) as e:
            return FAIL, "TLS client: %s" % (e.args[0] if isinstance(e, KeyError) else e)
        unique = case["request"].get("uniqueQueryParam")
        if unique and unique.get("regenerate") == "perCase":
            case = with_query_param(case, unique["name"], new_request_id())
        key = (target.ip, target.port)
        start = time.monotonic()
        deadline = max(self.settle_deadline, start + self.args.min_window)
        if key in self.refused:
            deadline = start  # one more try only: nothing listened there for a whole window
        streak, last, all_refused = 0, None, True
        while True:
            self.gateway.check_alive()
            try:
                reason, refused = self.attempt(case, target)
            except CaseFailed as e:
                return FAIL, str(e)
            if reason is None:
                streak += 1
                all_refused = False
                if streak >= self.args.consistency_passes:
                    break
                continue
            streak, last = 0, reason
            all_refused = all_refused and refused
            if time.monotonic() >= deadline:
                if all_refused:
                    self.refused[key] = reason
                return FAIL, "%s (for %.1fs)" % (last, time.monotonic() - start)
            time.sleep(0.1)
        # Converged: the configuration is in place; later failures need no long window.
        self.settle_deadline = min(self.settle_deadline, time.monotonic())
        self.refused.pop(key, None)
        if wants_request and not target.tls.requested:
            return FAIL, ("the server never asked for a client certificate "
                          "(expect.clientCertificateRequested)")
        # What some cases check once they pass: (where the spec is, its field, the check).
        for spec, field, check in ((case["expect"], "mirroredTo", self.mirrored),
                                   (case, "distribution", self.distribution),
                                   (case, "repeat", self.repeat),
                                   (case, "mirrorDistribution", self.mirror_distribution)):
            why = check(case, target, spec[field], start) if field in spec else None
            if why:
                return FAIL, why
        return PASS, ""

    def mirrored(self, case, _target, mirrors, since):
        """expect.mirroredTo: each listed backend recorded the case's request URI within
        --mirror-window seconds of `since` (the case's first attempt)."""
        uri = case["request"]["path"]
        deadline = since + self.args.mirror_window
        while True:
            missing = ["%s/%s" % (m["namespace"], m["backend"]) for m in mirrors
                       if not self.echo.recorded(uri, m["backend"], m["namespace"])]
            if not missing:
                return None
            if time.monotonic() >= deadline:
                return "no mirrored copy of %s reached %s within %.0fs" % (
                    uri, ", ".join(missing), self.args.mirror_window)
            time.sleep(0.1)

    def until_passes(self, case, target, timeout):
        """None once one attempt of the case passes, else the last reason after `timeout` s."""
        deadline = time.monotonic() + timeout
        while True:
            why, _ = self.attempt(case, target)
            if why is None or time.monotonic() >= deadline:
                return why
            time.sleep(0.1)

    def mirror_distribution(self, case, target, spec, _since=None):
        """The README's `mirrorDistribution` check (httproute-request-percentage-mirror.json)."""
        n, name = spec["requestsPerRound"], spec["uniqueQueryParam"]["name"]
        last = None
        for round_number in range(1, spec["rounds"] + 1):
            this = with_query_param(case, name, new_request_id())
            start = time.monotonic()
            with concurrent.futures.ThreadPoolExecutor(spec.get("concurrency", 1)) as pool:
                errors = [why for why in pool.map(
                    lambda _: self.until_passes(this, target, self.args.consistency_timeout),
                    range(n)) if why]
            if errors:
                return "mirrorDistribution round %d: %d of %d requests never passed (first: %s)" % (
                    round_number, len(errors), n, errors[0])
            # Each round has its own URI: late copies of an earlier round are never counted, so
            # pauseAfterFailedRound is not needed.
            problems = []
            for mirror in spec["mirrors"]:
                got = self.echo.recorded(this["request"]["path"], mirror["backend"],
                                         mirror["namespace"], since=start)
                p = mirror["percent"] / 100.0
                band = spec["toleranceStdDevs"] * math.sqrt(n * p * (1 - p))
                if abs(got - n * p) > band:
                    problems.append("%s got %d copies of %d requests, want %.0f +- %.1f" % (
                        mirror["backend"], got, n, n * p, band))
            if not problems:
                return None
            last = "round %d: %s" % (round_number, "; ".join(problems))
        return "mirrorDistribution: no round of %d within the band; last %s" % (spec["rounds"],
                                                                             last)

    def distribution(self, case, target, spec, _since=None):
        """The README's `distribution` check (httproute-weight.json)."""
        total = spec["totalRequests"]
        weights = spec["expectedWeights"]
        namespace = case["expect"].get("namespace")

        def one(_):
            jitter = [("X-Jitter", str(random.randint(0, 9999)))] if random.random() < 0.5 else []
            try:
                response = send_case(case, target, self.args.request_timeout, jitter)
            except RequestError as e:
                return None, str(e)
            if response.status != 200:
                return None, "status %d" % response.status
            echo, why = response.echo()
            if echo is None:
                return None, why
            if namespace is not None and echo.get("namespace") != namespace:
                return None, "namespace %s" % echo.get("namespace")
            return (echo.get("pod") or "").rsplit("-", 2)[0], None

        last = None
        for _ in range(spec.get("maxAttempts", 1)):
            with concurrent.futures.ThreadPoolExecutor(spec.get("concurrency", 1)) as pool:
                results = list(pool.map(one, range(total)))
            errors = [why for backend, why in results if backend is None]
            counts = collections.Counter(backend for backend, _ in results if backend is not None)
            problems = []
            if errors:
                problems.append("%d of %d requests failed (first: %s)" % (len(errors), total,
                                                                          errors[0]))
            for backend, weight in weights.items():
                share = counts.get(backend, 0) / total
                if weight == 0 and counts.get(backend):
                    problems.append("%s got %d requests, want none" % (backend, counts[backend]))
                elif weight > 0 and not counts.get(backend):
                    problems.append("%s got no request" % backend)
                elif abs(share - weight) > spec["tolerance"]:
                    problems.append("%s got %.3f of the requests, want %.2f +- %.2f" % (
                        backend, share, weight, spec["tolerance"]))
            for backend in set(counts) - set(weights):
                problems.append("unexpected backend %s got %d requests" % (backend,
                                                                          counts[backend]))
            if not problems:
                return None
            last = "distribution: " + "; ".join(problems)
        return last

    def repeat(self, case, target, spec, _since=None):
        """The README's `repeat` check (backendHeaderMatchesPod)."""
        if spec.get("assertion") != "backendHeaderMatchesPod":
            return "unknown repeat assertion %s" % spec.get("assertion")
        name = spec["header"].lower()
        for i in range(spec["count"]):
            try:
                response = send_case(case, target, self.args.request_timeout)
            except RequestError as e:
                return "repeat %d: %s" % (i + 1, e)
            why = compare(case, response)
            if why:
                return "repeat %d: %s" % (i + 1, why)
            echo, why = response.echo()
            if echo is None:
                return "repeat %d: %s" % (i + 1, why)
            values = [v for n, vs in (echo.get("headers") or {}).items() if n.lower() == name
                      for v in vs]
            pod = echo.get("pod") or ""
            if len(values) != 1:
                return "repeat %d: backend %s received %d %s headers %s, want exactly one" % (
                    i + 1, pod, len(values), spec["header"], values)
            if not pod.startswith(values[0]):
                return "repeat %d: %s: %s was answered by pod %s" % (i + 1, spec["header"],
                                                                     values[0], pod)
        return None


# ---------------------------------------------------------------------------------------------
# One test file

LIVE = set()  # running portico processes, stopped by the SIGTERM handler
WORKDIRS = set()  # temporary directories in use, removed by the SIGTERM handler
LIVE_LOCK = threading.Lock()


def track(process):
    with LIVE_LOCK:
        LIVE.add(process)
    return process


def stop(process):
    with LIVE_LOCK:
        LIVE.discard(process)
    process.stop()


class FileResult:
    def __init__(self, name):
        self.name = name
        self.results = []  # [(description, outcome, reason)]
        self.error = None
        self.skipped = None  # reason the whole file was skipped
        self.not_run = None  # (strict mode) why the file cannot pass, so it was not run
        self.seconds = 0.0  # how long it ran
        self.counts = (0, 0)  # (cases, status checks) of a file not run


def kind_of(description):
    """"case" or "status" for a result description ("[followUp ...: ]case: name")."""
    return "case" if " case: " in " " + description else "status"


def standins(pods):
    """{namespace: [(pod, address, port)]} of the echo pods that are served (namespacesReady)."""
    out = collections.defaultdict(list)
    for p in pods:
        if p.served:
            out[p.namespace].append((p.name, p.v4, p.port))
    return dict(out)


def run_file(path, args, base, secrets, pods, slot, echo=None):
    name = os.path.basename(path)
    result = FileResult(name)
    test = load_json(path)
    if args.strict:
        reason = unsupported_reason(test, h2_over_http1=args.h2_over_http1)
        if reason and not args.try_unsupported:
            result.not_run = reason
            result.counts = (len(all_cases(test)), sum(len(c) for _, c, _, _ in test_phases(test)))
            return result
    started = time.monotonic()
    workdir = tempfile.mkdtemp(prefix="portico-conformance-")
    with LIVE_LOCK:
        WORKDIRS.add(workdir)
    conf = os.path.join(workdir, "conf")
    os.makedirs(conf)
    procs = []
    local_echo = None
    try:
        addresses = gateway_addresses(base, test, slot)
        local = plan_local_pods(test, slot)
        v1 = [p for p in pods if p.deployment == "infra-backend-v1"]
        endpoints = {"IPv4": [p.v4 for p in v1],
                     "IPv6": [p.v6 for p in v1] if args.ipv6 else []}
        write_config(conf, base, secrets, test, endpoints=endpoints,
                     rewrite=give_gateways_addresses(addresses),
                     extra=selector_endpoint_slices(base, test, pods + local))
        material = TlsMaterial(secrets, workdir)
        if local:  # the file's own echo backends, for this file only
            local_echo = echo_backend.EchoServers(echo_pods(local, material)).start()
        binaries = portico_procs.Binaries(args.controller, args.gateway, None, args.plugin_dir)
        controller = track(portico_procs.Controller(binaries, conf, workdir, log_level="warn"))
        procs.append(controller)
        controller.wait_ready(args.ready_timeout)
        gateway = track(portico_procs.Gateway(
            binaries, workdir, controller.sync_address(), gateway_class=GATEWAY_CLASS,
            snapshot=False, log_level=args.gateway_log_level,
            advertise=sorted(set(addresses.values())), workers=args.workers))
        procs.append(gateway)
        context = CheckContext(base["manifests"] + test.get("manifests", []),
                               standins(pods + local), secrets)
        seen_checks, seen_cases = {}, {}
        for label, checks, actions, cases in test_phases(test):
            phase = run_phase(label, checks, actions, controller.admin,
                              time.monotonic() + args.status_deadline, seen_checks, context,
                              check_label="status: ")
            result.results += phase
            runner = CaseRunner(args, addresses, gateway, echo, tls=material,
                                settling=all(outcome != FAIL for _, outcome, _ in phase))
            for case in phase_cases(cases, args.h2_over_http1):
                description = label + "case: " + case["name"]
                seen_cases[description] = seen_cases.get(description, 0) + 1
                if seen_cases[description] > 1:
                    description += " #%d" % seen_cases[description]
                outcome, why = runner.run(case)
                result.results.append((description, outcome, why))
    except (RuntimeError, OSError, subprocess.CalledProcessError, AssertionError) as e:
        result.error = str(e)
    finally:
        for p in reversed(procs):
            stop(p)
        if local_echo is not None:
            local_echo.stop()
        with LIVE_LOCK:
            WORKDIRS.discard(workdir)
        if args.keep:
            print("  (kept %s for %s)" % (workdir, name), file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
        result.seconds = time.monotonic() - started
    return result


# ---------------------------------------------------------------------------------------------
# Main


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--controller", required=True, help="portico-controller binary")
    parser.add_argument("--gateway", required=True, help="portico-gateway binary")
    parser.add_argument("--plugin-dir", required=True, help="directory of the built plugins")
    parser.add_argument("--conformance-dir", required=True,
                        help="a directory of conformance files (the Gateway API data: "
                        "../shared/conformance/gateway-api)")
    parser.add_argument("--expected-failures", help="file of 'file.json: case: name' lines")
    parser.add_argument("--write-expected-failures",
                        help="write the failures to this file (to seed the list)")
    parser.add_argument("--status-deadline", type=float, default=30.0,
                        help="seconds to wait for a phase's status checks (default 30)")
    parser.add_argument("--consistency-timeout", type=float, default=30.0,
                        help="seconds the first cases of a phase may take to pass (default 30, "
                        "upstream's MaxTimeToConsistency)")
    parser.add_argument("--min-window", type=float, default=2.0,
                        help="seconds any case is retried before it fails (default 2)")
    parser.add_argument("--consistency-passes", type=int, default=3,
                        help="passes in a row a case needs (default 3)")
    parser.add_argument("--request-timeout", type=float, default=10.0)
    parser.add_argument("--ready-timeout", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=1, help="gateway --workers (default 1)")
    parser.add_argument("--gateway-log-level", default="warn")
    parser.add_argument("--jobs", type=int, default=2, help="files run in parallel (default 2)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directories")
    parser.add_argument("--quiet", action="store_true",
                        help="print failures only when --expected-failures does not list them")
    parser.add_argument("--no-netns", action="store_true",
                        help="run in the current network namespace (needs root for port 80)")
    parser.add_argument("--mirror-window", type=float, default=10.0,
                        help="seconds after a mirror case's first attempt for its copies to be "
                        "recorded (default 10, upstream's)")
    parser.add_argument("--try-unsupported", action="store_true",
                        help="strict mode: run the files unsupported_reason() names too (their "
                        "unsupported cases fail with the reason)")
    parser.add_argument("--h2-over-http1", action="store_true",
                        help="also send each request.protocol H2 case over HTTP/1.1 (TLS, no "
                        "ALPN), reported as '<name> [over HTTP/1.1]'; the H2 case itself still "
                        "fails (HTTP/2 is another issue)")
    parser.add_argument("files", nargs="*", help="only these test files (names)")
    return parser.parse_args()


def enter_network(args):
    """None to go on here, or an exit status (the re-executed run's, or SKIP_EXIT)."""
    args.ipv6 = False
    if portico_procs.in_private_network():
        portico_procs.die_with_parent()
        return None
    if not args.no_netns:
        why = portico_procs.private_network_unavailable()
        if why is None:
            return portico_procs.reexec_in_private_network()
        if os.geteuid() != 0:
            print("SKIP: the runner binds ports 80/8080 on 127.x addresses in a private network "
                  "namespace (unshare -rn), which is unavailable here: %s. Run it as root with "
                  "--no-netns instead." % why)
            return SKIP_EXIT
        print("NOTE: unshare -rn unavailable (%s); running as root in the host network "
              "namespace" % why)
    return None


def main():
    started = time.monotonic()
    args = parse_args()
    try:
        base = load_base(args.conformance_dir)
    except OSError as e:
        print("SKIP: conformance data not found at %s (it lives in ../shared/conformance/"
              "gateway-api next to the repository): %s" % (args.conformance_dir, e))
        return SKIP_EXIT
    args.strict = len(base["layers"]) > 1
    if shutil.which("openssl") is None:
        print("SKIP: the openssl command is needed to generate the TLS Secrets")
        return SKIP_EXIT
    status = enter_network(args)
    if status is not None:
        return status

    Outcome.with_gateway = True
    pods = plan_pods(base)
    served = [p for p in pods if p.served]
    if portico_procs.in_private_network():
        try:
            portico_procs.bring_up_loopback()
            portico_procs.bring_up_loopback([p.v6 for p in served])
            args.ipv6 = True
        except subprocess.CalledProcessError as e:
            print("NOTE: no IPv6 echo addresses (%s): IPv6 EndpointSlices stay empty" %
                  (e.stderr or b"").decode(errors="replace").strip())
    not_served = collections.Counter("%s/%s (%s)" % (p.namespace, p.deployment, p.server)
                                     for p in pods if not p.served)
    if not_served:
        print("NOTE: not started (the runner implements only the HTTP echo server): %s" %
              ", ".join("%s x%d" % kv for kv in sorted(not_served.items())))

    files = list_test_files(args.conformance_dir)
    if args.files:
        files = [f for f in files if f in set(args.files)]
    paths = [os.path.join(args.conformance_dir, f) for f in files]
    secrets = []
    if args.try_unsupported or not args.strict or not all(
            unsupported_reason(load_json(p), args.h2_over_http1) for p in paths):
        secrets_dir = tempfile.mkdtemp(prefix="portico-conformance-secrets-")
        try:
            secrets = generated_secrets(base, secrets_dir)
        finally:
            shutil.rmtree(secrets_dir, ignore_errors=True)
    # The HTTPS echo pods' certificate files (TlsMaterial writes them, 0600) live here.
    echo_dir = tempfile.mkdtemp(prefix="portico-conformance-echo-")
    with LIVE_LOCK:
        WORKDIRS.add(echo_dir)
    echo = echo_backend.EchoServers(
        echo_pods(pods, TlsMaterial(secrets, echo_dir) if secrets else None, args.ipv6))
    try:
        echo.start()
    except (OSError, KeyError, ssl.SSLError) as e:
        print("FAIL: the echo backends cannot listen: %s" % e)
        shutil.rmtree(echo_dir, ignore_errors=True)
        return 1

    def on_term(sig, _frame):
        with LIVE_LOCK:
            live, workdirs = list(LIVE), list(WORKDIRS)
        for p in live:
            p.kill()
        for d in workdirs:
            shutil.rmtree(d, ignore_errors=True)
        os._exit(128 + sig)
    signal.signal(signal.SIGTERM, on_term)

    slots = queue.Queue()
    jobs = max(1, min(args.jobs, 250))
    for s in range(jobs):
        slots.put(s)

    def run(path):
        slot = slots.get()
        try:
            return run_file(path, args, base, secrets, pods, slot, echo)
        finally:
            slots.put(slot)

    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            runs = list(pool.map(run, paths))
    finally:
        echo.stop()
        shutil.rmtree(echo_dir, ignore_errors=True)
    return report(runs, args, time.monotonic() - started)


def report(runs, args, elapsed):
    expected = load_expected(args.expected_failures) if args.expected_failures else None
    files = {PASS: 0, FAIL: 0, SKIP: 0}
    totals = {(k, o): 0 for k in ("case", "status") for o in (PASS, FAIL, SKIP)}
    failing, unexpected, now_passing = [], [], []  # failing: [(key, reason)]
    refused = not_run_cases = not_run_checks = 0
    for run in runs:
        if run.skipped:
            files[SKIP] += 1
            print("SKIP %s: %s" % (run.name, run.skipped))
            continue
        if run.not_run:
            files[FAIL] += 1
            not_run_cases += run.counts[0]
            not_run_checks += run.counts[1]
            failing.append((run.name, run.not_run))
            listed = expected is not None and run.name in expected
            if expected is not None and not listed:
                unexpected.append(run.name)
            print("FAIL%s %s: not run (%d cases, %d status checks): %s" % (
                "" if expected is None else (" (expected)" if listed else " (NEW)"),
                run.name, run.counts[0], run.counts[1], run.not_run))
            continue
        results = list(run.results)
        if run.error:
            results.append(("run", FAIL, run.error))
        counts = collections.Counter((kind_of(d), o) for d, o, _ in results if d != "run")
        for k, v in counts.items():
            totals[k] += v
        failed = any(o == FAIL for _, o, _ in results)
        files[FAIL if failed else PASS] += 1
        if not failed and expected is not None and run.name in expected:
            now_passing.append(run.name)

        def ratio(kind):
            n = sum(counts[(kind, o)] for o in (PASS, FAIL, SKIP))
            return "%d/%d" % (counts[(kind, PASS)], n)
        print("%s %s: %s cases, %s status checks passed%s (%.1f s)" % (
            "FAIL" if failed else "PASS", run.name, ratio("case"), ratio("status"),
            "; run failed" if run.error else "", run.seconds))
        for description, outcome, reason in results:
            key = "%s: %s" % (run.name, description)
            listed = expected is not None and (key in expected or run.name in expected)
            if outcome == FAIL:
                failing.append((key, reason))
                refused += "connection refused" in reason
                if expected is not None and not listed:
                    unexpected.append(key)
                if not args.quiet or not listed:
                    print("    FAIL%s %s: %s" % (
                        "" if expected is None else (" (expected)" if listed else " (NEW)"),
                        description, reason))
            elif outcome == SKIP and not args.quiet:
                print("    SKIP %s: %s" % (description, reason))
            elif expected is not None and key in expected:
                now_passing.append(key)

    if args.write_expected_failures:
        write_expected_failures(args.write_expected_failures, failing)
    if refused:
        print("note: %d failures were connection refused: the gateway did not listen on its "
              "Gateways' addresses (data plane not serving?)" % refused)
    totals[("case", FAIL)] += not_run_cases
    totals[("status", FAIL)] += not_run_checks
    print("cases: %d passed, %d failed, %d skipped; status checks: %d passed, %d failed%s" % (
        totals[("case", PASS)], totals[("case", FAIL)], totals[("case", SKIP)],
        totals[("status", PASS)], totals[("status", FAIL)],
        " (%d cases and %d status checks of them in files not run)" % (
            not_run_cases, not_run_checks) if not_run_cases or not_run_checks else ""))
    if expected is not None:
        print("expected failures: %d failing, %d of them listed, %d new; %d listed now pass" % (
            len(failing), len(failing) - len(unexpected), len(unexpected), len(now_passing)))
        for key in now_passing:
            print("    now passes (remove from the list): %s" % key)
        exit_code = 1 if unexpected else 0
    else:
        exit_code = 1 if files[FAIL] else 0
    print("wall time: %.1f s" % elapsed)
    print("%d passed, %d failed, %d skipped" % (files[PASS], files[FAIL], files[SKIP]))
    return exit_code


def write_expected_failures(path, failing):
    """The failures as an expected-failures file, each after a '#' line with its reason."""
    with open(path, "w") as f:
        f.write("# Gateway API conformance failures today, one 'file: case|status: ...' (or a bare "
                "'file' for all\n# of its failures) per line, its reason on the line above. "
                "Remove lines as features land;\n# the test fails on any failure not listed "
                "here.\n")
        for key, reason in sorted(failing):
            reason = re.sub(r" \(for [0-9.]+s\)$", "", " ".join(reason.split()))
            f.write("\n# %s\n%s\n" % (reason[:200], key))


if __name__ == "__main__":
    sys.exit(main())
