#!/usr/bin/env python3
"""etcd_propagation.py: the etcd config center's benchmark (issue 16). A script that prints
figures, not a test.

    tests/bench/etcd_propagation.py [--build build/release] [--routes 10000] [--edits 500]
                                    [--gateways 50] [--fanout-edits 200]

A real etcd, portico-controller on it (--etcd-endpoints) and real portico-gateway processes.
  1. import: --routes HTTPRoutes loaded with `portico-ctl import`;
  2. start: the controller's start to /readyz, and its RSS once ready;
  3. propagation (one gateway): --edits edits each put one route (a new path) into etcd through
     etcd's v3 JSON gateway (POST /v3/kv/put on a kept-alive connection: the same KV.Put
     etcdctl sends over gRPC, without a process start per edit); the time from sending the put
     to the gateway's commit of the batch holding it (the gateway's commit record time, same
     machine and clock): p50, p99, max. Target: p99 <= 50 ms;
  4. fan-out: --gateways gateways in all; each of --fanout-edits edits is timed until the last
     gateway committed it: p50, p99, max, and the controller's CPU per edit (utime + stime from
     /proc). Target: p99 <= 100 ms. --gateways 1 skips this phase.
"""

import argparse
import base64
import http.client
import json
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import bench_manifests as manifests  # noqa: E402
from etcd_server import EtcdServer, etcd_binary, etcdctl_binary  # noqa: E402
from portico_procs import Binaries, Controller, Gateway, run_ctl, wait_until  # noqa: E402
sys.path.insert(0, HERE)
from sync import percentile, route  # noqa: E402  (the file center's benchmark: same routes)

GW = "gateway.networking.k8s.io"


def cpu_seconds(pid):
    """User + system CPU time of process `pid` so far (/proc/PID/stat), in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build/dev")
    parser.add_argument("--routes", type=int, default=10000)
    parser.add_argument("--edits", type=int, default=500)
    parser.add_argument("--gateways", type=int, default=50)
    parser.add_argument("--fanout-edits", type=int, default=200)
    args = parser.parse_args()
    if etcd_binary() is None or etcdctl_binary() is None:
        print("etcd_propagation: etcd or etcdctl is not installed (etcd-server, etcd-client)")
        return 1
    b = os.path.abspath(args.build)
    binaries = Binaries(os.path.join(b, "controller", "portico-controller"),
                        os.path.join(b, "gateway", "portico-gateway"),
                        os.path.join(b, "controller", "ctl", "portico-ctl"),
                        os.path.join(b, "plugins-out"))
    workdir = tempfile.mkdtemp(prefix="portico-etcd-bench-")
    etcd = EtcdServer(workdir).start()
    procs = []
    try:
        conf = os.path.join(workdir, "import")
        os.makedirs(conf)
        with open(os.path.join(conf, "header.yaml"), "w") as f:
            f.write(manifests.gateway_yaml(8080) + "---\n" + manifests.service_yaml("svc", 9000))
        for start in range(0, args.routes, 100):
            with open(os.path.join(conf, "r%06d.yaml" % start), "w") as f:
                f.write("---\n".join(route(i) for i in range(start, min(args.routes, start + 100))))
        t = time.monotonic()
        code, out, err = run_ctl(binaries, "import", conf, "--plugin-dir", binaries.plugin_dir,
                                 "--etcd-endpoints", etcd.endpoint(), timeout=600)
        import_s = time.monotonic() - t
        if code != 0:
            print(out, err)
            return 1
        t = time.monotonic()
        controller = Controller(binaries, None, workdir,
                                extra=["--etcd-endpoints", etcd.endpoint()], log_level="warn")
        procs.append(controller)
        controller.wait_ready(timeout=300)
        ready_s = time.monotonic() - t
        ready_rss = controller.rss_bytes()
        print("import of %d objects: %.2f s; controller start to ready: %.2f s, RSS %.1f MiB"
              % (args.routes + 3, import_s, ready_s, ready_rss / 2**20), flush=True)
        gateways = []
        for g in range(max(1, args.gateways)):
            gateway = Gateway(binaries, workdir, controller.sync_address(),
                              name="gateway-%d" % g, serve=["default/web"], snapshot=False,
                              workers=1, extra=["--access-log", "off"], log_level="warn")
            procs.append(gateway)
            gateways.append(gateway)
        for gateway in gateways:
            wait_until(lambda: gateway.runtime()["entriesByFormat"].get("route_rules.v1", 0) >=
                       args.routes, 300, "%s to hold every route" % gateway.name, interval=0.05)

        conn = http.client.HTTPConnection("127.0.0.1", etcd.client_port, timeout=10)
        edit_number = [0]

        def timed_edit(watched):
            """One put; seconds from sending it to the last of `watched` committing it."""
            n = edit_number[0]
            edit_number[0] += 1
            i = (n * 37) % args.routes
            key = "/portico/%s/HTTPRoute/default/r%d" % (GW, i)
            body = json.dumps({"key": base64.b64encode(key.encode()).decode(),
                               "value": base64.b64encode(route(i, "-e%d" % n).encode()).decode()})
            last = {g.name: g.history()["items"][-1]["generation"] for g in watched}
            t0 = time.time()
            conn.request("POST", "/v3/kv/put", body, {"Content-Type": "application/json"})
            answer = conn.getresponse()
            answer.read()
            if answer.status != 200:
                raise AssertionError("put failed: %d" % answer.status)
            latest = 0.0
            for g in watched:
                def committed():
                    for c in g.history()["items"]:
                        if c["generation"] > last[g.name]:
                            return c
                    return None
                commit = wait_until(committed, 10, "edit %d committed by %s" % (n, g.name),
                                    interval=0.001)
                latest = max(latest, commit["timeUnixMs"] / 1000.0 - t0)
            return latest

        ms = [timed_edit(gateways[:1]) * 1000 for _ in range(args.edits)]
        print("propagation, %d routes, %d edits (%s build): put -> gateway commit "
              "p50 %.1f ms, p99 %.1f ms, max %.1f ms (target p99 <= 50 ms)"
              % (args.routes, args.edits, os.path.basename(b), percentile(ms, 50),
                 percentile(ms, 99), max(ms)), flush=True)
        if len(gateways) > 1:
            cpu0 = cpu_seconds(controller.process.pid)
            ms = [timed_edit(gateways) * 1000 for _ in range(args.fanout_edits)]
            cpu = cpu_seconds(controller.process.pid) - cpu0
            print("fan-out to %d gateways, %d edits: put -> last gateway commit p50 %.1f ms, "
                  "p99 %.1f ms, max %.1f ms (target p99 <= 100 ms); controller CPU %.2f ms per "
                  "edit; controller RSS %.1f MiB"
                  % (len(gateways), args.fanout_edits, percentile(ms, 50), percentile(ms, 99),
                     max(ms), 1000 * cpu / args.fanout_edits, controller.rss_bytes() / 2**20))
        return 0
    finally:
        for p in reversed(procs):
            p.stop()
        etcd.remove()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
