#!/usr/bin/env python3
"""Security defaults (issue 15, item 10) with the real binaries:

- admin tokens: a controller and a gateway started with --admin-token-file answer 401 (with
  WWW-Authenticate) on every path but /healthz and /readyz without "Authorization: Bearer", and
  serve it with the token; portico-ctl sends it with --token-file (and PORTICO_ADMIN_TOKEN_FILE)
  and names the token when it is refused; a token file readable by others and an admin API bound
  off loopback without a token are refused at start-up with a message naming the setting;
- secrets redacted everywhere: a kubernetes.io/tls Secret served by an HTTPS listener, an Opaque
  Secret applied through the admin API, a Secret refused by its schema and a broken YAML file
  holding a Secret value: no admin endpoint of either binary (every kind, every object, errors,
  gateways, synced, runtime, history, dataplane, metrics), no portico-ctl output (get -o
  yaml/json/table, status, diff, list-plugins) and no log line at debug level carries the key or
  the secret values, in PEM, base64 or plain form;
- file modes: the gateway's snapshot file and a Secret file written by `portico-ctl apply` are
  0600.

Run: security_test.py --build BUILD_DIR [unittest args]. Skipped (77) without openssl. Every wait
has a deadline; nothing sleeps to synchronise.
"""

import base64
import json
import os
import shutil
import socket
import ssl
import stat
import subprocess
import sys
import tempfile
import unittest
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from portico_procs import (Controller, Gateway, binaries_from_args, free_port,  # noqa: E402
                           run_ctl, wait_until, write_config_file)
from tls_material import make_pair, secret_yaml  # noqa: E402

BINARIES = None
SKIP_EXIT = 77
TOKEN = "portico-test-token-3f9c1d"
OPAQUE_VALUE = "hunter2-opaque-8d1e0b7a"
INVALID_VALUE = "refused-secret-value-51c2"
BROKEN_VALUE = "broken-file-secret-77ad"


def gateway_config(https_port):
    return (
        "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\n"
        "metadata: {name: portico}\nspec: {controllerName: portico.io/gateway-controller}\n---\n"
        "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n"
        "metadata: {name: web, namespace: default}\nspec:\n  gatewayClassName: portico\n"
        "  listeners:\n  - name: https\n    protocol: HTTPS\n    port: %d\n"
        "    tls: {mode: Terminate, certificateRefs: [{kind: Secret, name: site}]}\n---\n"
        "apiVersion: v1\nkind: Service\nmetadata: {name: svc, namespace: default}\n"
        "spec:\n  ports: [{name: http, port: 80, targetPort: 9}]\n---\n"
        "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n"
        "metadata: {name: r0, namespace: default}\nspec:\n  parentRefs: [{name: web}]\n"
        "  rules:\n  - backendRefs: [{name: svc, port: 80}]\n" % https_port)


def write_token(path, token=TOKEN, mode=0o600):
    with open(path, "w") as f:
        f.write(token + "\n")
    os.chmod(path, mode)
    return path


def needles(pair):
    """Every form the secret material could leak in: each line of the key's PEM body, the
    base64 of the whole key PEM (a Secret's data value), and the plain and base64 values."""
    body = [line for line in pair.key.strip().splitlines() if not line.startswith("-----")]
    found = {"key PEM line %d" % i: line for i, line in enumerate(body) if len(line) >= 16}
    found["key PEM as base64"] = base64.b64encode(pair.key.encode()).decode()[:48]
    for name, value in (("opaque value", OPAQUE_VALUE), ("refused value", INVALID_VALUE),
                        ("broken-file value", BROKEN_VALUE)):
        found[name] = value
        found[name + " as base64"] = base64.b64encode(value.encode()).decode().rstrip("=")
    return found


class SecurityTestBase(unittest.TestCase):
    def setUp(self):
        self.workdir = tempfile.mkdtemp(prefix="portico-security-")
        self.conf = os.path.join(self.workdir, "conf")
        os.makedirs(self.conf)
        self.procs = []

    def tearDown(self):
        for p in reversed(self.procs):
            p.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def start(self, proc):
        self.procs.append(proc)
        return proc


