#!/usr/bin/env python3
"""sync.py: the ConfigSync benchmark (issue 4, Show). A script that prints figures, not a test.

    tests/bench/sync.py [--build build/release] [--routes 10000] [--edits 200] [--big 100000]

With N HTTPRoutes of one rule each on one hostname (plus one Gateway and one Service):
  1. edit latency: p50/p99 of "file written -> batch committed on the gateway" over --edits edits
     (the gateway's commit record time minus the write time; same machine, same clock);
  2. full sync: time from starting a new gateway to its first commit holding every route, for
     N and for --big routes (0 skips the big run);
  3. memory: controller and gateway RSS at 1,000 and at N routes; the slope (bytes per route).
Targets (issue 4): p99 <= 50 ms; 10k full sync <= 1 s; 100k <= 10 s; gateway <= 8 KB per route.
"""

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import bench_manifests as manifests  # noqa: E402
from portico_procs import Binaries, Controller, Gateway, wait_until  # noqa: E402

HEADER = manifests.gateway_yaml(8080) + "---\n" + manifests.service_yaml("svc", 9000)


def route(i, suffix=""):
    return manifests.route_yaml("r%d" % i, "bench.example.com",
                                "{path: {type: PathPrefix, value: '/r%d%s'}}" % (i, suffix), "svc")


def write_atomic(path, text):
    tmp = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".tmp")
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def write_config(conf, routes, per_file=100):
    write_atomic(os.path.join(conf, "00-header.yaml"), HEADER)
    for start in range(0, routes, per_file):
        docs = [route(i) for i in range(start, min(routes, start + per_file))]
        write_atomic(os.path.join(conf, "r%06d.yaml" % start), "---\n".join(docs))


def rss_bytes(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def route_count(gateway):
    stats = gateway.runtime()
    return stats["entriesByFormat"].get("route_rules.v1", 0)


def start_pair(binaries, workdir, conf, routes, debounce_ms=20):
    c = Controller(binaries, conf, workdir, log_level="warn", debounce_ms=debounce_ms)
    c.wait_ready(timeout=300)
    g = Gateway(binaries, workdir, c.sync_address(), serve=["default/web"], snapshot=False,
                log_level="warn")
    g.wait_admin()
    wait_until(lambda: route_count(g) >= routes, 300, "gateway holding %d routes" % routes)
    return c, g


def full_sync_time(binaries, workdir, controller, routes, name):
    start = time.time()
    g = Gateway(binaries, workdir, controller.sync_address(), name=name, serve=["default/web"],
                snapshot=False, log_level="warn")
    try:
        g.wait_admin()
        wait_until(lambda: route_count(g) >= routes, 600, "%s holding %d routes" % (name, routes),
                   interval=0.005)
        commits = [c for c in g.history()["items"]]
        first_full = commits[-1]["timeUnixMs"] / 1000.0
        return first_full - start, rss_bytes(g.process.pid)
    finally:
        g.stop()


def percentile(values, p):
    values = sorted(values)
    k = max(0, min(len(values) - 1, int(round(p / 100.0 * len(values) + 0.5)) - 1))
    return values[k]


def edit_latencies(conf, gateway, edits, routes):
    out = []
    per_file = 100
    for n in range(edits):
        i = (n * 37) % routes
        start = i - i % per_file
        last_generation = gateway.history()["items"][-1]["generation"]
        docs = [route(j, "-e%d" % n if j == i else "") for j in range(start,
                                                                   min(routes, start + per_file))]
        t0 = time.time()
        write_atomic(os.path.join(conf, "r%06d.yaml" % start), "---\n".join(docs))

        def committed():
            for c in gateway.history()["items"]:
                if c["generation"] > last_generation:
                    return c
            return None
        commit = wait_until(committed, 10, "edit %d committed" % n, interval=0.001)
        out.append(commit["timeUnixMs"] / 1000.0 - t0)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build/release")
    parser.add_argument("--routes", type=int, default=10000)
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--big", type=int, default=100000)
    parser.add_argument("--debounce-ms", type=int, default=20,
                        help="the controller's file debounce (part of the edit latency)")
    args = parser.parse_args()
    b = os.path.abspath(args.build)
    binaries = Binaries(os.path.join(b, "controller", "portico-controller"),
                        os.path.join(b, "gateway", "portico-gateway"),
                        os.path.join(b, "controller", "ctl", "portico-ctl"),
                        os.path.join(b, "plugins-out"))
    workdir = tempfile.mkdtemp(prefix="portico-bench-sync-")
    results = {}
    try:
        # Memory at 1,000 routes.
        conf_small = os.path.join(workdir, "conf-1k")
        os.makedirs(conf_small)
        write_config(conf_small, 1000)
        c, g = start_pair(binaries, workdir, conf_small, 1000)
        rss_1k = (rss_bytes(c.process.pid), rss_bytes(g.process.pid))
        g.stop()
        c.stop()

        conf = os.path.join(workdir, "conf")
        os.makedirs(conf)
        write_config(conf, args.routes)
        c, g = start_pair(binaries, workdir, conf, args.routes, args.debounce_ms)
        rss_n = (rss_bytes(c.process.pid), rss_bytes(g.process.pid))
        lat = edit_latencies(conf, g, args.edits, args.routes)
        results["edit_p50_ms"] = percentile(lat, 50) * 1000
        results["edit_p99_ms"] = percentile(lat, 99) * 1000
        sync_n, _ = full_sync_time(binaries, workdir, c, args.routes, "fresh")
        results["full_sync_n_s"] = sync_n
        g.stop()
        c.stop()
        span = args.routes - 1000
        results["controller_bytes_per_route"] = (rss_n[0] - rss_1k[0]) / span
        results["gateway_bytes_per_route"] = (rss_n[1] - rss_1k[1]) / span

        if args.big:
            conf_big = os.path.join(workdir, "conf-big")
            os.makedirs(conf_big)
            write_config(conf_big, args.big, per_file=1000)
            c = Controller(binaries, conf_big, workdir, name="controller-big",
                           log_level="warn")
            c.wait_ready(timeout=900)
            sync_big, _ = full_sync_time(binaries, workdir, c, args.big, "fresh-big")
            results["full_sync_big_s"] = sync_big
            c.stop()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    print("ConfigSync benchmark (%s build, %d routes of one rule on one hostname)" %
          (os.path.basename(b), args.routes))
    print("  edit -> committed on gateway over %d edits: p50 %.1f ms, p99 %.1f ms  (target p99 <= 50)"
          % (args.edits, results["edit_p50_ms"], results["edit_p99_ms"]))
    print("  new gateway fully synced, %d routes: %.3f s  (target <= 1 s)" %
          (args.routes, results["full_sync_n_s"]))
    if "full_sync_big_s" in results:
        print("  new gateway fully synced, %d routes: %.3f s  (target <= 10 s)" %
              (args.big, results["full_sync_big_s"]))
    print("  RSS slope 1,000 -> %d routes: controller %.0f B/route, gateway %.0f B/route  "
          "(target gateway <= 8192)" % (args.routes, results["controller_bytes_per_route"],
                                        results["gateway_bytes_per_route"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
