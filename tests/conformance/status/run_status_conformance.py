#!/usr/bin/env python3
"""Status conformance: Gateway API conformance status checks against a real portico-controller.

For each test file of the conformance data (../shared/conformance/gateway-api/, see its README):
start a fresh portico-controller (temporary config directory, admin port 0, --testing), write the
base manifests, the generated TLS Secrets, a GatewayClass "portico" (controllerName
portico.io/gateway-controller) and the file's manifests ({GATEWAY_CLASS_NAME} -> "portico"),
wait for /readyz, then poll every statusChecks entry through the admin API (100 ms interval,
deadline) and evaluate it as the README's "statusChecks format" says. followUps: perform their
actions (a delete goes through DELETE /api/v1/objects/...?wait=true), then their statusChecks.

With --gateway, a portico-gateway serving the GatewayClass connects to the controller over
ConfigSync, so Programmed conditions and Gateway addresses come from its acks; without it, a check
that fails only on those is reported as skipped. Prints one line per file (failures indented below it)
and a final line exactly "N passed, M failed, K skipped" (checks).

With --expected-failures FILE (lines "file.json: check description", '#' comments), the exit
status is 0 when every failing check is listed there (listed checks that now pass are reported,
to be removed); without it, the exit status is 0 when nothing failed. Exit 77 (skipped) when the
conformance directory is absent.

Only the Python 3 standard library and the openssl command are used.
"""

import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "integration"))
import portico_procs  # noqa: E402

GATEWAY_API = "gateway.networking.k8s.io"
CONTROLLER_NAME = "portico.io/gateway-controller"
GATEWAY_CLASS = "portico"
SKIP_EXIT = 77

PASS, FAIL, SKIP = "passed", "failed", "skipped"


# ---------------------------------------------------------------------------------------------
# Admin API client


class Admin:
    """A tiny client of the controller's admin API."""

    def __init__(self, port):
        self.base = "http://127.0.0.1:%d" % port

    def call(self, method, path, timeout=10):
        request = urllib.request.Request(self.base + path, method=method)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as e:
            body = e.read()
            try:
                return e.code, json.loads(body)
            except ValueError:
                return e.code, {"error": body.decode("utf-8", "replace")}

    def get_object(self, ref):
        """The object as the controller shows it, or None when it has none."""
        kind = ref["kind"] + ("." + ref["group"] if ref.get("group") else "")
        path = "/api/v1/objects/%s/%s/%s" % (
            urllib.parse.quote(kind, safe=""),
            urllib.parse.quote(ref["namespace"], safe=""),
            urllib.parse.quote(ref["name"], safe=""))
        status, body = self.call("GET", path)
        return body if status == 200 else None


# ---------------------------------------------------------------------------------------------
# Check evaluation. Each evaluator returns (outcome, reason); outcome is PASS, FAIL, or SKIP
# (only what needs a gateway is wrong).


def conditions_match(conditions, want):
    """The condition list holds `want` ({type, status, reason|None})."""
    for c in conditions or []:
        if c.get("type") != want["type"] or c.get("status") != want["status"]:
            continue
        if want.get("reason") is None or c.get("reason") == want["reason"]:
            return True
    return False


def describe_condition(want):
    return "%s=%s(%s)" % (want["type"], want["status"], want.get("reason") or "any")


def needs_gateway(want):
    return want["type"] == "Programmed"


def stale_generation(obj, condition_lists):
    generation = (obj.get("metadata") or {}).get("generation")
    for conditions in condition_lists:
        for c in conditions or []:
            if c.get("observedGeneration") != generation:
                return "condition %s has observedGeneration %s, metadata.generation is %s" % (
                    c.get("type"), c.get("observedGeneration"), generation)
    return None


class Outcome:
    """Collects failures, remembering whether each needs a gateway (skipped when none runs)."""

    with_gateway = False  # set by main() when --gateway is given

    def __init__(self):
        self.hard = []
        self.gateway = []

    def fail(self, reason, gateway_only=False):
        (self.gateway if gateway_only and not Outcome.with_gateway else self.hard).append(reason)

    def result(self):
        if self.hard:
            return FAIL, "; ".join(self.hard + self.gateway)
        if self.gateway:
            return SKIP, "needs a gateway: " + "; ".join(self.gateway)
        return PASS, ""


def gateway_generation(gw):
    status = gw.get("status") or {}
    return stale_generation(gw, [status.get("conditions")])


def route_generation(route):
    parents = (route.get("status") or {}).get("parents") or []
    return stale_generation(route, [p.get("conditions") for p in parents])