class AdminTokenTest(SecurityTestBase):
    def test_token_guards_both_admin_apis_and_ctl_sends_it(self):
        token_file = write_token(os.path.join(self.workdir, "admin.token"))
        write_config_file(self.conf, "all.yaml", gateway_config(free_port()).replace(
            "protocol: HTTPS", "protocol: HTTP").replace(
            "    tls: {mode: Terminate, certificateRefs: [{kind: Secret, name: site}]}\n", ""))
        c = self.start(Controller(BINARIES, self.conf, self.workdir,
                                  extra=["--admin-token-file", token_file]))
        c.wait_ready()  # /readyz is open
        status, body = c.admin.call("GET", "/api/v1/objects")
        self.assertEqual(status, 401, body)
        self.assertIn("Bearer", body["error"])
        request = urllib.request.Request(c.admin.base + "/api/v1/info")
        try:
            urllib.request.urlopen(request, timeout=10)
            self.fail("GET /api/v1/info without a token was served")
        except urllib.error.HTTPError as e:
            self.assertEqual(e.code, 401)
            self.assertEqual(e.headers.get("WWW-Authenticate"), 'Bearer realm="portico-admin"')
        self.assertEqual(c.admin.call("GET", "/healthz")[0], 200)
        c.admin.token = "wrong"
        self.assertEqual(c.admin.call("GET", "/api/v1/info")[0], 401)
        c.admin.token = TOKEN
        self.assertEqual(c.admin.call("GET", "/api/v1/info")[0], 200)

        g = self.start(Gateway(BINARIES, self.workdir, c.sync_address(), serve=["default/web"],
                               extra=["--admin-token-file", token_file]))
        g.wait_admin()
        self.assertEqual(g.admin.call("GET", "/api/v1/synced")[0], 401)
        self.assertEqual(g.admin.call("GET", "/healthz")[0], 200)
        g.admin.token = TOKEN
        wait_until(lambda: g.admin.call("GET", "/api/v1/synced")[0] == 200 and
                   "HTTPRoute.gateway.networking.k8s.io" in g.synced()["kinds"], 20,
                   "the gateway holds the route (with the token)")

        code, out, err = run_ctl(BINARIES, "--server", c.admin.base, "get", "httproutes")
        self.assertNotEqual(code, 0, out)
        self.assertIn("Unauthorized", err)
        self.assertIn("--token-file", err)
        code, out, err = run_ctl(BINARIES, "--server", c.admin.base, "--token-file", token_file,
                                 "get", "httproutes")
        self.assertEqual(code, 0, err)
        self.assertIn("r0", out)
        env = dict(os.environ, PORTICO_ADMIN_TOKEN_FILE=token_file)
        done = subprocess.run([BINARIES.ctl, "--server", c.admin.base, "diff", "--gateway",
                               "gateway", "--gateway-admin", g.admin.base], env=env,
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)

    def test_unsafe_settings_are_refused_at_start_up(self):
        open_file = write_token(os.path.join(self.workdir, "open.token"), mode=0o644)
        for binary, argv in (
                ("controller", [BINARIES.controller, "--config-dir", self.conf, "--plugin-dir",
                                BINARIES.plugin_dir, "--admin-port", "0", "--sync-port", "0",
                                "--admin-token-file", open_file]),
                ("gateway", [BINARIES.gateway, "--plugin-dir", BINARIES.plugin_dir,
                             "--controller", "127.0.0.1:9", "--admin-port", "0",
                             "--admin-token-file", open_file])):
            done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True, timeout=30)
            self.assertNotEqual(done.returncode, 0, binary)
            self.assertIn("readable by group or others", done.stdout, binary)
            self.assertIn("chmod 600", done.stdout, binary)
        for binary, argv in (
                ("controller", [BINARIES.controller, "--config-dir", self.conf, "--plugin-dir",
                                BINARIES.plugin_dir, "--admin-address", "0.0.0.0", "--check"]),
                ("gateway", [BINARIES.gateway, "--plugin-dir", BINARIES.plugin_dir,
                             "--admin-address", "0.0.0.0", "--check"])):
            done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True, timeout=30)
            self.assertNotEqual(done.returncode, 0, binary)
            self.assertIn('admin.address "0.0.0.0" is not a loopback address', done.stdout,
                          binary)
            self.assertIn("admin.token_file", done.stdout, binary)


