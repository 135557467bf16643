#!/usr/bin/env python3
"""bench.py: the proxy benchmark of issues 5, 12 and 13 ("Benchmark tests/bench/proxy"), run by
tests/bench/proxy.sh (see its header for the options). A script that prints figures, not a test.

Layout on this 2-core machine: the proxy under test alone on CPU 0 (taskset -c 0; one worker);
wrk (-t1 -c50), the upstream (nginx `return 200`, 1 worker), the webhook server (another nginx,
`return 200;` with an empty body), the controllers and this driver on CPU 1. By default the
layout is proxy-bound (issue 12): every proxy under test (and the forwarder) runs in a cgroup of
its own with a CFS bandwidth quota of --cpu-quota PCT (default 50) % of one CPU (cpu_quota.py:
cgroup2 cpu.max, else cgroup v1 cpu.cfs_quota_us, else systemd-run; the way found is checked by
a busy-loop probe), so that the proxy and not the client core is the bottleneck; each timed run
records the proxy's share of CPU 0, the share of quota periods it was throttled in and how busy
CPU 1 was, which shows whether that held. When no way works the run says so on stderr and in
the report and falls back to the unconstrained layout. Configurations: wrk straight to the
upstream (the limit); nginx (1 worker, upstream keep-alive); haproxy (nbthread 1, http-reuse
always); portico-gateway (--workers 1, its configuration loaded through portico-controller:
Gateway, Service + EndpointSlice, HTTPRoutes);
each proxy with 1 route, with 10,000 prefix routes and with 10,000 regex routes (one rule each,
one hostname; GET /r9999/bench matches the last); access logs on for every proxy (nginx
buffer=32k flush=100ms like portico's 32 KB / 100 ms buffer; haproxy `log stdout` to a file),
plus a set with logs off for 1 route. nginx's 10k routes are `location` blocks (prefix: its
longest-prefix tree; regex: `location ~` tried in order); haproxy's are acl + use_backend rules
tried in order (prefix segment-aware: `path /rN` or `path_beg /rN/`), the hostname checked once.
All three add X-Forwarded-For/-Proto, as portico does. One more configuration is a reference, not
a proxy: forwarder-1route (forwarder.c) copies bytes between each client connection and an
upstream connection of its own, parsing nothing, busy-polling like portico; it shows how much of
the limit this layout leaves to any proxy on CPU 0, so the report can say how far each proxy is
from that ceiling (--no-forwarder leaves it out). Issue 12 adds (--no-filters leaves them out):
headers (1 route setting a request and a response header: portico RequestHeaderModifier +
ResponseHeaderModifier, nginx proxy_set_header + add_header, haproxy http-request/http-response
set-header) and webhook (1 route calling the webhook server before the upstream: portico's
Webhook kind bound by an ExtensionRef filter, nginx auth_request; haproxy has no equivalent
without Lua/SPOE). Issue 13 adds the TLS configurations (--no-tls leaves them out, --only-tls
keeps only them): nginx and portico, 1 route behind an HTTPS listener with an ECDSA P-256
certificate made with openssl at run time (portico: a Gateway HTTPS listener whose
certificateRefs name a kubernetes.io/tls Secret in the controller's config dir, TLS 1.3 by
default; nginx: `listen ssl`, ssl_protocols TLSv1.2 TLSv1.3, ssl_session_tickets on,
ssl_session_cache shared:SSL:10m), both on the same libssl (the report says which), each under
three loads: tls-full (tls_load.c: 50 connections, each a full TLS 1.3 handshake on P-256 and
one request with Connection: close), tls-resume (the same, each connection offering its slot's
last ticket) and tls-keepalive (wrk -t1 -c50 https://); tls_load.c's header says why not wrk
(it resumes on reconnect), s_time (one connection at a time, no Host) or h2load (resumes too).
The handshake rates are printed against nginx and as a fraction of the crypto floor
(`openssl speed -seconds 3 ecdsap256 ecdhp256` on CPU 0: 1 / (sign + ECDH) full handshakes,
1 / ECDH resumed ones, per core). Phases:

  1. timed: every configuration once per repeat, interleaved (the order rotates each repeat);
     RPS, p50, p99 from wrk --latency; CPU time of the proxy's whole process tree (utime+stime of
     /proc/PID/stat: every thread, every process) per request; medians over the repeats; ratios
     between medians of this run; RSS after the runs (bytes per route = (RSS with 10k routes -
     RSS with 1) / 9,999);
  2. counted: each proxy restarted with the LD_PRELOAD counter (counter.c: the libc wrappers of
     the I/O syscalls and the malloc family), a fixed-length wrk run, the counters' delta divided
     by the requests the upstream served meanwhile (its stub_status, exact). LD_PRELOAD works here
     because all three proxies are dynamically linked and call libc's wrappers; what it cannot
     see (futex inside pthread, libc calling itself) is covered by the cross-check with
     `perf stat -e raw_syscalls:sys_enter` (every syscall of every thread) when perf can open
     that tracepoint (root or perf_event_paranoid <= -1);
  3. callgrind (not with --quick): each proxy under valgrind --tool=callgrind, warmed up, then
     `callgrind_control -z` (zero), wrk stopped after --callgrind-requests responses (or a time
     cap), `callgrind_control -d` (dump): instructions (Ir, user space) of that window divided by
     the requests the upstream served in it, so no warm-up run needs subtracting. nginx runs
     with `master_process off` there (vgdb cannot reach a forked worker; the event loop is the
     worker's); haproxy with its watchdog disabled (no_watchdog.c: callgrind's slowdown would
     trip it). Not under the quota (instruction counts do not depend on it);
  3b. TLS memory (issue 13; --tls-idle 0 or --no-tls skips it): fresh nginx and portico TLS
     instances (tls-idle, under the quota), warmed up with full handshakes, then N (--tls-idle,
     4000) connections each after one keep-alive request held open: (settled RSS with them -
     settled RSS before) / N;
  4. memory (--no-memory skips it): memory per route where the routes dominate, (RSS with
     --memory-routes (100,000) prefix routes - RSS with 1) / (N - 1), fresh gateways each
     measured after the same traffic (--memory-requests served upstream, to the last route);
     the big controller starts only now and every wait has a deadline on a condition (its
     /readyz, the gateway's /api/v1/runtime route count, the last route answering), no sleeps.
"""

import argparse
import glob
import http.client
import os
import platform
import re
import shutil
import signal
import ssl
import statistics
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
import bench_manifests as manifests  # noqa: E402
from portico_procs import (Binaries, Controller, Timeout, free_port, read_port,  # noqa: E402
                           wait_until)
from cpu_quota import Quota  # noqa: E402  (tests/bench/proxy/cpu_quota.py)

HOST = "bench.example.com"
PATH = "/r9999/bench"  # matches the last of the 10,000 routes (and the single route "/")
ROUTES = 10000
MEMORY_ROUTES = 100000  # the memory phase's many-routes gateway (--memory-routes)
WEBHOOK = "bench-auth"  # the Webhook of portico-webhook
REQ_HEADER, RESP_HEADER = "X-Bench-Request", "X-Bench-Response"  # the headers configurations
PROXY_CPU = "0"
CLIENT_CPU = 1
CLK_TCK = os.sysconf("SC_CLK_TCK")

TARGETS = {
    # issue 12, in the proxy-bound layout (--cpu-quota)
    "webhook_vs_nginx": 1.5,  # portico-webhook RPS >= 1.5 x nginx-webhook (auth_request)
    "ir_1route": 9200,        # callgrind Ir per request of portico-1route: within +5% of this
    "ir_slack": 0.05,
    "memory_bytes": 1024,     # (RSS 100k prefix routes - RSS 1 route) / 99,999
    # issue 5 (and issue 12 for vs_best_other in the proxy-bound layout)
    "vs_best_other": 1.1,   # portico RPS >= 1.1 x max(nginx, haproxy)
    "vs_limit": 0.53,       # portico RPS >= 0.53 x direct
    "p99_vs_direct": 2.3,   # portico p99 <= 2.3 x direct p99
    "prefix_vs_1": 0.95,    # portico 10k prefix RPS >= 0.95 x its 1-route RPS
    "regex_vs_1": 0.5,      # portico 10k regex RPS >= 0.5 x its 1-route RPS
    "prefix_bytes": 1024,   # portico RSS per prefix route
    "regex_bytes": 4096,    # portico RSS per regex route
    # issue 13 (TLS), proxy-bound layout, portico vs nginx with the same OpenSSL
    "tls_full_vs_nginx": 1.3,        # new connections, full TLS 1.3 handshake, ECDSA P-256
    "tls_resume_vs_nginx": 1.2,      # resumed handshakes (tickets)
    "tls_keepalive_vs_nginx": 1.15,  # keep-alive HTTPS requests
    "tls_idle_bytes": 8192,          # RSS per idle TLS connection
}
TLS_SECRET = "bench-tls"
TLS_IDLE = 4000  # idle TLS connections of the TLS memory phase (--tls-idle)


def log(msg):
    sys.stderr.write("[proxy-bench %s] %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


def http_get(port, path=PATH, host=HOST, timeout=5, tls=False):
    """(status, headers as {lower-case name: value}, body) of GET path (over TLS, certificate
    not checked, when `tls`)."""
    if tls:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=timeout, context=context)
    else:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path, headers={"Host": host})
        response = conn.getresponse()
        body = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body
    finally:
        conn.close()


def http_status(port, path=PATH, host=HOST, timeout=5, tls=False):
    status, _, body = http_get(port, path, host, timeout, tls)
    return status, body


# ---------------------------------------------------------------------------------------------
# /proc


def children_of(pid):
    out = []
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat) as f:
                text = f.read()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        if int(fields[1]) == pid:
            out.append(int(stat.split("/")[2]))
    return out


def process_tree(pid):
    tree, todo = [], [pid]
    while todo:
        p = todo.pop()
        tree.append(p)
        todo.extend(children_of(p))
    return tree


def cpu_seconds(pids):
    """utime + stime of every process in `pids` (each the total of all its threads)."""
    total = 0
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid) as f:
                text = f.read()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
    return total / CLK_TCK