def name_of(ref):
    return "%s %s/%s" % (ref["kind"], ref.get("namespace", ""), ref["name"])

def fetch_checked(admin, ref, generation_check):
    """Fetches `ref` and starts its Outcome with the generation check; (None, None) if absent."""
    obj = admin.get_object(ref)
    if obj is None:
        return None, None
    out = Outcome()
    stale = generation_check(obj)
    if stale:
        out.fail(stale)
    return obj, out


def eval_gateway_ready(check, admin):
    gw, out = fetch_checked(admin, check["gateway"], gateway_generation)
    if gw is None:
        return FAIL, "%s not found" % name_of(check["gateway"])
    status = gw.get("status") or {}
    if check.get("requireAddress") and not status.get("addresses"):
        out.fail("status.addresses is empty", gateway_only=True)
    listeners = status.get("listeners") or []
    spec_listeners = (gw.get("spec") or {}).get("listeners") or []
    if len(listeners) != len(spec_listeners):
        out.fail("status.listeners has %d entries, spec.listeners %d" %
                 (len(listeners), len(spec_listeners)))
    for listener in listeners:
        for want in check.get("allListenersConditions", []):
            if not conditions_match(listener.get("conditions"), want):
                out.fail("listener %s lacks %s" % (listener.get("name"), describe_condition(want)),
                         gateway_only=needs_gateway(want))
    return out.result()


def matching_parents(route, check):
    parents = (route.get("status") or {}).get("parents") or []
    want = check["parentRef"]
    strict = check.get("strictParentRef", False)
    found = []
    for entry in parents:
        ref = entry.get("parentRef") or {}
        if ref.get("name") != want["name"]:
            continue
        if strict:
            if ref.get("group") != GATEWAY_API or ref.get("kind") != "Gateway":
                continue
            if entry.get("controllerName") != CONTROLLER_NAME:
                continue
            if check.get("namespaceRequired"):
                if ref.get("namespace") != want.get("namespace"):
                    continue
            elif "namespace" in ref and ref["namespace"] != want.get("namespace"):
                continue
        elif "namespace" in ref and ref["namespace"] != want.get("namespace"):
            continue
        found.append(entry)
    return found


def eval_route_parent_condition(check, admin):
    route, out = fetch_checked(admin, check["route"], route_generation)
    if route is None:
        return FAIL, "%s not found" % name_of(check["route"])
    entries = matching_parents(route, check)
    want = check["condition"]
    if not entries:
        parents = [e.get("parentRef") for e in (route.get("status") or {}).get("parents") or []]
        out.fail("no status.parents entry for %s%s (parents: %s)" % (
            name_of(check["parentRef"]), " (strict)" if check.get("strictParentRef") else "",
            json.dumps(parents)))
    elif not any(conditions_match(e.get("conditions"), want) for e in entries):
        have = [[describe_condition(c) for c in e.get("conditions") or []] for e in entries]
        out.fail("parent lacks %s (has %s)" % (describe_condition(want), have),
                 gateway_only=needs_gateway(want))
    return out.result()


def eval_route_no_accepted_parents(check, admin):
    route, out = fetch_checked(admin, check["route"], route_generation)
    if route is None:
        return FAIL, "%s not found" % name_of(check["route"])
    parents = (route.get("status") or {}).get("parents") or []
    if parents:
        accepted_false = {"type": "Accepted", "status": "False", "reason": None}
        if len(parents) != 1 or not conditions_match(parents[0].get("conditions"), accepted_false):
            out.fail("status.parents is neither empty nor one entry with Accepted=False: %s" %
                     json.dumps(parents))
    return out.result()


def eval_gateway_listeners_status(check, admin):
    gw, out = fetch_checked(admin, check["gateway"], gateway_generation)
    if gw is None:
        return FAIL, "%s not found" % name_of(check["gateway"])
    listeners = (gw.get("status") or {}).get("listeners") or []
    if len(listeners) != len(check["listeners"]):
        out.fail("status.listeners has %d entries, want %d" % (len(listeners),
                                                               len(check["listeners"])))
    by_name = {l.get("name"): l for l in listeners}
    for want in check["listeners"]:
        have = by_name.get(want["name"])
        if have is None:
            out.fail("no status for listener %s" % want["name"])
            continue
        if "attachedRoutes" in want and have.get("attachedRoutes") != want["attachedRoutes"]:
            out.fail("listener %s: attachedRoutes %s, want %s" % (
                want["name"], have.get("attachedRoutes"), want["attachedRoutes"]))
        for c in want.get("conditions", []):
            if not conditions_match(have.get("conditions"), c):
                out.fail("listener %s lacks %s (has %s)" % (
                    want["name"], describe_condition(c),
                    [describe_condition(x) for x in have.get("conditions") or []]),
                    gateway_only=needs_gateway(c))
        if "supportedKinds" in want:
            kinds = have.get("supportedKinds") or []
            if not want["supportedKinds"]:
                if kinds:
                    out.fail("listener %s: supportedKinds %s, want none" % (want["name"], kinds))
            for k in want["supportedKinds"]:
                if not any(x.get("kind") == k["kind"] and
                           x.get("group", GATEWAY_API) == k.get("group", GATEWAY_API)
                           for x in kinds):
                    out.fail("listener %s: supportedKinds lacks %s" % (want["name"], k["kind"]))
    return out.result()


