#!/usr/bin/env python3
"""What gateways run, and kinds some of them lack (issue 14, item 4): real portico-controller,
two real portico-gateway processes (one without the Webhook plugin) and the real portico-ctl.

- `portico-ctl list-plugins --target gateway` shows each connected gateway's plugins, the kinds
  they stage and their filter types, as the gateways announced them in their ConfigSync Hello
  (through the controller's /api/v1/gateways), and `--address` asks one gateway's admin API;
- a Webhook policy both gateways serve is applied by the one with the plugin, and its status says
  the other has no handler for Webhook.portico.io (the Webhook processor writes no Programmed
  placeholder: the condition is added).

Run: gateway_plugins_test.py --build BUILD_DIR [unittest args]. Every wait has a deadline.
"""

import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from portico_procs import (Binaries, Controller, Gateway, binaries_from_args,  # noqa: E402
                           free_port, run_ctl, wait_until, write_config_file)

BINARIES = None


def config(port):
    return (
        "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\n"
        "metadata: {name: portico}\nspec: {controllerName: portico.io/gateway-controller}\n---\n"
        "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n"
        "metadata: {name: web, namespace: default}\nspec:\n  gatewayClassName: portico\n"
        "  listeners:\n  - {name: http, protocol: HTTP, port: %d}\n---\n"
        "apiVersion: v1\nkind: Service\nmetadata: {name: svc, namespace: default}\n"
        "spec:\n  ports: [{name: http, port: 80, targetPort: 9}]\n---\n"
        "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n"
        "metadata: {name: r0, namespace: default}\nspec:\n  parentRefs: [{name: web}]\n"
        "  rules:\n  - backendRefs: [{name: svc, port: 80}]\n---\n"
        "apiVersion: portico.io/v1alpha1\nkind: Webhook\n"
        "metadata: {name: guard, namespace: default}\nspec:\n  url: http://127.0.0.1:9\n"
        "  path: /check\n  timeout: 1s\n  failurePolicy: Fail\n"
        "  targetRefs:\n  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r0}\n"
        % port)


class GatewayPluginsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.workdir = tempfile.mkdtemp(prefix="portico-gwplugins-")
        conf = os.path.join(cls.workdir, "conf")
        os.makedirs(conf)
        write_config_file(conf, "all.yaml", config(free_port()))
        # The lean gateway's plugin directory: every plugin but the Webhook one.
        lean_dir = os.path.join(cls.workdir, "lean-plugins")
        os.makedirs(lean_dir)
        for f in os.listdir(BINARIES.plugin_dir):
            if f.endswith(".so") and f != "libportico-webhook.so":
                shutil.copy(os.path.join(BINARIES.plugin_dir, f), lean_dir)
        lean = Binaries(BINARIES.controller, BINARIES.gateway, BINARIES.ctl, lean_dir)
        cls.procs = []
        try:
            cls.controller = Controller(BINARIES, conf, cls.workdir)
            cls.procs.append(cls.controller)
            cls.controller.wait_ready()
            address = cls.controller.sync_address()
            cls.full = Gateway(BINARIES, cls.workdir, address, name="gw-full",
                               serve=["default/web"])
            cls.procs.append(cls.full)
            cls.lean = Gateway(lean, cls.workdir, address, name="gw-lean", serve=["default/web"])
            cls.procs.append(cls.lean)
            cls.full.wait_admin()
            cls.lean.wait_admin()
            names = lambda: sorted(g["name"] for g in cls.controller.gateways()["items"])
            wait_until(lambda: names() == ["gw-full", "gw-lean"], 30, "both gateways connected")
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        for p in reversed(cls.procs):
            p.stop()
        shutil.rmtree(cls.workdir, ignore_errors=True)

    def ctl(self, *args):
        return run_ctl(BINARIES, "--server", self.controller.admin.base, "list-plugins",
                       "--target", "gateway", *args)

    def test_list_plugins_through_the_controller_shows_each_gateway(self):
        code, out, err = self.ctl()
        self.assertEqual(code, 0, err)
        sections = {}
        for block in out.strip().split("\n\n"):
            header = block.splitlines()[0]
            self.assertTrue(header.startswith("GATEWAY "), block)
            sections[header.split()[1]] = block
        self.assertEqual(sorted(sections), ["gw-full", "gw-lean"])
        self.assertIn("serves default/web", sections["gw-full"])
        for name in ("gw-full", "gw-lean"):
            self.assertIn("HTTPRoute.gateway.networking.k8s.io", sections[name])
            self.assertIn("Gateway.gateway.networking.k8s.io", sections[name])
        self.assertIn("Webhook.portico.io", sections["gw-full"])
        self.assertIn("portico.io/Webhook (authz)", sections["gw-full"])
        self.assertNotIn("Webhook", sections["gw-lean"])

        code, out, err = self.ctl("-o", "json")
        self.assertEqual(code, 0, err)
        by_name = {g["name"]: g for g in json.loads(out)}
        full = {p["name"]: p for p in by_name["gw-full"]["inventory"]}
        lean = {p["name"]: p for p in by_name["gw-lean"]["inventory"]}
        self.assertEqual(full["webhook"]["filterTypes"], ["portico.io/Webhook (authz)"])
        self.assertEqual(full["webhook"]["handlers"], ["Webhook.portico.io"])
        self.assertEqual(len(full["webhook"]["sha256"]), 64)
        self.assertNotIn("webhook", lean)
        self.assertEqual(set(full) - set(lean), {"webhook"})

    def test_list_plugins_from_one_gateway_admin_address(self):
        code, out, err = self.ctl("--address", "127.0.0.1:%d" % self.full.admin.port)
        self.assertEqual(code, 0, err)
        self.assertIn("webhook", out)
        self.assertIn("FILTER TYPE", out)
        self.assertRegex(out, r"portico\.io/Webhook +authz +0 +webhook")
        code, out, err = self.ctl("--address", "127.0.0.1:%d" % self.lean.admin.port, "-o", "json")
        self.assertEqual(code, 0, err)
        answer = json.loads(out)
        self.assertNotIn("webhook", [p["name"] for p in answer["items"]])
        self.assertEqual(answer["filterTypes"], [])

    def test_a_kind_one_gateway_lacks_is_on_the_object_status(self):
        def programmed():
            obj = self.controller.admin.get("/api/v1/objects/webhooks/default/guard")
            for c in obj.get("status", {}).get("conditions", []):
                if c.get("type") == "Programmed" and "gw-lean" in c.get("message", ""):
                    return c
            return None
        condition = wait_until(programmed, 30, "Webhook default/guard's Programmed condition")
        self.assertIn("gateway gw-lean serves it but has no handler for Webhook.portico.io",
                      condition["message"])
        # The gateway with the plugin applied it.
        wait_until(lambda: "applied by gateway gw-full" in (programmed() or {}).get("message", ""),
                   30, "gw-full to apply Webhook default/guard")

    def test_an_unreachable_target_is_an_error_naming_it(self):
        code, _, err = run_ctl(BINARIES, "list-plugins", "--target", "gateway", "--address",
                               "127.0.0.1:%d" % free_port())
        self.assertEqual(code, 1)
        self.assertIn("127.0.0.1", err)


if __name__ == "__main__":
    BINARIES, rest = binaries_from_args()
    unittest.main(argv=rest)