class RedactionTest(SecurityTestBase):
    def test_no_output_carries_secret_material(self):
        pair = make_pair(self.workdir, "site", ["site.test"])
        https_port = free_port()
        write_config_file(self.conf, "all.yaml", gateway_config(https_port))
        write_config_file(self.conf, "site-secret.yaml", secret_yaml("site", pair))
        # Refused by its schema (data values must be base64), and a file that does not parse.
        write_config_file(self.conf, "refused-secret.yaml",
                          "apiVersion: v1\nkind: Secret\nmetadata: {name: refused, namespace: "
                          "default}\ntype: Opaque\ndata:\n  password: '%s!'\n" % INVALID_VALUE)
        write_config_file(self.conf, "broken-secret.yaml",
                          "apiVersion: v1\nkind: Secret\nmetadata: {name: broken}\nstringData:\n"
                          "  password: %s\n  other: [unclosed\n" % BROKEN_VALUE)
        c = self.start(Controller(BINARIES, self.conf, self.workdir, log_level="debug"))
        c.wait_ready()
        g = self.start(Gateway(BINARIES, self.workdir, c.sync_address(), serve=["default/web"],
                               log_level="debug"))
        g.wait_admin()
        applied = c.apply("apiVersion: v1\nkind: Secret\nmetadata: {name: opaque, namespace: "
                          "default}\ntype: Opaque\nstringData:\n  password: %s\n" % OPAQUE_VALUE)
        gateway_path = "/api/v1/objects/%s/default/web" % urllib.parse.quote(
            "Gateway.gateway.networking.k8s.io", safe="")

        def programmed():
            conds = c.admin.get(gateway_path).get("status", {}).get("listeners", [{}])[0].get(
                "conditions", [])
            return any(x["type"] == "Programmed" and x["status"] == "True" for x in conds)
        wait_until(programmed, 30, "the HTTPS listener programmed")
        wait_until(lambda: "Secret" in json.dumps(g.synced()), 20, "the gateway holds the Secret")
        # The served certificate is the Secret's: the material really reached the gateway.
        with socket.create_connection(("127.0.0.1", https_port), timeout=10) as raw:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            with context.wrap_socket(raw, server_hostname="site.test") as tls:
                self.assertEqual(tls.getpeercert(binary_form=True), pair.der())
        errors = c.admin.get("/api/v1/errors")
        self.assertIn("broken-secret.yaml", json.dumps(errors))
        self.assertIn("refused-secret.yaml", json.dumps(errors))

        outputs = {"apply answer": json.dumps(applied)}
        for path in ("/api/v1/info", "/api/v1/plugins", "/api/v1/kinds", "/api/v1/errors",
                     "/api/v1/gateways", "/api/v1/gateways/gateway/synced"):
            outputs["controller " + path] = json.dumps(c.admin.get(path))
        outputs["controller /metrics"] = c.admin.get("/metrics")
        kinds = [k["kind"] + "." + k["group"] if k["group"] else k["kind"]
                 for k in c.admin.get("/api/v1/kinds")["items"]]
        self.assertIn("Secret", kinds)
        for kind in kinds:
            listing = c.objects(kind)
            outputs["controller objects " + kind] = json.dumps(listing)
            for item in listing.get("items", []):
                meta = item["metadata"]
                path = "/api/v1/objects/%s/%s%s" % (
                    urllib.parse.quote(kind, safe=""),
                    (meta["namespace"] + "/") if meta.get("namespace") else "", meta["name"])
                outputs["controller " + path] = json.dumps(c.admin.get(path))
        self.assertTrue(any(k.startswith("controller /api/v1/objects/Secret/default/site")
                            for k in outputs), sorted(outputs))
        for path in ("/api/v1/info", "/api/v1/plugins", "/api/v1/synced", "/api/v1/runtime",
                     "/api/v1/runtime/history", "/api/v1/dataplane"):
            outputs["gateway " + path] = json.dumps(g.api(path))
        outputs["gateway /metrics"] = g.admin.get("/metrics")
        server = ["--server", c.admin.base]
        for args in (["get", "secrets", "-o", "yaml"], ["get", "secrets", "-o", "json"],
                     ["get", "secrets"], ["get", "secret", "site", "-o", "yaml"],
                     ["get", "secret", "opaque", "-o", "json"], ["status"],
                     ["diff", "--gateway", "gateway", "--gateway-admin", g.admin.base],
                     ["list-plugins", "--target", "gateway", "-o", "json"]):
            code, out, err = run_ctl(BINARIES, *(server + args))
            outputs["portico-ctl " + " ".join(args)] = out + err
            self.assertIn(code, (0, 1), (args, err))  # diff may report drift; never crash
        code, out, err = run_ctl(BINARIES, *(server + ["get", "secret", "site", "-o", "yaml"]))
        self.assertEqual(code, 0, err)
        self.assertIn("REDACTED", out)
        self.assertIn("tls.key", out)  # the keys are listed, the values are not

        # The apply path: a Secret written to a new file by portico-ctl apply is 0600.
        manifest = os.path.join(self.workdir, "applied.yaml")
        with open(manifest, "w") as f:
            f.write("apiVersion: v1\nkind: Secret\nmetadata: {name: via-ctl, namespace: default}\n"
                    "type: Opaque\nstringData:\n  password: %s\n" % OPAQUE_VALUE)
        code, out, err = run_ctl(BINARIES, *(server + ["apply", "-f", manifest]))
        self.assertEqual(code, 0, err)
        outputs["portico-ctl apply"] = out + err
        written = [f for f in os.listdir(self.conf) if "via-ctl" in f]
        self.assertEqual(len(written), 1, os.listdir(self.conf))
        self.assertEqual(stat.S_IMODE(os.stat(os.path.join(self.conf, written[0])).st_mode),
                         0o600)
        wait_until(lambda: os.path.exists(g.snapshot_path), 20, "the snapshot file")
        self.assertEqual(stat.S_IMODE(os.stat(g.snapshot_path).st_mode), 0o600)

        for p in self.procs:
            outputs[p.name + " log"] = p.log_text()
        leaks = ["%s in %s" % (what, where) for where, text in outputs.items()
                 for what, needle in needles(pair).items() if needle in text]
        self.assertEqual(leaks, [])
        # The check can fail: the needles are where they should be, in the config files.
        with open(os.path.join(self.conf, "site-secret.yaml")) as f:
            self.assertTrue(any(n in f.read() for n in needles(pair).values()))


def main():
    global BINARIES
    BINARIES, rest = binaries_from_args()
    if shutil.which("openssl") is None:
        print("security_test: SKIP: openssl is not installed (apt-get install openssl)")
        sys.exit(SKIP_EXIT)
    unittest.main(argv=rest, verbosity=2)


if __name__ == "__main__":
    main()
