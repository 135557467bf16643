#!/usr/bin/env python3
"""BackendTLSPolicy and spec.tls.backend sync scope (issue 13, item 5), on real processes: a real
portico-controller and two real portico-gateways, each serving one Gateway, real plugin .so
files. A BackendTLSPolicy goes to the gateways holding a Gateway through which a route reaches
its Service, and its CA ConfigMap with it, and nowhere else; when the route moves to the other
Gateway, the policy and the ConfigMap move too. A Gateway's backend client certificate Secret
goes where the Gateway goes. The policy's ancestor status names the Gateway reaching it.

Run: backend_tls_sync_test.py --build BUILD_DIR [unittest args]. Certificates are generated at
test time with the openssl command (skipped, exit 77, without it). Every wait has a deadline.
"""

import base64
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from portico_procs import (binaries_from_args, Controller, Gateway, free_port,  # noqa: E402
                           wait_until, write_config_file)

BINARIES = None
GW = "gateway.networking.k8s.io"
POLICY = "BackendTLSPolicy.%s default/web-tls" % GW


def gateway_yaml(name, port, client_secret=None):
    text = ("apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n"
            "metadata: {name: %s, namespace: default}\nspec:\n  gatewayClassName: portico\n"
            "  listeners:\n  - {name: http, protocol: HTTP, port: %d}\n" % (name, port))
    if client_secret:
        text += "  tls:\n    backend:\n      clientCertificateRef: {name: %s}\n" % client_secret
    return text


def route_yaml(gateway):
    return ("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n"
            "metadata: {name: to-web, namespace: default}\nspec:\n  parentRefs: [{name: %s}]\n"
            "  rules:\n  - backendRefs: [{name: web, port: 443}]\n" % gateway)


SERVICE = ("apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\n"
           "spec:\n  ports: [{name: https, port: 443, targetPort: 8443}]\n")
POLICY_YAML = ("apiVersion: gateway.networking.k8s.io/v1\nkind: BackendTLSPolicy\n"
               "metadata: {name: web-tls, namespace: default}\nspec:\n"
               "  targetRefs: [{group: '', kind: Service, name: web}]\n"
               "  validation:\n    caCertificateRefs: [{group: '', kind: ConfigMap, name: web-ca}]\n"
               "    hostname: web.example.com\n")
CLASS = ("apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: portico}\n"
         "spec: {controllerName: portico.io/gateway-controller}\n")


def self_signed(workdir, name):
    """(certificate PEM, key PEM) of a fresh self-signed EC certificate."""
    crt, key = os.path.join(workdir, name + ".crt"), os.path.join(workdir, name + ".key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", crt, "-days", "2",
                    "-subj", "/CN=%s" % name], check=True, capture_output=True)
    with open(crt) as c, open(key) as k:
        return c.read(), k.read()


def synced_keys(gateway):
    return {kind + " " + name for kind, objects in gateway.synced()["kinds"].items()
            for name in objects}


def formats(gateway):
    """({format: staged entries}, nacks) of a gateway's runtime."""
    runtime = gateway.runtime()
    return runtime["entriesByFormat"], runtime["nacks"]


