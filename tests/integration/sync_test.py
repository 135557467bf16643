#!/usr/bin/env python3
"""ConfigSync integration tests (issue 4, "Show"): real portico-controller and portico-gateway
processes on loopback, real gRPC, real plugin .so files.

Run: sync_test.py --build BUILD_DIR [unittest args]. Every wait has a deadline; nothing sleeps to
synchronise.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from portico_procs import binaries_from_args, Controller, Gateway, free_port, wait_until  # noqa: E402

BINARIES = None
GW = "gateway.networking.k8s.io"

GATEWAY_CLASS = """apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: portico}
spec: {controllerName: portico.io/gateway-controller}
"""


def gateway_yaml(name="web", ns="default", ports=(8080,)):
    listeners = "".join("  - {name: l%d, protocol: HTTP, port: %d}\n" % (p, p) for p in ports)
    return ("apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n"
            "metadata: {name: %s, namespace: %s}\nspec:\n  gatewayClassName: portico\n"
            "  listeners:\n%s" % (name, ns, listeners))


def route_yaml(name, gateway="web", ns="default", path="/", service="svc", port=80, section=None):
    parent = "{name: %s%s}" % (gateway, ", sectionName: %s" % section if section else "")
    return ("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n"
            "metadata: {name: %s, namespace: %s}\nspec:\n  parentRefs: [%s]\n  rules:\n"
            "  - matches: [{path: {type: PathPrefix, value: '%s'}}]\n"
            "    backendRefs: [{name: %s, port: %d}]\n" % (name, ns, parent, path, service, port))


def service_yaml(name, ns="default", port=80, target=9000):
    return ("apiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: %s}\n"
            "spec:\n  ports: [{name: http, port: %d, targetPort: %d}]\n" % (name, ns, port, target))


def write(conf, name, *docs):
    path = os.path.join(conf, name)
    tmp = path + ".tmp~"
    with open(tmp, "w") as f:
        f.write("---\n".join(docs))
    os.rename(tmp, path)
    return path


def synced_map(gateway):
    """{key: hash} of everything the gateway holds."""
    out = {}
    body = gateway.synced()
    for kind, objects in body["kinds"].items():
        for name, h in objects.items():
            out[kind + " " + name] = h
    return out


def expected_map(controller, gateway_name):
    """{key: hash} the controller believes `gateway_name` holds."""
    status, body = controller.admin.call("GET", "/api/v1/gateways/%s/synced" % gateway_name)
    if status == 404:
        return None  # not connected (yet)
    assert status == 200, body
    out = {}
    for kind, objects in body["kinds"].items():
        for name, h in objects.items():
            out[kind + " " + name] = h
    return out


class SyncTestCase(unittest.TestCase):
    def setUp(self):
        self.workdir = tempfile.mkdtemp(prefix="portico-sync-")
        self.conf = os.path.join(self.workdir, "conf")
        os.makedirs(self.conf)
        self.procs = []

    def tearDown(self):
        failed = any(e for _, e in getattr(self._outcome, "errors", []) if e) if hasattr(
            self, "_outcome") else False
        for p in reversed(self.procs):
            p.stop()
            if failed:
                sys.stderr.write("---- %s log (tail)\n%s\n" % (p.name, p.tail(40)))
        shutil.rmtree(self.workdir, ignore_errors=True)

    def controller(self, name="controller", extra=(), sync_port=0):
        c = Controller(BINARIES, self.conf, self.workdir, name=name, extra=extra,
                       sync_port=sync_port)
        self.procs.append(c)
        return c

    def gateway(self, address, name="gw1", **kw):
        g = Gateway(BINARIES, self.workdir, address, name=name, **kw)
        self.procs.append(g)
        return g

    def base_config(self, routes=3):
        write(self.conf, "00-class.yaml", GATEWAY_CLASS)
        write(self.conf, "10-gateway.yaml", gateway_yaml())
        write(self.conf, "20-services.yaml", service_yaml("svc"))
        for i in range(routes):
            write(self.conf, "30-route-%d.yaml" % i, route_yaml("r%d" % i, path="/r%d" % i))

    def wait_converged(self, controller, gateway, timeout=20):
        def converged():
            gateway.check_alive()
            want = expected_map(controller, gateway.name)
            have = synced_map(gateway)
            return want is not None and want == have and want
        return wait_until(converged, timeout, "%s to converge" % gateway.name)


class StartupAndRestart(SyncTestCase):
    def test_gateway_started_before_the_controller_converges(self):
        self.base_config(routes=20)
        port = free_port()
        g = self.gateway("127.0.0.1:%d" % port, serve=["default/web"], snapshot=False)
        g.wait_admin()
        self.assertFalse(g.info()["connected"])
        c = self.controller(sync_port=port)
        c.wait_ready()
        have = self.wait_converged(c, g)
        self.assertEqual(sum(1 for k in have if k.startswith("HTTPRoute.")), 20)
        self.assertIn("Gateway.%s default/web" % GW, have)

    def test_controller_restart_gives_new_server_id_and_identical_state(self):
        self.base_config(routes=50)
        c = self.controller()
        c.wait_ready()
        g = self.gateway(c.sync_address(), serve=["default/web"])
        before = self.wait_converged(c, g)
        server_id = g.info()["serverId"]
        stats = g.runtime()
        history_before = g.history()
        port = c.sync_port
        c.kill()
        wait_until(lambda: not g.info()["connected"], 20, "gateway to notice the controller died")
        self.assertEqual(synced_map(g), before)  # serves its last configuration meanwhile
        c2 = self.controller(name="controller2", sync_port=port)
        c2.wait_ready()
        wait_until(lambda: g.info()["serverId"] not in ("", server_id), 20, "new server_id")
        self.assertEqual(set(self.wait_converged(c2, g)), set(before))
        self.assertEqual(g.runtime()["entries"], stats["entries"])
        # Never swapped to a half-processed world: no commit after the restart removed anything.
        for commit in g.history()["items"]:
            if commit["generation"] > history_before["items"][-1]["generation"]:
                self.assertEqual(commit["removed"], [], commit)

    def test_gateway_restart_starts_from_its_snapshot_then_resyncs(self):
        self.base_config(routes=10)
        c = self.controller()
        c.wait_ready()
        g = self.gateway(c.sync_address(), serve=["default/web"])
        before = self.wait_converged(c, g)
        wait_until(lambda: os.path.exists(g.snapshot_path), 10, "snapshot file")
        self.assertEqual(os.stat(g.snapshot_path).st_mode & 0o777, 0o600)
        g.kill()
        port = c.sync_port
        c.stop()
        # No controller: the gateway starts from its snapshot and is ready.
        g2 = self.gateway("127.0.0.1:%d" % port, serve=["default/web"], name="gw1")
        g2.wait_admin()
        wait_until(lambda: g2.admin.call("GET", "/readyz")[0] == 200, 10, "ready from snapshot")
        self.assertTrue(g2.info()["fromSnapshot"])
        self.assertEqual(synced_map(g2), before)
        c2 = self.controller(name="controller2", sync_port=port)
        c2.wait_ready()
        wait_until(lambda: g2.info()["connected"], 20, "reconnect")
        # The same objects; hashes may differ where the new controller stamped a new
        # creationTimestamp (files carry none), and the gateway holds exactly its world.
        self.assertEqual(set(self.wait_converged(c2, g2)), set(before))


class Transactions(SyncTestCase):
    def test_change_spanning_kinds_commits_in_one_transaction(self):
        self.base_config(routes=1)
        c = self.controller()
        c.wait_ready()
        g = self.gateway(c.sync_address(), serve=["default/web"])
        self.wait_converged(c, g)
        # One atomic edit: a new listener, a route on it and the route's Service.
        write(self.conf, "10-gateway.yaml", gateway_yaml(ports=(8080, 8081)),
              route_yaml("together", section="l8081", service="svc2"), service_yaml("svc2"))
        wait_until(lambda: "HTTPRoute.%s default/together" % GW in synced_map(g), 20,
                   "the new route on the gateway")
        self.wait_converged(c, g)
        route_id = "httproute/default/together"
        backend_id = "ports/default/svc2"
        for commit in g.history()["items"]:
            ids = {e["id"] for e in commit["added"]}
            if route_id in ids:
                self.assertIn(backend_id, ids, "route committed without its backend: %s" % commit)
                break
        else:
            self.fail("no commit added %s" % route_id)

    def test_thousand_rapid_edits_end_identical(self):
        self.base_config(routes=5)
        c = self.controller()
        c.wait_ready()
        g1 = self.gateway(c.sync_address(), name="gw1", serve=["default/web"])
        g2 = self.gateway(c.sync_address(), name="gw2", gateway_class="portico")
        self.wait_converged(c, g1)
        self.wait_converged(c, g2)
        for i in range(1000):
            write(self.conf, "30-route-%d.yaml" % (i % 5),
                  route_yaml("r%d" % (i % 5), path="/edit-%d" % i))
        final = {}
        def processed():
            for k in range(5):
                last = max(i for i in range(1000) if i % 5 == k)
                view = c.admin.get("/api/v1/objects/httproutes/default/r%d" % k)
                if "/edit-%d'" % last not in str(view):
                    return False
            return True
        wait_until(processed, 60, "the controller to process the last edits")
        for g in (g1, g2):
            final[g.name] = self.wait_converged(c, g, timeout=60)
        self.assertEqual(final["gw1"], final["gw2"])
        routes = [k for k in final["gw1"] if k.startswith("HTTPRoute.")]
        self.assertEqual(len(routes), 5)
        # The last edit of each route is what the gateways hold.
        for k in range(5):
            last = max(i for i in range(1000) if i % 5 == k)
            view = c.admin.get("/api/v1/objects/httproutes/default/r%d" % k)
            self.assertIn("/edit-%d" % last, str(view))

    def test_wipe_all_leaves_no_residue_on_the_gateway(self):
        c = self.controller()
        c.wait_ready()
        g = self.gateway(c.sync_address(), gateway_class="portico")
        g.wait_admin()
        wait_until(lambda: g.info()["connected"], 20, "connected")
        baseline = g.runtime()
        examples = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "basic")
        for name in sorted(os.listdir(examples)):
            shutil.copy(os.path.join(examples, name), os.path.join(self.conf, name))
        wait_until(lambda: g.runtime()["entries"] > 0 and self.wait_converged(c, g), 20,
                   "examples applied")
        status, body = c.admin.call("POST", "/api/v1/admin/wipe-all")
        self.assertEqual(status, 200, body)
        wait_until(lambda: synced_map(g) == {}, 20, "gateway emptied")
        after = g.runtime()
        for field in ("syncedObjects", "entries", "owners", "bytes"):
            self.assertEqual(after[field], baseline[field], field)


def main():
    global BINARIES
    BINARIES, argv = binaries_from_args()
    unittest.main(argv=argv, verbosity=2)


if __name__ == "__main__":
    main()
