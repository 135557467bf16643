#!/usr/bin/env python3
"""ConfigSync resilience and security with the real binaries (issue 4, "Show"):

- a gateway stopped (SIGSTOP) past the controller's log window resyncs from a snapshot and ends
  identical, while a second gateway's updates are not delayed and the controller's memory stays
  bounded; `portico-ctl status` and `portico-ctl diff` then agree with the admin APIs;
- mutual TLS from conf_sync_security: the right certificate works, a client certificate of
  another CA and a plaintext gateway are refused with a clear line in both logs, and the legacy
  [conf_sync_security.tls] form works on both sides.

Run: sync_resilience_test.py --build BUILD_DIR [unittest args]. Every wait has a deadline;
nothing sleeps to synchronise.
"""

import json
import os
import signal
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sync_test as st  # noqa: E402  (YAML helpers, synced maps, the process fixture)
from portico_procs import binaries_from_args, run_ctl, wait_until  # noqa: E402

BINARIES = None
ROUTE_KIND = "HTTPRoute.gateway.networking.k8s.io"

LOG_MAX_BYTES = 64 * 1024
EDITS = 60          # ~3 KB of synced JSON each: about three times the log budget
EDIT_DEADLINE = 2.0  # seconds from the file write to the edit being held by the running gateway
RSS_GROWTH = 50 * 1024 * 1024


def big_route_yaml(name, edit, ns="default", rules=3, pad=900):
    """An HTTPRoute whose synced view is ~rules * pad bytes; its paths carry `/e<edit>-`."""
    body = ("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n"
            "metadata: {name: %s, namespace: %s}\nspec:\n  parentRefs: [{name: web}]\n"
            "  rules:\n" % (name, ns))
    for r in range(rules):
        path = "/e%d-%d-%s" % (edit, r, "x" * pad)
        body += ("  - matches: [{path: {type: PathPrefix, value: '%s'}}]\n"
                 "    backendRefs: [{name: svc, port: 80}]\n" % path)
    return body


class ResilienceTestCase(st.SyncTestCase):
    def tearDown(self):
        # Python 3.11 records failures on the result right away; print the processes' logs then.
        result = getattr(getattr(self, "_outcome", None), "result", None)
        failed = bool(result) and any(
            test is self for test, _ in list(result.errors) + list(result.failures))
        if failed:
            for p in self.procs:
                if p.process is not None or os.path.exists(p.log_path):
                    try:
                        sys.stderr.write("---- %s log (tail)\n%s\n" % (p.name, p.tail(40)))
                    except (OSError, AttributeError):
                        pass
        super().tearDown()

    def ctl(self, *args):
        return run_ctl(BINARIES, *args)