def eval_gateway_zero_attached_routes(check, admin):
    gw, out = fetch_checked(admin, check["gateway"], gateway_generation)
    if gw is None:
        return FAIL, "%s not found" % name_of(check["gateway"])
    listeners = (gw.get("status") or {}).get("listeners") or []
    if listeners and (len(listeners) != 1 or listeners[0].get("attachedRoutes") != 0):
        out.fail("status.listeners is neither empty nor one entry with attachedRoutes 0: %s" %
                 json.dumps([{"name": l.get("name"), "attachedRoutes": l.get("attachedRoutes")}
                             for l in listeners]))
    return out.result()


EVALUATORS = {
    "gatewayReady": eval_gateway_ready,
    "routeParentCondition": eval_route_parent_condition,
    "routeNoAcceptedParents": eval_route_no_accepted_parents,
    "gatewayListenersStatus": eval_gateway_listeners_status,
    "gatewayZeroAttachedRoutes": eval_gateway_zero_attached_routes,
}


def describe_check(check):
    kind = check["check"]
    if kind == "routeParentCondition":
        text = "%s %s parent %s %s" % (kind, name_of(check["route"]), name_of(check["parentRef"]),
                                       describe_condition(check["condition"]))
        return text + (" strict" if check.get("strictParentRef") else "")
    if kind == "routeNoAcceptedParents":
        return "%s %s" % (kind, name_of(check["route"]))
    return "%s %s" % (kind, name_of(check["gateway"]))


def evaluate(check, admin):
    evaluator = EVALUATORS.get(check["check"])
    if evaluator is None:
        return FAIL, "unknown check type %s" % check["check"]
    try:
        return evaluator(check, admin)
    except (urllib.error.URLError, OSError, ValueError) as e:
        return FAIL, "admin API: %s" % e


def poll_checks(checks, admin, deadline):
    """Polls every 100 ms until no check fails (skips are final) or the deadline."""
    while True:
        results = [evaluate(c, admin) for c in checks]
        if all(outcome != FAIL for outcome, _ in results) or time.monotonic() >= deadline:
            return results
        time.sleep(0.1)


# ---------------------------------------------------------------------------------------------
# Manifests, secrets and the controller process


def generate_secret_pems(workdir, hosts):
    """A self-signed RSA 2048 pair as upstream's suite makes it (see _base.json)."""
    sans = []
    for host in hosts:
        if host.replace("*.", "", 1).replace(".", "").replace("-", "").isalnum() and host != "*":
            sans.append("DNS:" + host)
        else:
            sans.append("URI:" + host)
    key = os.path.join(workdir, "key.pem")
    cert = os.path.join(workdir, "cert.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
         "-days", "365", "-subj", "/CN=default/O=Acme Co",
         "-addext", "subjectAltName=" + ",".join(sans),
         "-addext", "keyUsage=keyEncipherment,digitalSignature",
         "-addext", "extendedKeyUsage=serverAuth"],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rsa = subprocess.run(["openssl", "rsa", "-in", key, "-traditional"], check=True,
                         capture_output=True).stdout
    with open(cert, "rb") as f:
        return f.read(), rsa


def generated_secrets(base, workdir):
    import base64
    secrets = []
    for i, s in enumerate(base.get("generatedSecrets", [])):
        d = os.path.join(workdir, "secret-%d" % i)
        os.makedirs(d)
        cert, key = generate_secret_pems(d, s.get("hosts", ["*"]))
        secrets.append({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": s["name"], "namespace": s["namespace"]},
            "type": "kubernetes.io/tls",
            "data": {"tls.crt": base64.b64encode(cert).decode(),
                     "tls.key": base64.b64encode(key).decode()},
        })
    return secrets


def substitute(value):
    if isinstance(value, str):
        return value.replace("{GATEWAY_CLASS_NAME}", GATEWAY_CLASS)
    if isinstance(value, list):
        return [substitute(v) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v) for k, v in value.items()}
    return value