def cpu_busy():
    """{cpu index: (busy jiffies, total jiffies)} from /proc/stat."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            m = re.match(r"cpu(\d+) (.*)", line)
            if m:
                v = [int(x) for x in m.group(2).split()]
                idle = v[3] + v[4]  # idle, iowait
                out[int(m.group(1))] = (sum(v[:8]) - idle, sum(v[:8]))
    return out


def wait_idle(timeout=300, threshold=0.03):
    """Waits until every CPU is busy less than `threshold` over a second (start-up work of the
    proxies and controllers done, nobody else running); returns the last busy shares."""
    deadline = time.monotonic() + timeout
    while True:
        a = cpu_busy()
        time.sleep(1)
        b = cpu_busy()
        shares = {c: (b[c][0] - a[c][0]) / max(1, b[c][1] - a[c][1]) for c in b}
        if all(v < threshold for v in shares.values()) or time.monotonic() > deadline:
            return shares


def rss_bytes(pids):
    total = 0
    for pid in pids:
        try:
            with open("/proc/%d/status" % pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


# ---------------------------------------------------------------------------------------------
# Processes


class Proc:
    """A child process (argv, extra environment) logging to workdir/<name>.log; stopped with
    SIGTERM (then SIGKILL) by its pid."""

    def __init__(self, name, argv, workdir, env=None, stdout=None, preexec=None):
        self.name = name
        self.log_path = os.path.join(workdir, name + ".log")
        self.log = open(self.log_path, "a")
        self.stdout = open(stdout, "a") if stdout else self.log
        full_env = dict(os.environ)
        full_env.update(env or {})
        # preexec: the cpu quota's group entered before exec (cpu_quota.Group.preexec).
        self.process = subprocess.Popen(argv, stdout=self.stdout, stderr=self.log,
                                        env=full_env, stdin=subprocess.DEVNULL,
                                        preexec_fn=preexec)
        self.pid = self.process.pid

    def alive(self):
        return self.process is not None and self.process.poll() is None

    def check_alive(self):
        if not self.alive():
            raise RuntimeError("%s exited with %s: %s" % (self.name, self.process.returncode,
                                                          self.tail()))

    def tail(self, lines=20):
        self.log.flush()
        with open(self.log_path, errors="replace") as f:
            return "\n".join(f.read().strip().splitlines()[-lines:])

    def pids(self):
        return process_tree(self.pid) if self.alive() else []

    def stop(self, timeout=60):
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        self.log.close()
        if self.stdout is not self.log:
            self.stdout.close()


class Upstream:
    """nginx `return 200` (1 worker, no access log) on CPU 1, with stub_status for exact request
    counts. Two of them: the upstream, and the webhook server of the webhook configurations
    (portico's Webhook and nginx's auth_request call it; its own count tells the calls). The
    webhook server's 200 has an empty body (`return 200;`, Content-Length: 0): nginx reads no
    body of an auth_request subrequest, so with a body it closes the connection after each
    call instead of keeping it alive."""

    STATUS = "/__bench_upstream_status"

    def __init__(self, workdir, name="upstream", body="ok\\n"):
        self.name = name
        self.dir = os.path.join(workdir, name)
        os.makedirs(self.dir)
        self.port = free_port()
        conf = os.path.join(self.dir, "nginx.conf")
        with open(conf, "w") as f:
            f.write(nginx_main(self.dir) + """http {
  access_log off;
  keepalive_requests 100000000;
  keepalive_timeout 600s;
  server {
    listen 127.0.0.1:%d backlog=4096;
    location = %s { stub_status; }
    location / { default_type text/plain; return 200%s; }
  }
}
""" % (self.port, self.STATUS, ' "%s"' % body if body else ""))
        self.proc = Proc(name, ["nginx", "-p", self.dir + "/", "-c", conf, "-e",
                                os.path.join(self.dir, "error.log")], workdir)
        self.reads = 0
        wait_until(lambda: self.proc.check_alive() or http_status(self.port)[0] == 200, 20,
                   "the %s nginx" % name)

    def requests(self):
        """stub_status 'requests' (this status request included)."""
        self.reads += 1
        status, body = http_status(self.port, self.STATUS, "localhost")
        if status != 200:
            raise RuntimeError("%s status: %d" % (self.name, status))
        return int(body.decode().splitlines()[2].split()[2])

    def served_since(self, mark):
        """(requests served since `mark` = (count, reads) from mark()), excluding status reads."""
        count, reads = mark
        now = self.requests()
        return now - count - (self.reads - reads)

    def mark(self):
        count = self.requests()
        return (count, self.reads)

    def quiesce(self, timeout=120, still=0.3):
        """Waits until the served count stays put for `still` seconds."""
        deadline = time.monotonic() + timeout
        last = self.mark()
        while time.monotonic() < deadline:
            time.sleep(still)
            now = self.mark()
            if now[0] - last[0] == now[1] - last[1]:
                return
            last = now
        raise RuntimeError("the %s kept serving for %d s" % (self.name, timeout))


def nginx_main(directory):
    user = "user root root;\n" if os.geteuid() == 0 else ""
    return """%sworker_processes 1;
daemon off;
pid %s/nginx.pid;
error_log %s/error.log warn;
events { worker_connections 8192; }
""" % (user, directory, directory)


# ---------------------------------------------------------------------------------------------
# Configurations


VARIANTS = {"1": "1route", "prefix": "10k-prefix", "regex": "10k-regex", "headers": "headers",
            "webhook": "webhook", "tls-full": "tls-full", "tls-resume": "tls-resume",
            "tls-keepalive": "tls-keepalive", "tls-idle": "tls-idle"}
# The TLS configurations (issue 13): 1 route over an HTTPS listener (ECDSA P-256 certificate
# made at run time), each with its load: full handshakes, resumed handshakes (tickets), keep-alive
# requests; tls-idle is the TLS memory phase's instance (not timed).
TLS_VARIANTS = ("tls-full", "tls-resume", "tls-keepalive")


class Config:
    """One measured configuration: kind (direct, forwarder, nginx, haproxy, portico), variant
    ("1", "prefix", "regex": routes; "headers": 1 route with request and response header
    modifiers; "webhook": 1 route calling the webhook server first, portico's Webhook or nginx's
    auth_request), access logs on/off; `routes` overrides the route count of "prefix" (the memory
    phase)."""

    def __init__(self, kind, variant, logs=True, name=None, routes=None):
        self.kind, self.variant, self.logs = kind, variant, logs
        self.name = name or (kind if kind == "direct" else "%s-%s%s" % (
            kind, VARIANTS[variant], "" if logs else "-nolog"))
        self.routes = routes if routes else ROUTES if variant in ("prefix", "regex") else 1
        self.port = None
        self.runs = []       # timed results (dicts)
        self.rss = None
        self.counts = None   # counted phase
        self.ir = None       # callgrind Ir per request
        self.instance = None
        self.tls = variant.startswith("tls-")


HEADER_FILTERS = [
    "{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: %s, value: '1'}]}}"
    % REQ_HEADER,
    "{type: ResponseHeaderModifier, responseHeaderModifier: {set: [{name: %s, value: '1'}]}}"
    % RESP_HEADER]


def route_yaml(i, variant):
    filters = None
    if variant in ("1", "headers", "webhook") or variant.startswith("tls-"):
        name, match = "all", "{path: {type: PathPrefix, value: /}}"
        filters = {"headers": HEADER_FILTERS,
                   "webhook": [manifests.webhook_filter(WEBHOOK)]}.get(variant)
    elif variant == "prefix":
        name, match = "r%05d" % i, "{path: {type: PathPrefix, value: /r%d}}" % i
    else:
        name, match = "r%05d" % i, "{path: {type: RegularExpression, value: '/r%d(/.*)?'}}" % i
    return manifests.route_yaml(name, HOST, match, "upstream", filters)


def write_webhook(conf, webhook_port, timeout):
    """The Webhook of portico-webhook, in a file of its own."""
    path = os.path.join(conf, "01-webhook.yaml")
    with open(path + ".tmp", "w") as f:
        f.write(manifests.webhook_yaml(WEBHOOK, "http://127.0.0.1:%d" % webhook_port, "/auth",
                                       timeout, "Fail"))
    os.rename(path + ".tmp", path)


def write_portico_conf(conf, port, upstream_port, variant, routes, webhook_port=None,
                       tls_pems=None):
    """tls_pems: (certificate PEM, key PEM) of the HTTPS listener of the TLS variants, written
    as a kubernetes.io/tls Secret beside the Gateway."""
    os.makedirs(conf)
    with open(os.path.join(conf, "00-gateway.yaml"), "w") as f:
        if variant.startswith("tls-"):
            f.write(manifests.https_gateway_yaml(port, TLS_SECRET) + "---\n" +
                    manifests.tls_secret_yaml(TLS_SECRET, *tls_pems) + "---\n")
        else:
            f.write(manifests.gateway_yaml(port) + "---\n")
        f.write(manifests.service_yaml("upstream", upstream_port, endpoints=True))
    if variant == "webhook":
        write_webhook(conf, webhook_port, "1s")
    n = routes
    per_file = 100
    for start in range(0, n, per_file):
        with open(os.path.join(conf, "r%05d.yaml" % start), "w") as f:
            f.write("---\n".join(route_yaml(i, variant)
                                  for i in range(start, min(n, start + per_file))))
    return n


def write_nginx_conf(directory, port, upstream_port, variant, logs, webhook_port=None,
                     tls_files=None):
    """tls_files: (certificate path, key path) of the TLS variants' `listen ssl`."""
    os.makedirs(directory, exist_ok=True)
    proxy = ("proxy_pass http://up;")
    upstreams = ""
    listen_ssl = ""
    if variant.startswith("tls-"):
        # Issue 13: TLS 1.2 and 1.3, tickets (OpenSSL's own ticket keys) and a shared cache.
        listen_ssl = (" ssl;\n    ssl_certificate %s;\n    ssl_certificate_key %s;\n"
                      "    ssl_protocols TLSv1.2 TLSv1.3;\n    ssl_session_tickets on;\n"
                      "    ssl_session_cache shared:SSL:10m" % tls_files)
    if variant == "1" or variant.startswith("tls-"):
        locations = "    location / { %s }\n" % proxy
    elif variant == "headers":
        # A location's proxy_set_header replaces the inherited ones: all of them again, plus the
        # request header; add_header for the response header (`always`: whatever the status).
        locations = ("    location / {\n      %s\n      proxy_set_header Connection \"\";\n"
                     "      proxy_set_header Host $host;\n"
                     "      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;\n"
                     "      proxy_set_header X-Forwarded-Proto $scheme;\n"
                     "      proxy_set_header %s 1;\n      add_header %s 1 always;\n    }\n"
                     % (proxy, REQ_HEADER, RESP_HEADER))
    elif variant == "webhook":
        # auth_request: a GET subrequest to the webhook server (kept-alive connections like the
        # upstream's) before proxying; like portico's Webhook call it carries no client header
        # and no body (proxy_pass_request_headers/body off), only the proxy_set_header ones.
        upstreams = """  upstream webhook {
    server 127.0.0.1:%d;
    keepalive 256;
    keepalive_requests 100000000;
    keepalive_timeout 600s;
  }
""" % webhook_port
        locations = ("    location / { auth_request /__auth; %s }\n"
                     "    location = /__auth {\n      internal;\n"
                     "      proxy_pass http://webhook/auth;\n"
                     "      proxy_pass_request_body off;\n"
                     "      proxy_pass_request_headers off;\n    }\n" % proxy)
    elif variant == "prefix":
        locations = "".join("    location /r%d { %s }\n" % (i, proxy) for i in range(ROUTES))
    else:
        locations = "".join("    location ~ ^/r%d(/.*)?$ { %s }\n" % (i, proxy)
                            for i in range(ROUTES))
    access = ("access_log %s/access.log combined buffer=32k flush=100ms;" % directory
              if logs else "access_log off;")
    conf = os.path.join(directory, "nginx.conf")
    with open(conf, "w") as f:
        f.write(nginx_main(directory) + """http {
  %s
  keepalive_requests 100000000;
  keepalive_timeout 600s;
  client_body_temp_path %s/client_body;
  proxy_temp_path %s/proxy;
  fastcgi_temp_path %s/fastcgi;
  uwsgi_temp_path %s/uwsgi;
  scgi_temp_path %s/scgi;
  proxy_http_version 1.1;
  proxy_set_header Connection "";
  proxy_set_header Host $host;
  proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
  proxy_set_header X-Forwarded-Proto $scheme;
  upstream up {
    server 127.0.0.1:%d;
    keepalive 256;
    keepalive_requests 100000000;
    keepalive_timeout 600s;
  }
%s  server {
    listen 127.0.0.1:%d backlog=4096%s;
    server_name %s;
%s  }
}
""" % (access, directory, directory, directory, directory, directory, upstream_port, upstreams,
       port, listen_ssl, HOST, locations))
    return conf


