#!/usr/bin/env python3
"""etcd_propagation.py: the etcd config center's propagation benchmark (issue 16). A script that
prints figures, not a test.

    tests/bench/etcd_propagation.py [--build build/dev] [--routes 1000] [--edits 500]

A real etcd, portico-controller on it (--etcd-endpoints) and one portico-gateway. --routes
HTTPRoutes are loaded with `portico-ctl import`; then --edits edits each put one route (a new
path) into etcd through etcd's v3 JSON gateway (POST /v3/kv/put on a kept-alive connection: the
same KV.Put etcdctl sends over gRPC, without a process start per edit) and measure the time from
sending the put to the gateway's commit of the batch holding it (the gateway's commit record
time, same machine and clock). Prints p50, p99 and max, and the import time.
Target (issue 16): p99 <= 50 ms.
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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build/dev")
    parser.add_argument("--routes", type=int, default=1000)
    parser.add_argument("--edits", type=int, default=500)
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
        controller = Controller(binaries, None, workdir,
                                extra=["--etcd-endpoints", etcd.endpoint()], log_level="warn")
        procs.append(controller)
        controller.wait_ready(timeout=120)
        gateway = Gateway(binaries, workdir, controller.sync_address(), serve=["default/web"],
                          snapshot=False, extra=["--access-log", "off"], log_level="warn")
        procs.append(gateway)

        def all_routes():
            return gateway.runtime()["entriesByFormat"].get("route_rules.v1", 0) >= args.routes
        wait_until(all_routes, 120, "the gateway to hold every route", interval=0.05)

        conn = http.client.HTTPConnection("127.0.0.1", etcd.client_port, timeout=10)
        latencies = []
        for n in range(args.edits):
            i = (n * 37) % args.routes
            key = "/portico/%s/HTTPRoute/default/r%d" % (GW, i)
            body = json.dumps({"key": base64.b64encode(key.encode()).decode(),
                               "value": base64.b64encode(route(i, "-e%d" % n).encode()).decode()})
            last_generation = gateway.history()["items"][-1]["generation"]
            t0 = time.time()
            conn.request("POST", "/v3/kv/put", body, {"Content-Type": "application/json"})
            answer = conn.getresponse()
            answer.read()
            if answer.status != 200:
                print("put failed: %d" % answer.status)
                return 1

            def committed():
                for c in gateway.history()["items"]:
                    if c["generation"] > last_generation:
                        return c
                return None
            commit = wait_until(committed, 10, "edit %d committed" % n, interval=0.001)
            latencies.append(commit["timeUnixMs"] / 1000.0 - t0)
        ms = [x * 1000 for x in latencies]
        print("etcd propagation, %d routes, %d edits (%s build): put -> gateway commit "
              "p50 %.1f ms, p99 %.1f ms, max %.1f ms; import of %d objects %.2f s"
              % (args.routes, args.edits, os.path.basename(b), percentile(ms, 50),
                 percentile(ms, 99), max(ms), args.routes + 3, import_s))
        return 0
    finally:
        for p in reversed(procs):
            p.stop()
        etcd.remove()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