class LogWindow(ResilienceTestCase):
    def route_held(self, controller, gateway, k, edit):
        """Whether the controller processed edit `edit` of route r<k> and `gateway` holds it."""
        view = controller.admin.get("/api/v1/objects/httproutes/default/r%d" % k)
        if "/e%d-" % edit not in json.dumps(view.get("spec")):
            return False
        want = view["portico"]["syncedHash"]
        have = gateway.synced()["kinds"].get(ROUTE_KIND, {}).get("default/r%d" % k)
        return want != "" and have == want

    def test_stopped_gateway_past_the_log_window_resyncs_without_delaying_others(self):
        self.base_config(routes=5)
        c = self.controller(extra=["--sync-log-max-bytes", str(LOG_MAX_BYTES)])
        c.wait_ready()
        a = self.gateway(c.sync_address(), name="gw-a", serve=["default/web"])
        b = self.gateway(c.sync_address(), name="gw-b", serve=["default/web"])
        self.wait_converged(c, a)
        self.wait_converged(c, b)
        snapshots_before = a.info()["snapshotsApplied"]
        rss_start = peak = c.rss_bytes()
        delays = []
        synced_bytes = 0

        a.send_signal(signal.SIGSTOP)
        try:
            for i in range(EDITS):
                k = i % 5
                text = big_route_yaml("r%d" % k, i)
                synced_bytes += len(text)
                start = time.monotonic()
                st.write(self.conf, "30-route-%d.yaml" % k, text)
                wait_until(lambda: self.route_held(c, b, k, i), 10, "edit %d on gw-b" % i)
                delays.append(time.monotonic() - start)
                peak = max(peak, c.rss_bytes())
                c.check_alive()
        finally:
            a.send_signal(signal.SIGCONT)
        delays_sorted = sorted(delays)
        sys.stderr.write("gw-b edit delays: p50 %.0f ms, max %.0f ms over %d edits (%d KB written, "
                         "log budget %d KB); controller RSS %d -> peak %d MB\n" % (
                             delays_sorted[len(delays) // 2] * 1000, delays_sorted[-1] * 1000,
                             len(delays), synced_bytes // 1024, LOG_MAX_BYTES // 1024,
                             rss_start >> 20, peak >> 20))
        self.assertGreater(synced_bytes, 2 * LOG_MAX_BYTES)  # the log did overflow
        self.assertLess(max(delays), EDIT_DEADLINE, "gw-b was delayed: %s" %
                        ["%.2f" % d for d in delays])
        self.assertLess(peak - rss_start, RSS_GROWTH)

        # Continued, gw-a is behind the log: it resyncs from a snapshot and ends identical. (What
        # the controller believes gw-a holds is what it sent: when gw-a wakes up and applies the
        # batch it was sent before the stop, the two agree for a moment before the snapshot, so
        # wait for the last edits first.)
        last = {k: max(i for i in range(EDITS) if i % 5 == k) for k in range(5)}
        wait_until(lambda: all(self.route_held(c, a, k, i) for k, i in last.items()), 60,
                   "gw-a to hold the last edits")
        held = self.wait_converged(c, a, timeout=20)
        self.assertGreater(a.info()["snapshotsApplied"], snapshots_before)
        self.assertEqual(held, st.synced_map(b))
        resync = c.wait_log("is no longer in the log: sending a snapshot")
        self.assertIn("gw-a", resync)
        self.assertNotIn("gw-b", resync)

        # portico-ctl agrees: status lists both gateways, diff finds nothing.
        def status_ok():
            code, out, err = self.ctl("status", "--server", c.admin.base)
            self.assertEqual(code, 0, err)
            rows = {line.split()[0]: line.split() for line in out.splitlines()[11:] if line}
            return out if {"gw-a", "gw-b"} <= set(rows) and all(
                rows[n][5] == "0" for n in ("gw-a", "gw-b")) else None
        out = wait_until(status_ok, 20, "status to show both gateways with no lag")
        self.assertIn("Ready:      true", out)
        code, out, err = self.ctl("status", "-o", "json", "--server", c.admin.base)
        self.assertEqual(code, 0, err)
        self.assertEqual(json.loads(out)["controller"]["serverId"], c.info()["serverId"])
        for g in (a, b):
            code, out, err = self.ctl("diff", "--server", c.admin.base, "--gateway", g.name,
                                      "--gateway-admin", g.admin.base)
            self.assertEqual((code, out), (0, "no differences\n"), err)
        code, out, err = self.ctl("diff", "--server", c.admin.base, "--gateway", "gw-b",
                                  "--gateway-admin", a.admin.base)
        self.assertEqual(code, 2)
        self.assertIn("is \"gw-a\", not \"gw-b\"", err)
        code, out, err = self.ctl("diff", "--server", c.admin.base, "--gateway", "nope",
                                  "--gateway-admin", a.admin.base)
        self.assertEqual(code, 2)
        self.assertIn("no gateway named \"nope\"", err)


class MutualTls(ResilienceTestCase):
    def setUp(self):
        super().setUp()
        self.certs = {}
        for ca in ("ca1", "ca2"):
            out = os.path.join(self.workdir, ca)
            code, stdout, err = self.ctl("gen-certs", "--cert-name", "t", "--out", out)
            self.assertEqual(code, 0, err)
            self.certs[ca] = os.path.join(out, "t")

    def cert(self, ca, name):
        return os.path.join(self.certs[ca], name)

    def security_toml(self, file_name, ca_file, cert_file, key_file, legacy=False, head=""):
        if legacy:
            section = "[conf_sync_security.tls]\n"
        else:
            section = ('[conf_sync_security]\nactive = "t"\n'
                       '[[conf_sync_security.certs]]\nname = "t"\n')
        text = head + section + 'ca_file = "%s"\ncert_file = "%s"\nkey_file = "%s"\n' % (
            ca_file, cert_file, key_file)
        path = os.path.join(self.workdir, file_name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def secure_controller(self, name="controller", legacy=False):
        toml = self.security_toml(name + ".toml", self.cert("ca1", "ca.crt"),
                                  self.cert("ca1", "server.crt"), self.cert("ca1", "server.key"),
                                  legacy=legacy, head='[sync]\naddress = "127.0.0.1"\n')
        c = self.controller(name=name, extra=["--config", toml])
        c.wait_ready()
        return c

    def secure_gateway(self, controller, name, ca="ca1", client_ca="ca1", legacy=False):
        toml = self.security_toml(name + ".toml", self.cert(ca, "ca.crt"),
                                  self.cert(client_ca, "client.crt"),
                                  self.cert(client_ca, "client.key"), legacy=legacy)
        return self.gateway(controller.sync_address(), name=name, serve=["default/web"],
                            extra=["-c", toml])

    def assert_refused(self, controller, gateway):
        gateway.wait_admin()
        info = wait_until(lambda: (lambda i: i if i["lastError"] else None)(gateway.info()), 20,
                          "%s to fail to connect" % gateway.name)
        self.assertFalse(info["connected"])
        self.assertFalse(info["ready"])
        self.assertEqual(gateway.admin.call("GET", "/readyz")[0], 503)
        names = [g["name"] for g in controller.gateways()["items"]]
        self.assertNotIn(gateway.name, names)
        return info

    def test_right_certificate_works_wrong_or_missing_is_refused(self):
        self.base_config(routes=2)
        c = self.secure_controller()
        good = self.secure_gateway(c, "gw-good")
        held = self.wait_converged(c, good)
        self.assertIn("%s default/r1" % ROUTE_KIND, held)

        # A client certificate signed by another CA (the gateway trusts the right server CA).
        wrong = self.secure_gateway(c, "gw-wrong-ca", client_ca="ca2")
        info = self.assert_refused(c, wrong)
        line = c.wait_log("ConfigSync TLS: refused a peer")
        self.assertIn("gateways need a valid client certificate", line)
        self.assertIn(self.cert("ca1", "ca.crt"), line)
        gw_line = wrong.wait_log("ConfigSync TLS handshake with %s failed" % c.sync_address())
        self.assertIn("refused our client certificate", gw_line)
        self.assertIn("ConfigSync TLS handshake", info["lastError"])
        sys.stderr.write("wrong CA:\n  controller: %s\n  gateway: %s\n" % (line, gw_line))
        wrong.stop()
        refusals = c.log_text().count("ConfigSync TLS: refused a peer")

        # No client certificate at all: a plaintext gateway.
        plain = self.gateway(c.sync_address(), name="gw-plain", serve=["default/web"])
        self.assert_refused(c, plain)
        wait_until(lambda: c.log_text().count("ConfigSync TLS: refused a peer") > refusals, 20,
                   "the controller to log the plaintext refusal")
        plain_line = c.wait_log("the peer does not speak TLS")
        self.assertIn("refused a peer", plain_line)
        plain_gw_line = plain.wait_log("set conf_sync_security here")
        sys.stderr.write("plaintext gateway:\n  controller: %s\n  gateway: %s\n" % (
            plain_line, plain_gw_line))

        # The good gateway was never disturbed.
        self.assertTrue(good.info()["connected"])
        self.assertEqual(st.synced_map(good), st.expected_map(c, "gw-good"))

    def test_legacy_tls_form_works_on_both_sides(self):
        self.base_config(routes=2)
        c = self.secure_controller(legacy=True)
        g = self.secure_gateway(c, "gw-legacy", legacy=True)
        held = self.wait_converged(c, g)
        self.assertIn("%s default/r0" % ROUTE_KIND, held)
        # A gateway with the named-set form talks to the legacy-form controller too.
        g2 = self.secure_gateway(c, "gw-named")
        self.wait_converged(c, g2)


def main():
    global BINARIES
    BINARIES, argv = binaries_from_args()
    st.BINARIES = BINARIES  # st.SyncTestCase starts processes from its module's BINARIES
    unittest.main(argv=argv, verbosity=2)


if __name__ == "__main__":
    main()
