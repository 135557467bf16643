#!/usr/bin/env python3
"""etcd config center integration tests (issue 16): a real etcd server, portico-controller on
etcd (--etcd-endpoints), portico-gateway and an echo backend on loopback.
  - an `etcdctl put` of an HTTPRoute reaches the gateway (curl is routed), an edit moves it and
    an `etcdctl del` removes it;
  - the admin API's apply writes through to etcd; a write against a stale resourceVersion is
    refused with 409 naming both revisions;
  - `portico-ctl import` (dry run, refusal listing every invalid object with nothing written,
    then the real import) and `portico-ctl export`, whose files a file-center controller reads
    into the same objects.
Run: etcd_test.py --build BUILD_DIR. Skipped (exit 77 through CTest's SKIP_RETURN_CODE) when
etcd, etcdctl or curl is missing. Waits have deadlines; nothing sleeps to synchronise.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "conformance"))
from portico_procs import Controller, Gateway, free_port, run_ctl, wait_until  # noqa: E402
from etcd_server import EtcdServer, etcd_test_main  # noqa: E402
from echo_backend import EchoPod, EchoServers  # noqa: E402

BINARIES = None
GW = "gateway.networking.k8s.io"
ROUTES = "/api/v1/objects/" + urllib.parse.quote("HTTPRoute.gateway.networking.k8s.io", safe="")


def gateway_yaml(port):
    return ("apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\n"
            "metadata: {name: portico}\nspec: {controllerName: portico.io/gateway-controller}\n"
            "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n"
            "metadata: {name: web, namespace: default}\nspec:\n  gatewayClassName: portico\n"
            "  listeners:\n  - {name: http, protocol: HTTP, port: %d}\n" % port)


def backend_yaml(echo_port):
    return ("apiVersion: v1\nkind: Service\nmetadata: {name: echo, namespace: default}\n"
            "spec:\n  ports: [{name: http, port: 80, targetPort: %d}]\n---\n"
            "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\n"
            "metadata: {name: echo, namespace: default, labels: {kubernetes.io/service-name: echo}}\n"
            "addressType: IPv4\nports: [{name: http, port: %d}]\n"
            "endpoints: [{addresses: [127.0.0.1], conditions: {ready: true}}]\n"
            % (echo_port, echo_port))


def route_yaml(name, path):
    return ("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n"
            "metadata: {name: %s, namespace: default}\nspec:\n  parentRefs: [{name: web}]\n"
            "  rules:\n  - matches: [{path: {type: PathPrefix, value: '%s'}}]\n"
            "    backendRefs: [{name: echo, port: 80}]\n" % (name, path))


def route_key(name):
    return "/portico/%s/HTTPRoute/default/%s" % (GW, name)


def keyed_documents(text):
    """(etcd key, document) for every document of `text` (the manifests of these tests)."""
    out = []
    for doc in text.split("---\n"):
        kind = doc.split("kind: ")[1].split("\n")[0]
        api = doc.split("apiVersion: ")[1].split("\n")[0]
        group = api.split("/")[0] if "/" in api else "core"
        name = doc.split("name: ")[1].split(",")[0].split("}")[0].strip()
        ns = "_" if kind == "GatewayClass" else "default"
        out.append(("/portico/%s/%s/%s/%s" % (group, kind, ns, name), doc))
    return out


def curl_status(url):
    done = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-m", "2", url],
                          capture_output=True, text=True, timeout=10)
    return int(done.stdout or 0)


def spec_view(objects):
    """(kind, namespace, name) -> spec of a controller's object list."""
    out = {}
    for o in objects["items"]:
        m = o["metadata"]
        out[(o["kind"], m.get("namespace", ""), m["name"])] = o.get("spec", o.get("data"))
    return out