def populate_endpoint_slices(manifests, setup):
    """runtimeSetup populateEndpointSlices: endpoints an EndpointSlice controller would write."""
    wanted = set(setup.get("endpointSlices", []))
    for m in manifests:
        meta = m.get("metadata", {})
        if m.get("kind") != "EndpointSlice":
            continue
        if "%s/%s" % (meta.get("namespace"), meta.get("name")) not in wanted:
            continue
        v6 = m.get("addressType") == "IPv6"
        addresses = ["fd00:2::1", "fd00:2::2"] if v6 else ["127.0.2.1", "127.0.2.2"]
        m["ports"] = [{"name": "first-port", "port": 3000, "protocol": "TCP"}]
        m["endpoints"] = [{"addresses": [a], "conditions": {"ready": True}} for a in addresses]


def file_name(prefix, index, obj):
    meta = obj.get("metadata", {})
    parts = [prefix, "%03d" % index, obj.get("kind", "x"), meta.get("namespace", ""),
             meta.get("name", "")]
    safe = "-".join(p for p in parts if p)
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in safe) + ".json"


def write_config(conf, base, secrets, test):
    gateway_class = {"apiVersion": GATEWAY_API + "/v1", "kind": "GatewayClass",
                     "metadata": {"name": GATEWAY_CLASS},
                     "spec": {"controllerName": CONTROLLER_NAME}}
    manifests = substitute(test.get("manifests", []))
    for step in test.get("runtimeSetup", []):
        if step.get("op") == "populateEndpointSlices":
            populate_endpoint_slices(manifests, step)
    groups = [("00-class", [gateway_class]), ("10-base", substitute(base["manifests"])),
              ("20-secret", secrets), ("30-test", manifests)]
    for prefix, objects in groups:
        for i, obj in enumerate(objects):
            with open(os.path.join(conf, file_name(prefix, i, obj)), "w") as f:
                json.dump(obj, f, indent=1)


def perform(action, admin):
    if action.get("op") != "delete":
        return "unsupported action %s" % action.get("op")
    group = action["apiVersion"].rsplit("/", 1)[0] if "/" in action["apiVersion"] else ""
    ref = {"group": group, "kind": action["kind"], "namespace": action.get("namespace", ""),
           "name": action["name"]}
    kind = ref["kind"] + ("." + group if group else "")
    path = "/api/v1/objects/%s/%s/%s?wait=true" % (
        urllib.parse.quote(kind, safe=""), urllib.parse.quote(ref["namespace"], safe=""),
        urllib.parse.quote(ref["name"], safe=""))
    status, body = admin.call("DELETE", path, timeout=40)
    if status != 200:
        return "delete %s: HTTP %d %s" % (name_of(ref), status, body)
    return None