def write_haproxy_conf(directory, port, upstream_port, variant, logs):
    os.makedirs(directory, exist_ok=True)
    # The hostname is checked once (every route has the same one), then the rules in order.
    if variant == "1":
        rules = "  default_backend up\n"
    elif variant == "headers":
        rules = ("  http-request set-header %s 1\n  http-response set-header %s 1\n"
                 "  default_backend up\n" % (REQ_HEADER, RESP_HEADER))
    elif variant == "prefix":
        # Segment-aware like Gateway API PathPrefix: /r1 must not take /r1234.
        rules = "".join("  acl r%d path /r%d\n  acl r%d path_beg /r%d/\n" % (i, i, i, i)
                        for i in range(ROUTES))
        rules += "".join("  use_backend up if r%d\n" % i for i in range(ROUTES))
    else:
        rules = "".join("  acl r%d path_reg ^/r%d(/.*)?$\n" % (i, i) for i in range(ROUTES))
        rules += "".join("  use_backend up if r%d\n" % i for i in range(ROUTES))
    conf = os.path.join(directory, "haproxy.cfg")
    with open(conf, "w") as f:
        f.write("""global
  nbthread 1
  maxconn 4096
%s
defaults
  mode http
%s  timeout connect 5s
  timeout client 600s
  timeout server 600s
  timeout http-keep-alive 600s
  option forwardfor
  http-reuse always

frontend fe
  bind 127.0.0.1:%d
  http-request set-header X-Forwarded-Proto http
  acl host hdr(host) -i %s
  http-request deny deny_status 404 if !host
%s
backend up
  server s1 127.0.0.1:%d
""" % ("  log stdout format raw local0" if logs else "",
       "  log global\n  option httplog\n" if logs else "", port, HOST, rules, upstream_port))
    return conf


class Launcher:
    """Starts and stops the proxy instances of the configurations, optionally with the counter
    preloaded or under callgrind."""

    def __init__(self, args, workdir, upstream, binaries, webhook=None, quota=None):
        self.args, self.workdir, self.upstream, self.binaries = args, workdir, upstream, binaries
        self.webhook = webhook  # the webhook server (an Upstream) or None
        self.quota = quota      # cpu_quota.Quota with a method, or None (unconstrained)
        self.controllers = {}   # config name -> Controller
        self.serial = 0

    def prepare(self, cfg):
        """Writes the configuration files (and starts portico's controller)."""
        cfg.port = self.upstream.port if cfg.kind == "direct" else free_port()
        cfg.dir = os.path.join(self.workdir, cfg.name)
        webhook_port = self.webhook.port if self.webhook else None
        if cfg.kind == "nginx":
            cfg.conf = write_nginx_conf(cfg.dir, cfg.port, self.upstream.port, cfg.variant,
                                        cfg.logs, webhook_port, self.args.tls_files)
        elif cfg.kind == "haproxy":
            cfg.conf = write_haproxy_conf(cfg.dir, cfg.port, self.upstream.port, cfg.variant,
                                          cfg.logs)
        elif cfg.kind == "forwarder":
            os.makedirs(cfg.dir, exist_ok=True)
        elif cfg.kind == "portico":
            conf = os.path.join(cfg.dir, "conf")
            cfg.route_count = write_portico_conf(conf, cfg.port, self.upstream.port, cfg.variant,
                                                 cfg.routes, webhook_port, self.args.tls_pems)
            c = Controller(self.binaries, conf, cfg.dir, name="controller", log_level="warn")
            self.controllers[cfg.name] = c

    def wait_controllers(self, timeout=600):
        for name, c in self.controllers.items():
            if c.admin is None or c.admin.call("GET", "/readyz")[0] != 200:
                c.wait_ready(timeout=timeout)
                log("controller of %s ready" % name)

    def stop_controller(self, name):
        c = self.controllers.pop(name, None)
        if c is not None:
            c.stop()

    def start(self, cfg, mode="plain", counter_dir=None, deadline=None):
        """mode: plain, counted (LD_PRELOAD counter) or callgrind. With a cpu quota, plain and
        counted runs start inside the configuration's group (cpu_quota.py); callgrind runs do
        not (its instruction counts do not depend on the quota; valgrind is the bottleneck
        anyway)."""
        self.serial += 1
        tag = "%s-%s%d" % (cfg.name, mode, self.serial)
        env = {}
        group = (self.quota.group(cfg.group_name if hasattr(cfg, "group_name") else cfg.name)
                 if self.quota and mode != "callgrind" else None)
        cfg.group = group
        prefix = (group.prefix() if group else []) + ["taskset", "-c", PROXY_CPU]
        if mode == "counted":
            env = {"LD_PRELOAD": self.args.counter_so, "PROXYBENCH_COUNTER_DIR": counter_dir}
        elif mode == "callgrind":
            cfg.callgrind_dir = os.path.join(self.workdir, "callgrind-" + cfg.name)
            os.makedirs(cfg.callgrind_dir, exist_ok=True)
            prefix += ["valgrind", "--tool=callgrind", "--dump-instr=no", "--collect-jumps=no",
                       "--callgrind-out-file=%s/callgrind.out.%%p" % cfg.callgrind_dir]
            if cfg.kind == "haproxy":  # its watchdog would abort it (no_watchdog.c)
                env = {"LD_PRELOAD": self.args.no_watchdog_so}
        stdout = None
        if cfg.kind == "nginx":
            argv = prefix + ["nginx", "-p", cfg.dir + "/", "-c", cfg.conf, "-e",
                             os.path.join(cfg.dir, "error.log")]
            if mode == "callgrind":
                # vgdb (callgrind_control) cannot reach a forked worker: one process serving,
                # the same event loop as the worker's.
                argv += ["-g", "master_process off;"]
        elif cfg.kind == "forwarder":
            argv = prefix + [self.args.forwarder_bin, str(cfg.port), str(self.upstream.port)]
        elif cfg.kind == "haproxy":
            argv = prefix + ["haproxy", "-db", "-f", cfg.conf]
            stdout = os.path.join(cfg.dir, "access.log")
        else:
            port_file = os.path.join(cfg.dir, tag + ".admin.port")
            access = os.path.join(cfg.dir, "access.log") if cfg.logs else "off"
            argv = prefix + [self.binaries.gateway, "--name", tag, "--controller",
                             self.controllers[cfg.name].sync_address(), "--plugin-dir",
                             self.binaries.plugin_dir, "--admin-port", "0", "--admin-port-file",
                             port_file, "--log-level", "warn", "--gateway", "default/web",
                             "--workers", "1", "--access-log", access]
        proc = Proc(tag, argv, cfg.dir, env=env, stdout=stdout,
                    preexec=group.preexec() if group else None)
        cfg.instance = proc
        if deadline is None:
            deadline = 900 if mode == "callgrind" else 300
        if cfg.kind == "portico":
            from portico_procs import Admin
            port = wait_until(lambda: proc.check_alive() or read_port(port_file), deadline,
                              "%s admin port" % tag)
            admin = Admin(port)
            cfg.admin = admin
            progress = {"next": time.monotonic() + 30}

            def loaded():
                proc.check_alive()
                stats = admin.get("/api/v1/runtime")
                held = stats["entriesByFormat"].get("route_rules.v1", 0)
                if time.monotonic() >= progress["next"]:
                    progress["next"] = time.monotonic() + 30
                    log("%s holds %d of %d routes" % (tag, held, cfg.route_count))
                return held >= cfg.route_count
            wait_until(loaded, deadline, "%s holding %d routes" % (tag, cfg.route_count),
                       interval=0.1 if cfg.route_count <= ROUTES else 0.5)
            if cfg.variant == "webhook":
                self.deliver_webhook(cfg, tag, admin, deadline)
        last = {}

        def answers():
            proc.check_alive()
            status, body = http_status(cfg.port, timeout=60, tls=cfg.tls)
            last["answer"] = "%d %r" % (status, body[:80])
            return status == 200
        try:
            wait_until(answers, deadline, "%s answering 200" % tag, interval=0.1)
        except Timeout as e:
            raise RuntimeError("%s; its last answer: %s" % (e, last.get("answer", "none")))
        self.check_variant(cfg)
        if group is not None:
            outside = [p for p in proc.pids() if not group.holds(p)]
            if outside:
                raise RuntimeError("%s: processes %s are not in the cpu quota group %s" % (
                    tag, outside, group.cgroup_path))
        return proc

    def deliver_webhook(self, cfg, tag, admin, deadline=60):
        """Once the gateway is in step with its controller it must hold the Webhook and its
        filter binding; said at once rather than as a 300 s wait for 200 (the rule answers 500
        "filter not available" without them). This caught a ConfigSync bug while the bench was
        written: a snapshot decided a "toReferrers" object after moving its referrer's JSON out,
        so a Webhook was never sent to a gateway that connected after it existed (fixed in
        104c5ac, controller/sync/sync_session.cc)."""
        controller = self.controllers[cfg.name]
        head = controller.info()["head"]
        wait_until(lambda: admin.get("/api/v1/synced")["version"] >= head, deadline,
                   "%s in step with its controller (version %d)" % (tag, head), interval=0.1)
        runtime = admin.get("/api/v1/runtime")
        if (runtime["syncedByKind"].get("Webhook.portico.io", 0) < 1 or
                runtime["entriesByFormat"].get("filter_binding.v1", 0) < 1):
            raise RuntimeError("%s: in step with its controller (version %d) but holding no "
                               "Webhook or no filter_binding.v1 entry: %s" % (tag, head, runtime))

    def check_variant(self, cfg):
        """The configuration does what its name says: the response header of "headers"; one
        webhook server call per request for "webhook"; TLS 1.3 with P-256 for the TLS ones, and
        whether a ticket resumes (3 connections in a row: 1 full, then 2 resumed expected;
        recorded for the report, not fatal: a proxy that does not resume is a finding)."""
        if cfg.tls:
            res = tls_load(cfg.port, "resume", 30, connections=1, requests=3)
            cfg.tls_check = res
            if res["requests"] != 3 or res["version"] != "TLSv1.3":
                raise RuntimeError("%s: 3 HTTPS requests on new connections: %s" % (
                    cfg.name, res["output"].strip()))
            if res["resumed"] != 2:
                log("!!! %s: a ticket did not resume: %s" % (cfg.name, res["output"].strip()))
        elif cfg.variant == "headers":
            status, headers, _ = http_get(cfg.port)
            if status != 200 or headers.get(RESP_HEADER.lower()) != "1":
                raise RuntimeError("%s: no %s: 1 in the response (%d %s)" % (
                    cfg.name, RESP_HEADER, status, headers))
        elif cfg.variant == "webhook":
            mark = self.webhook.mark()
            status, _ = http_status(cfg.port)
            calls = self.webhook.served_since(mark)
            if status != 200 or calls != 1:
                raise RuntimeError("%s: %d with %d webhook calls for one request" % (
                    cfg.name, status, calls))

    def stop(self, cfg):
        if cfg.instance is not None:
            cfg.instance.stop()
            cfg.instance = None

    def stop_all(self, configs):
        for cfg in configs:
            try:
                self.stop(cfg)
            except Exception as e:  # noqa: BLE001 - best effort at exit
                log("stopping %s: %s" % (cfg.name, e))
        for c in self.controllers.values():
            c.stop()


# ---------------------------------------------------------------------------------------------
# wrk

UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3, "h": 3600e3}


def parse_latency(text):
    m = re.match(r"([\d.]+)(us|ms|s|m|h)$", text)
    return float(m.group(1)) * UNITS[m.group(2)]


