#!/usr/bin/env python3
"""High availability (issue 16, items 3 and 4): a 3-member etcd cluster on loopback, two
portico-controllers on it (leader election on an etcd lease), a portico-gateway given both
controllers (--controller a,b) and an echo backend.
  - the leader controller is killed (SIGKILL) under wrk load through the gateway: zero failed
    requests, the other controller leads within the lease TTL + 2 s with a higher epoch, the
    gateway fails over to it, and status writes resume (a new route's status appears in etcd
    under /portico/_status/);
  - `portico-ctl status` and GET /api/v1/info show the leader, its lease, the etcd revision and
    the gateways connected;
  - one etcd member killed: the controllers keep working (an apply is served, its status
    written); two killed (no quorum): the gateway keeps serving, apply answers 503 naming the
    reason; the members restarted: a leader again and an apply converges to the gateway;
  - compaction while a controller is cut off (its only etcd member down): it re-reads on
    reconnecting and holds exactly what `etcdctl get --prefix` shows (names, mod revisions);
  - a seeded random run (PORTICO_HA_SEED reproduces one) of etcdctl puts and deletes of routes and
    controller kills and restarts: after healing, two gateways hold exactly the routes etcd holds
    (each served, each deleted or replaced path 404), as do both controllers, and one leads.
Run: ha_test.py --build BUILD_DIR. Skipped (exit 77 through CTest's SKIP_RETURN_CODE) without
etcd, etcdctl, curl or wrk. Waits have deadlines; nothing sleeps to synchronise.
"""

import base64
import json
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "conformance"))
from portico_procs import Controller, Gateway, WrkRun, free_port, run_ctl, wait_until  # noqa: E402
from etcd_server import EtcdCluster, etcd_test_main  # noqa: E402
from etcd_test import (EtcdProcsTest, backend_yaml, curl_status, gateway_yaml,  # noqa: E402
                       keyed_documents, route_yaml)

BINARIES = None
TTL_S = 5


def two_parent_route(name, path):
    """An HTTPRoute attached to both Gateways of the randomized test."""
    return ("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n"
            "metadata: {name: %s, namespace: default}\nspec:\n"
            "  parentRefs: [{name: web}, {name: web2}]\n"
            "  rules:\n  - matches: [{path: {type: PathPrefix, value: '%s'}}]\n"
            "    backendRefs: [{name: echo, port: 80}]\n" % (name, path))


def second_gateway_yaml(port):
    return ("apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n"
            "metadata: {name: web2, namespace: default}\nspec:\n  gatewayClassName: portico\n"
            "  listeners:\n  - {name: http, protocol: HTTP, port: %d}\n" % port)


def status_key(name):
    return "/portico/_status/gateway.networking.k8s.io/HTTPRoute/default/%s" % name