class BackendTlsSyncTest(unittest.TestCase):
    def setUp(self):
        self.workdir = tempfile.mkdtemp(prefix="portico-backend-tls-")
        self.conf = os.path.join(self.workdir, "conf")
        os.makedirs(self.conf)
        self.procs = []

    def tearDown(self):
        for p in reversed(self.procs):
            p.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def test_policy_and_its_material_follow_the_gateways_reaching_the_service(self):
        ca_pem, _ = self_signed(self.workdir, "web-ca")
        client_crt, client_key = self_signed(self.workdir, "client")
        write_config_file(self.conf, "00-class.yaml", CLASS)
        write_config_file(self.conf, "10-gateways.yaml", "---\n".join([
            gateway_yaml("web", free_port(), client_secret="client"),
            gateway_yaml("edge", free_port())]))
        write_config_file(self.conf, "20-service.yaml", SERVICE)
        write_config_file(self.conf, "30-route.yaml", route_yaml("web"))
        indented = "".join("    " + line + "\n" for line in ca_pem.strip().splitlines())
        write_config_file(self.conf, "40-ca.yaml",
                          "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-ca, "
                          "namespace: default}\ndata:\n  ca.crt: |\n" + indented)
        write_config_file(self.conf, "41-client.yaml",
                          "apiVersion: v1\nkind: Secret\ntype: kubernetes.io/tls\nmetadata: "
                          "{name: client, namespace: default}\ndata:\n  tls.crt: %s\n"
                          "  tls.key: %s\n" % (base64.b64encode(client_crt.encode()).decode(),
                                               base64.b64encode(client_key.encode()).decode()))
        write_config_file(self.conf, "50-policy.yaml", POLICY_YAML)
        controller = Controller(BINARIES, self.conf, self.workdir)
        self.procs.append(controller)
        controller.wait_ready()
        web = Gateway(BINARIES, self.workdir, controller.sync_address(), name="gw-web",
                      serve=["default/web"])
        edge = Gateway(BINARIES, self.workdir, controller.sync_address(), name="gw-edge",
                       serve=["default/edge"])
        self.procs += [web, edge]

        material = {POLICY, "ConfigMap default/web-ca"}
        wait_until(lambda: material <= synced_keys(web), 20, "the policy and its CA on gw-web")
        self.assertIn("Secret default/client", synced_keys(web))  # the client certificate
        wait_until(lambda: "%s.%s default/edge" % ("Gateway", GW) in synced_keys(edge), 20,
                   "gw-edge synced")
        self.assertFalse(material & synced_keys(edge), synced_keys(edge))
        self.assertNotIn("Secret default/client", synced_keys(edge))

        status, body = controller.admin.call(
            "GET", "/api/v1/objects/BackendTLSPolicy.%s/default/web-tls" % GW)
        self.assertEqual(status, 200, body)
        ancestors = body["status"]["ancestors"]
        self.assertEqual([a["ancestorRef"]["name"] for a in ancestors], ["web"])
        self.assertEqual({c["type"]: c["status"] for c in ancestors[0]["conditions"]},
                         {"Accepted": "True", "ResolvedRefs": "True"})
        # Staged without a nack: the Service's ports and the policy's tls entry (backend.v1),
        # the CA bundle and the client key pair (certificate.v1).
        self.assertEqual(formats(web), ({"backend.v1": 2, "certificate.v1": 2,
                                         "listener_set.v1": 1, "route_rules.v1": 1}, 0))

        # The route moves to the other Gateway: so do the policy and its CA.
        write_config_file(self.conf, "30-route.yaml", route_yaml("edge"))
        wait_until(lambda: material <= synced_keys(edge), 20, "the policy and its CA on gw-edge")
        wait_until(lambda: not material & synced_keys(web), 20, "the policy gone from gw-web")
        self.assertIn("Secret default/client", synced_keys(web))  # still the Gateway's
        wait_until(lambda: formats(edge) == ({"backend.v1": 2, "certificate.v1": 1,
                                              "listener_set.v1": 1, "route_rules.v1": 1}, 0),
                   20, "gw-edge to stage the policy and its CA")
        wait_until(lambda: [a["ancestorRef"]["name"] for a in controller.admin.call(
            "GET", "/api/v1/objects/BackendTLSPolicy.%s/default/web-tls" % GW)[1]["status"][
                "ancestors"]] == ["edge"], 20, "the ancestor to become edge")


def main():
    global BINARIES
    if shutil.which("openssl") is None:
        print("SKIP: the openssl command is needed to generate certificates")
        return 77
    BINARIES, argv = binaries_from_args()
    return 0 if unittest.main(argv=argv, exit=False).result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