class EtcdProcsTest(unittest.TestCase):
    """A temporary directory, etcd (start_etcd), an echo backend and the processes a test
    starts (self.procs), stopped in reverse order; their log tails on failure."""

    def start_etcd(self):
        return EtcdServer(self.workdir).start()

    def etcd_tails(self):
        return [("etcd", self.etcd.tail())]

    def setUp(self):
        self.workdir = tempfile.mkdtemp(prefix="portico-etcd-it-")
        self.etcd = self.start_etcd()
        self.procs = []
        self.echo = EchoServers([EchoPod("127.0.0.1", 0, "default", "echo-1")])
        self.echo.start()

    def tearDown(self):
        failed = bool(getattr(self, "_outcome", None) and any(
            e for _, e in getattr(self._outcome, "errors", []) if e))
        for p in reversed(self.procs):
            p.stop()
            if failed:
                sys.stderr.write("---- %s log (tail)\n%s\n" % (p.name, p.tail(40)))
        if failed:
            for name, tail in self.etcd_tails():
                sys.stderr.write("---- %s log (tail)\n%s\n" % (name, tail))
        self.echo.stop()
        self.etcd.remove()
        shutil.rmtree(self.workdir, ignore_errors=True)


class EtcdTest(EtcdProcsTest):

    def controller(self, name="controller"):
        c = Controller(BINARIES, None, self.workdir, name=name,
                       extra=["--etcd-endpoints", self.etcd.endpoint()])
        self.procs.append(c)
        return c.wait_ready()

    def put_yaml(self, text):
        """Puts every document of `text` under its key (as an operator would with etcdctl)."""
        for key, doc in keyed_documents(text):
            self.etcd.put(key, doc)

    def test_etcdctl_put_of_a_route_reaches_the_gateway(self):
        port = free_port()
        self.put_yaml(gateway_yaml(port))
        self.put_yaml(backend_yaml(self.echo.pods[0].port))
        controller = self.controller()
        gateway = Gateway(BINARIES, self.workdir, controller.sync_address(), serve=["default/web"],
                          snapshot=False, extra=["--access-log", "off"])
        self.procs.append(gateway)
        url = "http://127.0.0.1:%d" % port
        wait_until(lambda: curl_status(url + "/app") == 404, 20, "the listener to answer 404")

        self.etcd.put(route_key("app"), route_yaml("app", "/app"))
        wait_until(lambda: curl_status(url + "/app") == 200, 20, "the put route to serve")
        route = controller.admin.get(ROUTES + "/default/app")
        revision = json.loads(self.etcd.ctl("get", route_key("app"), "-w", "json"))["kvs"][0]
        self.assertEqual(route["metadata"]["resourceVersion"], str(revision["mod_revision"]))
        created = route["metadata"]["creationTimestamp"]

        self.etcd.put(route_key("app"), route_yaml("app", "/moved"))
        wait_until(lambda: curl_status(url + "/moved") == 200, 20, "the edited route to serve")
        self.assertEqual(curl_status(url + "/app"), 404)
        self.assertEqual(controller.admin.get(ROUTES + "/default/app")["metadata"]
                         ["creationTimestamp"], created)

        self.etcd.ctl("del", route_key("app"))
        wait_until(lambda: curl_status(url + "/moved") == 404, 20, "the deleted route to go")

    def test_apply_writes_through_with_compare_and_swap(self):
        controller = self.controller()
        controller.apply(route_yaml("web", "/a"))
        self.assertEqual(self.etcd.keys(), [route_key("web")])
        stored = self.etcd.ctl("get", route_key("web"), "--print-value-only")
        self.assertIn('"/a"', stored)
        old = controller.admin.get(ROUTES + "/default/web")["metadata"]["resourceVersion"]
        controller.apply(route_yaml("web", "/b"))
        new = controller.admin.get(ROUTES + "/default/web")["metadata"]["resourceVersion"]
        self.assertGreater(int(new), int(old))
        stale = route_yaml("web", "/c").replace("metadata: {name: web,",
                                                "metadata: {resourceVersion: '%s', name: web," % old)
        status, body = controller.admin.call("POST", "/api/v1/apply?wait=true", stale)
        self.assertEqual(status, 409, body)
        self.assertIn("HTTPRoute default/web was written against revision %s, but etcd holds "
                      "revision %s" % (old, new), body["error"])
        self.assertIn('"/b"', self.etcd.ctl("get", route_key("web"), "--print-value-only"))
        # Delete through the admin API removes the key.
        status, body = controller.admin.call("DELETE", ROUTES + "/default/web?wait=true")
        self.assertEqual(status, 200, body)
        self.assertEqual(self.etcd.keys(), [])

    def write_dir(self, name, files):
        d = os.path.join(self.workdir, name)
        os.makedirs(d)
        for f, text in files.items():
            with open(os.path.join(d, f), "w") as out:
                out.write(text)
        return d

    def ctl(self, *args):
        return run_ctl(BINARIES, *args, "--etcd-endpoints", self.etcd.endpoint())

    def test_import_and_export_round_trip(self):
        secret = ("apiVersion: v1\nkind: Secret\nmetadata: {name: token, namespace: default}\n"
                  "type: Opaque\nstringData: {token: s3cret}\n")
        good = {"gateway.yaml": gateway_yaml(free_port()),
                "backend.yaml": backend_yaml(self.echo.pods[0].port),
                "routes.yaml": route_yaml("a", "/a") + "---\n" + route_yaml("b", "/b"),
                "secret.yaml": secret}
        bad = dict(good)
        bad["broken.yaml"] = (route_yaml("c", "/c").replace("parentRefs", "parentRefz") +
                              "---\napiVersion: v1\nkind: Service\nmetadata: {namespace: x}\n")
        bad["dup.yaml"] = route_yaml("a", "/other")
        code, out, err = run_ctl(BINARIES, "import", self.write_dir("bad", bad), "--plugin-dir",
                                 BINARIES.plugin_dir, "--etcd-endpoints", self.etcd.endpoint())
        self.assertEqual(code, 1, out + err)
        self.assertIn("import refused, nothing was written: 3 invalid objects", err)
        self.assertIn("broken.yaml: document 1 (line 1): HTTPRoute default/c", err)
        self.assertIn("broken.yaml: document 2", err)
        self.assertIn("routes.yaml:1: HTTPRoute default/a is already defined at dup.yaml:1", err)
        self.assertEqual(self.etcd.keys(), [])

        src = self.write_dir("good", good)
        code, out, err = self.ctl("import", src, "--dry-run", "--plugin-dir", BINARIES.plugin_dir)
        self.assertEqual(code, 0, out + err)
        self.assertIn("httproute.gateway.networking.k8s.io/a created (dry run)", out)
        self.assertEqual(self.etcd.keys(), [])
        code, out, err = self.ctl("import", src, "--plugin-dir", BINARIES.plugin_dir)
        self.assertEqual(code, 0, out + err)
        self.assertEqual(len(self.etcd.keys()), 7, self.etcd.keys())
        self.assertIn("/portico/core/Secret/default/token", self.etcd.keys())
        code, out, err = self.ctl("import", src, "--plugin-dir", BINARIES.plugin_dir)
        self.assertIn("httproute.gateway.networking.k8s.io/a unchanged", out)
        self.assertIn("7 objects, 0 written", out)

        on_etcd = self.controller("on-etcd")
        exported = os.path.join(self.workdir, "exported")
        code, out, err = self.ctl("export", exported)
        self.assertEqual(code, 0, out + err)
        self.assertIn("exported 7 objects", out)
        with open(os.path.join(exported, "secret-default-token.yaml")) as f:
            self.assertIn("s3cret", f.read())  # material intact, unlike the admin API
        on_files = Controller(BINARIES, exported, self.workdir, name="on-files")
        self.procs.append(on_files)
        on_files.wait_ready()
        self.assertEqual(on_files.admin.get("/api/v1/errors")["items"], [])
        for kind in ("HTTPRoute.gateway.networking.k8s.io", "Gateway.gateway.networking.k8s.io",
                     "Service", "Secret", "EndpointSlice.discovery.k8s.io"):
            self.assertEqual(spec_view(on_files.objects(kind)), spec_view(on_etcd.objects(kind)),
                             kind)
        self.assertEqual(len(spec_view(on_files.objects("HTTPRoute.gateway.networking.k8s.io"))),
                         2)
        # Export refuses a directory that is not empty.
        code, out, err = self.ctl("export", exported)
        self.assertEqual(code, 1)
        self.assertIn("is not empty", err)


def set_binaries(binaries):
    global BINARIES
    BINARIES = binaries


if __name__ == "__main__":
    sys.exit(etcd_test_main("etcd_test", ("curl",), set_binaries))