def wrk(port, seconds, connections=50, script=None, env=None, timeout_s=None, tls=False):
    argv = ["wrk", "-t1", "-c%d" % connections, "-d%ds" % max(1, round(seconds)), "--latency",
            "-H", "Host: %s" % HOST]
    if timeout_s:
        argv += ["--timeout", "%ds" % timeout_s]
    if script:
        argv += ["-s", script]
    argv.append("%s://127.0.0.1:%d%s" % ("https" if tls else "http", port, PATH))
    full_env = dict(os.environ)
    full_env.update(env or {})
    out = subprocess.run(argv, capture_output=True, text=True, env=full_env,
                         timeout=float(seconds) + 600).stdout
    m = re.search(r"(\d+) requests in ([\d.]+)(\w+)", out)
    if not m:
        raise RuntimeError("wrk output not understood:\n" + out)
    result = {"requests": int(m.group(1)), "output": out}
    result["rps"] = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    for pct in ("50", "99"):
        lm = re.search(r"^\s+%s%%\s+(\S+)" % pct, out, re.M)
        result["p" + pct] = parse_latency(lm.group(1)) if lm else float("nan")
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    result["errors"] = (int(non2xx.group(1)) if non2xx else 0) + (
        sum(int(x) for x in errors.groups()) if errors else 0)
    return result


# ---------------------------------------------------------------------------------------------
# TLS load (tls_load.c; see its header for why not wrk, s_time or h2load)

TLS_LOAD_BIN = None  # built into the work directory by main()


def tls_load_argv(port, mode, seconds, connections=50, requests=None):
    argv = [TLS_LOAD_BIN, "--port", str(port), "--mode", mode, "--connections", str(connections),
            "--duration", "%g" % seconds, "--host", HOST, "--path", PATH, "--groups", "P-256"]
    if requests:
        argv += ["--requests", str(requests)]
    return argv


def parse_tls_load(text):
    lines = [line for line in text.splitlines() if line.startswith("requests=")]
    if not lines:
        raise RuntimeError("tls_load output not understood:\n" + text)
    kv = dict(field.split("=", 1) for field in lines[-1].split())
    ms = (lambda v: float(v) if float(v) >= 0 else float("nan"))
    return {"requests": int(kv["requests"]), "rps": float(kv["rps"]),
            "p50": ms(kv["p50_ms"]), "p99": ms(kv["p99_ms"]),
            "errors": int(kv["errors"]) + int(kv["non2xx"]), "full": int(kv["full"]),
            "resumed": int(kv["resumed"]), "idle": int(kv["idle"]),
            "idle_closed": int(kv["idle_closed"]), "version": kv["version"],
            "cipher": kv["cipher"], "group": kv["group"], "output": text}


def tls_load(port, mode, seconds, connections=50, requests=None):
    """tls_load full|resume: new connections, one request each, for `seconds` (or `requests`)."""
    out = subprocess.run(tls_load_argv(port, mode, seconds, connections, requests),
                         capture_output=True, text=True, timeout=float(seconds) + 600)
    return parse_tls_load(out.stdout + out.stderr)


def load(cfg, seconds):
    """The timed load of a configuration: tls_load for the handshake configurations, wrk
    otherwise (https:// for tls-keepalive: its connections stay open, handshakes only at the
    start)."""
    if cfg.variant in ("tls-full", "tls-resume"):
        return tls_load(cfg.port, cfg.variant[4:], seconds)
    return wrk(cfg.port, seconds, tls=cfg.tls)


def crypto_floor(seconds):
    """`openssl speed -seconds S -mr ecdsap256 ecdhp256` on CPU 0 (no quota): the seconds of one
    ECDSA P-256 sign, verify and ECDH P-256 derive; the floors a server cannot beat on one core:
    a full TLS 1.3 handshake signs once (CertificateVerify) and derives once (ECDHE) -> 1 /
    (sign + ECDH); a resumed one (psk_dhe_ke, OpenSSL clients' only mode) derives once and
    signs nothing -> 1 / ECDH. (The server's ECDHE key generation, the HKDF schedule and the
    ticket are on top of both: what a floor leaves out.)"""
    argv = ["taskset", "-c", PROXY_CPU, "openssl", "speed", "-seconds", str(seconds), "-mr",
            "ecdsap256", "ecdhp256"]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=60 + 10 * seconds)
    sign = re.search(r"^\+F4:\d+:256:([\d.]+):([\d.]+)", out.stdout, re.M)
    ecdh = re.search(r"^\+F5:\d+:256:([\d.]+):", out.stdout, re.M)
    if not sign or not ecdh:
        raise RuntimeError("openssl speed output not understood:\n%s%s" % (out.stdout,
                                                                             out.stderr))
    f = {"sign_s": 1 / float(sign.group(1)), "verify_s": 1 / float(sign.group(2)),
         "ecdh_s": 1 / float(ecdh.group(1)), "command": " ".join(argv[3:]).replace(" -mr", "")}
    f["full"] = 1 / (f["sign_s"] + f["ecdh_s"])
    f["resumed"] = 1 / f["ecdh_s"]
    return f


# ---------------------------------------------------------------------------------------------
# Counters


def read_counters(directory):
    """Sums the counter files of every process (the nginx master and its worker)."""
    totals = {}
    for path in glob.glob(os.path.join(directory, "counts.*")):
        with open(path, "rb") as f:
            data = f.read()
        names = data[:4096].split(b"\0")[0].decode().split()
        values = struct.unpack("%dQ" % len(names), data[4096:4096 + 8 * len(names)])
        for n, v in zip(names, values):
            totals[n] = totals.get(n, 0) + v
    return totals


HEAP = ("malloc", "calloc", "realloc", "memalign")


class Perf:
    """`perf stat -e raw_syscalls:sys_enter` attached to pids (None when perf cannot)."""

    @staticmethod
    def usable():
        if shutil.which("perf") is None:
            return False
        probe = subprocess.run(["perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter", "true"],
                               capture_output=True, text=True)
        return probe.returncode == 0 and "not supported" not in probe.stderr

    def __init__(self, pids, out):
        self.out = out
        self.process = subprocess.Popen(
            ["perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter", "-o", out, "-p",
             ",".join(str(p) for p in pids)], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        time.sleep(0.5)  # perf attaches to every thread; idle syscalls counted meanwhile are few

    def stop(self):
        self.process.send_signal(signal.SIGINT)
        self.process.wait(timeout=30)
        with open(self.out) as f:
            for line in f:
                fields = line.strip().split(",")
                if len(fields) > 2 and "raw_syscalls:sys_enter" in fields[2]:
                    return int(fields[0])
        return None


def count_config(launcher, cfg, seconds, perf_ok):
    counter_dir = os.path.join(launcher.workdir, "counts-" + cfg.name)
    os.makedirs(counter_dir)
    proc = launcher.start(cfg, "counted", counter_dir)
    try:
        load(cfg, 1)  # warm-up
        up = launcher.upstream
        up.quiesce()
        perf = Perf(proc.pids(), os.path.join(counter_dir, "perf.txt")) if perf_ok else None
        hook = launcher.webhook if cfg.variant == "webhook" else None
        before, mark = read_counters(counter_dir), up.mark()
        hook_mark = hook.mark() if hook else None
        load(cfg, seconds)
        up.quiesce()
        after, served = read_counters(counter_dir), up.served_since(mark)
        calls = hook.served_since(hook_mark) if hook else None
        perf_total = perf.stop() if perf else None
        delta = {k: after.get(k, 0) - before.get(k, 0) for k in after}
        syscalls = sum(v for k, v in delta.items() if k not in HEAP and k != "free")
        cfg.counts = {
            "requests": served,
            "syscalls": syscalls / served,
            "mix": {k: v / served for k, v in sorted(delta.items(), key=lambda kv: -kv[1])
                    if v and k not in HEAP and k != "free"},
            "allocs": sum(delta.get(k, 0) for k in HEAP) / served,
            "frees": delta.get("free", 0) / served,
            "perf": perf_total / served if perf_total is not None else None,
            "webhook_calls": calls / served if calls is not None else None,
        }
    finally:
        launcher.stop(cfg)


def callgrind_totals(path):
    with open(path) as f:
        for line in f:
            if line.startswith("totals:") or line.startswith("summary:"):
                return int(line.split()[1])
    raise RuntimeError("no totals in " + path)


def wrk_requests(port, upstream, requests, cap_s, path=PATH, cfg=None):
    """wrk (its thread stopping after `requests` responses, stop_after.lua) ended with SIGINT
    once the upstream has served them and gone quiet, or after cap_s seconds. wrk's main thread
    otherwise sleeps for the whole -d duration even when its thread stopped. For the TLS
    configurations (cfg): tls_load --requests for the handshake ones, wrk over https://
    otherwise."""
    env = dict(os.environ, PROXYBENCH_STOP_AFTER=str(requests))
    tls = cfg is not None and cfg.tls
    argv = ["wrk", "-t1", "-c50", "-d%ds" % cap_s, "--timeout", "120s", "-H", "Host: %s" % HOST,
            "-s", os.path.join(HERE, "stop_after.lua"),
            "%s://127.0.0.1:%d%s" % ("https" if tls else "http", port, path)]
    if cfg is not None and cfg.variant in ("tls-full", "tls-resume"):
        argv = tls_load_argv(port, cfg.variant[4:], cap_s, requests=requests)
    mark = upstream.mark()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env=env)
    try:
        deadline = time.monotonic() + cap_s + 30
        while process.poll() is None and time.monotonic() < deadline:
            if upstream.served_since(mark) >= requests:
                break
            time.sleep(0.1)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    # Under callgrind a request can take a second: "quiet" means 3 s without one served.
    upstream.quiesce(timeout=600, still=3)
    return upstream.served_since(mark)