def run_file(path, args, base, secrets):
    """Runs one test file; returns (file, [(description, outcome, reason)], error)."""
    name = os.path.basename(path)
    with open(path) as f:
        test = json.load(f)
    workdir = tempfile.mkdtemp(prefix="portico-status-")
    conf = os.path.join(workdir, "conf")
    os.makedirs(conf)
    results = []
    procs = []
    try:
        write_config(conf, base, secrets, test)
        binaries = portico_procs.Binaries(args.controller, args.gateway, None, args.plugin_dir)
        controller = portico_procs.Controller(binaries, conf, workdir, log_level="warn")
        procs.append(controller)
        controller.wait_ready(args.ready_timeout)
        admin = Admin(controller.admin.port)
        if args.gateway:
            # One gateway serving every Gateway of the class, so Programmed and addresses come
            # from real acks.
            procs.append(portico_procs.Gateway(
                binaries, workdir, controller.sync_address(), gateway_class=GATEWAY_CLASS,
                snapshot=False, log_level="warn"))
        phases = [("", test.get("statusChecks", []), [])]
        for i, follow in enumerate(test.get("followUps", [])):
            label = "followUp %d (%s): " % (i + 1, follow.get("name", ""))
            phases.append((label, follow.get("statusChecks", []), follow.get("actions", [])))
        seen = {}
        for label, checks, actions in phases:
            for action in actions:
                error = perform(action, admin)
                if error:
                    results.append((label + "action", FAIL, error))
            outcomes = poll_checks(checks, admin, time.monotonic() + args.deadline)
            for check, (outcome, reason) in zip(checks, outcomes):
                description = label + describe_check(check)
                seen[description] = seen.get(description, 0) + 1
                if seen[description] > 1:
                    description += " #%d" % seen[description]
                results.append((description, outcome, reason))
        return name, results, None
    except (RuntimeError, OSError, subprocess.CalledProcessError, AssertionError) as e:
        return name, results, str(e)
    finally:
        for p in reversed(procs):
            p.stop()
        if args.keep:
            print("  (kept %s)" % workdir, file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def load_expected(path):
    expected = set()
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                expected.add(line)
    return expected


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--controller", required=True, help="portico-controller binary")
    parser.add_argument("--plugin-dir", required=True, help="directory of the built plugins")
    parser.add_argument("--gateway", help="portico-gateway binary: Programmed and addresses are "
                        "then checked (else skipped)")
    parser.add_argument("--conformance-dir", required=True,
                        help="the Gateway API conformance data (../shared/conformance/gateway-api)")
    parser.add_argument("--expected-failures", help="file of 'file.json: check' lines")
    parser.add_argument("--write-expected-failures",
                        help="write the failing checks to this file (to seed the list)")
    parser.add_argument("--deadline", type=float, default=5.0,
                        help="seconds to poll the checks of one phase once ready (default 5)")
    parser.add_argument("--ready-timeout", type=float, default=60.0)
    parser.add_argument("--jobs", type=int, default=4, help="files run in parallel")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directories")
    parser.add_argument("--quiet", action="store_true",
                        help="print failing checks only when they are not expected")
    parser.add_argument("files", nargs="*", help="only these test files (names)")
    args = parser.parse_args()
    Outcome.with_gateway = bool(args.gateway)

    if not os.path.isdir(args.conformance_dir):
        print("SKIP: conformance data not found at %s (it lives in ../shared/conformance/"
              "gateway-api next to the repository)" % args.conformance_dir)
        return SKIP_EXIT
    if shutil.which("openssl") is None:
        print("SKIP: the openssl command is needed to generate the TLS Secrets")
        return SKIP_EXIT
    with open(os.path.join(args.conformance_dir, "_base.json")) as f:
        base = json.load(f)
    files = sorted(f for f in os.listdir(args.conformance_dir)
                   if f.endswith(".json") and not f.startswith("_") and f != "index.json")
    if args.files:
        files = [f for f in files if f in set(args.files)]

    secrets_dir = tempfile.mkdtemp(prefix="portico-status-secrets-")
    try:
        secrets = generated_secrets(base, secrets_dir)
    finally:
        shutil.rmtree(secrets_dir, ignore_errors=True)

    expected = load_expected(args.expected_failures) if args.expected_failures else None
    paths = [os.path.join(args.conformance_dir, f) for f in files]
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        runs = list(pool.map(lambda p: run_file(p, args, base, secrets), paths))

    totals = {PASS: 0, FAIL: 0, SKIP: 0}
    failing, unexpected, now_passing = [], [], []
    for name, results, error in runs:
        counts = {PASS: 0, FAIL: 0, SKIP: 0}
        for description, outcome, _ in results:
            counts[outcome] += 1
        if error:
            counts[FAIL] += 1
            results = results + [("run", FAIL, error)]
        for k in totals:
            totals[k] += counts[k]
        verdict = "FAIL" if counts[FAIL] else "PASS"
        print("%s %s: %d passed, %d failed, %d skipped" % (verdict, name, counts[PASS],
                                                          counts[FAIL], counts[SKIP]))
        for description, outcome, reason in results:
            key = "%s: %s" % (name, description)
            listed = expected is not None and key in expected
            if outcome == FAIL:
                failing.append(key)
                if expected is not None and not listed:
                    unexpected.append(key)
                if not args.quiet or (expected is not None and not listed):
                    print("    FAIL%s %s: %s" % (
                        "" if expected is None else (" (expected)" if listed else " (NEW)"),
                        description, reason))
            elif listed:
                now_passing.append(key)

    if args.write_expected_failures:
        with open(args.write_expected_failures, "w") as f:
            f.write("# Status-conformance checks that fail today, one 'file: check' per line.\n"
                    "# Remove lines as the semantics land; the test fails on any failure not "
                    "listed here.\n")
            for key in sorted(failing):
                f.write(key + "\n")
    exit_code = 0
    if expected is not None:
        print("expected failures: %d failing checks, %d of them listed, %d new; "
              "%d listed checks now pass" % (len(failing), len(failing) - len(unexpected),
                                             len(unexpected), len(now_passing)))
        for key in now_passing:
            print("    now passes (remove from the list): %s" % key)
        exit_code = 1 if unexpected else 0
    else:
        exit_code = 1 if totals[FAIL] else 0
    print("%d passed, %d failed, %d skipped" % (totals[PASS], totals[FAIL], totals[SKIP]))
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