class HaTest(EtcdProcsTest):
    def start_etcd(self):
        return EtcdCluster(self.workdir).start()

    def etcd_tails(self):
        return [("etcd " + n, self.etcd.tail(n)) for n in self.etcd.names]

    def setUp(self):
        super().setUp()
        self.port = free_port()
        for text in (gateway_yaml(self.port), backend_yaml(self.echo.pods[0].port),
                     route_yaml("app", "/app")):
            self.put_yaml(text)
        self.url = "http://127.0.0.1:%d" % self.port

    def put_yaml(self, text):
        for key, doc in keyed_documents(text):
            self.etcd.put(key, doc)

    def controller(self, name, sync_port=0, wait=True):
        c = Controller(BINARIES, None, self.workdir, name=name, sync_port=sync_port,
                       extra=["--etcd-endpoints", ",".join(self.etcd.endpoints()),
                              "--controller-id", name, "--leader-ttl-s", str(TTL_S)])
        self.procs.append(c)
        return c.wait_ready() if wait else c

    def ha(self, controller):
        return controller.info()["ha"]

    def two_controllers_and_a_gateway(self):
        a = self.controller("ctl-a")
        wait_until(lambda: self.ha(a)["role"] == "leader", 20, "ctl-a to lead")
        b = self.controller("ctl-b")
        wait_until(lambda: self.ha(b)["leader"]["id"] == "ctl-a", 20, "ctl-b to follow ctl-a")
        gateway = Gateway(BINARIES, self.workdir, a.sync_address() + "," + b.sync_address(),
                          serve=["default/web"], snapshot=False, extra=["--access-log", "off"])
        self.procs.append(gateway)
        wait_until(lambda: curl_status(self.url + "/app") == 200, 30, "the route to serve")
        return a, b, gateway

    def status_written(self, name, names=None):
        try:
            value = self.etcd.get(status_key(name), names=names)
        except AssertionError:  # etcdctl timed out (a loaded machine): ask again until the deadline
            return False
        return value is not None and '"Accepted"' in value

    def test_killing_the_leader_under_load_loses_no_request(self):
        a, b, gateway = self.two_controllers_and_a_gateway()
        ha_a, ha_b = self.ha(a), self.ha(b)
        old_epoch = ha_a["leader"]["epoch"]
        self.assertEqual(ha_b["leader"]["epoch"], old_epoch)
        self.assertEqual(ha_b["leader"]["leaseId"], ha_a["leader"]["leaseId"])
        self.assertEqual(ha_a["leader"]["leaseTtlSeconds"], TTL_S)
        leader_key = json.loads(self.etcd.ctl("get", "/portico/_leader", "-w", "json"))["kvs"][0]
        self.assertEqual(leader_key["create_revision"], old_epoch)
        self.assertEqual("%x" % leader_key["lease"], ha_a["leader"]["leaseId"])
        # Only the leader wrote status; the gateway follows the leader's epoch.
        wait_until(lambda: self.status_written("app"), 20, "the leader to write app's status")
        self.assertGreater(ha_a["statusWrites"]["puts"], 0)
        self.assertEqual(self.ha(b)["statusWrites"]["puts"], 0)
        wait_until(lambda: gateway.info()["epoch"] == old_epoch, 20, "the gateway's epoch")
        self.assertEqual(gateway.info()["controller"], a.sync_address())

        # Visibility: portico-ctl status names the leader, its lease and the gateway.
        code, out, err = run_ctl(BINARIES, "status", "--server",
                                 "http://127.0.0.1:%d" % b.admin.port)
        self.assertEqual(code, 0, err)
        self.assertIn("ctl-a (lease %s, TTL %d s, epoch %d)" % (
            ha_a["leader"]["leaseId"], TTL_S, old_epoch), out)
        self.assertIn("ctl-b (follower)", out)
        self.assertRegex(out, r"Revision: +\d+ \(etcd, watching 127\.0\.0\.1:")

        run = WrkRun(self.url + "/app", seconds=TTL_S + 8, connections=8)
        wait_until(lambda: gateway.api("/api/v1/dataplane")["requests"] >= 200, 20,
                   "wrk traffic through the gateway")
        killed = time.monotonic()
        a.kill()
        wait_until(lambda: self.ha(b)["role"] == "leader", TTL_S + 5, "ctl-b to lead")
        took = time.monotonic() - killed
        self.assertLessEqual(took, TTL_S + 2, "new leader after %.2f s" % took)
        new_epoch = self.ha(b)["leader"]["epoch"]
        self.assertGreater(new_epoch, old_epoch)
        wait_until(lambda: gateway.info()["controller"] == b.sync_address() and
                   gateway.info()["connected"], 20, "the gateway to fail over to ctl-b")
        wait_until(lambda: gateway.info()["epoch"] == new_epoch, 20, "the gateway's new epoch")
        self.assertGreaterEqual(gateway.info()["failovers"], 1)
        # Status writes resume under the new leader: an edit's status appears.
        self.put_yaml(route_yaml("after", "/after"))
        wait_until(lambda: curl_status(self.url + "/after") == 200, 20, "the new route to serve")
        wait_until(lambda: self.status_written("after"), 20, "ctl-b to write after's status")
        result = run.result()
        self.assertEqual(result["socket_errors"], 0, result["output"])
        self.assertEqual(result["non2xx"], 0, result["output"])
        self.assertGreater(result["requests"], 1000, result["output"])
        print("\nleader killed under wrk: new leader after %.2f s (TTL %d s); %d requests, "
              "0 errors, 0 non-2xx; epoch %d -> %d" % (took, TTL_S, result["requests"],
                                                       old_epoch, new_epoch), flush=True)

    def test_one_member_down_keeps_working_and_quorum_loss_refuses_writes(self):
        a, b, gateway = self.two_controllers_and_a_gateway()
        # The member every controller talks to first.
        self.etcd.kill("m0")
        alive = ["m1", "m2"]
        self.etcd.wait_quorum(alive)
        a.apply(route_yaml("one-down", "/one-down"))
        wait_until(lambda: curl_status(self.url + "/one-down") == 200, 30,
                   "the route applied with one member down to serve")
        wait_until(lambda: self.status_written("one-down", alive), 30,
                   "the leader to write status with one member down")
        for c in (a, b):
            wait_until(lambda: self.ha(c)["etcd"]["connected"] and
                       self.ha(c)["etcd"]["endpoint"] != self.etcd.endpoint("m0"), 30,
                       "%s to watch another member" % c.name)
        self.assertEqual(self.ha(a)["role"], "leader")
        self.assertEqual(self.ha(b)["leader"]["id"], "ctl-a")

        # No quorum: the gateway keeps serving; apply is refused with the reason.
        self.etcd.kill("m1")
        status, body = a.admin.call("POST", "/api/v1/apply?wait=true",
                                    route_yaml("no-quorum", "/no-quorum"), timeout=60)
        self.assertEqual(status, 503, body)
        self.assertIn("etcd is not taking writes", body["error"])
        self.assertEqual(curl_status(self.url + "/app"), 200)
        self.assertEqual(curl_status(self.url + "/one-down"), 200)

        # Restored: a leader again, and an apply converges to the gateway.
        self.etcd.restart("m0")
        self.etcd.restart("m1")
        for n in ("m0", "m1"):
            self.etcd.wait_healthy(n)
        wait_until(lambda: a.admin.call("POST", "/api/v1/apply?wait=true",
                                        route_yaml("restored", "/restored"),
                                        timeout=60)[0] == 200, 60, "apply to succeed again")
        wait_until(lambda: curl_status(self.url + "/restored") == 200, 30,
                   "the restored route to serve")
        wait_until(lambda: self.ha(a)["role"] == "leader" or self.ha(b)["role"] == "leader",
                   30, "a leader after the quorum came back")
        wait_until(lambda: self.status_written("restored"), 30, "status of the restored route")

    def test_seeded_random_puts_deletes_and_controller_kills_converge(self):
        seed = int(os.environ.get("PORTICO_HA_SEED", random.randrange(1 << 30)))
        rng = random.Random(seed)
        print("\nseed %d (PORTICO_HA_SEED=%d reproduces it)" % (seed, seed), flush=True)
        port2 = free_port()
        self.put_yaml(second_gateway_yaml(port2))
        self.put_yaml(two_parent_route("app", "/app"))
        controllers = {n: self.controller(n) for n in ("ctl-a", "ctl-b")}
        sync_ports = {n: c.sync_port for n, c in controllers.items()}
        addresses = ",".join(c.sync_address() for c in controllers.values())
        gateways = []
        for name, serve in (("gw-1", "default/web"), ("gw-2", "default/web2")):
            g = Gateway(BINARIES, self.workdir, addresses, name=name, serve=[serve],
                        snapshot=False, extra=["--access-log", "off"])
            self.procs.append(g)
            gateways.append(g)
        urls = ["http://127.0.0.1:%d" % self.port, "http://127.0.0.1:%d" % port2]
        wait_until(lambda: all(curl_status(u + "/app") == 200 for u in urls), 30,
                   "both gateways to serve")
        routes = {}  # name -> path, what etcd holds
        gone = {}    # name -> the last path of a deleted route
        for step in range(80):
            op = rng.random()
            name = "r%d" % rng.randrange(12)
            if op < 0.55:
                path = "/%s-v%d" % (name, step)
                for key, doc in keyed_documents(two_parent_route(name, path)):
                    self.etcd.put(key, doc)
                if name in routes:
                    gone[name + "@old"] = routes[name]
                routes[name] = path
                gone.pop(name, None)
            elif op < 0.8:
                if name in routes:
                    self.etcd.ctl("del", "/portico/gateway.networking.k8s.io/HTTPRoute/default/" +
                                  name)
                    gone[name] = routes.pop(name)
            else:
                victim = rng.choice(sorted(controllers))
                c = controllers[victim]
                if c.alive():
                    c.kill()
                else:
                    controllers[victim] = self.controller(victim, sync_ports[victim], wait=False)
        # Heal: both controllers up; then every gateway holds exactly what etcd holds.
        for victim, c in list(controllers.items()):
            if not c.alive():
                controllers[victim] = self.controller(victim, sync_ports[victim], wait=False)
        for c in controllers.values():
            c.wait_ready()
        in_etcd = sorted(k.rsplit("/", 1)[1] for k in self.etcd.ctl(
            "get", "--prefix", "--keys-only",
            "/portico/gateway.networking.k8s.io/HTTPRoute/").split() if k)
        self.assertEqual(in_etcd, sorted(["app"] + list(routes)))

        def held(g):
            return sorted(n.split("/", 1)[1] for n in
                          g.synced()["kinds"].get("HTTPRoute.gateway.networking.k8s.io", {}))
        for g in gateways:
            wait_until(lambda: held(g) == in_etcd, 30, "%s to hold what etcd holds" % g.name)
        for name, path in routes.items():
            for u in urls:
                self.assertEqual(curl_status(u + path), 200, "%s%s (%s)" % (u, path, name))
        for name, path in gone.items():
            if path not in routes.values():
                for u in urls:
                    self.assertEqual(curl_status(u + path), 404, "%s%s (%s)" % (u, path, name))
        for c in controllers.values():
            objects = c.objects("HTTPRoute.gateway.networking.k8s.io")["items"]
            self.assertEqual(sorted(o["metadata"]["name"] for o in objects), in_etcd, c.name)
        wait_until(lambda: sum(self.ha(c)["role"] == "leader" for c in controllers.values()) == 1,
                   TTL_S + 10, "exactly one leader after healing")
        print("seeded run: %d routes held by both gateways as in etcd, %d gone" % (
            len(routes), len(gone)), flush=True)

    def test_compaction_while_a_controller_is_cut_off_converges(self):
        # A controller that knows only m0; m0 goes, the other two keep the quorum.
        c = Controller(BINARIES, None, self.workdir, name="ctl-m0",
                       extra=["--etcd-endpoints", self.etcd.endpoint("m0"),
                              "--controller-id", "ctl-m0", "--leader-ttl-s", str(TTL_S)])
        self.procs.append(c)
        c.wait_ready()
        for i in range(6):
            self.put_yaml(route_yaml("c%d" % i, "/c%d" % i))
        wait_until(lambda: len(c.objects("HTTPRoute.gateway.networking.k8s.io")["items"]) == 7,
                   20, "the controller to hold 7 routes")
        self.etcd.kill("m0")
        others = ["m1", "m2"]
        self.etcd.wait_quorum(others)
        for i in range(3):
            self.etcd.ctl("del", "/portico/gateway.networking.k8s.io/HTTPRoute/default/c%d" % i,
                          names=others)
        for key, doc in keyed_documents(route_yaml("c4", "/c4-moved") + "---\n" +
                                        route_yaml("c9", "/c9")):
            self.etcd.put(key, doc, names=others)
        revision = json.loads(self.etcd.ctl("get", "/", "-w", "json", names=others))["header"][
            "revision"]
        self.etcd.ctl("compact", str(revision), names=others)
        self.etcd.restart("m0")
        self.etcd.wait_healthy("m0")

        def view():
            out = json.loads(self.etcd.ctl("get", "--prefix",
                                           "/portico/gateway.networking.k8s.io/HTTPRoute/",
                                           "-w", "json"))
            return {base64.b64decode(kv["key"]).decode().rsplit("/", 1)[1]: str(kv["mod_revision"])
                    for kv in out.get("kvs", [])}

        def held():
            items = c.objects("HTTPRoute.gateway.networking.k8s.io")["items"]
            names = [o["metadata"]["name"] for o in items]
            self.assertEqual(len(names), len(set(names)), "an object is listed twice")
            return {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in items}
        in_etcd = view()
        self.assertEqual(sorted(in_etcd), ["app", "c3", "c4", "c5", "c9"])
        wait_until(lambda: held() == in_etcd, 30,
                   "the controller to re-read after the compaction and hold what etcd holds")
        moved = [o for o in c.objects("HTTPRoute.gateway.networking.k8s.io")["items"]
                 if o["metadata"]["name"] == "c4"][0]
        self.assertEqual(moved["spec"]["rules"][0]["matches"][0]["path"]["value"], "/c4-moved")
        self.assertIn("compacted", c.log_text())


def set_binaries(binaries):
    global BINARIES
    BINARIES = binaries


if __name__ == "__main__":
    sys.exit(etcd_test_main("ha_test", ("curl", "wrk"), set_binaries))