def callgrind_config(launcher, cfg, requests, cap_s):
    proc = launcher.start(cfg, "callgrind")
    try:
        up = launcher.upstream
        wrk_requests(cfg.port, up, max(50, requests // 10), min(cap_s, 20), cfg=cfg)  # warm-up
        pids = proc.pids()
        for pid in pids:
            subprocess.run(["callgrind_control", "-z", str(pid)], capture_output=True,
                           check=True, timeout=120)
        mark = up.mark()
        hook = launcher.webhook if cfg.variant == "webhook" else None
        hook_mark = hook.mark() if hook else None
        wrk_requests(cfg.port, up, requests, cap_s, cfg=cfg)
        served = up.served_since(mark)
        if hook:
            # More calls than requests served upstream: calls failed (timeout under valgrind?)
            # and those requests were answered 500 without reaching the upstream.
            cfg.ir_webhook_calls = hook.served_since(hook_mark) / max(1, served)
        existing = set(glob.glob(os.path.join(cfg.callgrind_dir, "callgrind.out.*")))
        for pid in pids:
            subprocess.run(["callgrind_control", "-d", str(pid)], capture_output=True,
                           check=True, timeout=120)
        dumps = [p for p in glob.glob(os.path.join(cfg.callgrind_dir, "callgrind.out.*"))
                 if p not in existing]
        if len(dumps) != len(pids):
            raise RuntimeError("callgrind_control -d wrote %d dumps for %d processes of %s" % (
                len(dumps), len(pids), cfg.name))
        cfg.ir = sum(callgrind_totals(p) for p in dumps) / served
        cfg.ir_requests = served
    finally:
        launcher.stop(cfg)


# ---------------------------------------------------------------------------------------------
# Timed runs and the memory phase


def timed_run(cfg, seconds, webhook):
    """One wrk run of `seconds` on cfg, with what the proxy-bound layout needs to be judged:
    the proxy's share of CPU 0 (its process tree's CPU time over the run's wall time), the
    share of the quota's periods in which it was throttled, and how busy CPU 1 (the client
    core: wrk, the upstream, the webhook server) was."""
    pids = cfg.instance.pids() if cfg.instance else []
    group = getattr(cfg, "group", None) if cfg.instance else None
    hook = webhook if cfg.variant == "webhook" else None
    cpu0, busy0, stat0 = cpu_seconds(pids), cpu_busy(), group.stat() if group else None
    hook_mark = hook.mark() if hook else None
    t0 = time.monotonic()
    res = load(cfg, seconds)
    wall = time.monotonic() - t0
    cpu1, busy1, stat1 = cpu_seconds(pids), cpu_busy(), group.stat() if group else None
    res["cpu_us"] = (cpu1 - cpu0) * 1e6 / res["requests"] if pids and res["requests"] else None
    res["cpu0_share"] = (cpu1 - cpu0) / wall if pids else None
    b, t = (busy1[CLIENT_CPU][i] - busy0[CLIENT_CPU][i] for i in (0, 1))
    res["cpu1_busy"] = b / t if t else None
    res["throttled"] = ((stat1["throttled"] - stat0["throttled"]) /
                        max(1, stat1["periods"] - stat0["periods"]) if stat0 and stat1 else None)
    if hook:
        res["webhook_calls"] = hook.served_since(hook_mark) / max(1, res["requests"])
    del res["output"]
    return res


def memory_phase(args, launcher, small, big):
    """Memory per route where routes dominate: fresh gateways (same layout as the timed runs),
    1 route, `big.routes` prefix routes, 1 route again, each measured after the same traffic
    (exactly args.memory_requests requests served by the upstream; stop_after.lua), all to
    the big gateway's last route (which the 1-route gateway's "/" matches too)."""
    out = {"small": [], "big": None, "sync_s": None}
    last = "/r%d/bench" % (big.routes - 1)
    launcher.wait_controllers(timeout=args.memory_deadline)
    for cfg in (small, big, small):
        t0 = time.monotonic()
        launcher.start(cfg, deadline=args.memory_deadline)
        synced = time.monotonic() - t0
        try:
            if cfg is big:
                # Every route in the data plane's table, not only in the runtime: the last one
                # answers.
                wait_until(lambda: http_status(cfg.port, last)[0] == 200, args.memory_deadline,
                           "%s answering %s" % (cfg.name, last), interval=0.5)
                out["sync_s"] = time.monotonic() - t0
            pids = cfg.instance.pids()
            idle = rss_bytes(pids)
            if http_status(cfg.port, last)[0] != 200:
                raise RuntimeError("%s does not answer 200 to %s" % (cfg.name, last))
            served = wrk_requests(cfg.port, launcher.upstream, args.memory_requests, 300, last)
            if served < args.memory_requests:
                raise RuntimeError("%s: the upstream served %d of %d requests" % (
                    cfg.name, served, args.memory_requests))
            rss = rss_bytes(pids)
            runtime = cfg.admin.get("/api/v1/runtime")
            held = runtime["entriesByFormat"].get("route_rules.v1", 0)
            entry = {"rss": rss, "idle": idle, "routes": held, "start_s": synced}
            log("memory: %s holds %d routes, RSS %.1f MB (%.1f MB before the traffic)" % (
                cfg.name, held, rss / 1e6, idle / 1e6))
            if cfg is big:
                out["big"] = entry
            else:
                out["small"].append(entry)
        finally:
            launcher.stop(cfg)
        if cfg is big:
            launcher.stop_controller(big.name)  # its 100k objects are no longer needed
    return out


def settled_rss(pids, timeout=10, still=0.5):
    """RSS once two readings `still` seconds apart agree within 0.2% (or after `timeout`)."""
    deadline = time.monotonic() + timeout
    last = rss_bytes(pids)
    while time.monotonic() < deadline:
        time.sleep(still)
        now = rss_bytes(pids)
        if abs(now - last) <= 0.002 * max(last, 1):
            return now
        last = now
    return last


def tls_idle_phase(launcher, cfg, n, warmup_s):
    """Memory per idle TLS connection: a fresh proxy (same layout as the timed runs), warmed up
    by `warmup_s` seconds of full handshakes (50 at a time: its upstream pool, session cache
    and allocator at their steady state), its settled RSS, then n connections opened by
    tls_load --mode idle (50 at a time; each a full handshake and one keep-alive request) and
    held open; (settled RSS with them - RSS before) / n. The n connections must all still be
    open when the RSS is read (the client counts the closed ones)."""
    proc = launcher.start(cfg)
    try:
        pids = proc.pids()
        fresh = rss_bytes(pids)
        tls_load(cfg.port, "full", warmup_s)
        launcher.upstream.quiesce()
        before = settled_rss(pids)
        client = subprocess.Popen(
            tls_load_argv(cfg.port, "idle", 300, connections=n) + ["--concurrency", "50"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            ready = client.stdout.readline()
            if not ready.startswith("ready "):
                raise RuntimeError("%s: %d idle TLS connections not opened: %s%s" % (
                    cfg.name, n, ready, client.stdout.read()))
            after = settled_rss(pids)
        finally:
            client.stdin.close()
            rest = client.stdout.read()
            client.wait(timeout=120)
        res = parse_tls_load(rest)
        if res["idle"] != n or res["idle_closed"]:
            raise RuntimeError("%s: of %d idle TLS connections %d were open at the end, %d "
                               "closed by the proxy: %s" % (cfg.name, n, res["idle"],
                                                            res["idle_closed"], rest.strip()))
        out = {"n": n, "fresh": fresh, "before": before, "after": after,
               "per": (after - before) / n, "group": res["group"], "version": res["version"]}
        log("tls idle: %s RSS %.1f MB fresh, %.1f MB warm, %.1f MB with %d idle TLS connections: "
            "%.0f B each" % (cfg.name, fresh / 1e6, before / 1e6, after / 1e6, n, out["per"]))
        return out
    finally:
        launcher.stop(cfg)


# ---------------------------------------------------------------------------------------------
# Report


def med(values):
    values = [v for v in values if v == v]
    return statistics.median(values) if values else float("nan")


def fmt(v, spec="%.1f", none="-"):
    return none if v is None or v != v else spec % v


def verdict(ok):
    return "PASS" if ok else "MISS"


def median_of(cfg, key):
    values = [r[key] for r in cfg.runs if r.get(key) is not None]
    return med(values) if values else None


def tls_report(args, configs, by_name, tls_idle, p, get, bound):
    """Issue 13's section: the TLS configurations' handshakes, the crypto floor, the ratios and
    the per-connection memory."""
    tls = [c for c in configs if c.tls and c.runs]
    floor = getattr(args, "floor", None)
    p("TLS (issue 13): portico vs nginx, one worker each, same OpenSSL (%s), HTTPS listener with "
      "an ECDSA P-256 certificate made at run time (openssl req -newkey ec P-256, no key "
      "committed); client tls_load.c on CPU 1 (TLS 1.3 only, offers P-256 only, SNI %s, 50 "
      "connections) for tls-full (a full handshake per connection, one request with Connection: "
      "close) and tls-resume (each connection offers the ticket its slot's previous one got); "
      "wrk -t1 -c50 https:// for tls-keepalive; RPS of tls-full/-resume = new connections = "
      "handshakes per second" % (getattr(args, "openssl_note", "?"), HOST))
    if floor:
        p("  crypto floor: `%s` on CPU %s (no quota): ECDSA P-256 sign %.1f us, verify %.1f us, "
          "ECDH P-256 %.1f us -> full handshake floor 1/(sign+ECDH) = %.0f/s, resumed floor "
          "1/ECDH = %.0f/s (TLS 1.3 psk_dhe_ke resumption still derives an ECDHE secret, signs "
          "nothing) on a whole core%s" % (
              floor["command"], PROXY_CPU, floor["sign_s"] * 1e6, floor["verify_s"] * 1e6,
              floor["ecdh_s"] * 1e6, floor["full"], floor["resumed"],
              "; the quota gives each proxy %g%% of it: %.0f/s and %.0f/s" % (
                  args.cpu_quota, floor["full"] * args.cpu_quota / 100,
                  floor["resumed"] * args.cpu_quota / 100) if bound else ""))
    if tls:
        p("  %-22s %9s %8s %8s %9s %7s %6s %6s %-28s %8s %8s" % (
            "configuration", "conn/s", "full", "resumed", "CPU us", "CPU0%", "thr%", "CPU1%",
            "version, group, cipher", "/floor", "/floorCPU"))
        for c in tls:
            full = sum(r.get("full", 0) for r in c.runs)
            resumed = sum(r.get("resumed", 0) for r in c.runs)
            last = c.runs[-1]
            kind = {"tls-full": "full", "tls-resume": "resumed"}.get(c.variant)
            # Of the floor: the rate over the whole-core floor; and per CPU second the proxy
            # used (rate / its CPU 0 share / floor), which the quota does not change.
            of = ofcpu = None
            if floor and kind:
                of = c.m_rps / floor[kind]
                if c.m_share:
                    ofcpu = c.m_rps / c.m_share / floor[kind]
            pct = (lambda v: fmt(v * 100 if v is not None else None, "%.0f"))
            p("  %-22s %9.0f %8s %8s %9s %7s %6s %6s %-28s %8s %8s" % (
                c.name, c.m_rps, full if kind else "-", resumed if kind else "-", fmt(c.m_cpu),
                pct(c.m_share), pct(c.m_thr), pct(c.m_cpu1),
                "%s %s %s" % (last.get("version", "TLSv1.3?"), last.get("group", "?"),
                              last.get("cipher", "")) if kind else "(wrk https)",
                fmt(of, "%.3f"), fmt(ofcpu, "%.3f")))
        p("  (/floor: conn/s over the whole-core floor of its kind; /floorCPU: conn/s per CPU "
          "second the proxy used (conn/s / CPU0 share) over the floor: how much of its CPU went "
          "to the floor's operations)")
        checks = ["%s %s" % (c.name, "full %d resumed %d of 3" % (
            c.tls_check["full"], c.tls_check["resumed"]))
            for c in tls if getattr(c, "tls_check", None)]
        if checks:
            p("  ticket check at start (3 connections in a row, 1 full + 2 resumed expected): %s" %
              ", ".join(checks))
    p("")
    p("targets (issue 13), ratios of this run's medians, %s:" % (
        "proxy-bound layout (--cpu-quota %g)" % args.cpu_quota if bound else
        "!!! UNCONSTRAINED LAYOUT (no cpu quota applied): these verdicts do not judge the "
        "issue's proxy-bound targets"))
    for variant, key, what in (("tls-full", "tls_full_vs_nginx", "new connections, full TLS 1.3 "
                                "handshake, 1 request each"),
                               ("tls-resume", "tls_resume_vs_nginx", "resumed handshakes "
                                "(tickets), 1 request each"),
                               ("tls-keepalive", "tls_keepalive_vs_nginx", "keep-alive HTTPS "
                                "requests")):
        found = get("portico-" + variant, "nginx-" + variant)
        if not found:
            continue
        pc, nx = found
        r = pc.m_rps / nx.m_rps if nx.m_rps else float("nan")
        p("  %-13s portico / nginx %s = %.0f / %.0f = %.2f  (>= %.2f) %s" % (
            variant, what, pc.m_rps, nx.m_rps, r, TARGETS[key], verdict(r >= TARGETS[key])))
        paired = [a["rps"] / b["rps"] for a, b in zip(pc.runs, nx.runs) if b["rps"] > 0]
        p("  %-13s   per repeat: %s (median %.2f); p50 %.3f / %.3f ms, p99 %.3f / %.3f ms" % (
            "", " ".join("%.2f" % x for x in paired), statistics.median(paired), pc.m_p50,
            nx.m_p50, pc.m_p99, nx.m_p99))
        if bound:
            loose = [c.name for c in (pc, nx) if c.m_thr is not None and c.m_thr < 0.5 and
                     c.m_cpu1 is not None and c.m_cpu1 >= 0.95]
            p("  %-13s   layout: throttled in %s of the quota's periods, CPU 1 busy %s%s" % (
                "", " / ".join(fmt(c.m_thr * 100 if c.m_thr is not None else None, "%.0f%%")
                               for c in (pc, nx)),
                " / ".join(fmt(c.m_cpu1 * 100 if c.m_cpu1 is not None else None, "%.0f%%")
                           for c in (pc, nx)),
                ": proxy-bound" if not loose else
                "  !!! CLIENT-BOUND (< 50%% throttled with CPU 1 >= 95%%): %s" % ", ".join(loose)))
    if tls_idle:
        for kind in ("portico", "nginx"):
            m = tls_idle.get(kind)
            if not m:
                continue
            target = (" (<= %d) %s" % (TARGETS["tls_idle_bytes"], verdict(
                m["per"] <= TARGETS["tls_idle_bytes"])) if kind == "portico" else
                "  (issue 13: nginx reached 14.4 KB)")
            p("  %-13s %s RSS per idle TLS connection = (%.1f MB - %.1f MB) / %d = %.0f B "
              "(%.1f KB)%s" % ("tls-idle", kind, m["after"] / 1e6, m["before"] / 1e6, m["n"],
                               m["per"], m["per"] / 1024, target))
        if tls_idle.get("portico") and tls_idle.get("nginx"):
            p("  %-13s   (each connection: a full %s handshake on %s and one keep-alive request, "
              "then idle; RSS of the proxy's processes before (after %gs of warm-up handshakes) "
              "and with them, settled; fresh RSS %.1f / %.1f MB)" % (
                  "", tls_idle["portico"]["version"], tls_idle["portico"]["group"],
                  args.tls_idle_warmup, tls_idle["portico"]["fresh"] / 1e6,
                  tls_idle["nginx"]["fresh"] / 1e6))
    elif args.no_tls_idle:
        p("  tls-idle      not measured (--tls-idle 0)")
    p("")


def report(args, configs, by_name, binaries, started, perf_ok, command, mem=None,
           tls_idle=None):
    out = []
    p = out.append
    bound = getattr(args, "quota_applied", False)
    p("Proxy benchmark (issues 5, 12 and 13), %s" % time.strftime("%Y-%m-%d %H:%M UTC",
                                                            time.gmtime(started)))
    p("command: %s" % command)
    p("build: %s; kernel %s; %s" % (args.build, platform.release(), cpu_model()))
    p("layout: %s: proxy alone on CPU 0 (1 worker/thread)%s; wrk -t1 -c50 + upstream nginx "
      "`return 200` + webhook server nginx `return 200` + controllers on CPU 1; %d interleaved "
      "repeats of %gs per configuration (medians); request GET %s Host: %s" % (
          "PROXY-BOUND" if bound else "UNCONSTRAINED",
          ", held to %g%% of it by a cpu quota" % args.cpu_quota if bound else "",
          args.repeats, args.duration, PATH, HOST))
    p("cpu quota: %s" % args.quota_note)
    if bound:
        p("  (callgrind runs are not under the quota: their instruction counts do not depend on "
          "it)")
    p("CPU busy over 1 s before the timed runs (all proxies started, idle): %s%s" % (
        getattr(args, "idle_note", "?"), "  !!! NOT IDLE: another load shares the machine, "
        "figures unreliable" if getattr(args, "busy_before", False) else ""))
    p("access logs on (nginx buffer=32k flush=100ms, haproxy log stdout->file, portico "
      "--access-log FILE) unless the name ends in -nolog")
    p("headers: 1 route setting request header %s and response header %s (portico "
      "RequestHeaderModifier + ResponseHeaderModifier; nginx proxy_set_header + add_header; "
      "haproxy http-request/http-response set-header)" % (REQ_HEADER, RESP_HEADER))
    p("webhook: 1 route calling the webhook server (GET /auth, kept-alive) before the upstream: "
      "portico a Webhook (url http://127.0.0.1:PORT, timeout 1s, failurePolicy Fail) bound by "
      "ExtensionRef; nginx auth_request (no client headers or body in the subrequest); no "
      "haproxy (no auth_request without Lua/SPOE)")
    p("")
    head = ("%-26s %9s %15s %8s %8s %7s %6s %5s %6s %8s %8s %7s %10s %7s %8s" %
            ("configuration", "RPS", "(min-max)", "p50 ms", "p99 ms", "CPU us", "CPU0%", "thr%",
             "CPU1%", "sys/req", "perf/req", "alloc", "Ir/req", "Ir/ngx", "RSS MB"))
    p(head)
    p("-" * len(head))
    for cfg in configs:
        rps = [r["rps"] for r in cfg.runs]
        cfg.m_rps, cfg.m_p50 = med(rps), med([r["p50"] for r in cfg.runs])
        cfg.m_p99, cfg.m_cpu = med([r["p99"] for r in cfg.runs]), median_of(cfg, "cpu_us")
        cfg.m_share, cfg.m_thr = median_of(cfg, "cpu0_share"), median_of(cfg, "throttled")
        cfg.m_cpu1 = median_of(cfg, "cpu1_busy")
    for cfg in configs:
        rps = [r["rps"] for r in cfg.runs]
        ngx = by_name.get(cfg.name.replace(cfg.kind, "nginx", 1)) if cfg.kind != "direct" else None
        ir_ratio = cfg.ir / ngx.ir if cfg.ir and ngx is not None and ngx.ir else None
        c = cfg.counts or {}
        errors = sum(r["errors"] for r in cfg.runs)
        pct = (lambda v: fmt(v * 100 if v is not None else None, "%.0f"))
        p("%-26s %9.0f %15s %8s %8s %7s %6s %5s %6s %8s %8s %7s %10s %7s %8s%s" % (
            cfg.name, cfg.m_rps, "(%.0f-%.0f)" % (min(rps), max(rps)), fmt(cfg.m_p50, "%.3f"),
            fmt(cfg.m_p99, "%.3f"), fmt(cfg.m_cpu), pct(cfg.m_share), pct(cfg.m_thr),
            pct(cfg.m_cpu1), fmt(c.get("syscalls"), "%.2f"),
            fmt(c.get("perf"), "%.2f"), fmt(c.get("allocs"), "%.2f"), fmt(cfg.ir, "%.0f"),
            fmt(ir_ratio, "%.2f" if ir_ratio and ir_ratio >= 0.1 else "%.4f"),
            fmt(cfg.rss / 1e6 if cfg.rss else None, "%.1f"),
            "  ERRORS %d" % errors if errors else ""))
    p("")
    p("columns: RPS median (min-max over repeats); p50/p99 medians of wrk --latency; CPU us = "
      "proxy CPU time (utime+stime, all threads/processes) per request; CPU0% = that CPU time "
      "over the run's wall time (the proxy's share of CPU 0; the quota caps it); thr% = share "
      "of the quota's periods in which the proxy was throttled (cpu.stat; high = the quota, "
      "i.e. the proxy, was the bottleneck); CPU1% = how busy CPU 1 (wrk, upstream, webhook "
      "server) was; sys/req = LD_PRELOAD-"
      "counted libc syscall wrappers per request; perf/req = every syscall (perf stat "
      "raw_syscalls:sys_enter, incl. futex and libc-internal) per request; alloc = malloc+"
      "calloc+realloc+memalign per request; Ir/req = callgrind instructions per request "
      "(Ir/ngx: / nginx's of the same configuration); RSS after the timed runs.")
    p("")
    p("syscall mix per request (LD_PRELOAD counter):")
    for cfg in configs:
        if cfg.counts:
            p("  %-26s %s" % (cfg.name, ", ".join("%s %.2f" % kv for kv in
                                                 list(cfg.counts["mix"].items())[:8])))
    if not perf_ok:
        p("  (perf raw_syscalls tracepoint not usable here: no cross-check)")
    windows = ["%s %d%s" % (c.name, c.ir_requests, " (webhook calls per request %.3f)" % (
        c.ir_webhook_calls) if getattr(c, "ir_webhook_calls", None) is not None else "")
        for c in configs if c.ir]
    if windows:
        p("callgrind windows (requests): " + ", ".join(windows))
    p("")

    def get(*names):
        found = [by_name.get(n) for n in names]
        return found if all(f is not None and f.runs for f in found) else None

    def vs_best(suffix, target=None):
        found = get("portico-" + suffix, "nginx-" + suffix, "haproxy-" + suffix)
        if not found:
            return
        pc, nx, hx = found
        best = max(nx.m_rps, hx.m_rps)
        r = pc.m_rps / best
        p("  %-11s portico / max(nginx, haproxy) RPS = %.0f / %.0f = %.2f%s" % (
            suffix, pc.m_rps, best, r, "  (>= %.1f) %s" % (target, verdict(r >= target))
            if target else "  (no target)"))
        # The same ratio per repeat (the three ran within a minute of each other), for how
        # much the machine drifted between repeats; informational, the verdict is above.
        paired = [a["rps"] / max(b["rps"], c["rps"])
                  for a, b, c in zip(pc.runs, nx.runs, hx.runs) if max(b["rps"], c["rps"]) > 0]
        if paired:
            p("  %-11s   per repeat: %s (median %.2f)" % (
                "", " ".join("%.2f" % x for x in paired), statistics.median(paired)))

    # Issue 12's targets: the proxy-bound layout.
    p("targets (issue 12), ratios of this run's medians, %s:" % (
        "proxy-bound layout (--cpu-quota %g)" % args.cpu_quota if bound else
        "!!! UNCONSTRAINED LAYOUT (no cpu quota applied): the issue sets these targets for the "
        "proxy-bound layout, so these verdicts do not judge them"))
    shares = [c for c in configs if c.kind not in ("direct",) and c.m_share is not None]
    if shares:
        thr = [c.m_thr for c in shares if c.m_thr is not None]
        cpu1 = [c.m_cpu1 for c in configs if c.m_cpu1 is not None]
        p("  layout      proxies' share of CPU 0 %.0f-%.0f%%%s; CPU 1 (client core) busy "
          "%.0f-%.0f%% (medians per configuration)" % (
              100 * min(c.m_share for c in shares), 100 * max(c.m_share for c in shares),
              ", throttled in %.0f-%.0f%% of the quota's periods" % (
                  100 * min(thr), 100 * max(thr)) if thr else "",
              100 * min(cpu1), 100 * max(cpu1)))
        if bound:
            # Proxy-bound: throttled in most periods. Not so, with CPU 1 saturated: the client
            # core was the bottleneck of that configuration after all.
            loose = [c.name for c in shares if c.m_thr is not None and c.m_thr < 0.5 and
                     c.m_cpu1 is not None and c.m_cpu1 >= 0.95]
            p("  layout      %s" % (
                "every proxy was throttled in >= 50% of the quota's periods or left CPU 1 "
                "idle time: proxy-bound" if not loose else
                "NOT proxy-bound (throttled in < 50%% of periods with CPU 1 >= 95%% busy): %s" %
                ", ".join(loose)))
    vs_best("1route", TARGETS["vs_best_other"])
    pc1 = by_name.get("portico-1route")
    if pc1 is not None and pc1.ir:
        limit = TARGETS["ir_1route"] * (1 + TARGETS["ir_slack"])
        p("  1route      portico callgrind Ir per request = %.0f  (<= %.0f: %.1fk + %d%%) %s" % (
            pc1.ir, limit, TARGETS["ir_1route"] / 1000, 100 * TARGETS["ir_slack"],
            verdict(pc1.ir <= limit)))
    elif pc1 is not None:
        p("  1route      portico callgrind Ir per request: not measured (%s)" % (
            "--quick" if args.quick else "--no-callgrind" if args.no_callgrind else "?"))
    vs_best("headers")
    for kind in ("portico", "nginx", "haproxy"):
        found = get("%s-headers" % kind, "%s-1route" % kind)
        if found:
            h, one = found
            p("  %-11s %s RPS %.0f (%.3f x its 1route), p99 %.3f ms (1route %.3f ms)" % (
                "headers", kind, h.m_rps, h.m_rps / one.m_rps, h.m_p99, one.m_p99))
    found = get("portico-webhook", "nginx-webhook")
    if found:
        pw, nw = found
        r = pw.m_rps / nw.m_rps
        p("  webhook     portico Webhook / nginx auth_request RPS = %.0f / %.0f = %.2f  (>= %.1f) "
          "%s" % (pw.m_rps, nw.m_rps, r, TARGETS["webhook_vs_nginx"],
                  verdict(r >= TARGETS["webhook_vs_nginx"])))
        paired = [a["rps"] / b["rps"] for a, b in zip(pw.runs, nw.runs) if b["rps"] > 0]
        p("  %-11s   per repeat: %s (median %.2f)" % (
            "", " ".join("%.2f" % x for x in paired), statistics.median(paired)))
        p("  webhook     p99: portico %.3f ms, nginx %.3f ms (p50 %.3f / %.3f ms)" % (
            pw.m_p99, nw.m_p99, pw.m_p50, nw.m_p50))
        calls = ["%s %.3f" % (c.name, median_of(c, "webhook_calls")) for c in (pw, nw)
                 if median_of(c, "webhook_calls") is not None]
        if calls:
            p("  webhook     webhook server calls per request (timed runs, median): %s" %
              ", ".join(calls))
    if mem is not None and mem.get("big") and mem["small"]:
        big = mem["big"]
        small = statistics.mean(e["rss"] for e in mem["small"])
        n = big["routes"]
        per = (big["rss"] - small) / (n - 1)
        p("  memory      portico RSS per route = (%.1f MB with %d prefix routes - %.1f MB with 1) "
          "/ %d = %.0f B  (<= %d) %s" % (big["rss"] / 1e6, n, small / 1e6, n - 1, per,
                                         TARGETS["memory_bytes"],
                                         verdict(per <= TARGETS["memory_bytes"])))
        p("  %-11s   fresh gateways after %d requests each; 1-route RSS %s MB (mean used); "
          "before the traffic: %s MB with 1, %.1f MB with %d; the %d-route gateway held every "
          "route %.1f s after it started (under the quota; its controller loaded them first)" % (
              "", args.memory_requests, " and ".join("%.1f" % (e["rss"] / 1e6)
                                                     for e in mem["small"]),
              " and ".join("%.1f" % (e["idle"] / 1e6) for e in mem["small"]),
              big["idle"] / 1e6, n, n, mem["sync_s"] or float("nan")))
        if n != MEMORY_ROUTES:
            p("  %-11s   (%d routes, not the issue's %d: indicative only)" % ("", n,
                                                                           MEMORY_ROUTES))
    elif args.no_memory:
        p("  memory      not measured (--no-memory)")
    p("")
    if any(c.tls for c in configs) or tls_idle:
        tls_report(args, configs, by_name, tls_idle, p, get, bound)

    # Issue 5's targets.
    p("targets (issue 5), ratios of this run's medians%s:" % (
        " (in this proxy-bound layout; the ratios against direct were set for the unconstrained "
        "layout and are not judged under a quota)" if bound else ""))
    for suffix in ("10k-prefix", "10k-regex"):
        vs_best(suffix, TARGETS["vs_best_other"])
    found = get("forwarder-1route", "direct")
    if found:
        fw, direct = found
        p("  1route      (reference) forwarder / direct RPS = %.0f / %.0f = %.2f: the ceiling this "
          "layout leaves to a proxy copying bytes through user space on CPU 0" % (
              fw.m_rps, direct.m_rps, fw.m_rps / direct.m_rps))
        others = [by_name.get(n) for n in ("nginx-1route", "haproxy-1route")]
        others = [o for o in others if o is not None and o.runs]
        if others:
            best = max(o.m_rps for o in others)
            p("  1route      (reference) forwarder / max(nginx, haproxy) RPS = %.0f / %.0f = %.2f: "
              "the highest ratio any proxy could show against them in this run" % (
                  fw.m_rps, best, fw.m_rps / best))
        if pc1 is not None and pc1.runs:
            p("  1route      (reference) portico / forwarder RPS = %.0f / %.0f = %.2f" % (
                pc1.m_rps, fw.m_rps, pc1.m_rps / fw.m_rps))
    found = get("portico-1route", "direct")
    if found:
        pc1, direct = found
        r = pc1.m_rps / direct.m_rps
        p("  1route      portico / direct (the limit) RPS = %.0f / %.0f = %.2f  (>= %.2f) %s" % (
            pc1.m_rps, direct.m_rps, r, TARGETS["vs_limit"],
            "(not judged under a quota)" if bound else verdict(r >= TARGETS["vs_limit"])))
        r = pc1.m_p99 / direct.m_p99
        p("  1route      portico p99 / direct p99 = %.3f / %.3f ms = %.2f  (<= %.1f) %s" % (
            pc1.m_p99, direct.m_p99, r, TARGETS["p99_vs_direct"],
            "(not judged under a quota)" if bound else verdict(r <= TARGETS["p99_vs_direct"])))
    for kind in ("portico", "nginx", "haproxy"):
        for variant, key in (("prefix", "prefix_vs_1"), ("regex", "regex_vs_1")):
            found = get("%s-10k-%s" % (kind, variant), kind + "-1route")
            if not found:
                continue
            v, one = found
            r = v.m_rps / one.m_rps
            target = (" (>= %.2f) %s" % (TARGETS[key], verdict(r >= TARGETS[key]))
                      if kind == "portico" else "")
            p("  %-11s %s 10k-%s / 1route RPS = %.0f / %.0f = %.3f%s" % (
                "10k-" + variant, kind, variant, v.m_rps, one.m_rps, r, target))
    for suffix in ("1route", "10k-prefix", "10k-regex", "headers", "webhook"):
        found = get("portico-" + suffix, "nginx-" + suffix)
        if found and found[0].counts and found[1].counts:
            pc, nx = found
            p("  %-11s portico / nginx syscalls per request = %.2f / %.2f  (<=) %s" % (
                suffix, pc.counts["syscalls"], nx.counts["syscalls"],
                verdict(pc.counts["syscalls"] <= nx.counts["syscalls"])))
            if pc.counts["perf"] is not None and nx.counts["perf"] is not None:
                p("  %-11s   (perf, every syscall: %.2f / %.2f)" % (
                    "", pc.counts["perf"], nx.counts["perf"]))
    for variant, key in (("prefix", "prefix_bytes"), ("regex", "regex_bytes")):
        for kind in ("portico", "nginx", "haproxy"):
            found = get("%s-10k-%s" % (kind, variant), kind + "-1route")
            if not found or not found[0].rss or not found[1].rss:
                continue
            v, one = found
            per = (v.rss - one.rss) / (ROUTES - 1)
            if kind != "portico":
                target = ""
            elif variant == "prefix":
                target = " (issue 12 judges prefix routes at %d, above)" % MEMORY_ROUTES
            else:
                target = " (<= %d) %s" % (TARGETS[key], verdict(per <= TARGETS[key]))
            p("  %-11s %s RSS per route = (%.1f MB - %.1f MB) / %d = %.0f B%s" % (
                "mem-" + variant, kind, v.rss / 1e6, one.rss / 1e6, ROUTES - 1, per, target))
    if args.quick:
        p("  (--quick: %d repeats of %gs, no callgrind: indicative only)" % (
            args.repeats, args.duration))
    return "\n".join(out)


def openssl_note(gateway):
    """Which libssl portico and nginx run with (ldd), and its version (openssl version)."""
    def libssl(binary):
        path = shutil.which(binary) or binary
        out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
        m = re.search(r"libssl\S*\s+=>\s+(\S+)", out)
        return os.path.realpath(m.group(1)) if m else "?"
    version = subprocess.run(["openssl", "version"], capture_output=True,
                             text=True).stdout.strip()
    mine, theirs = libssl(gateway), libssl("nginx")
    if mine == theirs:
        return "%s: portico and nginx both load %s" % (version, mine)
    return "%s; !!! NOT THE SAME libssl: portico loads %s, nginx %s" % (version, mine, theirs)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip() + " x%d" % os.cpu_count()
    except OSError:
        pass
    return "%d CPUs" % os.cpu_count()


# ---------------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description="the proxy benchmark of issues 5 and 12")
    parser.add_argument("--build", default="build/release")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--duration", type=float, default=None, help="seconds per timed run")
    parser.add_argument("--warmup", type=float, default=2, help="seconds of warm-up per config")
    parser.add_argument("--cpu-quota", type=float, default=50, metavar="PCT",
                        help="the proxy under test held to PCT%% of CPU 0 by a cgroup cpu quota "
                        "(the proxy-bound layout); 0: unconstrained (default 50)")
    parser.add_argument("--cpu-period-us", type=int, default=10000,
                        help="the quota's period (default 10000 us; see cpu_quota.py)")
    parser.add_argument("--count-duration", type=float, default=None,
                        help="seconds of the counted run (LD_PRELOAD counter, perf)")
    parser.add_argument("--callgrind-requests", type=int, default=2000)
    parser.add_argument("--callgrind-cap", type=int, default=60,
                        help="seconds at most per callgrind window")
    parser.add_argument("--callgrind-only", default=None, metavar="NAMES",
                        help="comma-separated configurations to run under callgrind (default: "
                        "every proxy with access logs on)")
    parser.add_argument("--quick", action="store_true",
                        help="2 repeats of 2 s, short counted runs, no callgrind, 10k routes in "
                        "the memory phase")
    parser.add_argument("--no-callgrind", action="store_true")
    parser.add_argument("--no-logs-off", action="store_true",
                        help="skip the second set (1 route, access logs off)")
    parser.add_argument("--no-forwarder", action="store_true",
                        help="skip the reference byte forwarder (forwarder.c)")
    parser.add_argument("--no-filters", action="store_true",
                        help="skip the header-modifier and webhook configurations")
    parser.add_argument("--no-memory", action="store_true",
                        help="skip the memory phase (RSS with --memory-routes prefix routes)")
    parser.add_argument("--memory-routes", type=int, default=None,
                        help="prefix routes of the memory phase (default 100000; 10000 with "
                        "--quick)")
    parser.add_argument("--memory-requests", type=int, default=None,
                        help="requests served before each RSS reading (default 100000)")
    parser.add_argument("--memory-deadline", type=int, default=1800,
                        help="seconds at most for the memory phase's controller to load and "
                        "its gateway to hold every route")
    parser.add_argument("--no-tls", action="store_true",
                        help="skip the TLS configurations and the TLS memory phase (issue 13)")
    parser.add_argument("--only-tls", action="store_true",
                        help="only the TLS configurations and the TLS memory phase (implies "
                        "--no-memory)")
    parser.add_argument("--tls-idle", type=int, default=None, metavar="N",
                        help="idle TLS connections of the TLS memory phase (default %d; 1000 "
                        "with --quick; 0 skips it)" % TLS_IDLE)
    parser.add_argument("--floor-seconds", type=int, default=None,
                        help="openssl speed -seconds of the crypto floor (default 3; 1 with "
                        "--quick)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument("--only", default=None,
                        help="comma-separated configuration names to run (debugging)")
    parser.add_argument("--command", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.repeats is None:
        args.repeats = 2 if args.quick else 5
    if args.duration is None:
        args.duration = 2 if args.quick else 10
    if args.count_duration is None:
        args.count_duration = 1 if args.quick else 5
    if args.memory_routes is None:
        args.memory_routes = ROUTES if args.quick else MEMORY_ROUTES
    if args.memory_requests is None:
        args.memory_requests = 20000 if args.quick else 100000
    if args.tls_idle is None:
        args.tls_idle = 1000 if args.quick else TLS_IDLE
    if args.floor_seconds is None:
        args.floor_seconds = 1 if args.quick else 3
    args.tls_idle_warmup = 1 if args.quick else 2
    args.no_tls_idle = args.tls_idle <= 0
    if args.no_tls and args.only_tls:
        parser.error("--no-tls and --only-tls exclude each other")
    if args.only_tls:
        args.no_memory = args.no_forwarder = args.no_filters = args.no_logs_off = True
    if args.quick:
        args.no_callgrind = True
        args.warmup = min(args.warmup, 1)
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")
    if args.callgrind_only:
        args.callgrind_only = set(args.callgrind_only.split(","))
    if args.memory_routes < 2:
        parser.error("--memory-routes must be >= 2")
    if not 0 <= args.cpu_quota <= 100:
        parser.error("--cpu-quota must be within 0..100")

    build = os.path.abspath(os.path.join(REPO, args.build) if not os.path.isabs(args.build)
                            else args.build)
    binaries = Binaries(os.path.join(build, "controller", "portico-controller"),
                        os.path.join(build, "gateway", "portico-gateway"),
                        os.path.join(build, "controller", "ctl", "portico-ctl"),
                        os.path.join(build, "plugins-out"))
    for path in (binaries.controller, binaries.gateway):
        if not os.access(path, os.X_OK):
            sys.exit("no %s: build it first (cmake --build %s)" % (path, args.build))
    if os.cpu_count() < 2:
        sys.exit("needs 2 CPUs (proxy on CPU 0, client and upstream on CPU 1)")
    if not args.no_filters and not glob.glob(os.path.join(binaries.plugin_dir,
                                                          "*portico-webhook*")):
        sys.exit("no webhook plugin in %s (portico-webhook configuration): build it, or pass "
                 "--no-filters" % binaries.plugin_dir)

    started = time.time()
    workdir = tempfile.mkdtemp(prefix="portico-bench-proxy-")
    args.counter_so = os.path.join(workdir, "counter.so")
    args.no_watchdog_so = os.path.join(workdir, "no_watchdog.so")
    for source, out in (("counter.c", args.counter_so), ("no_watchdog.c", args.no_watchdog_so)):
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", os.path.join(HERE, source), "-o", out,
                        "-ldl"], check=True)
    args.forwarder_bin = os.path.join(workdir, "forwarder")
    subprocess.run(["cc", "-O2", os.path.join(HERE, "forwarder.c"), "-o", args.forwarder_bin],
                   check=True)
    args.tls_files = args.tls_pems = None
    if not args.no_tls:
        global TLS_LOAD_BIN
        TLS_LOAD_BIN = os.path.join(workdir, "tls_load")
        subprocess.run(["cc", "-O2", os.path.join(HERE, "tls_load.c"), "-o", TLS_LOAD_BIN,
                        "-lssl", "-lcrypto"], check=True)
        # The certificate: ECDSA P-256, self-signed for HOST, made now (no key committed).
        tls_dir = os.path.join(workdir, "tls")
        os.makedirs(tls_dir)
        args.tls_files = (os.path.join(tls_dir, "tls.crt"), os.path.join(tls_dir, "tls.key"))
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:P-256", "-nodes", "-keyout", args.tls_files[1],
                        "-out", args.tls_files[0], "-days", "7", "-subj", "/CN=" + HOST,
                        "-addext", "subjectAltName=DNS:" + HOST], check=True,
                       capture_output=True)
        pems = []
        for path in args.tls_files:
            with open(path, "rb") as f:
                pems.append(f.read())
        args.tls_pems = tuple(pems)
        args.openssl_note = openssl_note(binaries.gateway)

    # This driver and everything it starts without taskset (wrk, upstream, controllers): CPU 1.
    os.sched_setaffinity(0, {CLIENT_CPU})

    # The proxy-bound layout: find a way to apply the quota, or say loudly there is none.
    quota = None
    args.quota_note = "none (--cpu-quota 0): the proxy may use all of CPU 0"
    if args.cpu_quota > 0:
        q = Quota(args.cpu_quota, args.cpu_period_us, PROXY_CPU)
        for method, reason in q.failures:
            log("cpu quota: %s not usable: %s" % (method, reason))
        if q.method is None:
            banner = ("NO CPU QUOTA: none of cgroup2, cgroup v1 and systemd-run could hold the "
                      "proxy to %g%% of CPU 0 here (%s); FALLING BACK to the unconstrained "
                      "layout: the client core may be the bottleneck, the ratios between proxies "
                      "are not those of the proxy-bound layout" % (
                          args.cpu_quota, "; ".join("%s: %s" % f for f in q.failures)))
            log("*" * 20 + " " + banner + " " + "*" * 20)
            args.quota_note = "!!! " + banner
            args.quota_failed = True
        else:
            quota = q
            args.quota_applied = True
            args.quota_note = "%g%% of CPU 0 for each proxy, %s; %s" % (
                args.cpu_quota, q.describe(), q.probe_note)
            log("cpu quota: %s" % args.quota_note)

    configs = [Config("direct", "1")]
    if not args.no_forwarder:
        configs.append(Config("forwarder", "1"))
    for variant in ("1", "prefix", "regex"):
        for kind in ("nginx", "haproxy", "portico"):
            configs.append(Config(kind, variant))
    if not args.no_filters:
        for kind in ("nginx", "haproxy", "portico"):
            configs.append(Config(kind, "headers"))
        for kind in ("nginx", "portico"):  # haproxy has no auth_request without Lua/SPOE
            configs.append(Config(kind, "webhook"))
    if not args.no_logs_off:
        for kind in ("nginx", "haproxy", "portico"):
            configs.append(Config(kind, "1", logs=False))
    if args.only_tls:
        configs = []
    tls_idle_cfgs = {}
    if not args.no_tls:
        for variant in TLS_VARIANTS:
            for kind in ("nginx", "portico"):
                configs.append(Config(kind, variant))
        if not args.no_tls_idle:
            tls_idle_cfgs = {kind: Config(kind, "tls-idle") for kind in ("portico", "nginx")}
    if args.only:
        wanted = set(args.only.split(",")) | ({"direct"} if not args.only_tls else set())
        unknown = wanted - {c.name for c in configs}
        if unknown:
            parser.error("unknown configurations: %s" % ", ".join(sorted(unknown)))
        configs = [c for c in configs if c.name in wanted]
    by_name = {c.name: c for c in configs}
    if args.callgrind_only and args.callgrind_only - set(by_name):
        parser.error("--callgrind-only: unknown configurations: %s" % ", ".join(
            sorted(args.callgrind_only - set(by_name))))
    proxies = [c for c in configs if c.kind != "direct"]  # started and stopped by the launcher
    measured = [c for c in proxies if c.kind != "forwarder"]  # also counted and callgrind-ed
    memory = None
    if not args.no_memory:
        memory = [Config("portico", "1", name="portico-mem-1route"),
                  Config("portico", "prefix", name="portico-mem-%dk-prefix" % (
                      args.memory_routes // 1000), routes=args.memory_routes)]
        for m in memory:
            m.group_name = "portico-memory"

    def on_term(sig, frame):
        raise KeyboardInterrupt("signal %d" % sig)
    signal.signal(signal.SIGTERM, on_term)

    upstream = webhook = None
    launcher = None
    perf_ok = Perf.usable()
    try:
        upstream = Upstream(workdir)
        if any(c.variant == "webhook" for c in configs):
            webhook = Upstream(workdir, "webhook", body=None)
        launcher = Launcher(args, workdir, upstream, binaries, webhook, quota)
        log("writing configurations; starting %d controllers" % sum(
            1 for c in proxies if c.kind == "portico"))
        for cfg in configs + list(tls_idle_cfgs.values()):
            launcher.prepare(cfg)
        launcher.wait_controllers()
        for cfg in proxies:
            launcher.start(cfg)
            log("%s up on port %d" % (cfg.name, cfg.port))

        shares = wait_idle(timeout=30 if args.quick else 300)
        args.idle_note = ", ".join("cpu%d %.1f%%" % (c, 100 * v) for c, v in sorted(shares.items()))
        args.busy_before = any(v > 0.10 for v in shares.values())
        log("CPU busy before the timed runs: %s" % ", ".join(
            "cpu%d %.0f%%" % (c, 100 * v) for c, v in sorted(shares.items())))
        if any(c.tls for c in configs) or tls_idle_cfgs:
            args.floor = crypto_floor(args.floor_seconds)
            log("crypto floor on CPU %s: sign %.1f us, ECDH %.1f us: %.0f full handshakes/s" % (
                PROXY_CPU, args.floor["sign_s"] * 1e6, args.floor["ecdh_s"] * 1e6,
                args.floor["full"]))
        # 1. Timed, interleaved.
        for cfg in configs:
            load(cfg, args.warmup)
        for r in range(args.repeats):
            order = configs[r % len(configs):] + configs[:r % len(configs)]
            for cfg in order:
                cfg.runs.append(timed_run(cfg, args.duration, webhook))
            log("repeat %d/%d: %s" % (r + 1, args.repeats, ", ".join(
                "%s %.0f" % (c.name, c.runs[-1]["rps"]) for c in configs)))
        for cfg in proxies:
            cfg.rss = rss_bytes(cfg.instance.pids())
            launcher.stop(cfg)

        # 2. Counted.
        for cfg in measured:
            count_config(launcher, cfg, args.count_duration, perf_ok)
            log("counted %s: %.2f syscalls, %.2f allocs per request" % (
                cfg.name, cfg.counts["syscalls"], cfg.counts["allocs"]))

        # 3. Callgrind.
        if not args.no_callgrind:
            for cfg in measured:
                if not cfg.logs or (args.callgrind_only and cfg.name not in args.callgrind_only):
                    continue
                callgrind_config(launcher, cfg, args.callgrind_requests, args.callgrind_cap)
                log("callgrind %s: %.0f Ir per request over %d requests" % (
                    cfg.name, cfg.ir, cfg.ir_requests))

        # 3b. Memory per idle TLS connection (issue 13), fresh proxies; before the memory
        # phase, which stops the timed phase's controllers.
        tls_idle = {}
        for kind, cfg in tls_idle_cfgs.items():
            tls_idle[kind] = tls_idle_phase(launcher, cfg, args.tls_idle, args.tls_idle_warmup)

        # 4. Memory per route where the routes dominate. Its controllers start only now: the
        # big one's load would otherwise compete with the timed runs.
        mem = None
        if memory:
            for controller in list(launcher.controllers):  # the timed phase's: not needed now
                launcher.stop_controller(controller)
            log("memory phase: loading %d prefix routes" % args.memory_routes)
            for cfg in memory:
                launcher.prepare(cfg)
            mem = memory_phase(args, launcher, memory[0], memory[1])

        print(report(args, configs, by_name, binaries, started, perf_ok,
                     (args.command or " ".join(sys.argv)).strip(), mem, tls_idle))
        sys.stdout.flush()
        return 0
    finally:
        if launcher:
            launcher.stop_all(proxies + (memory or []) + list(tls_idle_cfgs.values()))
        for u in (upstream, webhook):
            if u:
                u.proc.stop()
        if quota:
            for error in quota.close():
                log("cpu quota: " + error)
        if args.keep:
            log("kept %s" % workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
